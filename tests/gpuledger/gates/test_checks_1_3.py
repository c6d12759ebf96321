"""The FOCUS 1.3 checks: the demo's 1.3 datasets pass every one, and one bad value makes the check that owns it fail."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates.checks import FOCUS_1_3_COMMITMENTS, FOCUS_1_3_ROWS, focus_1_3_checks, run_focus_1_3_checks
from gpuledger.publish.focus_1_3 import Dataset, create_views
from gpuledger.warehouse.home import connect_warehouse
from models.focus_1_3 import CONTRACT_COMMITMENT_1_3, COST_AND_USAGE_1_3

# An allocated row of a job with a commitment, and a plain one, picked by a stable rule.
_JOB_ROW = (
    "AllocatedResourceId IS NOT NULL AND x_SourceLineItemId = (SELECT min(x_SourceLineItemId) FROM {t}"
    " WHERE AllocatedResourceId IS NOT NULL)"
)
_COMMITTED_ROW = (
    "ContractApplied IS NOT NULL AND x_SourceLineItemId = (SELECT min(x_SourceLineItemId) FROM {t}"
    " WHERE ContractApplied IS NOT NULL)"
)

MUTATIONS = {
    "allocated_method_details": 'UPDATE {t} SET AllocatedMethodDetails = \'{{"Elements": [{{"Ratio": 1}}]}}\''
    f" WHERE {_JOB_ROW}",
    "allocated_tags": f'UPDATE {{t}} SET AllocatedTags = \'{{{{"gpuledger/team": {{{{"a": 1}}}}}}}}\' WHERE {_JOB_ROW}',
    "allocated_sums": f"UPDATE {{t}} SET BilledCost = BilledCost + 0.01 WHERE {_JOB_ROW}",
    "contract_applied": "UPDATE {t} SET ContractApplied = replace(ContractApplied, 'ContractCommitmentId\":\"',"
    f" 'ContractCommitmentId\":\"x') WHERE {_COMMITTED_ROW}",
    "focus_1_3_nullability": f"UPDATE {{t}} SET AllocatedResourceName = NULL WHERE {_JOB_ROW}",
    "focus_1_3_column_names": "ALTER TABLE {t} ADD COLUMN Team VARCHAR",
}
COMMITMENT_MUTATIONS = {
    "contract_commitment_allowed_values": "UPDATE {t} SET ContractCommitmentCategory = 'Spending'",
    "contract_commitment_nullability": "UPDATE {t} SET ContractCommitmentType = NULL",
    "contract_commitments": "UPDATE {t} SET ContractCommitmentPeriodStart = ContractCommitmentPeriodEnd",
}


@pytest.fixture
def con(demo_home: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The demo's allocated 1.3 rows and commitments as temp tables the checks read and a test may spoil."""
    with closing(connect_warehouse(demo_home, read_only=True)) as connection:
        create_views(connection, {Dataset.ALLOCATED_COST_AND_USAGE: "rows_1_3", Dataset.CONTRACT_COMMITMENT: "cc"})
        connection.execute(f"CREATE TEMP TABLE {FOCUS_1_3_ROWS} AS SELECT * FROM rows_1_3")
        connection.execute(f"CREATE TEMP TABLE {FOCUS_1_3_COMMITMENTS} AS SELECT * FROM cc")
        yield connection


def _failed(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {result.check for result in run_focus_1_3_checks(con) if not result.passed}


def test_the_demo_passes_every_1_3_check(con):
    assert _failed(con) == set()
    assert len(focus_1_3_checks()) > 12  # the generated ones, the 1.2 ones that apply, the 1.3 cross-row ones


@pytest.mark.parametrize("check", sorted(MUTATIONS))
def test_a_bad_allocated_row_fails_its_check(con, check):
    con.execute(MUTATIONS[check].format(t=FOCUS_1_3_ROWS))
    assert check in _failed(con)


@pytest.mark.parametrize("check", sorted(COMMITMENT_MUTATIONS))
def test_a_bad_commitment_fails_its_check(con, check):
    con.execute(COMMITMENT_MUTATIONS[check].format(t=FOCUS_1_3_COMMITMENTS))
    assert check in _failed(con)


def test_the_1_3_datasets_are_the_spec_as_data():
    names = [c.name for c in COST_AND_USAGE_1_3]
    assert len(names) == 65 and names == sorted(names)
    assert {c.name for c in COST_AND_USAGE_1_3 if c.deprecated} == {"ProviderName", "PublisherName"}
    assert [c.name for c in CONTRACT_COMMITMENT_1_3] == sorted(c.name for c in CONTRACT_COMMITMENT_1_3)
    assert len(CONTRACT_COMMITMENT_1_3) == 13
    added = {"AllocatedMethodDetails", "AllocatedMethodId", "AllocatedResourceId", "AllocatedResourceName"}
    added |= {"AllocatedTags", "ContractApplied", "HostProviderName", "ServiceProviderName"}
    assert all(c.description for c in COST_AND_USAGE_1_3 if c.name in added)
