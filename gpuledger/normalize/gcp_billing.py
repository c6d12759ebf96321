"""GCP Cloud Billing export to BigQuery (standard and detailed tables) -> the typed ``gcp_bq_src`` view.

Input is a BigQuery extract: newline-delimited JSON (``.json``/``.jsonl``/``.ndjson``, optionally ``.gz``)
or Parquet with the nested columns. Parquet with the export's schema is read from its typed columns, each leaf as
the text JSON would spell it; JSON lines (and Parquet of any other shape) are parsed with the explicit schema of
``models.gcp`` -- never inferred: every scalar is read as text and cast strictly, so numbers sent as strings in
some rows and as numbers in others, empty arrays, empty objects and valueless labels all read the same way. Every
record is validated before the model runs; the first bad one is refused with its file, row and field path.

List prices the export lacks: ``connectors.gcp.billing`` lands the Cloud Billing Catalog's SKU prices in
``<dataset>/_billing/sku_prices.parquet`` beside the export tables; :func:`create_source_view` puts those of the
delivery's dataset into temp table ``gcp_sku_prices`` (empty without the file), which the model joins for rows
without ``cost_at_list``.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb

from connectors.gcp.exports import billing_account_from_table, extract_of
from gpuledger.normalize.files import decimal_from_text
from gpuledger.warehouse.sqlfiles import load_sql, quote_ident, quote_literal
from models.billing_month import BillingMonth
from models.errors import InputError
from models.gcp import (
    BQ_ARRAYS,
    BQ_CREDIT_FIELDS,
    BQ_FIELDS,
    BQ_KEY_VALUE_LISTS,
    BQ_OBJECTS,
    BQ_TAG_FIELDS,
    COST,
    COST_TYPES,
    FOCUS_SOURCE_FIELDS,
    GCP_CREDIT_TYPES,
    GCP_INVOICE_TIME_ZONE,
    LOOKUP_FOLDER,
    SKU_PRICES_FILE,
    TEXT,
    TIMESTAMP,
    BqField,
)

SKU_PRICES_TABLE = "gcp_sku_prices"
_LINES = "gcp_bq_lines"
_RECORDS = "gcp_bq_records"
_PARQUET_RECORDS = "gcp_bq_parquet_records"
_TYPED = "gcp_bq_typed"
_JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")


def billing_period_start(period: str) -> dt.datetime:
    """A delivery's ``YYYY-MM`` invoice month as the BillingPeriodStart its rows carry: the US/Pacific month start."""
    first_day = BillingMonth.parse(period).first_day
    return dt.datetime.combine(first_day, dt.time(), ZoneInfo(GCP_INVOICE_TIME_ZONE)).astimezone(dt.UTC)


def file_kind(path: Path) -> str:
    """``json`` or ``parquet``; BigQuery cannot extract nested records as CSV, so nothing else is a GCP export."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".parquet") and not path.name.lower().endswith(".gz"):
        return "parquet"
    if name.endswith(_JSON_SUFFIXES):
        return "json"
    raise InputError(path, "unsupported file type for a GCP billing export (expected .json[l][.gz] or .parquet)")


def is_json_file(path: Path) -> bool:
    return path.name.lower().removesuffix(".gz").endswith(_JSON_SUFFIXES)


def json_record_keys(path: Path) -> set[str]:
    """Top-level keys of the first record of a JSON-lines file (to tell its format), empty when there is none."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    return set(record) if isinstance(record, dict) else set()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"unreadable JSON lines: {exc}") from exc
    return set()


def format_from_columns(columns: set[str]) -> str | None:
    """``gcp-bq`` for a billing export table's nested columns, ``gcp-focus`` for Google's FOCUS view, else None."""
    if {"invoice", "credits", "service", "cost", "billing_account_id"} <= columns:
        return "gcp-bq"
    # Google's FOCUS view keeps the export's credits and cost type in its own x_ columns
    return "gcp-focus" if {"BilledCost", "x_Credits", "x_CostType", "x_ServiceId"} <= columns else None


