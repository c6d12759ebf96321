"""The statement data stored with an issued version: its hash, its figures, and that it equals showback."""

from __future__ import annotations

import json
from contextlib import closing
from decimal import Decimal

import pytest

from gpuledger.chargeback.statement import canonical_json, content_sha256, figures
from gpuledger.warehouse.home import connect_warehouse
from tests.fixtures.report_cases import MONTH, convert

pytestmark = pytest.mark.both_warehouses


def _stored(home):
    with closing(connect_warehouse(home, read_only=True)) as con:
        return con.execute(
            "SELECT version, issued_at, content_sha256, data FROM chargeback.statements ORDER BY version"
        ).fetchall()


def test_the_demo_stores_october_v1_with_the_hash_of_its_canonical_data(demo_home, demo_reports):
    [(version, issued_at, digest, text)] = _stored(demo_home)
    data = json.loads(text)
    assert (version, data["version"], data["month"], data["previous_version"]) == (1, 1, MONTH, None)
    assert data["issued_at"] == issued_at.isoformat() == "2026-12-02T03:00:00+00:00"
    assert canonical_json(data).decode() == text  # stored canonical: sorted keys, no whitespace
    assert content_sha256(data) == digest
    assert (demo_reports / "statement.json").read_bytes() == text.encode()
    assert "version" not in figures(data) and "adjustments" not in figures(data) and "teams" in figures(data)


def test_statement_amounts_equal_showback_and_the_company_total_equals_focus(demo_home, showback):
    data = json.loads(_stored(demo_home)[0][3])
    assert [t["team"] for t in data["teams"]] == showback.teams
    for team in data["teams"]:
        for line in team["lines"]:
            row = showback.line(team["team"], line["currency"])
            rate = showback.rate[line["currency"]]
            assert Decimal(line["amounts"]["total"]) == row["total_cost"]
            assert Decimal(line["amounts"]["idle_allocated"]) == row["idle_allocated_cost"]
            assert (
                Decimal(line["reporting"]["total"])
                == showback.reported(team["team"], line["currency"])["total_cost_reporting"]
            )
            assert Decimal(line["reporting"]["failed_run"]) == convert(row["failed_run_cost"], rate)
            assert line["completed_runs"] == row["completed_runs"]
        assert Decimal(team["reporting_totals"]["total"]) == showback.team_total_reporting(team["team"])
        heat = team["idle_heatmap"]["idle_gpu_hours"]
        for (day, hour), value in showback.idle_hours(team["team"]).items():
            assert abs(Decimal(heat[day - 1][hour]) - value) < Decimal("1e-6")
    company = data["company"]
    total = Decimal(company["reporting_totals"]["total"])
    assert abs(total - showback.company_total_from_focus()) < Decimal("1e-8")  # per-team rounding at 1e-10
    assert total.quantize(Decimal("0.01")) == showback.company_total_from_focus().quantize(Decimal("0.01"))
    for row in company["currencies"]:
        assert Decimal(row["total"]) == showback.focus[row["currency"]] == Decimal(row["focus_effective_cost"])
    assert [r["team"] for r in company["ranking"]] == sorted(
        showback.teams, key=lambda t: -showback.team_total_reporting(t)
    )
    assert data["rates"][0] == {
        "currency": "EUR",
        "reporting_currency": "USD",
        "exchange_rate": "1.079000000000000000",
        "rate_date": "2026-10-31",
        "rate_source": str(demo_home / "rates" / "eur_usd.csv"),
    }
