"""Reading export data files into DuckDB relations, and pinpointing bad values in them.

CSV is always read as text and cast explicitly by the format's reader, so a cost column is never typed by
sniffing; nor is the dialect: RFC 4180 (comma, double quotes), the header as the file states it, strict, so
an unterminated quote or a short row is an error naming its row instead of a file read as one column.
Parquet keeps its declared types. The files of a delivery are matched by column name (case-insensitively, as
DuckDB binds names), never by position, and must all have the same columns: a file lacking one would
otherwise read as NULLs there.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import re
import threading
import zlib
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import duckdb
import pyarrow.parquet as pq

from gpuledger.warehouse.sqlfiles import quote_ident, quote_literal
from models.errors import InputError, describe_error, shorten

_CHUNK = 1 << 20
_CSV_DIALECT = (
    "header = true, auto_detect = false, delim = ',', quote = '\"', escape = '\"', strict_mode = true,"
    " hive_partitioning = false"
)
# Folder names like BILLING_PERIOD=2026-11 or export_time=... are the layout, never columns of the rows.
_NO_HIVE = {"hive_partitioning": False}
# DuckDB names a CSV error's physical line (the header is line 1) and its reason after the echoed line.
_CSV_ERROR_LINE = re.compile(r"CSV Error on Line: (\d+)")
_CSV_ERROR_FILE = re.compile(r"^\s*file = (.+)$", re.MULTILINE)
# A byte that is not UTF-8, as the surrogateescape error handler reads it.
_UNDECODABLE = re.compile("[\udc80-\udcff]")
# Strict mode's error for a bare CR or LF inside an unquoted value: it names neither line nor reason.
_CSV_INVALID_STATE = "The CSV Parser state machine reached an invalid state"
_CSV_ERROR_REASONS = (
    "Value with unterminated quote found.",
    "Expected Number of Columns",
    "Invalid unicode",
    "Maximum line size",
)


def file_kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".csv", ".csv.gz", ".csv.gzip", ".txt.gz")):
        return "csv"
    raise InputError(path, "unsupported file type (expected .csv, .csv.gz or .parquet)")


def read_raw(con: duckdb.DuckDBPyConnection, files: Sequence[Path]) -> duckdb.DuckDBPyRelation:
    """All files of a delivery as one relation with a ``filename`` column; CSV columns are text."""
    kinds = {file_kind(f) for f in files}
    if len(kinds) > 1:
        raise InputError(files[0], "a delivery mixes CSV and Parquet files")
    try:
        if kinds == {"parquet"}:
            raw = con.read_parquet([str(f) for f in files], filename=True, union_by_name=True, **_NO_HIVE)
        else:
            # read_csv of each file with its own header's columns, quoted (a literal scan streams)
            scans = [f"SELECT * FROM {_csv_scan(f, filename=True)}" for f in files]  # noqa: S608
            raw = con.sql(" UNION ALL BY NAME ".join(scans))
    except duckdb.Error as exc:
        raise _file_error(con, files, exc) from exc
    if len(files) > 1:
        _require_same_columns(con, files, raw.columns)
    return raw


def csv_header(file: Path) -> list[str]:
    """The column names a CSV file's first record states (a byte order mark before it is not part of a name).

    Exports are comma-separated: a ';' or tab header means a file re-saved by a spreadsheet (localized numbers).
    """
    try:
        with _open_text(file) as handle:
            first = handle.readline(1 << 20)
            header = next(csv.reader([first.rstrip("\r\n")]), None) if '"' not in first else None
            if header is None:  # a quoted header may span lines: let the csv module read the whole record
                handle.seek(0)
                header = next(csv.reader(handle), None)
    except (OSError, EOFError, csv.Error) as exc:
        raise InputError(file, f"unreadable header: {exc}", row=0) from exc
    if header and (name := next((n for n in header if _UNDECODABLE.search(n)), None)):
        raise InputError(file, f"the header is not UTF-8 text: {_as_bytes(name)!r}", row=0)
    for delimiter, name in ((";", "';'"), ("\t", "tabs")):
        if first.count(delimiter) > first.count(","):
            raise InputError(file, f"not comma-separated: the header is delimited by {name}", row=0)
    if not header or not any(name.strip() for name in header):
        raise InputError(file, "no header: a CSV export starts with its column names", row=0)
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise InputError(file, "the header names a column twice", row=0, column=duplicated[0])
    return header


def _open_text(file: Path, newline: str = "") -> TextIO:
    """A CSV file as text; a byte that is not UTF-8 becomes a lone surrogate (:data:`_UNDECODABLE`), found where it is
    instead of failing the chunk of text decoded ahead of it."""
    opener = gzip.open if file.name.lower().endswith((".gz", ".gzip")) else open
    return opener(file, "rt", encoding="utf-8-sig", errors="surrogateescape", newline=newline)  # type: ignore[return-value]


def _as_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def first_non_utf8_cell(file: Path) -> InputError | None:
    """The first cell of a CSV file that is not UTF-8 text, refused naming its row and column; None if none.

    Refused, not repaired: exports are UTF-8, so such a byte means another encoding or a corrupt file, and then no
    cell of the file (keys, money) can be trusted to read as the provider wrote it. Read in Python: DuckDB's CSV
    reader fails internally on such a byte in a column its query does not read.
    """
    header = csv_header(file)
    for row, record in _records(file):
        for name, cell in zip(header, record, strict=False):
            if _UNDECODABLE.search(cell):
                return InputError(file, f"is not UTF-8 text: {_as_bytes(cell)!r}", row=row, column=name)
    return None


def _first_bare_carriage_return(file: Path) -> InputError | None:
    """The first record of a CSV file holding a carriage return outside quotes (DuckDB names no row for it)."""
    row, quoted = 0, False  # the header is record 0
    try:
        with _open_text(file, newline="\n") as handle:
            for line in handle:
                # text between quotes alternates outside / inside a quoted value ("" inside toggles twice)
                for index, segment in enumerate(line.removesuffix("\n").removesuffix("\r").split('"')):
                    quoted = quoted != (index > 0)
                    if not quoted and "\r" in segment:
                        message = "not a well-formed CSV row: a carriage return outside quotes (RFC 4180 quotes it)"
                        return InputError(file, message, row=row)
                row += 0 if quoted else 1
    except (OSError, EOFError):
        return None
    return None


def _records(file: Path) -> Iterator[tuple[int, list[str]]]:
    """The data records of a CSV file as Python's csv module reads them, numbered from 1; none past one it cannot."""
    try:
        with _open_text(file) as handle:
            records = csv.reader(handle)
            next(records, None)
            yield from enumerate(records, start=1)
    except (OSError, EOFError, csv.Error):
        return  # a file broken otherwise: DuckDB's read names what is wrong


