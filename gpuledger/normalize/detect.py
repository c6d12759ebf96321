"""Tell an export's format from its columns, where that is unambiguous."""

from __future__ import annotations

from pathlib import Path

import duckdb

from gpuledger.normalize import aws_focus, azure_cost_details, azure_focus, gcp_billing
from gpuledger.normalize.files import read_raw
from gpuledger.warehouse.sqlfiles import quote_literal
from models.azure import LEGACY
from models.errors import InputError

# x_ columns only one provider's FOCUS export writes.
_FOCUS_EXTRAS = {
    "aws-focus": {"x_ServiceCode", "x_UsageType", "x_Operation", "x_CostCategories", "x_Discounts"},
    "azure-focus": {"x_SkuMeterCategory", "x_SkuDetails", "x_SkuMeterId", "x_BillingProfileId", "x_ResourceGroupName"},
}
_FOCUS_PROVIDERS = {
    fmt: tuple(p for patterns in profile.first_party.values() for p in patterns)
    for fmt, profile in (("aws-focus", aws_focus.PROFILE), ("azure-focus", azure_focus.PROFILE))
}


def detect_format(con: duckdb.DuckDBPyConnection, file: Path) -> str:
    """``aws-cur1``, ``aws-cur2``, or for FOCUS files ``aws-focus``, ``azure-focus`` or ``focus``."""
    # BigQuery extracts are JSON lines or Parquet with nested columns (invoice, credits, service, ...)
    columns = (
        gcp_billing.json_record_keys(file) if gcp_billing.is_json_file(file) else set(read_raw(con, [file]).columns)
    )
    if gcp_format := gcp_billing.format_from_columns(columns):
        return gcp_format
    if {"BilledCost", "ChargeCategory", "ProviderName"} <= columns:
        return _focus_format(con, file, columns)
    if "lineItem/UnblendedCost" in columns:
        return "aws-cur1"
    if "line_item_unblended_cost" in columns:
        # CUR 2.0 carries product attributes in a map; CUR 1's Athena flavour spreads them over columns.
        return "aws-cur2" if "product" in columns else "aws-cur1"
    if azure_family := azure_cost_details.schema_family(sorted(columns)):
        if azure_family == LEGACY:
            return "azure-legacy"
        # Actual and amortized cost details share one schema: the rows cannot tell them apart.
        raise InputError(
            file,
            "Azure cost details: actual and amortized files look alike; pass --format azure-actual or"
            " azure-amortized (or azure-cost-details for both)",
        )
    raise InputError(file, "cannot tell the export format from its columns; pass --format")


def _focus_format(con: duckdb.DuckDBPyConnection, file: Path, columns: set[str]) -> str:
    """``aws-focus`` or ``azure-focus`` when the rows' providers and the x_ columns all point at one; else ``focus``."""
    cases = " ".join(
        f"WHEN p LIKE {quote_literal(pattern)} THEN {quote_literal(fmt)}"
        for fmt, patterns in _FOCUS_PROVIDERS.items()
        for pattern in patterns
    )
    providers = "SELECT trim(CAST(ProviderName AS VARCHAR)) AS p FROM focus_file"
    # the CASE is generated from the profiles' ProviderName patterns, each quoted as a literal
    query = f"SELECT DISTINCT CASE {cases} ELSE 'focus' END FROM ({providers}) WHERE p NOT IN ('', 'NULL') LIMIT 2"  # noqa: S608
    rows = read_raw(con, [file]).query("focus_file", query).fetchall()
    candidates = {str(row[0]) for row in rows} | {fmt for fmt, extras in _FOCUS_EXTRAS.items() if extras & columns}
    return candidates.pop() if len(candidates) == 1 else "focus"
