"""The vacuum removes what no reader sees, never what an owner's reconciliation still needs."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuledger.gates.load import load_delivery
from gpuledger.gates.vacuum import vacuum
from gpuledger.gates.verdicts import delivery_verdict
from gpuledger.warehouse.home import open_warehouse
from models.delivery import Delivery
from tests.conftest import focus_snapshot
from tests.fixtures.focus_cases import write_csv
from tests.gpuledger.normalize.test_focus_passthrough import coreweave_rows, oracle_rows
from tests.gpuledger.warehouse.test_lake import local_lake

pytestmark = pytest.mark.both_warehouses

NOW = dt.timedelta(0)


@pytest.fixture(params=["file", "lake"])
def con(request, home):
    """The warehouse on both backends: the vacuum deletes, which a DuckLake takes differently (decision 0020)."""
    if request.param == "lake":
        local_lake(home)
    connection = open_warehouse(home)
    yield connection
    connection.close()


def owners_failing_their_gate(con) -> list[str]:
    """Slice owners whose rows fail a FOCUS check or no longer sum to their source totals."""
    owners = con.execute("SELECT DISTINCT delivery_id FROM meta.slices").fetchall()
    return [owner for (owner,) in owners if not delivery_verdict(con, owner).passed]


def test_a_delivery_keeps_its_rows_of_an_account_while_it_owns_a_slice_of_that_account(con, tmp_path):
    # one FOCUS file bills two providers under one account: its source totals, per account, cover both
    account = coreweave_rows()[0]["BillingAccountId"]
    oracle = [row | {"BillingAccountId": account} for row in oracle_rows()]
    first = load_delivery(con, Delivery("focus", (write_csv(tmp_path / "both.csv", coreweave_rows() + oracle),)))
    restated = [row for row in coreweave_rows() if row["ChargeCategory"] != "Credit"]
    load_delivery(con, Delivery("focus", (write_csv(tmp_path / "coreweave.csv", restated),)))
    visible = focus_snapshot(con)

    # the first delivery lost CoreWeave's slice but still owns Oracle's: its CoreWeave rows stay, it still reconciles
    assert vacuum(con, NOW).rows == 0
    assert focus_snapshot(con) == visible and owners_failing_their_gate(con) == []

    load_delivery(con, Delivery("focus", (write_csv(tmp_path / "oracle.csv", oracle),)))
    visible = focus_snapshot(con)
    stored = con.execute("SELECT count(*) FROM focus.cost_rows WHERE x_DeliveryId = $id", {"id": first.delivery_id})
    (first_rows,) = stored.fetchone()
    removed = vacuum(con, NOW)  # now it owns nothing: all of it goes, its source totals with it
    assert (removed.rows, removed.slices, removed.deliveries) == (first_rows, 2, 1)
    assert first_rows == len(coreweave_rows()) + len(oracle)
    assert focus_snapshot(con) == visible and owners_failing_their_gate(con) == []
    totals = "SELECT count(*) FROM meta.source_totals WHERE delivery_id = $id"
    assert con.execute(totals, {"id": first.delivery_id}).fetchone() == (0,)