def read_csv_file(con: duckdb.DuckDBPyConnection, file: Path) -> duckdb.DuckDBPyRelation:
    """One CSV file, every column as text, read with the delivery's dialect (row numbers as its own)."""
    return con.sql(f"SELECT * FROM {_csv_scan(file)}")  # noqa: S608  (read_csv of the file's own header, quoted)


def _csv_scan(file: Path, *, filename: bool = False) -> str:
    """``read_csv(...)`` of one file with its own header's columns as text.

    Written with literals (through the quoting helpers): a relation with bound parameters would be executed at
    once and held in memory whole, where a literal one streams.
    """
    columns = ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in csv_header(file))
    extra = ", filename = true" if filename else ""
    return f"read_csv({quote_literal(str(file))}, {_CSV_DIALECT}, columns = {{{columns}}}{extra})"


def _require_same_columns(con: duckdb.DuckDBPyConnection, files: Sequence[Path], columns: Sequence[str]) -> None:
    """Every file of the delivery has every column of the union (in any order): none is silently NULL."""
    holders: dict[str, Path] = {}
    per_file: list[tuple[Path, dict[str, str]]] = []
    for file in files:
        try:
            own = {c.lower(): c for c in _single_file(con, file).columns}
        except duckdb.Error as exc:
            raise file_read_error(file, exc) from exc
        per_file.append((file, own))
        for key in own:
            holders.setdefault(key, file)
    wanted = [c for c in columns if c.lower() in holders]  # the union, less the added filename column
    for file, own in per_file:
        missing = [c for c in wanted if c.lower() not in own]
        if missing:
            other = holders[missing[0].lower()]
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            message = f"column missing{more}, but {other.name} of the same delivery has it (all need the same columns)"
            raise InputError(file, message, column=missing[0])


