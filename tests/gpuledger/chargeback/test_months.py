"""The month lifecycle on the demo: open -> closed (rates locked) -> issued, and restatements as adjustments."""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.chargeback.months import closes_on, issue_month, month_states, refreshable_months
from gpuledger.warehouse.home import open_warehouse
from models.config import MonthsConfig
from models.errors import GpuledgerError
from pipelines.cli import main
from tests.fixtures.restatements import restate_october

pytestmark = pytest.mark.both_warehouses

NOW = datetime(2026, 12, 2, 3, tzinfo=UTC)  # tests/conftest.py pins the pipeline's clock to the same time


@pytest.mark.parametrize(
    ("now", "days", "expected"),
    [
        (datetime(2026, 12, 2, tzinfo=UTC), {}, ["2026-11", "2026-12"]),  # November's AWS window runs to 12-15
        (datetime(2026, 12, 20, tzinfo=UTC), {}, ["2026-12"]),
        (datetime(2026, 12, 2, tzinfo=UTC), {"aws": 40}, ["2026-10", "2026-11", "2026-12"]),
        (datetime(2026, 1, 3, tzinfo=UTC), {"aws": 0, "azure": 0, "gcp": 0, "focus": 0}, ["2026-01"]),
    ],
)
def test_refreshable_months_are_the_current_one_and_those_inside_a_close_window(now, days, expected):
    config = MonthsConfig({**MonthsConfig().close_after_days, **days})
    assert refreshable_months(config, now) == expected


def test_a_month_closes_when_its_slowest_provider_is_final():
    config = MonthsConfig()
    assert closes_on("2026-11", ["azure", "gcp"], config) == date(2026, 12, 6)
    assert closes_on("2026-11", ["azure", "aws"], config) == date(2026, 12, 15)
    assert closes_on("2026-12", ["gcp"], config) == date(2027, 1, 6)


def _rates(home: Path, eur_usd: str) -> None:
    lines = ["date,currency,rate", *(f"2026-{m}-{d:02d},EUR,{eur_usd}" for m in ("10", "11") for d in range(1, 31))]
    (home / "rates" / "eur_usd.csv").write_text("\n".join(lines) + "\n")


def _totals(con: duckdb.DuckDBPyConnection, table: str, where: str = "") -> dict[tuple[str, str | None], Decimal]:
    # table and where are this module's constants
    rows = con.execute(f"SELECT team, currency, total_cost FROM {table} {where} ORDER BY ALL").fetchall()
    return {(team, currency): total for team, currency, total in rows}


def test_closed_month_is_issued_once_and_a_restatement_becomes_an_adjustment(demo_copy):
    with closing(open_warehouse(demo_copy)) as con:
        # `gpuledger demo` issues its closed month (to write its reports): October is issued once, as version 1
        assert [(m.month, m.state, m.closes_on) for m in month_states(con)] == [
            ("2026-10", "issued", date(2026, 11, 15)),
            ("2026-11", "open", date(2026, 12, 15)),
        ]
        statements = con.execute("SELECT billing_month, version, issued_at FROM chargeback.statements").fetchall()
        assert statements == [(date(2026, 10, 1), 1, NOW)]
        with pytest.raises(GpuledgerError, match="2026-11 is open until 2026-12-15"):
            issue_month(con, "2026-11", NOW)
        first = issue_month(con, "2026-10", NOW)
        again = issue_month(con, "2026-10", NOW)
        october = "WHERE billing_month = DATE '2026-10-01'"
        issued = _totals(con, "chargeback.statement_lines", october)
        assert (first.version, first.new, again.version, again.new) == (1, False, 1, False)
        assert again.content_sha256 == first.content_sha256
        assert issued == _totals(con, "showback.team_month", october) != {}

    extra = Decimal("1234.5600000000")
    restate_october(demo_copy, extra)
    assert main(["run", "--home", str(demo_copy)]) == 0

    with closing(open_warehouse(demo_copy)) as con:
        assert _totals(con, "chargeback.statement_lines", october) == issued  # the issued statement is untouched
        assert [(m.month, m.state) for m in month_states(con)] == [("2026-10", "issued"), ("2026-11", "open")]
        adjustments = con.execute(
            "SELECT currency, sum(adjustment), list(DISTINCT statement_version), list(DISTINCT applies_to_month)"
            " FROM chargeback.adjustments GROUP BY ALL"
        ).fetchall()
        assert adjustments == [("EUR", extra, [1], [date(2026, 11, 1)])]
    with duckdb.connect(str(demo_copy / "analyst.duckdb"), read_only=True) as analyst:
        shown = analyst.execute(
            "SELECT currency, sum(issued_total), sum(current_total), sum(adjustment) FROM views.statement_vs_current"
            " WHERE currency = 'EUR' GROUP BY ALL"
        ).fetchone()
        assert shown is not None and shown[2] - shown[1] == shown[3] == extra
        assert analyst.execute("SELECT count(*) FROM chargeback.adjustments").fetchone()[0] > 0

    with closing(open_warehouse(demo_copy)) as con:
        second = issue_month(con, "2026-10", NOW)  # re-issuing after the restatement: version 2, version 1 kept
        assert (second.version, second.new) == (2, True)
        versions = con.execute(
            "SELECT version, sum(total_cost) FILTER (WHERE currency = 'EUR') FROM chargeback.statement_lines"
            " GROUP BY ALL ORDER BY 1"
        ).fetchall()
        assert versions[1][1] - versions[0][1] == extra
        assert con.execute("SELECT count(*) FROM chargeback.adjustments").fetchone()[0] == 0


