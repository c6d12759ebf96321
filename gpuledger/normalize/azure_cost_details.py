"""Azure Cost Management files -> the canonical ``azure_cost_src`` view ``sql/normalize/azure_cost_details.sql`` reads.

One reader serves EA and MCA cost details (actual or amortized, including the short EA column names)
and the 2019-10-01 usage details: headers are matched case-insensitively to :data:`models.azure.AZURE_COLUMNS`,
dates in every format Azure writes become DATE, brace-less Tags become JSON objects, and costs are cast to
DECIMAL from text. Which rows a delivery keeps and how they are amortized is the SQL model's concern
(docs/decisions/0006); the view only says which dataset each row came from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import duckdb

from connectors.azure.exports import dataset_of_file
from gpuledger.normalize.files import cast_expr, file_kind, first_bad_row, read_raw, row_of_content
from gpuledger.warehouse.sqlfiles import create_temp_view, quote_ident, quote_literal
from models.azure import (
    AZURE_COLUMNS,
    COST,
    DATE,
    EA,
    EA_SHORT,
    FOCUS_SOURCE_COLUMNS,
    LEGACY,
    MCA,
    MCA_ONLY_HEADERS,
    NO_REGION_LOCATIONS,
    AzureColumn,
)
from models.errors import InputError

SOURCE_VIEW = "azure_cost_src"
_RAW_VIEW = "azure_cost_raw"
_BOM = "\ufeff"

# Azure writes dates as ISO (with or without a time) or US month/day/year (zero-padded or not).
_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y")
_TIME_PATTERN = r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?( ?[AP]M)?(Z|[+-]\d{2}:?\d{2})?"


def create_actual_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """``azure-actual``: one ActualCost file set."""
    return _create_view(con, raw, files, "actual")


def create_amortized_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """``azure-amortized``: one AmortizedCost file set."""
    return _create_view(con, raw, files, "amortized")


def create_combined_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """``azure-cost-details``: an ActualCost and an AmortizedCost file set of the same scope and period."""
    return _create_view(con, raw, files, "combined")


def create_legacy_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """``azure-legacy``: 2019-10-01 usage details (actual cost)."""
    return _create_view(con, raw, files, "legacy")


def schema_family(columns: Sequence[str]) -> str | None:
    """EA, short-named EA, MCA or legacy usage details, judged by the header; None when not Azure cost data."""
    keys = {_key(c) for c in columns}
    if {"pretaxcost", "usagedatetime"} <= keys:
        return LEGACY
    if "costinbillingcurrency" in keys:
        return MCA if keys & MCA_ONLY_HEADERS else EA
    if {"cost", "chargetype", "date"} <= keys:
        return EA_SHORT
    return None


def source_header(raw_columns: Sequence[str], focus_column: str) -> str | None:
    """The file's own header a FOCUS column is made from (EA, MCA or legacy spelling), for error messages."""
    name = FOCUS_SOURCE_COLUMNS.get(focus_column)
    column = next((c for c in AZURE_COLUMNS if c.name == name), None)
    columns = [c for c in raw_columns if c != "filename"]
    return _resolve(column, _headers_by_key(columns), schema_family(columns) or EA) if column else None


# <dataset>:<content hash>, #<n> on the n-th of identical rows (sql/normalize/azure_cost_details.sql)
_LINE_ITEM_ID = re.compile(r"(?:actual|amortized):([0-9a-f]{16})(?:#([0-9]+))?")


def line_item_row(con: duckdb.DuckDBPyConnection, file: Path, line_item_id: str) -> int | None:
    """The row of ``file`` (1-based) a line-item id of this reader names; None when it names none."""
    match = _LINE_ITEM_ID.fullmatch(line_item_id)
    if match is None:
        return None
    cells = [name for name in read_raw(con, [file]).columns if name != "filename"]
    return row_of_content(con, file, cells, match[1], int(match[2] or 1))


def find_bad_value(con: duckdb.DuckDBPyConnection, file: Path, raw_columns: Sequence[str]) -> InputError | None:
    """First value in ``file`` the view rejects beyond plain casts: a date, Tags, or a stray byte order mark."""
    source_columns = [c for c in raw_columns if c != "filename"]
    if source_columns and file_kind(file) == "csv":
        found = first_bad_row(con, file, source_columns[0], f"starts_with(v, {quote_literal(_BOM)})")
        if found:
            message = "byte order mark in the middle of the file (files concatenated?)"
            return InputError(file, message, row=found[0], column=source_columns[0])
    by_key = _headers_by_key(source_columns)
    family = schema_family(source_columns) or EA
    text = "nullif(trim(CAST(v AS VARCHAR)), '')"
    for column in AZURE_COLUMNS:
        header = _resolve(column, by_key, family)
        if header is None:
            continue
        if column.sql_type == DATE:
            bad, what = f"{_parse_date(text)} IS NULL", "a date"
        else:
            continue
        found = first_bad_row(con, file, header, f"{text} IS NOT NULL AND {bad}")
        if found:
            return InputError(file, f"{found[1]!r} is not {what}", row=found[0], column=header)
    return None


