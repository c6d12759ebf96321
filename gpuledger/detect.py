"""Tell an export's format from its columns, where that is unambiguous."""

from __future__ import annotations

from pathlib import Path

import duckdb

from gpuledger.errors import InputError
from gpuledger.normalize.files import read_raw


def detect_format(con: duckdb.DuckDBPyConnection, file: Path) -> str:
    """``aws-cur1``, ``aws-cur2`` or ``aws-focus``, judged by the header alone."""
    columns = set(read_raw(con, [file]).columns)
    if {"BilledCost", "ChargeCategory", "ProviderName"} <= columns:
        return "aws-focus"
    if "lineItem/UnblendedCost" in columns:
        return "aws-cur1"
    if "line_item_unblended_cost" in columns:
        # CUR 2.0 carries product attributes in a map; CUR 1's Athena flavour spreads them over columns.
        return "aws-cur2" if "product" in columns else "aws-cur1"
    raise InputError(file, "cannot tell the export format from its columns; pass --format")