def read_files(con: duckdb.DuckDBPyConnection, files: Sequence[Path]) -> duckdb.DuckDBPyRelation:
    """Every record of the delivery with its file, 1-based row and extract (the ``export_time=`` folder it came
    from, '' for loose files): Parquet with the export's schema as temp view ``gcp_bq_parquet_records`` over its
    typed columns (leaves as text, no JSON round trip, streamed); JSON lines, and Parquet of any other shape, as
    text in temp table ``gcp_bq_lines``, parsed by :func:`create_source_view`."""
    kinds = [file_kind(f) for f in files]
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {_LINES} (file_index INTEGER, source_file VARCHAR, source_label VARCHAR,"
        " source_row BIGINT, extract VARCHAR, line VARCHAR)"
    )
    labels = _line_item_labels(files)
    typed_reads = []
    for index, (file, kind) in enumerate(zip(files, kinds, strict=True)):
        try:
            typed_read = _parquet_records_sql(con, file, index, labels[file]) if kind == "parquet" else None
            if typed_read is None:
                params = {"index": index, "name": str(file), "label": labels[file], "extract": extract_of(file)}
                con.execute(load_sql(f"normalize/gcp_billing_lines_{kind}.sql"), {**params, "file": str(file)})
            else:
                typed_reads.append(typed_read)
        except duckdb.Error as exc:
            raise InputError(file, f"unreadable: {str(exc).strip().splitlines()[0]}") from exc
    columns = "file_index, source_file, source_label, source_row, extract, is_object, shapes, rec"
    none = (
        "SELECT CAST(NULL AS INTEGER) AS file_index, CAST(NULL AS VARCHAR) AS source_file,"
        " CAST(NULL AS VARCHAR) AS source_label, CAST(NULL AS BIGINT) AS source_row, CAST(NULL AS VARCHAR) AS extract,"
        f" CAST(NULL AS BOOLEAN) AS is_object, CAST(NULL AS VARCHAR[]) AS shapes, CAST(NULL AS {_RECORD_TYPE}) AS rec"
        " WHERE false"
    )
    # generated from models/gcp.py and the files' own schemas, every name and path through the quoting helpers
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {_PARQUET_RECORDS} ({columns}) AS " + (" UNION ALL ".join(typed_reads) or none)
    )
    return con.table(_LINES)


def create_source_view(
    con: duckdb.DuckDBPyConnection,
    raw: duckdb.DuckDBPyRelation,
    files: Sequence[Path],
    *,
    source_version: str | None = None,
) -> dict[str, str]:
    """Type and validate the records :func:`read_files` found (Parquet's typed view, ``gcp_bq_lines`` parsed) into
    ``gcp_bq_src``; raise on the first bad record.

    ``raw`` is the relation :func:`read_files` returned. Returns no cast columns: every cast is checked
    here, row by row, so the model itself cannot fail on input values.
    """
    del raw
    _create_sku_prices(con, files)
    con.execute(_records_view_sql())
    repeats_possible = len({extract_of(f) for f in files}) > 1
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_TYPED} AS " + typed_records_sql(source_version, repeats_possible))
    except duckdb.Error as exc:  # a Parquet file read through its typed view, broken past its schema
        named = next((f for f in files if str(f) in str(exc)), files[0])
        raise InputError(named, f"unreadable: {str(exc).strip().splitlines()[0]}") from exc
    if repeats_possible:
        _record_repeated_records(con)
    bad = con.execute(load_sql("normalize/gcp_billing_first_problem.sql")).fetchone()
    if bad:
        raise InputError(bad[0], bad[3], row=int(bad[1]), column=bad[2])
    con.execute(load_sql("normalize/gcp_billing_source_view.sql"))
    return {}


