"""FOCUS 1.3 out of the stored FOCUS 1.2 rows: the CostAndUsage dataset, the split as allocated rows, and the
ContractCommitment dataset (docs/decisions/0016).

Each dataset is a query of ``sql/publish/focus_1_3/``; the CostAndUsage query is put in front of the other two as
the CTE ``cost_and_usage`` (one place for how a charge meets its commitment), and the result is projected onto the
spec's column order (``models.focus_1_3``) followed by gpuledger's ``x_`` columns. The same queries are the views of
the analyst file's ``focus_1_3`` schema and what ``gpuledger export-focus --focus-version 1.3`` writes.
"""

from __future__ import annotations

from enum import StrEnum

import duckdb

from gpuledger.gates.checks import FOCUS_1_3_COMMITMENTS, FOCUS_1_3_ROWS, CheckResult, run_focus_1_3_checks
from gpuledger.warehouse.sqlfiles import load_sql, quote_ident, quote_literal
from models.focus import FocusColumn
from models.focus_1_3 import CONTRACT_COMMITMENT_1_3, COST_AND_USAGE_1_3


class Dataset(StrEnum):
    """The FOCUS 1.3 datasets gpuledger writes (the value names the query file and the analyst view)."""

    COST_AND_USAGE = "cost_and_usage"
    ALLOCATED_COST_AND_USAGE = "allocated_cost_and_usage"
    CONTRACT_COMMITMENT = "contract_commitment"

    @property
    def columns(self) -> tuple[FocusColumn, ...]:
        return CONTRACT_COMMITMENT_1_3 if self is Dataset.CONTRACT_COMMITMENT else COST_AND_USAGE_1_3


ANALYST_SCHEMA = "focus_1_3"


def dataset_sql(dataset: Dataset) -> str:
    """The SELECT of one dataset: its spec columns in order, then its ``x_`` columns."""
    body = load_sql(f"publish/focus_1_3/{dataset.value}.sql")
    if dataset is not Dataset.COST_AND_USAGE:
        body = f"WITH cost_and_usage AS ({load_sql('publish/focus_1_3/cost_and_usage.sql')})\nSELECT * FROM ({body})"
    spec_columns = ", ".join(quote_ident(column.name) for column in dataset.columns)
    return f"SELECT {spec_columns}, COLUMNS('^x_') FROM ({body})"  # noqa: S608  (the project's own queries)


def create_views(con: duckdb.DuckDBPyConnection, names: dict[Dataset, str]) -> None:
    """One view per dataset under the given (already quoted) names: temporary ones when a name has no schema."""
    for dataset, name in names.items():
        kind = "VIEW" if "." in name else "TEMP VIEW"
        con.execute(f"CREATE OR REPLACE {kind} {name} AS {dataset_sql(dataset)}")


def analyst_view_names() -> dict[Dataset, str]:
    """The views of the analyst file: ``focus_1_3.cost_and_usage`` and its two siblings."""
    return {dataset: f"{quote_ident(ANALYST_SCHEMA)}.{quote_ident(dataset.value)}" for dataset in Dataset}


EXPORT_VIEW = "focus_export_rows"
"""The temp view ``sql/publish/export_focus.sql`` and ``export_contract_commitment.sql`` write from."""


def check(con: duckdb.DuckDBPyConnection, *, allocated: bool) -> list[CheckResult]:
    """The project's FOCUS 1.3 checks over the CostAndUsage dataset (plain or allocated) and ContractCommitment of the
    warehouse; the failed ones (an empty list: conformant)."""
    rows = Dataset.ALLOCATED_COST_AND_USAGE if allocated else Dataset.COST_AND_USAGE
    create_views(con, {rows: FOCUS_1_3_ROWS, Dataset.CONTRACT_COMMITMENT: FOCUS_1_3_COMMITMENTS})
    return [result for result in run_focus_1_3_checks(con) if not result.passed]


def stage_export(con: duckdb.DuckDBPyConnection, dataset: Dataset) -> list[CheckResult]:
    """Check the warehouse's FOCUS 1.3 datasets and, when they pass, point :data:`EXPORT_VIEW` at ``dataset``; the
    failed checks (then nothing is staged)."""
    failed = check(con, allocated=dataset is Dataset.ALLOCATED_COST_AND_USAGE)
    if not failed:
        create_views(con, {dataset: EXPORT_VIEW})
    return failed


