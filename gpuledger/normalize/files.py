"""Reading export data files into DuckDB relations, and pinpointing bad values in them.

CSV is always read as text (``all_varchar``) and cast explicitly by the format's reader, so a cost
column is never typed by sniffing. Parquet keeps its declared types. The files of a delivery are matched
by column name (case-insensitively, as DuckDB binds names), never by position, and must all have the same
columns: a file lacking one would otherwise read as NULLs there.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpuledger.errors import InputError
from gpuledger.sqlfiles import quote_ident

_CHUNK = 1 << 20


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
    names = [str(f) for f in files]
    try:
        if kinds == {"parquet"}:
            raw = con.read_parquet(names, filename=True, union_by_name=True)
        else:
            raw = con.read_csv(names, header=True, all_varchar=True, filename=True, union_by_name=True)
    except duckdb.Error as exc:
        raise _file_error(con, files, exc) from exc
    if len(files) > 1:
        _require_same_columns(con, files, raw.columns)
    return raw


def _require_same_columns(con: duckdb.DuckDBPyConnection, files: Sequence[Path], columns: Sequence[str]) -> None:
    """Every file of the delivery has every column of the union (in any order): none is silently NULL."""
    holders: dict[str, Path] = {}
    per_file: list[tuple[Path, dict[str, str]]] = []
    for file in files:
        try:
            own = {c.lower(): c for c in _single_file(con, file).columns}
        except duckdb.Error as exc:
            raise InputError(file, f"unreadable: {_first_line(exc)}") from exc
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
        return con.read_parquet(str(file))
    return con.read_csv(str(file), header=True, all_varchar=True)


def cast_expr(header: str, raw_type: str, sql_type: str) -> str:
    """SQL that turns a file's column into ``sql_type``: CSV text is trimmed, '' is NULL, casts are strict."""
    ident = quote_ident(header)
    if raw_type == "VARCHAR":
        text = f"nullif(trim({ident}), '')"
        if sql_type == "VARCHAR":
            return text
        if sql_type == "DECIMAL(38,10)":
            # Text -> 128-bit decimal parses ~40x slower than -> 64-bit; values that fit take the fast path,
            # the rest (and bad input, which then raises) the exact wide cast. Same rounding either way.
            return f"coalesce(TRY_CAST({text} AS DECIMAL(18,10)), CAST({text} AS {sql_type}))"
        return f"CAST({text} AS {sql_type})"
    if sql_type == "VARCHAR":
        return f"nullif(CAST({ident} AS VARCHAR), '')"
    return f"CAST({ident} AS {sql_type})"


def _file_error(con: duckdb.DuckDBPyConnection, files: Sequence[Path], exc: duckdb.Error) -> InputError:
    """Name the file a DuckDB read error comes from (DuckDB's message may not)."""
    for file in files:
        try:
            if file_kind(file) == "parquet":
                con.execute("SELECT count(*) FROM read_parquet($file)", {"file": str(file)}).fetchall()
            else:
                con.execute(
                    "SELECT count(*) FROM read_csv($file, header = true, all_varchar = true)",
                    {"file": str(file)},
                ).fetchall()
        except duckdb.Error as file_exc:
            return InputError(file, f"unreadable: {_first_line(file_exc)}")
    return InputError(files[0], f"unreadable delivery: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0]


@dataclass(frozen=True)
class FileStats:
    bytes: int
    sha256: str


def verify_files(files: Sequence[Path]) -> FileStats:
    """Hash the delivery and prove every gzip member is complete.

    DuckDB reads a truncated gzip file as if it simply ended, which would silently drop rows.
    """
    digest = hashlib.sha256()
    total = 0
    for file in files:
        is_gzip = file.name.lower().endswith((".gz", ".gzip"))
        inflater = zlib.decompressobj(wbits=47) if is_gzip else None
        with file.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
                total += len(chunk)
                if inflater is not None:
                    _inflate(file, inflater, chunk)
        if inflater is not None:
            _finish_gzip(file, inflater)
    return FileStats(bytes=total, sha256=digest.hexdigest())


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
    Runs single-threaded with insertion order kept so the row number is the file's own.
    """
    if file_kind(file) == "parquet":
        source = "SELECT file_row_number + 1 AS rn, {col} AS v FROM read_parquet($file, file_row_number = true)"
    else:
        source = "SELECT row_number() OVER () AS rn, {col} AS v FROM read_csv($file, header = true, all_varchar = true)"
    query = f"SELECT rn, CAST(v AS VARCHAR) FROM ({source.format(col=quote_ident(column))}) WHERE {bad_value_predicate}"
    settings = con.execute("SELECT current_setting('threads'), current_setting('preserve_insertion_order')").fetchone()
    con.execute("SET threads = 1")
    con.execute("SET preserve_insertion_order = true")
    try:
        found = con.execute(query + " ORDER BY rn LIMIT 1", {"file": str(file), **(params or {})}).fetchone()
    finally:
        assert settings is not None
        con.execute(f"SET threads = {int(settings[0])}")
        con.execute(f"SET preserve_insertion_order = {'true' if settings[1] else 'false'}")
    return (int(found[0]), str(found[1])) if found else None