def _single_file(con: duckdb.DuckDBPyConnection, file: Path) -> duckdb.DuckDBPyRelation:
    if file_kind(file) == "parquet":
        return con.read_parquet(str(file), **_NO_HIVE)
    return read_csv_file(con, file)


def cast_expr(header: str, raw_type: str, sql_type: str) -> str:
    """SQL that turns a file's column into ``sql_type``: CSV text is trimmed, '' is NULL, casts are strict.

    Money is exact or refused: text must be a decimal number exact to 10 decimal places (:func:`decimal_from_cell`);
    a DOUBLE becomes the decimal its shortest text form spells (a direct cast drifts in the 8th digit above 10^7)
    and must be that decimal's nearest double (at most 10 decimal places); a 32-bit FLOAT has lost cents already
    and is refused.
    """
    ident = quote_ident(header)
    if raw_type == "VARCHAR":
        text = f"nullif(trim({ident}), '')"
        if sql_type == "VARCHAR":
            return text
        if sql_type == MONEY:
            return decimal_from_cell(ident, text)
        return f"CAST({text} AS {sql_type})"
    if sql_type == "VARCHAR":
        return f"nullif(CAST({ident} AS VARCHAR), '')"
    if sql_type == MONEY and raw_type in BINARY_FLOATS:
        if raw_type != "DOUBLE":
            return f"error({quote_literal(f'{header} holds 32-bit floats')})"
        exact = decimal_from_text(f"CAST({ident} AS VARCHAR)")
        return (
            f"CASE WHEN {ident} IS NULL THEN NULL WHEN CAST({exact} AS DOUBLE) = {ident} THEN {exact}"
            f" ELSE error({quote_literal(f'{header} is not exact to 10 decimal places')}) END"
        )
    return f"CAST({ident} AS {sql_type})"


MONEY = "DECIMAL(38,10)"
BINARY_FLOATS = ("DOUBLE", "FLOAT")


def decimal_from_text(text: str, *, strict: bool = True) -> str:
    """SQL turning ``text`` into DECIMAL(38,10), rounded exactly as the wide cast rounds.

    DuckDB parses text into a 128-bit decimal 25-40x slower than into a 64-bit one: a value that fits
    DECIMAL(18,10) takes that path, plain digits with at most 18 before the point are split at it (both parts
    exact, the sign applied last), and only other spellings (an exponent, more digits, bad input) reach the wide
    cast. ``strict``: bad input raises there; else it is NULL.
    """
    split = (
        f"CASE WHEN regexp_full_match({text}, '[-+]?[0-9]{{1,18}}(\\.[0-9]*)?') THEN"
        f" (CAST(CAST(split_part(ltrim({text}, '+-'), '.', 1) AS BIGINT) AS {MONEY})"
        f" + CAST('0.' || split_part({text}, '.', 2) AS DECIMAL(18,10)))"
        f" * CASE WHEN starts_with({text}, '-') THEN -1 ELSE 1 END END"
    )
    wide = "CAST" if strict else "TRY_CAST"
    return f"coalesce(TRY_CAST({text} AS DECIMAL(18,10)), {split}, {wide}({text} AS {MONEY}))"


# A number as exports spell money: digits, a point, an exponent (FOCUS NumericFormat); no 1_329.216.
_DECIMAL_NUMBER = r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?"