DATASET_DESCRIPTIONS: dict[Dataset, str] = {
    Dataset.COST_AND_USAGE: "FOCUS 1.3 CostAndUsage: focus.costs with the columns 1.3 adds (ServiceProviderName,"
    " HostProviderName, ContractApplied; the Allocated* columns NULL); the same rows, money and totals.",
    Dataset.ALLOCATED_COST_AND_USAGE: "FOCUS 1.3 CostAndUsage as allocated rows: every charge as the pieces"
    " allocation.cost_split cut it into, one row per charge and job (the row without AllocatedResourceId carries"
    " the remainder); team, user, job and run group in AllocatedTags. The rows of a charge sum exactly to it.",
    Dataset.CONTRACT_COMMITMENT: "FOCUS 1.3 ContractCommitment: one row per commitment the charges name (AWS"
    " Reserved Instance or Savings Plan, Azure reservation or savings plan, GCP committed use discount), with its"
    " term, cost, and what was purchased, used and left unused in the warehouse's months; charges link to it"
    " through ContractApplied.",
}

CUSTOM_COLUMN_DESCRIPTIONS: dict[str, str] = {
    "x_OriginBilledCost": "gpuledger: BilledCost of the origin charge this allocated row is a part of.",
    "x_OriginEffectiveCost": "gpuledger: EffectiveCost of the origin charge this allocated row is a part of.",
    "x_OriginListCost": "gpuledger: ListCost of the origin charge this allocated row is a part of.",
    "x_OriginContractedCost": "gpuledger: ContractedCost of the origin charge this allocated row is a part of.",
    "x_ProviderName": "gpuledger: ProviderName of the charges of the commitment.",
    "x_BillingAccountId": "gpuledger: BillingAccountId of the charges of the commitment.",
    "x_PurchasedCost": "gpuledger: BilledCost of the commitment's purchases (and GCP's fees) in the warehouse's"
    " months, in BillingCurrency.",
    "x_UsedCost": "gpuledger: EffectiveCost of the usage the commitment covered (CommitmentDiscountStatus Used) in the"
    " warehouse's months; NULL where the source does not say (GCP).",
    "x_UnusedCost": "gpuledger: EffectiveCost of the commitment's unused part (CommitmentDiscountStatus Unused) in the"
    " warehouse's months; NULL where the source does not say (GCP).",
    "x_AppliedCharges": "gpuledger: charges whose ContractApplied names the commitment.",
    "x_FirstBillingMonth": "gpuledger: first billing month with a charge of the commitment.",
    "x_LastBillingMonth": "gpuledger: last billing month with a charge of the commitment.",
    "x_TermBasis": "gpuledger: how the term (ContractCommitmentPeriodStart/End) was found: stated by the source, or"
    " estimated and how.",
    "x_CostBasis": "gpuledger: how ContractCommitmentCost was found: the one-time purchases, or estimated from the"
    " recurring fee per hour seen times the hours of the term.",
}


def comment_views(con: duckdb.DuckDBPyConnection, names: dict[Dataset, str]) -> None:
    """Describe the views and each of their columns: the spec's description, or gpuledger's for an ``x_`` column
    (that of focus.costs for the columns it carries)."""
    carried = dict(
        con.execute(
            "SELECT column_name, comment FROM duckdb_columns()"
            " WHERE database_name = current_database() AND schema_name = 'focus' AND table_name = 'costs'"
        ).fetchall()
    )
    for dataset, name in names.items():
        con.execute(f"COMMENT ON VIEW {name} IS {quote_literal(DATASET_DESCRIPTIONS[dataset])}")
        spec = {column.name: column.description for column in dataset.columns}
        columns = [d[0] for d in con.execute(f"SELECT * FROM {name} LIMIT 0").description]  # noqa: S608
        for column in columns:
            described = spec.get(column) or CUSTOM_COLUMN_DESCRIPTIONS.get(column) or carried[column]
            con.execute(f"COMMENT ON COLUMN {name}.{quote_ident(column)} IS {quote_literal(described)}")
