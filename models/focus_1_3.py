"""FOCUS 1.3 as data: the CostAndUsage and ContractCommitment datasets, from which the 1.3 checks are generated.

Sources: FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec, the 1.3 dataset tables
``specification/datasets/cost_and_usage/...`` (65 columns, Provider and Publisher marked DEPRECATED) and
``specification/datasets/contract_commitment/dataset.md`` (13 columns, at commit 0093e6af), with the column texts
``columns/serviceprovidername.md``, ``allocatedmethoddetails.md`` and ``contractapplied.md``. 1.3 keeps every 1.2
column, type and allowed value (shared/reference/focus-1.2.md §1), so CostAndUsage is the 1.2 columns of
``models/focus.py`` plus the eight 1.3 adds, in the spec's alphabetical order. Not expressed as data: the JSON
object rules of AllocatedMethodDetails, AllocatedTags and ContractApplied and the split-cost-allocation rules
across rows (``sql/gates/checks_1_3/``), and 1.3's dataset completeness and recency metadata (gpuledger writes files,
not a metadata feed).
"""

from __future__ import annotations

from dataclasses import replace

from models.focus import FOCUS_COLUMNS, FocusColumn, FocusType, Level, null_iff, null_when_null

FOCUS_1_3_VERSION = "1.3"

S, D, T, J = FocusType.STRING, FocusType.DECIMAL, FocusType.DATETIME, FocusType.JSON
M, R, C = Level.MANDATORY, Level.RECOMMENDED, Level.CONDITIONAL

# Allocated* describe a data generator's split: NULL on a charge that is not part of one (AllocatedMethodId NULL).
_ONLY_SPLIT = null_when_null("AllocatedMethodId")

ADDED_IN_1_3: tuple[FocusColumn, ...] = (
    FocusColumn(
        "AllocatedMethodDetails",
        J,
        R,
        True,
        null_rule=_ONLY_SPLIT,
        description="How the split cost allocation was computed: a JSON object whose Elements hold each factor's"
        " AllocatedRatio (share of the origin charge), UsageUnit and UsageQuantity.",
    ),
    FocusColumn(
        "AllocatedMethodId",
        S,
        C,
        True,
        description="Identifier of the data generator's documented split cost allocation method; NULL when the charge"
        " is not part of a split.",
    ),
    FocusColumn(
        "AllocatedResourceId",
        S,
        C,
        True,
        null_rule=_ONLY_SPLIT,
        description="Identifier of the resource an allocated charge was split to; NULL on the row carrying the origin"
        " charge's unallocated remainder.",
    ),
    FocusColumn(
        "AllocatedResourceName",
        S,
        C,
        True,
        null_rule=null_iff("AllocatedResourceId"),
        description="Display name of the resource an allocated charge was split to (its id when it has no name).",
    ),
    FocusColumn(
        "AllocatedTags",
        J,
        C,
        True,
        null_rule=_ONLY_SPLIT,
        description="Tags of the resource an allocated charge was split to (KeyValueFormat), not repeating Tags.",
    ),
    FocusColumn(
        "ContractApplied",
        J,
        C,
        True,
        description="The contract commitments the charge applies to: a JSON object whose Elements name ContractId and"
        " ContractCommitmentId with the cost (or quantity and unit) applied; joins the ContractCommitment dataset.",
    ),
    FocusColumn(
        "HostProviderName",
        S,
        M,
        True,
        description="Name of the entity hosting the underlying resource or service; NULL when there is none or it"
        " cannot be determined (a tax, a marketplace seller's service).",
    ),
    FocusColumn(
        "ServiceProviderName",
        S,
        M,
        False,
        description="Name of the entity that made the resources or services available for purchase or consumption"
        " (a marketplace's seller, not its operator); replaces ProviderName.",
    ),
)

_REPLACED_IN_1_3 = {"ProviderName", "PublisherName"}

COST_AND_USAGE_1_3: tuple[FocusColumn, ...] = tuple(
    sorted(
        (
            *(replace(c, deprecated=True) if c.name in _REPLACED_IN_1_3 else c for c in FOCUS_COLUMNS),
            *ADDED_IN_1_3,
        ),
        key=lambda column: column.name,
    )
)
"""The 65 columns of the 1.3 CostAndUsage dataset, in the spec's (alphabetical) order."""

CONTRACT_COMMITMENT_CATEGORIES = ("Spend", "Usage")

CONTRACT_COMMITMENT_1_3: tuple[FocusColumn, ...] = (
    FocusColumn("BillingCurrency", S, M, True, description="ISO 4217 currency of ContractCommitmentCost."),
    FocusColumn(
        "ContractCommitmentCategory",
        S,
        M,
        False,
        CONTRACT_COMMITMENT_CATEGORIES,
        description="Whether the commitment is to spend an amount (Spend) or to use a quantity (Usage).",
    ),
    FocusColumn(
        "ContractCommitmentCost",
        D,
        M,
        True,
        description="What the commitment costs over its period, in BillingCurrency.",
    ),
    FocusColumn("ContractCommitmentDescription", S, M, True, description="Provider's description of the commitment."),
    FocusColumn(
        "ContractCommitmentId",
        S,
        M,
        False,
        description="Identifier of the commitment, named in the ContractApplied of the charges it applies to.",
    ),
    FocusColumn(
        "ContractCommitmentPeriodEnd", T, M, False, description="End (exclusive) of the commitment's period (UTC)."
    ),
    FocusColumn(
        "ContractCommitmentPeriodStart", T, M, False, description="Start (inclusive) of the commitment's period (UTC)."
    ),
    FocusColumn(
        "ContractCommitmentQuantity",
        D,
        M,
        True,
        description="The quantity committed to (a Usage commitment), in ContractCommitmentUnit.",
    ),
    FocusColumn(
        "ContractCommitmentType",
        S,
        M,
        False,
        description="Provider's kind of commitment (Reserved Instance, Savings Plan, Reservation, ...).",
    ),
    FocusColumn(
        "ContractCommitmentUnit",
        S,
        M,
        True,
        null_rule=null_iff("ContractCommitmentQuantity"),
        description="Unit of ContractCommitmentQuantity.",
    ),
    FocusColumn("ContractId", S, M, False, description="Identifier of the contract the commitment belongs to."),
    FocusColumn("ContractPeriodEnd", T, M, False, description="End (exclusive) of the contract's period (UTC)."),
    FocusColumn("ContractPeriodStart", T, M, False, description="Start (inclusive) of the contract's period (UTC)."),
)
"""The 13 columns of the 1.3 ContractCommitment dataset, in the spec's (alphabetical) order."""