def decimal_from_cell(cell: str, text: str, *, strict: bool = True) -> str:
    """SQL turning a text cell into DECIMAL(38,10), held to the rule money in Parquet is held to: a decimal number
    exact to 10 decimal places (:func:`exact_decimal_text`), else refused (``strict``: an error; else NULL).

    ``text`` is the cell trimmed, NULL when blank. DuckDB's decimal cast alone would read ``1_329.216`` and round
    past the 10th place. Plain digits with at most 10 after the point, the common case, take the 64-bit cast of the
    cell as it is: four byte scans and a DOUBLE parse (which refuses the bare ``- `` the decimal cast reads as 0)
    cost less than the trim they save. Any other spelling is checked in full.
    """
    plain = (
        f"strpos({cell}, '_') = 0 AND strpos({cell}, 'e') = 0 AND strpos({cell}, 'E') = 0"
        f" AND length({cell}) - strpos({cell}, '.') <= 10 AND TRY_CAST({cell} AS DOUBLE) IS NOT NULL"
    )
    refused = "error('not a decimal number exact to 10 decimal places')" if strict else "NULL"
    checked = (
        f"CASE WHEN {text} IS NULL THEN NULL WHEN {exact_decimal_text(text)}"
        f" THEN {decimal_from_text(text, strict=strict)} ELSE {refused} END"
    )
    # CASE, not coalesce: DuckDB's optimizer would compute the trim in ``checked`` for every row, not only for these
    return f"CASE WHEN {plain} THEN coalesce(TRY_CAST({cell} AS DECIMAL(18,10)), {checked}) ELSE {checked} END"


def exact_decimal_text(text: str) -> str:
    """SQL: ``text`` (trimmed) is a decimal number (digits, a point, an exponent) exact to 10 decimal places, such
    as ``1.50000000000`` or ``2.5E-3``; NULL for an exponent beyond BIGINT."""
    number = f"lower({text})"
    mantissa = f"ltrim(split_part({number}, 'e', 1), '+-')"
    exponent = f"TRY_CAST(coalesce(nullif(split_part({number}, 'e', 2), ''), '0') AS BIGINT)"
    digits = f"replace({mantissa}, '.', '')"
    # digits after the point, less the exponent and the trailing zeros (15.0e-1 has one place); zero has none
    places = f"length(split_part({mantissa}, '.', 2)) - {exponent} - (length({digits}) - length(rtrim({digits}, '0')))"
    return (
        f"(regexp_full_match({text}, {quote_literal(_DECIMAL_NUMBER)})"
        f" AND ({places} <= 10 OR ltrim({digits}, '0') = ''))"
    )


def bad_cast_predicates(raw_type: str, sql_type: str) -> list[tuple[str, str]]:
    """SQL over a cell ``v`` that is TRUE where :func:`cast_expr` refuses it, and what is wrong there (text money
    may be wrong in two ways)."""
    if sql_type == MONEY and raw_type == "FLOAT":
        lost = "is a 32-bit float (FLOAT column): it has lost cents; export money as DOUBLE or DECIMAL"
        return [("v IS NOT NULL", lost)]
    if sql_type == MONEY and raw_type == "DOUBLE":
        exact = f"TRY_CAST(CAST(v AS VARCHAR) AS {MONEY})"  # diagnostics only: the slow exact parse will do
        return [
            (
                f"v IS NOT NULL AND (isnan(v) OR isinf(v) OR CAST({exact} AS DOUBLE) IS DISTINCT FROM v)",
                "is not exact to 10 decimal places (binary floating point): money would be lost or invented",
            )
        ]
    text = "nullif(trim(CAST(v AS VARCHAR)), '')"
    invalid = f"{text} IS NOT NULL AND TRY_CAST({text} AS {sql_type}) IS NULL"
    if sql_type != MONEY or raw_type != "VARCHAR":
        return [(invalid, f"is not a valid {sql_type}")]
    number = f"regexp_full_match({text}, {quote_literal(_DECIMAL_NUMBER)})"
    return [
        (f"({text} IS NOT NULL AND NOT {number}) OR ({invalid})", f"is not a valid {sql_type}"),
        (
            f"{text} IS NOT NULL AND NOT coalesce({exact_decimal_text(text)}, false)",
            "is not exact to 10 decimal places: money would be lost or invented",
        ),
    ]