def test_a_restatement_is_carried_by_one_statement_only(demo_copy, monkeypatch):
    extra, later_extra = Decimal("1234.5600000000"), Decimal("7.8900000000")
    restate_october(demo_copy, extra)
    assert main(["run", "--home", str(demo_copy)]) == 0
    after_november_closed = datetime(2026, 12, 20, 3, tzinfo=UTC)
    monkeypatch.setenv("GPULEDGER_NOW", after_november_closed.isoformat())
    assert main(["run", "--home", str(demo_copy)]) == 0

    with closing(open_warehouse(demo_copy)) as con:
        november = issue_month(con, "2026-11", after_november_closed)
        carried = con.execute(
            "SELECT billing_month, version, kind, restated_month, statement_version, currency, adjustment"
            " FROM chargeback.statement_adjustments"
        ).fetchall()
        pending = con.execute("SELECT count(*) FROM chargeback.adjustments").fetchone()
        compared = con.execute(
            "SELECT data->>'previous_month_statement' FROM chargeback.statements WHERE billing_month = '2026-11-01'"
        ).fetchone()
    assert (november.version, november.new) == (1, True)
    assert compared == ("1",)  # month over month: October as charged on its statement, not as restated since
    assert carried == [(date(2026, 11, 1), 1, "carried", date(2026, 10, 1), 1, "EUR", extra)]
    assert pending == (0,)  # November charged October's difference: nothing is left to carry again

    restate_october(demo_copy, later_extra, run=2)
    assert main(["run", "--home", str(demo_copy)]) == 0
    with closing(open_warehouse(demo_copy)) as con:
        adjustments = con.execute(
            "SELECT billing_month, statement_version, currency, adjustment, applies_to_month"
            " FROM chargeback.adjustments"
        ).fetchall()
        reissued = issue_month(con, "2026-11", after_november_closed)  # its figures and October's as charged stand
        with pytest.raises(GpuledgerError, match=r"2026-10 v1 was restated .* carried by 2026-11 v1: .* bill it twice"):
            issue_month(con, "2026-10", after_november_closed)
    # only the change since November's statement is carried, by the next month (none issued after November yet)
    assert adjustments == [(date(2026, 10, 1), 1, "EUR", later_extra, date(2026, 12, 1))]
    assert (reissued.version, reissued.new) == (1, False)


def test_a_closed_month_keeps_the_rates_locked_when_it_closed(demo_copy):
    query = (
        "SELECT strftime(billing_month, '%Y-%m'), exchange_rate, rate_date FROM showback.team_month_reporting"
        " WHERE currency = 'EUR' GROUP BY ALL ORDER BY 1"
    )
    with closing(open_warehouse(demo_copy)) as con:
        before = con.execute(query).fetchall()
        locked = con.execute("SELECT billing_month, currency, rate FROM meta.locked_rates").fetchall()
    assert locked == [(date(2026, 10, 1), "EUR", Decimal("1.079"))]
    assert before == [
        ("2026-10", Decimal("1.079"), date(2026, 10, 31)),
        ("2026-11", Decimal("1.081"), date(2026, 11, 30)),
    ]

    _rates(demo_copy, "2.5")
    assert main(["run", "--home", str(demo_copy)]) == 0
    with closing(open_warehouse(demo_copy)) as con:
        after = con.execute(query).fetchall()
    # October (closed) keeps its locked rate; November (open) takes the new file's rate
    assert after == [("2026-10", Decimal("1.079"), date(2026, 10, 31)), ("2026-11", Decimal("2.5"), date(2026, 11, 30))]