def sku_prices_files(files: Sequence[Path]) -> list[Path]:
    """The landed SKU price lists of the datasets holding ``files``: ``<dataset>/_billing/sku_prices.parquet``.

    A file's dataset is the parent of its nearest ancestor folder named like an export table; loose files
    (no such ancestor) have no dataset and so no landed prices.
    """
    found: set[Path] = set()
    for file in files:
        table = next((p for p in file.parents if billing_account_from_table(p.name)), None)
        if table is not None and (prices := table.parent / LOOKUP_FOLDER / SKU_PRICES_FILE).is_file():
            found.add(prices)
    return sorted(found)


def _create_sku_prices(con: duckdb.DuckDBPyConnection, files: Sequence[Path]) -> None:
    """Temp table ``gcp_sku_prices``: one Catalog price per (SKU, currency), the newest; empty without a file."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {SKU_PRICES_TABLE} (sku_id VARCHAR, currency VARCHAR,"
        " usage_unit_description VARCHAR, unit_price DECIMAL(38, 9), tier_start_amount DOUBLE, tier_count INTEGER)"
    )
    prices = sku_prices_files(files)
    if not prices:
        return
    try:
        con.execute(load_sql("normalize/gcp_sku_prices.sql"), {"files": [str(p) for p in prices]})
    except duckdb.Error as exc:
        raise InputError(prices[0], f"unreadable SKU price list: {str(exc).strip().splitlines()[0]}") from exc


def _line_item_labels(files: Sequence[Path]) -> dict[Path, str]:
    """Prefix of x_SourceLineItemId per file: its name, or its full path when two files share a name."""
    names = [f.name for f in files]
    return {f: f.name if names.count(f.name) == 1 else str(f) for f in files}


def source_header(raw_columns: Sequence[str], focus_column: str) -> str | None:
    """The record field (dotted path) a FOCUS column is made from, for error messages."""
    del raw_columns  # every record has the same fields
    return FOCUS_SOURCE_FIELDS.get(focus_column)


def focus_view_source_header(raw_columns: Sequence[str], focus_column: str) -> str | None:
    """``gcp-focus``: the view's own column the export field behind a FOCUS column was mapped from."""
    field = source_header(raw_columns, focus_column)
    return FOCUS_VIEW_COLUMNS.get(field, field) if field else None


def find_record(
    con: duckdb.DuckDBPyConnection, files: Sequence[Path], field: str, predicate: str, params: dict[str, object]
) -> tuple[Path, int, str] | None:
    """The first record (file, 1-based row, value as text) whose typed ``field`` satisfies ``predicate`` over
    ``v``; records are numbered per file as read, so the row is the file's own."""
    del files  # the typed records of the delivery are in gcp_bq_typed already
    column = quote_ident(next(f.column for f in BQ_FIELDS if f.path == field))
    found = con.execute(
        # column from models/gcp.py, quoted; the predicate over v is the caller's own SQL, values bound
        f"SELECT source_file, source_row, CAST(v AS VARCHAR) FROM (SELECT *, {column} AS v FROM {_TYPED})"  # noqa: S608
        f" WHERE {predicate} ORDER BY file_index, source_row LIMIT 1",
        params,
    ).fetchone()
    return (Path(found[0]), int(found[1]), str(found[2])) if found else None


# The n-th copy of a record within its extract is kept from the oldest extract that has an n-th copy; a record is
# its typed values ({key}), so the spelling of a number or time in JSON or Parquet does not make it another.
_REPEATS_ONCE = """SELECT * EXCLUDE (record, copy) FROM (
        SELECT *, row_number() OVER (PARTITION BY extract, record ORDER BY file_index, source_row) AS copy
        FROM (SELECT *, CAST({key} AS VARCHAR) AS record FROM typed)
    )
    QUALIFY NOT is_object
        OR row_number() OVER (PARTITION BY record, copy ORDER BY file_index, source_row) = 1"""
_RECORD_LISTS = ("labels", "system_labels", "project_labels", "tags", "credits")
"""The typed record's list columns, beside one column per field of ``BQ_FIELDS``."""


