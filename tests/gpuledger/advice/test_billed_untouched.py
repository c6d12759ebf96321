"""No advice figure ever enters a billed or chargeback total: every money column of the billed tables sums to the
same per table and currency before and after the advice stage, and the stage refuses to commit if one moved."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from gpuledger.advice import advise as advice_stage
from gpuledger.warehouse.home import open_warehouse
from models.advice import AdviceConfig
from models.errors import ReconciliationError

BILLED_SCHEMAS = ("focus", "allocation", "showback", "chargeback", "meta")


def billed_sums(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Rows and the sum of every DECIMAL column of every table in the billed schemas."""
    columns = con.execute(
        "SELECT schema_name, table_name, list(column_name ORDER BY column_index) FILTER (WHERE data_type LIKE"
        " 'DECIMAL%') FROM duckdb_columns() WHERE database_name = current_database() AND schema_name IN"
        " (SELECT unnest($schemas)) AND NOT internal GROUP BY ALL ORDER BY ALL",
        {"schemas": list(BILLED_SCHEMAS)},
    ).fetchall()
    sums: dict[str, object] = {}
    for schema, table, money in columns:
        selected = ", ".join(["count(*)", *(f'sum("{c}")' for c in money or [])])
        sums[f"{schema}.{table}"] = con.execute(f'SELECT {selected} FROM "{schema}"."{table}"').fetchone()
    return sums


def test_the_advice_stage_changes_no_billed_figure(demo_copy: Path):
    with closing(open_warehouse(demo_copy)) as con:
        before = billed_sums(con)
        result = advice_stage.advise(con, AdviceConfig(memory_headroom=0.2, autostop_idle_minutes=15))
        after = billed_sums(con)
        opportunities = con.execute("SELECT count(*) FROM advice.opportunities").fetchone()
    assert len(before) > 20 and before == after
    assert result.rows["run_profiles"] > 100 and opportunities is not None and opportunities[0] > 0


def test_a_stage_that_moved_billed_money_keeps_nothing(demo_copy: Path, monkeypatch: pytest.MonkeyPatch):
    real = advice_stage.write_advice_config

    def write_and_tamper(con: duckdb.DuckDBPyConnection, config: AdviceConfig) -> None:
        real(con, config)
        con.execute("UPDATE showback.team_month SET total_cost = total_cost + 0.01 WHERE rowid = 0")

    with closing(open_warehouse(demo_copy)) as con:
        con.execute("DROP SCHEMA IF EXISTS advice CASCADE")
        before = billed_sums(con)
        monkeypatch.setattr(advice_stage, "write_advice_config", write_and_tamper)
        with pytest.raises(ReconciliationError, match="moved billed figures"):
            advice_stage.advise(con, AdviceConfig())
        assert billed_sums(con) == before
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'advice'").fetchone() == (0,)