def _file_error(con: duckdb.DuckDBPyConnection, files: Sequence[Path], exc: duckdb.Error) -> InputError:
    """Name the file (and for CSV the row) a DuckDB read error comes from, with DuckDB's reason."""
    # a cursor of its own: the failed read may have aborted the caller's transaction
    with con.cursor() as diagnostics:
        for file in files:
            try:
                _single_file(diagnostics, file).aggregate("count(*)").fetchall()
            except duckdb.Error as file_exc:
                return file_read_error(file, file_exc)
    return InputError(files[0], f"unreadable delivery: {describe_error(exc)}")


def read_error(files: Sequence[Path], exc: BaseException) -> InputError | None:
    """The file a DuckDB CSV read error names, as :func:`file_read_error`; None for any other error.

    A DuckDB internal error on CSV files is looked into for the one cause known to raise it: text that is not UTF-8.
    """
    named = _CSV_ERROR_FILE.search(str(exc))
    if not (named and (_CSV_ERROR_LINE.search(str(exc)) or _CSV_INVALID_STATE in str(exc))):
        if isinstance(exc, duckdb.InternalException):
            csv_files = (f for f in files if file_kind(f) == "csv")
            return next((error for f in csv_files if (error := first_non_utf8_cell(f))), None)
        return None
    file = next((f for f in files if str(f) == named.group(1).strip()), Path(named.group(1).strip()))
    return file_read_error(file, exc)


def file_read_error(file: Path, exc: BaseException) -> InputError:
    """DuckDB's read error as one line: the row (CSV: its physical line less the header) and the reason."""
    text = str(exc)
    line = _CSV_ERROR_LINE.search(text)
    reason = next((r for r in text.splitlines() if r.strip().startswith(_CSV_ERROR_REASONS)), None)
    if line and reason:
        if reason.strip().startswith("Invalid unicode") and (undecodable := first_non_utf8_cell(file)):
            return undecodable
        return InputError(file, f"not a well-formed CSV row: {reason.strip()}", row=int(line.group(1)) - 1)
    if _CSV_INVALID_STATE in text and (split := _first_bare_carriage_return(file)):
        return split
    return InputError(file, f"unreadable: {describe_error(exc)}")


@dataclass(frozen=True)
class FileStats:
    bytes: int
    sha256: str


def verify_files(
    files: Sequence[Path], root: Path | None = None, extract_of: Callable[[Path], str] | None = None
) -> FileStats:
    """Hash the delivery and refuse a file counted twice (:class:`GzipCheck` proves its gzip members complete).

    A file listed twice, two names holding the same bytes (a part copied under another name) or a file reached
    through a link leading out of the export folder ``root`` would count money that is not the delivery's. Where a
    delivery is a union of extracts (``extract_of`` names a file's), another extract may repeat a file: its
    reader counts each record once.
    """
    _refuse_outside(files, root)
    digest = hashlib.sha256()
    total = 0
    seen: dict[Path, Path] = {}
    by_content: dict[tuple[str, str], Path] = {}
    for file in files:
        if (first := seen.setdefault(file.resolve(), file)) is not file:
            also = "" if first == file else f" (also as {first})"
            raise InputError(file, f"the delivery lists this file twice{also}: its rows would count twice")
        own, size = hashlib.sha256(), 0
        with file.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
                own.update(chunk)
                size += len(chunk)
        total += size
        content = (extract_of(file) if extract_of else "", own.hexdigest())
        if size and (twin := by_content.setdefault(content, file)) is not file and not _holds_no_rows(file):
            raise InputError(file, f"has the same bytes as {twin} of the same delivery: its rows would count twice")
    return FileStats(bytes=total, sha256=digest.hexdigest())


def _holds_no_rows(file: Path) -> bool:
    """A file of no rows (a header only: an export of an empty month) counts nothing twice, whatever shares its
    bytes; read only up to its first row."""
    kind = file.name.lower()
    if kind.endswith(".parquet"):
        return pq.ParquetFile(file).metadata.num_rows == 0
    opener = gzip.open if kind.endswith((".gz", ".gzip")) else open
    try:
        with opener(file, "rt", encoding="utf-8-sig", errors="replace", newline="") as handle:
            records = csv.reader(handle)
            next(records, None)  # the header
            return not any(any(cell.strip() for cell in record) for record in records)
    except (OSError, EOFError, csv.Error):  # unreadable: whatever it holds, it is a twin
        return False