def record_structure() -> dict[str, Any]:
    """The explicit ``json_transform`` structure: every leaf is text, repeated records are lists of objects, every
    object's fields in name order (the order ``json_transform`` gives them)."""
    structure: dict[str, Any] = {}
    for field in BQ_FIELDS:
        _put(structure, field.path, TEXT)
    for path in BQ_KEY_VALUE_LISTS:
        _put(structure, path, [{"key": TEXT, "value": TEXT}])
    _put(structure, "tags", [dict.fromkeys(BQ_TAG_FIELDS, TEXT)])
    _put(structure, "credits", [dict.fromkeys(BQ_CREDIT_FIELDS, TEXT)])
    return _ordered(structure)


def _ordered(node: Any) -> Any:
    if isinstance(node, dict):
        return {name: _ordered(node[name]) for name in sorted(node)}
    return [_ordered(node[0])] if isinstance(node, list) else node


def _put(structure: dict[str, Any], path: str, leaf: object) -> None:
    *parents, name = path.split(".")
    node = structure
    for parent in parents:
        node = node.setdefault(parent, {})
    node[name] = leaf


def _field(path: str, record: str = "rec") -> str:
    """``rec.<path>``, each step of the dotted path (models/gcp.py) quoted."""
    return ".".join([record, *(quote_ident(step) for step in path.split("."))])


def _text(path: str) -> str:
    return f"nullif(trim({_field(path)}), '')"


def _typed(field: BqField) -> str:
    text = _text(field.path)
    if field.sql_type == COST:
        return _decimal(text)
    if field.sql_type == TIMESTAMP:
        return f"TRY_CAST({text} AS TIMESTAMPTZ)"
    return text


def _decimal(text: str) -> str:
    # 64-bit decimals parse much faster than 128-bit; both round to scale 10 the same way.
    return decimal_from_text(text, strict=False)


Problem = tuple[str, str]
"""A per-record check: its condition, and the ``{path, message}`` it reports (NULL when the condition is not met)."""


def _problem(path: str | None, message_sql: str, condition: str) -> Problem:
    path_sql = quote_literal(path) if path is not None else "CAST(NULL AS VARCHAR)"
    return condition, f"CASE WHEN {condition} THEN {{'path': {path_sql}, 'message': {message_sql}}} END"


def _problems() -> list[Problem]:
    """Per-record checks, most basic first; the first that fires is reported."""
    checks = [_problem(None, quote_literal("malformed JSON: not one JSON object on this line"), "NOT is_object")]
    for position, path in enumerate(_SHAPE_PATHS, start=1):
        if path in _TAG_LISTS:
            continue  # descriptive: repaired (see _invalid_tags)
        expected = "OBJECT" if path in BQ_OBJECTS else "ARRAY"
        found = f"shapes[{position}]"
        checks.append(
            _problem(
                path,
                f"{quote_literal(f'expected a JSON {expected.lower()}, found ')} || lower({found})",
                f"{found} NOT IN ({quote_literal(expected)}, 'NULL')",
            )
        )
    checks.append(
        _problem(
            "credits", quote_literal("an element is not a JSON object"), "list_position(rec.credits, NULL) IS NOT NULL"
        )
    )
    for field in BQ_FIELDS:
        if field.required:
            checks.append(
                _problem(field.path, quote_literal("required value is missing"), f"{_text(field.path)} IS NULL")
            )
    for field in BQ_FIELDS:
        if field.sql_type != TEXT:
            text = _text(field.path)
            checks.append(
                _problem(
                    field.path,
                    f"{text} || {quote_literal(f' is not a valid {field.sql_type}')}",
                    f"{text} IS NOT NULL AND {quote_ident(field.column)} IS NULL",
                )
            )
    checks.append(
        _problem(
            "invoice.month",
            f"{_text('invoice.month')} || ' is not a YYYYMM month'",
            f"NOT regexp_full_match({_text('invoice.month')}, '[0-9]{{6}}')"
            f" OR TRY_STRPTIME({_text('invoice.month')}, '%Y%m') IS NULL",
        )
    )
    allowed_cost_types = ", ".join(quote_literal(t) for t in COST_TYPES)
    checks.append(
        _problem(
            "cost_type",
            f"'unknown cost type ' || {_text('cost_type')}",
            f"{_text('cost_type')} NOT IN ({allowed_cost_types})",
        )
    )
    checks.append(
        _problem(
            "usage_end_time",
            "'usage_end_time ' || usage_end_time || ' is not after usage_start_time ' || usage_start_time",
            "usage_end_time <= usage_start_time",
        )
    )
    checks.extend(_credit_problems())
    return checks


