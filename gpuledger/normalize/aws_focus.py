"""AWS FOCUS exports (``FOCUS_1_0_AWS``, ``FOCUS_1_2_AWS``) -> the ``aws_focus_src`` view the SQL model reads.

Every FOCUS 1.2 column is exposed with its spec type (NULL where a 1.0 export lacks it); map columns
(Tags, x_CostCategories) become sorted flat JSON objects whether they arrive as Parquet maps or CSV text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from gpuledger.errors import InputError
from gpuledger.normalize.files import cast_expr
from gpuledger.sqlfiles import quote_ident
from models.focus import FOCUS_COLUMNS, FocusType

SOURCE_VIEW = "aws_focus_src"
# AWS's own x_ columns that gpuledger keeps.
_AWS_EXTRAS = ("x_ServiceCode", "x_UsageType", "x_Operation")
_MAP_COLUMNS = ("Tags", "x_CostCategories")
_REQUIRED = (
    "BilledCost",
    "EffectiveCost",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodStart",
    "ChargeCategory",
)


def create_source_view(
    con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
) -> dict[str, str]:
    """Expose ``raw`` as ``aws_focus_src`` with every FOCUS 1.2 column typed; returns the cast columns."""
    raw.create_view("aws_focus_raw", replace=True)
    header_types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
    for name in _REQUIRED:
        if name not in header_types:
            raise InputError(files[0], "required column is missing", column=name)
    selects, cast_columns = [], {}
    for column in FOCUS_COLUMNS:
        sql_type = column.type.sql
        if column.name in _MAP_COLUMNS and column.name in header_types:
            selects.append(f"{_json_object(column.name, header_types)} AS {column.name}")
        elif column.name in header_types:
            selects.append(f"{cast_expr(column.name, header_types[column.name], sql_type)} AS {column.name}")
            if column.type in (FocusType.DECIMAL, FocusType.DATETIME):
                cast_columns[column.name] = sql_type
        else:
            selects.append(f"CAST(NULL AS {sql_type}) AS {column.name}")
    for name in _AWS_EXTRAS:
        expr = cast_expr(name, header_types[name], "VARCHAR") if name in header_types else "CAST(NULL AS VARCHAR)"
        selects.append(f"{expr} AS {name}")
    cost_categories = _json_object("x_CostCategories", header_types) if "x_CostCategories" in header_types else "NULL"
    selects.append(f"CAST({cost_categories} AS VARCHAR) AS x_CostCategories")
    selects.append(
        "'1.2' AS source_focus_version" if "ServiceSubcategory" in header_types else "'1.0' AS source_focus_version"
    )
    selects.append("filename AS source_file")
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT\n  " + ",\n  ".join(selects) + "\nFROM aws_focus_raw"
    )
    return cast_columns


def _json_object(name: str, header_types: dict[str, str]) -> str:
    """A map (Parquet) or JSON text (CSV) as a sorted flat JSON object string; empty -> NULL."""
    ident = quote_ident(name)
    as_map = (
        ident
        if header_types[name].startswith("MAP")
        else f"CAST(CAST(nullif(trim({ident}), '') AS JSON) AS MAP(VARCHAR, VARCHAR))"
    )
    entries = f"list_sort(list_filter(map_entries({as_map}), e -> e.value IS NOT NULL))"
    return f"CASE WHEN len({entries}) > 0 THEN to_json(map_from_entries({entries}))::VARCHAR END"