class GzipCheck:
    """Proves every gzip member of a delivery's files complete, in a thread beside the load that reads them.

    DuckDB reads a truncated gzip file as if it simply ended, which would silently drop rows; inflating each file
    to its end is the proof. zlib releases the GIL, so the check runs on a core the (single-threaded) gzip scan
    leaves free instead of costing a pass of its own before the load.
    """

    def __init__(self, files: Sequence[Path]) -> None:
        self._files = [f for f in files if f.name.lower().endswith((".gz", ".gzip"))]
        self._error: InputError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._check, name="gzip-check", daemon=True)
        self._thread.start()

    def _check(self) -> None:
        for file in self._files:
            inflater = zlib.decompressobj(wbits=47)
            try:
                with file.open("rb") as handle:
                    while (chunk := handle.read(_CHUNK)) and not self._stop.is_set():
                        _inflate(file, inflater, chunk)
                if self._stop.is_set():
                    return
                _finish_gzip(file, inflater)
            except InputError as exc:
                self._error = exc
                return
            except OSError as exc:
                self._error = InputError(file, f"unreadable: {exc}")
                return

    def result(self) -> None:
        """Wait for the check; raise the first broken file's error."""
        self._thread.join()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def checking_gzip(files: Sequence[Path]) -> Iterator[GzipCheck]:
    """A :class:`GzipCheck` of ``files`` running while the block loads them; stopped when the block ends."""
    check = GzipCheck(files)
    try:
        yield check
    finally:
        check.stop()


def _refuse_outside(files: Sequence[Path], root: Path | None) -> None:
    """Every file of an export folder lies inside it once links are resolved (no link leads outside)."""
    if root is None:
        return
    base = root.resolve()
    for file in files:
        if not file.resolve().is_relative_to(base):
            raise InputError(file, f"a link leads outside the export folder {root} (to {file.resolve()}): refused")


def _inflate(file: Path, inflater: zlib._Decompress, chunk: bytes) -> None:
    data = chunk
    while data:
        try:
            inflater.decompress(data, _CHUNK)
        except zlib.error as exc:
            raise InputError(file, f"corrupt gzip data: {exc}") from exc
        data = inflater.unconsumed_tail
        # A multi-member gzip file continues after the end of a member.
        if inflater.eof and inflater.unused_data:
            data = inflater.unused_data
            inflater.__init__(wbits=47)  # type: ignore[misc]


def _finish_gzip(file: Path, inflater: zlib._Decompress) -> None:
    if not inflater.eof:
        raise InputError(file, "truncated gzip file: the compressed stream ends early")


def first_bad_row(
    con: duckdb.DuckDBPyConnection,
    file: Path,
    column: str,
    bad_value_predicate: str,
    params: dict[str, object] | None = None,
) -> tuple[int, str] | None:
    """1-based row number and raw value of the first row whose ``column`` satisfies the predicate.

    ``bad_value_predicate`` is SQL over ``v`` (the raw value) written by our code, never input;
    ``params`` are bound into it.
    """
    found = matching_rows(con, file, {"v": column}, bad_value_predicate, params)
    return (found[0][0], found[0][1][0]) if found else None


def first_repeat(
    con: duckdb.DuckDBPyConnection, file: Path, columns: dict[str, str], *, fold_case: Collection[str] = ()
) -> tuple[int, int, tuple[str, ...]] | None:
    """The first row of ``file`` repeating an earlier row's values of ``columns`` (alias -> header), the aliases
    in ``fold_case`` compared in lower case: its number, the earlier row's, and the values."""
    keys = ", ".join(f"lower({quote_ident(a)})" if a in fold_case else quote_ident(a) for a in columns)
    aliases = ", ".join(quote_ident(alias) for alias in columns)
    numbered = (
        # the caller's aliases and the file's header names, quoted
        f"SELECT rn, {aliases}, min(rn) OVER (PARTITION BY {keys}) AS first_rn,"  # noqa: S608
        f" row_number() OVER (PARTITION BY {keys} ORDER BY rn) AS copy FROM ({_numbered_rows(file, columns)})"
    )
    values = ", ".join(f"CAST({quote_ident(alias)} AS VARCHAR)" for alias in columns)
    # the caller's aliases, quoted
    query = f"SELECT rn, first_rn, {values} FROM ({numbered}) WHERE copy = 2 ORDER BY rn LIMIT 1"  # noqa: S608
    found = _in_file_order(con, query, _numbered_params(file))
    return (int(found[0][0]), int(found[0][1]), tuple(shorten(str(v)) for v in found[0][2:])) if found else None