# Labels and tags are descriptive: a list that is none (a string, an object) or holds an element that is no object
# reads as no labels (those elements) and is flagged InvalidTags, never a reason to refuse the file.
_TAG_LISTS = ("labels", "system_labels", "tags", "project.labels")


def _invalid_tags() -> str:
    """SQL: the record's labels or tags were malformed (see :data:`_TAG_LISTS`)."""
    wrong = [
        f"coalesce(shapes[{_SHAPE_PATHS.index(path) + 1}] NOT IN ('ARRAY', 'NULL'), false)"
        # an element that is no object reads as NULL, or as a record without key and value
        f" OR coalesce(list_bool_or(list_transform({_field(path)}, e -> e.key IS NULL AND e.value IS NULL)), false)"
        for path in _TAG_LISTS
    ]
    return " OR ".join(wrong)


def _credit_problems() -> list[Problem]:
    """The first credit with a missing or bad amount, or a type the model does not know, named by its index."""
    known = ", ".join(quote_literal(t) for t in sorted(GCP_CREDIT_TYPES))
    # (field, condition on credit {c}, message about credit {c}); {c} is a struct with ordinal, raw and amount.
    cases = (
        ("amount", "nullif(trim({c}.raw.amount), '') IS NULL", "'credit amount is missing'"),
        ("amount", "{c}.amount IS NULL", "trim({c}.raw.amount) || " + quote_literal(" is not a valid " + COST)),
        (
            "type",
            "coalesce(nullif(trim({c}.raw.type), ''), '-') NOT IN (" + known + ")",
            "'unknown credit type ' || coalesce(nullif(trim({c}.raw.type), ''), 'NULL')",
        ),
    )
    problems = []
    for field, condition, message in cases:
        first = "list_filter(credit_checks, c -> " + condition.format(c="c") + ")[1]"
        problems.append(
            (
                f"{first} IS NOT NULL",
                f"CASE WHEN {first} IS NOT NULL THEN {{'path': 'credits[' || {first}.ordinal || '].{field}',"
                f" 'message': {message.format(c=first)}}} END",
            )
        )
    return problems


def _credit_struct(element: str) -> str:
    """One typed credit: text fields trimmed, ``amount`` as DECIMAL, plus its 1-based ``ordinal``."""
    fields = [
        f"{quote_literal(name)}: "
        + (
            _decimal(f"nullif(trim({element}.{quote_ident(name)}), '')")
            if name == "amount"
            else f"nullif(trim({element}.{quote_ident(name)}), '')"
        )
        for name in BQ_CREDIT_FIELDS
    ]
    return "{'ordinal': i, " + ", ".join(fields) + "}"


def _record_repeated_records(con: duckdb.DuckDBPyConnection) -> None:
    """How many records repeated an earlier extract's (counted once): the delivery's skipped rows."""
    skipped = con.execute(load_sql("normalize/gcp_billing_repeated_records.sql")).fetchone()
    if skipped and skipped[0]:
        con.execute("INSERT INTO source_skipped VALUES ('RepeatedExtractRecord', $rows)", {"rows": skipped[0]})


