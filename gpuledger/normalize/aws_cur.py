"""AWS CUR 1 and CUR 2.0 files -> the canonical ``aws_cur_src`` view that ``sql/normalize/aws_cur.sql`` reads.

The reader is where the two generations differ: CUR 1 headers are renamed to CUR 2.0 names, its
``product/*`` columns become plain columns, and its one-column-per-tag ``resourceTags/*`` become the
same tag map CUR 2.0 ships. Every cost is cast to DECIMAL from text (CSV) or double (Parquet).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb

from gpuledger.normalize.files import cast_expr
from gpuledger.warehouse.sqlfiles import create_temp_view, quote_ident, quote_literal
from models.aws_cur import CUR_COLUMNS, FOCUS_SOURCE_COLUMNS, TEXT, CurColumn, cur1_to_snake
from models.errors import InputError

SOURCE_VIEW = "aws_cur_src"

# CUR 2.0 tag keys arrive as user_<key> / aws_<key>; FOCUS wants user keys bare, provider keys prefixed.
_CUR2_TAG_KEY = (
    "CASE WHEN starts_with(e.key, 'user_') THEN e.key[6:]"
    " WHEN starts_with(e.key, 'aws_') THEN 'aws:' || e.key[5:] ELSE e.key END"
)


def create_source_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """Expose ``raw`` (CUR 1 or CUR 2.0 columns) as ``aws_cur_src`` with the canonical typed columns.

    Returns the file's own column names that are cast, with their target type, for error diagnostics.
    """
    create_temp_view(con, "aws_cur_raw", raw)
    header_types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
    by_canonical = {_canonical(name): name for name in header_types}
    product_map = _product_map_expr(header_types)
    selects = []
    cast_columns: dict[str, str] = {}
    repairs = _map_repairs(header_types)
    for column in CUR_COLUMNS:
        header = by_canonical.get(column.name)
        if header is not None and column.repair is not None:
            expr, broken = _lenient_cast(header, header_types[header], column.sql_type)
            repairs[header] = (broken, column.repair)
        elif header is not None:
            expr = cast_expr(header, header_types[header], column.sql_type)
            if column.sql_type != TEXT:
                cast_columns[header] = column.sql_type
        elif column.product_map_key and product_map:
            expr = _cast_text(f"map_extract_value({product_map}, {quote_literal(column.product_map_key)})", column)
        elif column.required:
            # named as the file's generation spells its columns: CUR 1 (lineItem/LineItemType) or CUR 2.0
            cur1 = column.cur1_name is not None and any("/" in name for name in header_types)
            raise InputError(files[0], "required column is missing", column=column.cur1_name if cur1 else column.name)
        else:
            expr = f"CAST(NULL AS {column.sql_type})"
        selects.append(f"{expr} AS {column.name}")
    selects.append(f"{_tags_expr(header_types)} AS tags_json")
    selects.append(f"{_cost_categories_expr(header_types)} AS cost_categories_json")
    selects += _repair_selects(repairs)
    selects.append("filename AS source_file")
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT\n  " + ",\n  ".join(selects) + "\nFROM aws_cur_raw"
    )
    return cast_columns


def source_column(raw_columns: Sequence[str], canonical_name: str) -> str | None:
    """The file's own spelling of a canonical column (used to name columns in errors)."""
    return next((name for name in raw_columns if _canonical(name) == canonical_name), None)


def source_header(raw_columns: Sequence[str], focus_column: str) -> str | None:
    """The file's own column a FOCUS column is made from (CUR 1 or CUR 2.0 spelling), for error messages."""
    canonical = FOCUS_SOURCE_COLUMNS.get(focus_column)
    if canonical is None:
        return None
    if header := source_column(raw_columns, canonical):
        return header
    in_map = next((c for c in CUR_COLUMNS if c.name == canonical and c.product_map_key), None)
    return "product" if in_map and "product" in raw_columns else None


def _canonical(header: str) -> str:
    return cur1_to_snake(header) if "/" in header else header


def _cast_text(expr: str, column: CurColumn) -> str:
    text = f"nullif(trim({expr}), '')"
    return text if column.sql_type == TEXT else f"CAST({text} AS {column.sql_type})"


def _as_map(header: str, header_types: dict[str, str]) -> str:
    """A map column; CUR 2.0 CSV writes maps as JSON text, and text that is no flat object reads as no map, as does a
    Parquet column of another type (a list)."""
    ident = quote_ident(header)
    if header_types[header].startswith("MAP"):
        return ident
    if header_types[header] == TEXT:
        return f"TRY_CAST(TRY_CAST({ident} AS JSON) AS MAP(VARCHAR, VARCHAR))"
    return "CAST(NULL AS MAP(VARCHAR, VARCHAR))"


