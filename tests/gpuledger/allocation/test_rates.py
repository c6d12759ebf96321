"""Reporting currency: explicit, dated conversion with the rate stored; currencies are never summed implicitly."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpuledger.allocation.allocate import allocate_month
from models.config import ReportingConfig, load_config
from models.errors import InputError, ReconciliationError
from tests.fixtures.allocation_cases import Charge, insert_charges, node_config

TEAM_A = {"team": "a"}


def _charges(con):
    insert_charges(
        con,
        [
            Charge("usd", resource_id=None, instance_type=None, billed=Decimal("100"), tags={"team": "a"}),
            Charge(
                "eur", resource_id=None, instance_type=None, billed=Decimal("50"), tags={"team": "a"}, currency="EUR"
            ),
        ],
    )


def _rates(home, text):
    path = home / "rates.csv"
    path.write_text(text)
    return ReportingConfig(currency="USD", rates=path)


def test_team_month_keeps_one_row_per_currency_never_a_mixed_sum(con):
    _charges(con)
    allocate_month(con, node_config(), "2026-11")
    rows = con.execute("SELECT team, currency, total_cost FROM showback.team_month ORDER BY ALL").fetchall()
    assert rows == [("a", "EUR", Decimal("50")), ("a", "USD", Decimal("100"))]
    assert con.execute("SELECT count(*) FROM showback.team_month_reporting").fetchone() == (0,)


def test_conversion_uses_the_newest_rate_up_to_month_end_and_stores_it(home, con):
    _charges(con)
    reporting = _rates(home, "date,currency,rate\n2026-10-31,EUR,1.05\n2026-11-28,EUR,1.0815\n2026-12-01,EUR,2\n")
    allocate_month(con, node_config(), "2026-11", reporting)
    rows = con.execute(
        "SELECT currency, exchange_rate, rate_date, total_cost, total_cost_reporting"
        " FROM showback.team_month_reporting ORDER BY currency"
    ).fetchall()
    assert [(c, str(r), str(d), t, tr) for c, r, d, t, tr in rows] == [
        ("EUR", "1.081500000000000000", "2026-11-28", Decimal("50"), Decimal("54.075")),
        ("USD", "1.000000000000000000", "None", Decimal("100"), Decimal("100")),
    ]


def test_a_currency_without_a_rate_fails_the_month_and_keeps_the_old_split(home, con):
    _charges(con)
    allocate_month(con, node_config(), "2026-11")
    before = con.execute("SELECT * FROM allocation.cost_split ORDER BY ALL").fetchall()
    reporting = _rates(home, "date,currency,rate\n2026-12-02,EUR,1.1\n")  # only after the month
    with pytest.raises(ReconciliationError, match="exchange_rates"):
        allocate_month(con, node_config(), "2026-11", reporting)
    assert con.execute("SELECT * FROM allocation.cost_split ORDER BY ALL").fetchall() == before


@pytest.mark.parametrize(
    ("text", "row", "column"),
    [
        ("date,currency,rate\n2026-11-30,EUR,1.1\n2026-11-31,EUR,1.1\n", 2, "date"),
        ("date,currency,rate\n2026-11-30,EURO,1.1\n", 1, "currency"),
        ("date,currency,rate\n2026-11-30,EUR,-1\n", 1, "rate"),
        ("date,currency,rate\n2026-11-30,EUR,1.1\n2026-11-30,EUR,1.2\n", None, "date"),
        ("day,currency,rate\n2026-11-30,EUR,1.1\n", None, "date"),
    ],
)
def test_a_bad_rate_file_names_the_row_and_column(home, con, text, row, column):
    _charges(con)
    with pytest.raises(InputError) as error:
        allocate_month(con, node_config(), "2026-11", _rates(home, text))
    assert (error.value.row, error.value.column) == (row, column)


def test_reporting_config_is_validated(home):
    (home / "gpuledger.toml").write_text('[reporting]\ncurrency = "usd"\n')
    with pytest.raises(InputError) as error:
        load_config(home)
    assert error.value.column == "reporting.currency"
    (home / "gpuledger.toml").write_text('[reporting]\ncurrency = "EUR"\nrates = "fx.csv"\n')
    assert load_config(home).reporting == ReportingConfig("EUR", home / "fx.csv")