def _records_view_sql() -> str:
    """Temp view ``gcp_bq_records``: the typed Parquet records, then the records of ``gcp_bq_lines`` (JSON text)
    parsed with the explicit structure, with the JSON type found at each checked object and array path."""
    structure = quote_literal(json.dumps(record_structure()))
    shape_paths = ", ".join(quote_literal("$." + p) for p in _SHAPE_PATHS)
    # S608 excused at the closing quotes: paths and the structure from models/gcp.py, quoted
    return f"""
CREATE OR REPLACE TEMP VIEW {_RECORDS} AS
WITH lines AS (
    SELECT file_index, source_file, source_label, source_row, extract, line
    FROM {_LINES}
    -- a blank line carries no record (row numbers still count it)
    WHERE nullif(trim(line), '') IS NOT NULL
),

parsed AS (
    SELECT *, CASE WHEN json_valid(line) THEN json_type(line) = 'OBJECT' ELSE false END AS is_object
    FROM lines
)

SELECT * FROM {_PARQUET_RECORDS}
UNION ALL
SELECT
    file_index, source_file, source_label, source_row, extract, is_object,
    CASE WHEN is_object THEN json_type(line, [{shape_paths}]) END AS shapes,
    CASE WHEN is_object THEN CAST(json_transform(line, {structure}) AS {_RECORD_TYPE}) END AS rec
FROM parsed
"""  # noqa: S608


_SHAPE_PATHS = (*BQ_OBJECTS, *BQ_ARRAYS)


def _struct_type(node: Any) -> str:
    """The DuckDB type of a structure node: VARCHAR leaves, STRUCTs, lists of STRUCTs."""
    if isinstance(node, dict):
        return "STRUCT(" + ", ".join(f"{quote_ident(k)} {_struct_type(v)}" for k, v in node.items()) + ")"
    if isinstance(node, list):
        return _struct_type(node[0]) + "[]"
    return TEXT


_RECORD_TYPE = _struct_type(record_structure())
"""The type of a record as read: every leaf text (``gcp_bq_records.rec``)."""
_PARQUET_SOURCE = "src"


def _parquet_records_sql(con: duckdb.DuckDBPyConnection, file: Path, index: int, label: str) -> str | None:
    """SELECT a Parquet file's records straight from its columns (leaves cast to text as JSON spells them), or None
    when its schema is not the export's: a missing required column, or an object, array or scalar where the
    structure has another kind (such files go through JSON and its per-record checks). ``index`` is the file's
    position in the delivery, ``label`` the prefix of its x_SourceLineItemId. Literals, not parameters: it is
    part of a view."""
    # LIMIT 0: a relation made with bound parameters is executed at once
    schema = con.sql("SELECT * FROM read_parquet($file, hive_partitioning = false) LIMIT 0", params={"file": str(file)})
    top = dict(zip(schema.columns, schema.types, strict=True))
    if not {f.path for f in BQ_FIELDS if f.required and "." not in f.path} <= top.keys():
        return None
    source = quote_ident(_PARQUET_SOURCE)
    fields = []
    for name, node in record_structure().items():
        value = _parquet_value(f"{source}.{quote_ident(name)}", node, top.get(name), depth=0)
        if value is None:
            return None
        fields.append(f"{quote_literal(name)}: {value}")
    shapes = ", ".join(_parquet_shape(path, top) for path in _SHAPE_PATHS)
    # S608 excused at the closing quotes: the record and shapes are generated from models/gcp.py, quoted.
    # hive_partitioning off: the export_time= folder names would otherwise override the records' own export_time
    path = quote_literal(str(file))
    file_columns = f"{index}, {path}, {quote_literal(label)}, file_row_number + 1, {quote_literal(extract_of(file))}"
    return f"""
SELECT {file_columns}, true, [{shapes}], CAST({{{", ".join(fields)}}} AS {_RECORD_TYPE})
FROM read_parquet({path}, file_row_number = true, hive_partitioning = false) AS {source}
"""  # noqa: S608