def _numbered_rows(file: Path, columns: dict[str, str]) -> str:
    """SQL of ``file``'s rows numbered as the file counts them (1-based), with ``columns`` under their aliases."""
    cells = ", ".join(f"{quote_ident(header)} AS {quote_ident(alias)}" for alias, header in columns.items())
    if file_kind(file) == "parquet":
        return (
            f"SELECT file_row_number + 1 AS rn, {cells}"  # noqa: S608  (header names and aliases, quoted)
            " FROM read_parquet($file, file_row_number = true, hive_partitioning = false)"
        )
    return (
        f"SELECT row_number() OVER () AS rn, {cells}"  # noqa: S608  (header names and aliases, quoted)
        f" FROM read_csv($file, {_CSV_DIALECT}, columns = $columns)"
    )


def _numbered_params(file: Path) -> dict[str, object]:
    if file_kind(file) == "parquet":
        return {"file": str(file)}
    return {"file": str(file), "columns": dict.fromkeys(csv_header(file), "VARCHAR")}


def _in_file_order(con: duckdb.DuckDBPyConnection, query: str, params: dict[str, object]) -> list[tuple[object, ...]]:
    """Run ``query`` single-threaded with insertion order kept, so row numbers are the file's own."""
    settings = con.execute("SELECT current_setting('threads'), current_setting('preserve_insertion_order')").fetchone()
    con.execute("SET threads = 1")
    con.execute("SET preserve_insertion_order = true")
    try:
        return con.execute(query, params).fetchall()
    finally:
        assert settings is not None
        con.execute(f"SET threads = {int(settings[0])}")
        con.execute(f"SET preserve_insertion_order = {'true' if settings[1] else 'false'}")


def matching_rows(
    con: duckdb.DuckDBPyConnection,
    file: Path,
    columns: dict[str, str],
    predicate: str,
    params: dict[str, object] | None = None,
    limit: int = 1,
) -> list[tuple[int, tuple[str, ...]]]:
    """The first ``limit`` rows (1-based number, values as text) where ``predicate`` holds over ``columns``
    (alias -> the file's header); the predicate is our SQL over the aliases, ``params`` bound into it."""
    values = ", ".join(f"CAST({quote_ident(alias)} AS VARCHAR)" for alias in columns)
    numbered = _numbered_rows(file, columns)
    # quoted aliases; the predicate is our own SQL with its values bound
    query = f"SELECT rn, {values} FROM ({numbered}) WHERE {predicate} ORDER BY rn LIMIT {int(limit)}"  # noqa: S608
    found = _in_file_order(con, query, {**_numbered_params(file), **(params or {})})
    # values are for messages: a runaway cell (a 10 MB tag) is cut (InputError escapes what it prints)
    return [(int(row[0]), tuple(shorten(str(v)) for v in row[1:])) for row in found]


def row_of_content(
    con: duckdb.DuckDBPyConnection, file: Path, cells: Sequence[str], row_hash: str, occurrence: int = 1
) -> int | None:
    """1-based number of the ``occurrence``-th row of ``file`` whose content id is ``row_hash``: 16 hex digits of
    ``hash(parse_filename(<file>), <cells in this order>)``, the line-item id of formats whose rows have none."""
    aliases = {f"c{i}": header for i, header in enumerate(cells)}
    # the aliases are generated here, quoted; the file name and hash are bound
    content = f"printf('%016x', hash(parse_filename($path), {', '.join(map(quote_ident, aliases))}))"
    found = matching_rows(con, file, aliases, f"{content} = $hash", {"path": str(file), "hash": row_hash}, occurrence)
    return found[-1][0] if len(found) == occurrence else None