def _create_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path], mode: str
) -> dict[str, str]:
    """Expose ``raw`` as ``azure_cost_src``; returns the file's own headers that are cast, for error diagnostics."""
    create_temp_view(con, _RAW_VIEW, raw)
    header_types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
    source_columns = [name for name in header_types if name != "filename"]
    family = _family_for_mode(files[0], source_columns, mode)
    by_key = _headers_by_key(source_columns)
    selects: list[str] = []
    cast_columns: dict[str, str] = {}
    for column in AZURE_COLUMNS:
        header = _resolve(column, by_key, family)
        if header is None:
            if family in column.required_in:
                raise InputError(files[0], "required column is missing", column=column.display)
            selects.append(f"{_absent(column, family)} AS {quote_ident(column.name)}")
            continue
        selects.append(f"{_typed(column, header, header_types[header])} AS {quote_ident(column.name)}")
        if column.sql_type == COST:
            cast_columns[header] = COST
    selects += _repair_selects(
        _resolve(next(c for c in AZURE_COLUMNS if c.name == "tags"), by_key, family), header_types
    )
    selects.append(f"{_billing_account_type(by_key, family)} AS billing_account_type")
    selects.append(f"{quote_literal(family)} AS source_version")
    selects.append(f"{_dataset_expr(files, mode)} AS dataset")
    selects.append(f"{'true' if mode == 'combined' else 'false'} AS combined")
    # Azure rows have no id: a row is its file's name and its content, numbered among identical rows of its file
    # (legitimate), so ids do not depend on which files are loaded together; hash() is several times cheaper than
    # md5 and, with the numbering, unique ids need no stronger hash.
    cells = ", ".join(quote_ident(c) for c in source_columns)
    selects.append(f"hash(parse_filename(filename), {cells}) AS row_hash")
    selects.append(f"{_bom_guarded_filename(source_columns[0], header_types[source_columns[0]])} AS source_file")
    con.execute(
        # a view body takes no parameters: columns from the file's header and models/azure.py, quoted
        f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * "  # noqa: S608
        # Usage details name no billing period: Azure bills calendar months.
        " REPLACE (coalesce(billing_period_start, CAST(date_trunc('month', usage_date) AS DATE))"
        " AS billing_period_start, coalesce(billing_period_end, last_day(usage_date)) AS billing_period_end)"
        " FROM (SELECT\n  " + ",\n  ".join(selects) + f"\nFROM {_RAW_VIEW})"
    )
    return cast_columns


def _family_for_mode(file: Path, columns: Sequence[str], mode: str) -> str:
    family = schema_family(columns)
    if family is None:
        missing = "PreTaxCost" if mode == "legacy" else "CostInBillingCurrency"
        raise InputError(file, "not an Azure cost details file: required column is missing", column=missing)
    if mode == "legacy" and family != LEGACY:
        raise InputError(
            file, "a cost details file, not 2019-10-01 usage details: pass --format azure-actual or azure-amortized"
        )
    if mode != "legacy" and family == LEGACY:
        raise InputError(file, "2019-10-01 usage details, not cost details: pass --format azure-legacy")
    return family


def _key(header: str) -> str:
    return header.removeprefix(_BOM).strip().lower()


def _headers_by_key(columns: Sequence[str]) -> dict[str, str]:
    by_key: dict[str, str] = {}
    for name in columns:
        by_key.setdefault(_key(name), name)
    return by_key


def _resolve(column: AzureColumn, by_key: dict[str, str], family: str) -> str | None:
    headers = column.mca_headers if family == MCA and column.mca_headers else column.headers
    return next((by_key[h] for h in headers if h in by_key), None)


def _absent(column: AzureColumn, family: str) -> str:
    """What a column the file lacks means: usage details are all usage (their billing month: see _create_view)."""
    if family == LEGACY and column.name == "charge_type":
        return "'Usage'"
    return f"CAST(NULL AS {column.sql_type})"