def _parquet_shape(path: str, top: dict[str, duckdb.DuckDBPyType]) -> str:
    """What ``json_type`` would say of an object or array path: NULL when the file has no such field."""
    first, *rest = path.split(".")
    found: duckdb.DuckDBPyType | None = top.get(first)
    for step in rest:
        found = dict(found.children).get(step) if found is not None and found.id == "struct" else None
    if found is None:
        return "CAST(NULL AS VARCHAR)"
    kind = "OBJECT" if path in BQ_OBJECTS else "ARRAY"
    return f"CASE WHEN {_field(path, quote_ident(_PARQUET_SOURCE))} IS NULL THEN 'NULL' ELSE '{kind}' END"


def _parquet_value(expr: str, node: Any, found: duckdb.DuckDBPyType | None, depth: int) -> str | None:
    """``expr`` (of Parquet type ``found``, None when absent) as the structure ``node`` wants it, or None when it
    has another kind."""
    if found is None:
        return f"CAST(NULL AS {_struct_type(node)})"
    if isinstance(node, dict):
        if found.id != "struct":
            return None
        children = dict(found.children)
        fields = []
        for name, child in node.items():
            value = _parquet_value(f"{expr}.{quote_ident(name)}", child, children.get(name), depth)
            if value is None:
                return None
            fields.append(f"{quote_literal(name)}: {value}")
        return f"CASE WHEN {expr} IS NULL THEN NULL ELSE {{{', '.join(fields)}}} END"
    if isinstance(node, list):
        if found.id != "list":
            return None
        element = f"e{depth}"
        value = _parquet_value(element, node[0], found.child, depth + 1)
        return None if value is None else f"list_transform({expr}, {element} -> {value})"
    if found.id in ("struct", "list", "map", "union", "array"):
        return None
    if str(found) == "JSON":  # a column whose values mix strings and numbers: their text, as from JSON lines
        return f"json_transform({expr}, '\"VARCHAR\"')"
    # numbers as their JSON text, so a record reads (and repeats) the same from Parquet as from JSON
    numeric = found.id in _NUMERIC_TYPES
    return f"CAST(to_json({expr}) AS VARCHAR)" if numeric else f"CAST({expr} AS VARCHAR)"


_NUMERIC_TYPES = frozenset(
    (
        "tinyint",
        "smallint",
        "integer",
        "bigint",
        "hugeint",
        "utinyint",
        "usmallint",
        "uinteger",
        "ubigint",
        "uhugeint",
        "float",
        "double",
        "decimal",
    )
)


