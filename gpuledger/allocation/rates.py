"""Exchange rates into the reporting currency: a user's dated rate table, validated and stored with its source."""

from __future__ import annotations

import duckdb

from gpuledger.normalize.files import first_bad_row, read_raw
from gpuledger.warehouse.database import replace_ref_table
from gpuledger.warehouse.sqlfiles import create_temp_view
from models.config import ReportingConfig
from models.currencies import ISO_4217_CODES
from models.errors import InputError

# column -> (SQL over the raw text v that is true for a bad value, what is wrong)
_RULES = {
    "date": ("TRY_CAST(nullif(trim(v), '') AS DATE) IS NULL", "is not a date (YYYY-MM-DD)"),
    "currency": ("NOT list_contains($codes, trim(v))", "is not an ISO 4217 currency code"),
    "rate": (
        "TRY_CAST(nullif(trim(v), '') AS DECIMAL(38, 18)) IS NULL OR CAST(trim(v) AS DECIMAL(38, 18)) <= 0",
        "is not a positive decimal rate",
    ),
}


def store_exchange_rates(con: duckdb.DuckDBPyConnection, reporting: ReportingConfig) -> None:
    """Replace ``alloc.reporting`` and ``alloc.exchange_rates`` with the configured currency and rate file."""
    replace_ref_table(con, "alloc.reporting", ("currency",), [(reporting.currency,)] if reporting.currency else [])
    con.execute("DELETE FROM alloc.exchange_rates")
    if reporting.currency is None or reporting.rates is None:
        return
    path = reporting.rates
    raw = read_raw(con, [path])
    missing = [c for c in _RULES if c not in raw.columns]
    if missing:
        raise InputError(path, "required column is missing", column=missing[0])
    params = {"codes": sorted(ISO_4217_CODES)}
    for column, (predicate, problem) in _RULES.items():
        bad = first_bad_row(con, path, column, predicate, params if "$codes" in predicate else None)
        if bad:
            raise InputError(path, f"{bad[1]!r} {problem}", row=bad[0], column=column)
    create_temp_view(con, "rates_raw", raw)
    con.execute(
        "INSERT INTO alloc.exchange_rates SELECT CAST(trim(date) AS DATE), trim(currency), $reporting,"
        " CAST(trim(rate) AS DECIMAL(38, 18)), $file FROM rates_raw",
        {"reporting": reporting.currency, "file": str(path)},
    )
    duplicate = con.execute(
        "SELECT rate_date, currency FROM alloc.exchange_rates GROUP BY ALL HAVING count(*) > 1 LIMIT 1"
    ).fetchone()
    if duplicate:
        raise InputError(path, f"two rates for {duplicate[1]} on {duplicate[0]}", column="date")