def _typed(column: AzureColumn, header: str, raw_type: str) -> str:
    ident = quote_ident(header)
    text = cast_expr(header, raw_type, "VARCHAR")
    if column.sql_type == DATE:
        if raw_type.startswith(("DATE", "TIMESTAMP")):
            return f"CAST({ident} AS DATE)"
        return f"CASE WHEN {text} IS NULL THEN NULL ELSE coalesce({_parse_date(text)}, error({_error(column)})) END"
    if column.name == "tags":
        parsed = _tags_parsed(text)
        # Minified, Azure's key order kept; an empty object is no tags; a cell that is no object neither (flagged).
        flat = _flat_object(parsed)
        return f"CASE WHEN {text} IS NOT NULL AND {flat} THEN nullif(CAST(json({parsed}) AS VARCHAR), '{{}}') END"
    if column.name == "pricing_model":
        # "On Demand" (Microsoft's schema pages) and "OnDemand" (files) are one model.
        return f"nullif(replace({text}, ' ', ''), '')"
    if column.name == "resource_location":
        placeholders = ", ".join(quote_literal(p) for p in NO_REGION_LOCATIONS)
        return f"CASE WHEN lower({text}) IN ({placeholders}) THEN NULL ELSE {text} END"
    if column.name == "vm_size":
        # The VM size of VM rows: the GPU catalog key (e.g. Standard_ND96isr_H100_v5).
        return f"CASE WHEN json_valid({text}) THEN nullif(json_extract_string({text}, '$.ServiceType'), '') END"
    return cast_expr(header, raw_type, column.sql_type)


def _repair_selects(tags_header: str | None, header_types: dict[str, str]) -> list[str]:
    """``src_changes`` / ``src_values``: a Tags cell that is no flat JSON object (``""``, text, a nested value) is read
    as no tags and flagged InvalidTags, its text kept; money is never repaired."""
    if tags_header is None:
        return ["CAST([] AS VARCHAR[]) AS src_changes", "CAST(NULL AS VARCHAR) AS src_values"]
    text = cast_expr(tags_header, header_types[tags_header], "VARCHAR")
    broken = f"({text} IS NOT NULL AND NOT coalesce({_flat_object(_tags_parsed(text))}, false))"
    original = f"CASE WHEN {broken} THEN {text} END"
    return [
        f"[CASE WHEN {broken} THEN 'InvalidTags' END] AS src_changes",
        f"source_values([{{'key': {quote_literal(tags_header)}, 'value': {original}}}]) AS src_values",
    ]


def _error(column: AzureColumn) -> str:
    return quote_literal(f"unparseable {column.display} value")


def _parse_date(text: str) -> str:
    """ISO or US month/day/year, optionally followed by a time (Azure rows are daily: the time is dropped)."""
    day = f"split_part(replace({text}, 'T', ' '), ' ', 1)"
    rest = f"trim(substr({text}, length({day}) + 2))"
    formats = ", ".join(quote_literal(f) for f in _DATE_FORMATS)
    with_time = (
        f"CASE WHEN regexp_full_match({rest}, {quote_literal(_TIME_PATTERN)})"
        f" THEN CAST(try_strptime({day}, [{formats}]) AS DATE) END"
    )
    # Plain dates, the common case, skip the regular expression.
    return f"coalesce(CAST(try_strptime({text}, [{formats}]) AS DATE), {with_time})"


def _flat_object(parsed: str) -> str:
    """SQL: the parsed JSON is an object of plain values (FOCUS tags nest nothing)."""
    return f"(json_type({parsed}) = 'OBJECT' AND NOT list_has_any(json_type({parsed}, '$.*'), ['OBJECT', 'ARRAY']))"


def _tags_parsed(text: str) -> str:
    """EA/MCA CSVs write Tags without the outer braces; usage details and Parquet have them. A NUL byte, which JSON
    allows only escaped, is escaped: the load removes it from the tag and flags the row (normalize/macros.sql)."""
    escaped = f"replace({text}, chr(0), '\\u0000')"
    wrapped = f"CASE WHEN starts_with({escaped}, '{{') THEN {escaped} ELSE '{{' || {escaped} || '}}' END"
    return f"TRY_CAST({wrapped} AS JSON)"


def _billing_account_type(by_key: dict[str, str], family: str) -> str:
    if family == MCA:
        return "'Billing Profile'"
    if family == LEGACY and "billingaccountid" not in by_key:
        # Usage details carry no billing account: the subscription is the account of its slice.
        return "'Subscription'"
    return "'Billing Account'"


def _dataset_expr(files: Sequence[Path], mode: str) -> str:
    if mode != "combined":
        return "'amortized'" if mode == "amortized" else "'actual'"
    datasets = {str(f): dataset_of_file(f) for f in files}
    if set(datasets.values()) != {"actual", "amortized"}:
        only = next(iter(set(datasets.values())))
        raise InputError(
            files[0], f"azure-cost-details needs an actual and an amortized export; all files are {only} cost"
        )
    cases = " ".join(f"WHEN {quote_literal(name)} THEN {quote_literal(ds)}" for name, ds in datasets.items())
    return f"CASE filename {cases} END"


def _bom_guarded_filename(header: str, raw_type: str) -> str:
    """A byte order mark opening a row means a second file was pasted in (header and all): refuse it."""
    if raw_type != "VARCHAR":
        return "filename"
    message = quote_literal("byte order mark in the middle of the file")
    return (
        f"CASE WHEN starts_with({quote_ident(header)}, {quote_literal(_BOM)}) THEN error({message}) ELSE filename END"
    )