def typed_records_sql(source_version: str | None = None, repeats_possible: bool = False) -> str:
    """SELECT producing one typed row per record of ``gcp_bq_records``, with the first problem found (or NULL).

    ``source_version`` names the source table for x_SourceVersion; by default it is told per record.
    ``repeats_possible``: the records come from several extracts of the month. BigQuery's export table is
    append-only, so a record (its typed values but its ``export_time``: field order, the spelling of numbers and
    times, JSON or Parquet, and fields gpuledger does not read aside) that an earlier extract delivered too is the
    same row delivered again, even stamped with a later export time, not a new charge: a record occurring n times
    in one extract and m times in another counts max(n, m) times, from the oldest extract holding it (twins within
    one extract are held: sql/gates/holds/twin_rows.sql). Appended corrections are new records and add.
    """
    resource_position = len(BQ_OBJECTS) - BQ_OBJECTS[::-1].index("resource")
    scalar_columns = ",\n        ".join(f"{_typed(f)} AS {quote_ident(f.column)}" for f in BQ_FIELDS)
    checks = _problems()
    problems = ",\n            ".join(report for _, report in checks)
    # the list of reports is built only for a record failing some check: most records fail none
    any_problem = "\n        OR ".join(f"({condition})" for condition, _ in checks)
    # the time of the append is no part of the charge: a record appended again later is the same record
    columns = (*(quote_ident(f.column) for f in BQ_FIELDS if f.path != "export_time"), *_RECORD_LISTS)
    record_key = "struct_pack(" + ", ".join(columns) + ")"
    version = (
        quote_literal(source_version)
        if source_version
        else f"CASE WHEN shapes[{resource_position}] IS NOT NULL THEN 'gcp_billing_export_resource_v1'"
        " ELSE 'gcp_billing_export_v1' END"
    )
    # S608 excused at the closing quotes: fields, paths and literals from models/gcp.py, quoted
    return f"""
WITH records AS (
    SELECT * FROM {_RECORDS}
),

typed AS (
    SELECT
        file_index,
        source_file,
        source_row,
        source_label || ':' || source_row AS source_line_item_id,
        {version} AS source_version,
        {scalar_columns},
        list_filter(rec.labels, l -> nullif(l.key, '') IS NOT NULL) AS labels,
        list_filter(rec.system_labels, l -> nullif(l.key, '') IS NOT NULL) AS system_labels,
        list_filter(rec.project.labels, l -> nullif(l.key, '') IS NOT NULL) AS project_labels,
        list_filter(rec.tags, t -> nullif(t.key, '') IS NOT NULL) AS tags,
        {_invalid_tags()} AS invalid_tags,
        list_transform(list_filter(rec.credits, c -> c IS NOT NULL), (c, i) -> {_credit_struct("c")}) AS credits,
        list_transform(list_filter(rec.credits, c -> c IS NOT NULL), (c, i) -> {{
            'ordinal': i, 'raw': c, 'amount': {_decimal("nullif(trim(c.amount), '')")}}}) AS credit_checks,
        is_object,
        shapes,
        rec,
        extract
    FROM records
),

delivered_once AS (
    {_REPEATS_ONCE.format(key=record_key) if repeats_possible else "SELECT * FROM typed"}
)

SELECT
    * EXCLUDE (credit_checks, is_object, shapes, rec, extract),
    CASE WHEN {any_problem} THEN list_filter([
        {problems}
    ], p -> p IS NOT NULL)[1] END AS problem
FROM delivered_once
"""  # noqa: S608


# Google's FOCUS view (template 2024-03-19) -> the export's own fields: the view keeps cost before credits in
# BilledCost and the credits in x_Credits, so the export model (and its credit policy) applies unchanged.
_FOCUS_VIEW_VERSION = "gcp_focus_view_2024_03_19"
# export field path -> the view's column, to name the file's own column in errors
FOCUS_VIEW_COLUMNS = {
    "billing_account_id": "BillingAccountId",
    "invoice.month": "BillingPeriodStart",
    "cost_type": "x_CostType",
    "service.id": "x_ServiceId",
    "service.description": "ServiceName",
    "sku.id": "SkuId",
    "sku.description": "ChargeDescription",
    "usage_start_time": "ChargePeriodStart",
    "usage_end_time": "ChargePeriodEnd",
    "export_time": "x_ExportTime",
    "cost": "BilledCost",
    "cost_at_list": "ListCost",
    "currency": "BillingCurrency",
    "currency_conversion_rate": "x_CurrencyConversionRate",
    "usage.amount": "ConsumedQuantity",
    "credits": "x_Credits",
    "tags": "Tags",
    "labels": "Tags",
    "system_labels": "Tags",
    "project.labels": "Tags",
    "project": "x_Project",
}


def create_focus_view_source_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """``gcp-focus``: Google's FOCUS view records, mapped back to export fields, then read like ``gcp-bq``."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_LINES} AS " + load_sql("normalize/gcp_focus_view_records.sql"))
    try:
        return create_source_view(con, raw, files, source_version=_FOCUS_VIEW_VERSION)
    except InputError as exc:
        path = (exc.column or "").split("[")[0]
        column = FOCUS_VIEW_COLUMNS.get(path, exc.column) if exc.column else None
        raise InputError(exc.file, exc.reason, row=exc.row, column=column) from exc