# CUR 2.0's map columns, and the repair a malformed cell of one is flagged as (x_SourceChanges).
_MAP_REPAIRS = {"resource_tags": "InvalidTags", "cost_category": "InvalidCostCategories", "product": "InvalidProduct"}


def _map_repairs(header_types: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Header -> (SQL test, SourceChange) for map cells that are no flat JSON object (CSV text) or no map at all (a
    Parquet list), read as empty; an empty cell or list is no entries, not flagged."""
    return {
        header: (
            f"({_map_cell(header, header_types[header])} IS NOT NULL AND {_as_map(header, header_types)} IS NULL)",
            change,
        )
        for header, change in _MAP_REPAIRS.items()
        if header in header_types and not header_types[header].startswith("MAP")
    }


def _map_cell(header: str, raw_type: str) -> str:
    ident = quote_ident(header)
    return f"nullif(trim({ident}), '')" if raw_type == TEXT else f"nullif(CAST({ident} AS VARCHAR), '[]')"


def _lenient_cast(header: str, raw_type: str, sql_type: str) -> tuple[str, str]:
    """A descriptive cell as ``sql_type``, NULL where it is none, and the SQL test that flags such a cell."""
    cell = f"nullif(trim({quote_ident(header)}), '')" if raw_type == TEXT else quote_ident(header)
    value = f"TRY_CAST({cell} AS {sql_type})"
    return value, f"({cell} IS NOT NULL AND {value} IS NULL)"


def _repair_selects(repairs: dict[str, tuple[str, str]]) -> list[str]:
    """``src_changes`` and ``src_values``: the repaired cells (header -> (SQL test, SourceChange)) are flagged and
    kept as the source wrote them; money is never among them."""
    if not repairs:
        return ["CAST([] AS VARCHAR[]) AS src_changes", "CAST(NULL AS VARCHAR) AS src_values"]
    changes = ", ".join(f"CASE WHEN {test} THEN {quote_literal(change)} END" for test, change in repairs.values())
    values = ", ".join(
        f"{{'key': {quote_literal(h)}, 'value': CASE WHEN {test} THEN CAST({quote_ident(h)} AS VARCHAR) END}}"
        for h, (test, _) in repairs.items()
    )
    return [f"[{changes}] AS src_changes", f"source_values([{values}]) AS src_values"]


def _product_map_expr(header_types: dict[str, str]) -> str | None:
    return _as_map("product", header_types) if "product" in header_types else None


def _tags_expr(header_types: dict[str, str]) -> str:
    if "resource_tags" in header_types:
        return _map_as_json(_as_map("resource_tags", header_types), _CUR2_TAG_KEY)
    return _columns_as_json(header_types, ("resourceTags/", "resource_tags_"), _cur1_tag_key)


def _cost_categories_expr(header_types: dict[str, str]) -> str:
    if "cost_category" in header_types:
        return _map_as_json(_as_map("cost_category", header_types), "e.key")
    return _columns_as_json(header_types, ("costCategory/", "cost_category_"), lambda name: name)


def _map_as_json(map_expr: str, key_expr: str) -> str:
    """A flat JSON object string from a map, empty values dropped, NULL when nothing is left.

    Built as text: constructing a MAP per row costs several times more than the whole rest of the model.
    """
    pairs = (
        f"list_transform(list_filter(map_entries({map_expr}), e -> nullif(e.value, '') IS NOT NULL),"
        f" e -> to_json({key_expr}) || ':' || to_json(e.value))"
    )
    return f"nullif('{{' || array_to_string({pairs}, ',') || '}}', '{{}}')"


def _cur1_tag_key(name: str) -> str:
    """``user:team`` or ``user_team`` -> ``team``; ``aws:createdBy`` / ``aws_created_by`` keep an ``aws:`` prefix."""
    for user_prefix in ("user:", "user_"):
        if name.startswith(user_prefix):
            return name[len(user_prefix) :]
    for aws_prefix in ("aws:", "aws_"):
        if name.startswith(aws_prefix):
            return "aws:" + name[len(aws_prefix) :]
    return name


def _columns_as_json(header_types: dict[str, str], prefixes: tuple[str, ...], key_of: Callable[[str], str]) -> str:
    """One flat JSON object from CUR 1's one-column-per-key layout, keys sorted, empty cells dropped."""
    entries: dict[str, str] = {}
    for header in header_types:
        prefix = next((p for p in prefixes if header.startswith(p)), None)
        if prefix is not None:
            entries.setdefault(key_of(header[len(prefix) :]), header)
    if not entries:
        return "CAST(NULL AS VARCHAR)"
    pairs = ", ".join(
        f"{quote_literal(json.dumps(key) + ':')} || to_json(nullif(trim(CAST({quote_ident(header)} AS VARCHAR)), ''))"
        for key, header in sorted(entries.items())
    )
    return f"nullif('{{' || concat_ws(',', {pairs}) || '}}', '{{}}')"
