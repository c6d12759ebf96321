"""FOCUS 1.2 Cost and Usage columns as data: the single source of the DDL, casts and conformance checks.

Each column carries its spec type, feature level, whether NULL is ever allowed, its allowed values,
and (where the spec has one) a row-level nullability rule written as a SQL predicate that is TRUE
on an offending row. ``gpuledger.gates.checks`` turns these into queries; ``gpuledger.warehouse.database`` turns
them into ``CREATE TABLE focus.costs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

FOCUS_VERSION = "1.2"


class FocusType(StrEnum):
    """FOCUS data types and the DuckDB type each is stored as."""

    STRING = "VARCHAR"
    DECIMAL = "DECIMAL(38,10)"
    DATETIME = "TIMESTAMPTZ"
    JSON = "JSON"

    @property
    def sql(self) -> str:
        # JSON is kept as VARCHAR text: Parquet readers and the official validator expect strings.
        return "VARCHAR" if self is FocusType.JSON else self.value

    @property
    def catalog_name(self) -> str:
        """How DuckDB's catalog (information_schema, duckdb_columns) spells the stored type."""
        return "TIMESTAMP WITH TIME ZONE" if self is FocusType.DATETIME else self.sql


class Level(StrEnum):
    MANDATORY = "Mandatory"
    RECOMMENDED = "Recommended"
    CONDITIONAL = "Conditional"


# Row-level rule templates; {c} is the column being checked.
_TUP = (
    "(ChargeCategory = 'Tax' AND {c} IS NOT NULL)"
    " OR (ChargeCategory IN ('Usage', 'Purchase') AND ChargeClass IS NULL AND {c} IS NULL)"
)


def null_iff(other: str) -> str:
    """The rule: this column is NULL exactly when ``other`` is."""
    return f"(({other}) IS NULL) <> ({{c}} IS NULL)"


def null_when_null(other: str) -> str:
    """The rule: this column is NULL when ``other`` is."""
    return f"({other}) IS NULL AND {{c}} IS NOT NULL"


@dataclass(frozen=True)
class FocusColumn:
    """One FOCUS column (the 1.2 ones here, 1.3's in models/focus_1_3.py)."""

    name: str
    type: FocusType
    level: Level
    nullable: bool
    """False: NULL is never allowed in any row."""
    allowed_values: tuple[str, ...] = ()
    """Closed enumeration; empty for free-form columns."""
    null_rule: str | None = None
    """SQL predicate, TRUE on a row that breaks the spec's conditional nullability ({c} = this column)."""
    description: str = ""
    """The spec's one-line description, where gpuledger publishes the column without its own comment (1.3 on)."""
    deprecated: bool = False
    """Still present, but replaced by another column in this version (1.3: ProviderName, PublisherName)."""

    @property
    def null_violation_sql(self) -> str | None:
        if not self.nullable:
            return f"{self.name} IS NULL"
        return self.null_rule.format(c=self.name) if self.null_rule else None


CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
CHARGE_FREQUENCIES = ("One-Time", "Recurring", "Usage-Based")
PRICING_CATEGORIES = ("Standard", "Dynamic", "Committed", "Other")
USED_UNUSED = ("Used", "Unused")

SERVICE_SUBCATEGORIES: dict[str, tuple[str, ...]] = {
    "AI and Machine Learning": (
        "AI Platforms",
        "Bots",
        "Generative AI",
        "Machine Learning",
        "Natural Language Processing",
        "Other (AI and Machine Learning)",
    ),
    "Analytics": (
        "Analytics Platforms",
        "Business Intelligence",
        "Data Processing",
        "Search",
        "Streaming Analytics",
        "Other (Analytics)",
    ),
    "Business Applications": ("Productivity and Collaboration", "Other (Business Applications)"),
    "Compute": (
        "Containers",
        "End User Computing",
        "Quantum Compute",
        "Serverless Compute",
        "Virtual Machines",
        "Other (Compute)",
    ),
    "Databases": (
        "Caching",
        "Data Warehouses",
        "Ledger Databases",
        "NoSQL Databases",
        "Relational Databases",
        "Time Series Databases",
        "Other (Databases)",
    ),
    "Developer Tools": (
        "Developer Platforms",
        "Continuous Integration and Deployment",
        "Development Environments",
        "Source Code Management",
        "Quality Assurance",
        "Other (Developer Tools)",
    ),
    "Identity": ("Identity and Access Management", "Other (Identity)"),
    "Integration": ("API Management", "Messaging", "Workflow Orchestration", "Other (Integration)"),
    "Internet of Things": ("IoT Analytics", "IoT Platforms", "Other (Internet of Things)"),
    "Management and Governance": (
        "Architecture",
        "Compliance",
        "Cost Management",
        "Data Governance",
        "Disaster Recovery",
        "Endpoint Management",
        "Observability",
        "Support",
        "Other (Management and Governance)",
    ),
    "Media": ("Content Creation", "Gaming", "Media Streaming", "Mixed Reality", "Other (Media)"),
    "Migration": ("Data Migration", "Resource Migration", "Other (Migration)"),
    "Mobile": ("Other (Mobile)",),
    "Multicloud": ("Multicloud Integration", "Other (Multicloud)"),
    "Networking": (
        "Application Networking",
        "Content Delivery",
        "Network Connectivity",
        "Network Infrastructure",
        "Network Routing",
        "Network Security",
        "Other (Networking)",
    ),
    "Security": (
        "Secret Management",
        "Security Posture Management",
        "Threat Detection and Response",
        "Other (Security)",
    ),
    "Storage": (
        "Backup Storage",
        "Block Storage",
        "File Storage",
        "Object Storage",
        "Storage Platforms",
        "Other (Storage)",
    ),
    "Web": ("Application Platforms", "Other (Web)"),
    "Other": ("Other (Other)",),
}

S, D, T, J = FocusType.STRING, FocusType.DECIMAL, FocusType.DATETIME, FocusType.JSON
M, R, C = Level.MANDATORY, Level.RECOMMENDED, Level.CONDITIONAL

FOCUS_COLUMNS: tuple[FocusColumn, ...] = (
    FocusColumn("AvailabilityZone", S, R, True),
    FocusColumn("BilledCost", D, M, False),
    FocusColumn("BillingAccountId", S, M, False),
    FocusColumn("BillingAccountName", S, M, True),
    FocusColumn("BillingAccountType", S, C, True, null_rule=null_iff("BillingAccountId")),
    FocusColumn("BillingCurrency", S, M, False),
    FocusColumn("BillingPeriodEnd", T, M, False),
    FocusColumn("BillingPeriodStart", T, M, False),
    FocusColumn("CapacityReservationId", S, C, True),
    FocusColumn(
        "CapacityReservationStatus",
        S,
        C,
        True,
        USED_UNUSED,
        "(CapacityReservationId IS NULL AND {c} IS NOT NULL)"
        " OR (CapacityReservationId IS NOT NULL AND ChargeCategory = 'Usage' AND {c} IS NULL)",
    ),
    FocusColumn("ChargeCategory", S, M, False, CHARGE_CATEGORIES),
    FocusColumn("ChargeClass", S, M, True, ("Correction",)),
    FocusColumn("ChargeDescription", S, M, True),
    FocusColumn("ChargeFrequency", S, R, False, CHARGE_FREQUENCIES),
    FocusColumn("ChargePeriodEnd", T, M, False),
    FocusColumn("ChargePeriodStart", T, M, False),
    FocusColumn("CommitmentDiscountCategory", S, C, True, ("Spend", "Usage"), null_iff("CommitmentDiscountId")),
    FocusColumn("CommitmentDiscountId", S, C, True),
    FocusColumn("CommitmentDiscountName", S, C, True, null_rule=null_when_null("CommitmentDiscountId")),
    FocusColumn(
        "CommitmentDiscountQuantity",
        D,
        C,
        True,
        null_rule="(ChargeCategory IN ('Usage', 'Purchase') AND CommitmentDiscountId IS NOT NULL"
        " AND ChargeClass IS NULL AND {c} IS NULL)"
        " OR (NOT (ChargeCategory IN ('Usage', 'Purchase') AND CommitmentDiscountId IS NOT NULL)"
        " AND {c} IS NOT NULL)",
    ),
    FocusColumn(
        "CommitmentDiscountStatus",
        S,
        C,
        True,
        USED_UNUSED,
        "(CommitmentDiscountId IS NULL AND {c} IS NOT NULL)"
        " OR (CommitmentDiscountId IS NOT NULL AND ChargeCategory = 'Usage' AND {c} IS NULL)",
    ),
    FocusColumn("CommitmentDiscountType", S, C, True, null_rule=null_iff("CommitmentDiscountId")),
    FocusColumn("CommitmentDiscountUnit", S, C, True, null_rule=null_iff("CommitmentDiscountQuantity")),
    FocusColumn(
        "ConsumedQuantity",
        D,
        C,
        True,
        null_rule="(ChargeCategory = 'Usage' AND CommitmentDiscountStatus IS DISTINCT FROM 'Unused'"
        " AND ChargeClass IS NULL AND {c} IS NULL)"
        " OR (NOT (ChargeCategory = 'Usage' AND CommitmentDiscountStatus IS DISTINCT FROM 'Unused')"
        " AND {c} IS NOT NULL)",
    ),
    FocusColumn("ConsumedUnit", S, C, True, null_rule=null_iff("ConsumedQuantity")),
    FocusColumn("ContractedCost", D, M, False),
    FocusColumn("ContractedUnitPrice", D, C, True, null_rule=_TUP),
    FocusColumn("EffectiveCost", D, M, False),
    FocusColumn("InvoiceId", S, R, True),
    FocusColumn("InvoiceIssuerName", S, M, False),
    FocusColumn("ListCost", D, M, False),
    FocusColumn("ListUnitPrice", D, C, True, null_rule=_TUP),
    FocusColumn("PricingCategory", S, C, True, PRICING_CATEGORIES, _TUP),
    FocusColumn("PricingCurrency", S, C, True),
    FocusColumn("PricingCurrencyContractedUnitPrice", D, C, True, null_rule=_TUP),
    FocusColumn("PricingCurrencyEffectiveCost", D, C, True),
    FocusColumn("PricingCurrencyListUnitPrice", D, C, True, null_rule=_TUP),
    FocusColumn("PricingQuantity", D, M, True, null_rule=_TUP),
    FocusColumn("PricingUnit", S, M, True, null_rule=null_iff("PricingQuantity")),
    FocusColumn("ProviderName", S, M, False),
    FocusColumn("PublisherName", S, M, False),
    FocusColumn("RegionId", S, C, True),
    FocusColumn("RegionName", S, C, True, null_rule=null_iff("RegionId")),
    FocusColumn("ResourceId", S, C, True),
    FocusColumn("ResourceName", S, C, True, null_rule=null_when_null("ResourceId")),
    FocusColumn("ResourceType", S, C, True, null_rule=null_iff("ResourceId")),
    FocusColumn("ServiceCategory", S, M, False, tuple(SERVICE_SUBCATEGORIES)),
    FocusColumn("ServiceName", S, M, False),
    FocusColumn(
        "ServiceSubcategory",
        S,
        R,
        False,
        tuple(sub for subs in SERVICE_SUBCATEGORIES.values() for sub in subs),
    ),
    FocusColumn("SkuId", S, C, True, null_rule=_TUP),
    FocusColumn("SkuMeter", S, C, True, null_rule=null_when_null("SkuId")),
    FocusColumn("SkuPriceDetails", J, C, True, null_rule=null_when_null("SkuPriceId")),
    FocusColumn("SkuPriceId", S, C, True, null_rule=_TUP),
    FocusColumn("SubAccountId", S, C, True),
    FocusColumn("SubAccountName", S, C, True, null_rule=null_iff("SubAccountId")),
    FocusColumn("SubAccountType", S, C, True, null_rule=null_iff("SubAccountId")),
    FocusColumn("Tags", J, C, True),
)


@dataclass(frozen=True)
class CustomColumn:
    """A gpuledger column (``x_`` prefix) that keeps a FOCUS row traceable to its source."""

    name: str
    sql_type: str
    nullable: bool
    description: str


CUSTOM_COLUMNS: tuple[CustomColumn, ...] = (
    CustomColumn("x_SourceFormat", "VARCHAR", False, "Export format the row came from (aws-cur2, ...)."),
    CustomColumn("x_DeliveryId", "VARCHAR", False, "Delivery (export version) the row belongs to."),
    CustomColumn("x_SourceFile", "VARCHAR", False, "Data file the row was read from."),
    CustomColumn(
        "x_SourceLineItemId",
        "VARCHAR",
        True,
        "Provider's line-item id within the delivery (or a content id where it has none); a row derived from"
        " another (AWS unused commitment, a GCP credit) appends /<kind>[/<n>].",
    ),
    CustomColumn("x_SourceLineItemType", "VARCHAR", True, "Provider's charge type (e.g. RIFee)."),
    CustomColumn("x_IngestedAt", "TIMESTAMPTZ", False, "When this delivery was first ingested."),
    CustomColumn("x_ServiceCode", "VARCHAR", True, "Provider service code (AWS product code)."),
    CustomColumn("x_UsageType", "VARCHAR", True, "Provider usage type (AWS lineItem/UsageType)."),
    CustomColumn("x_Operation", "VARCHAR", True, "Provider operation (AWS lineItem/Operation)."),
    CustomColumn("x_InstanceType", "VARCHAR", True, "Instance/VM type, the key of the GPU catalog."),
    CustomColumn("x_CostCategories", "VARCHAR", True, "Provider cost categories as a flat JSON object."),
    CustomColumn(
        "x_AmortizationClass", "VARCHAR", True, "Azure: 'Principal' (commitment purchase) or 'Amortized Charge'."
    ),
    CustomColumn("x_InvoiceMonth", "VARCHAR", True, "GCP invoice.month (YYYYMM, US/Pacific) the row is billed in."),
    CustomColumn("x_SourceVersion", "VARCHAR", True, "Schema version of the source (e.g. FOCUS 1.0, EA, MCA)."),
    CustomColumn(
        "x_PricingUnitDescription",
        "VARCHAR",
        True,
        "The pricing unit as the source spells it (Hrs, 10K, gibibyte hour); PricingUnit is its FOCUS UnitFormat"
        " name (models/units.py).",
    ),
    CustomColumn(
        "x_SourceChanges",
        "VARCHAR",
        True,
        "Comma-separated repairs of this row's descriptive values (e.g. InvalidTags, MissingContractedCost);"
        " NULL when the source's values were taken as they are (docs/decisions/0011).",
    ),
    CustomColumn(
        "x_SourceValues",
        "VARCHAR",
        True,
        "The repaired values as the source wrote them, a JSON object keyed by column; NULL without repairs.",
    ),
    CustomColumn(
        "x_CommitmentId",
        "VARCHAR",
        True,
        "The commitment a charge pays for or consumed where CommitmentDiscountId stays empty: a GCP committed use"
        " discount (subscription.instance_id) on its fee and on the usage its credits cover (docs/decisions/0016).",
    ),
    CustomColumn(
        "x_CommitmentTermStart",
        "TIMESTAMPTZ",
        True,
        "Start of the commitment's term as the source states it (AWS reservation or savings plan start time, an Azure"
        " reservation purchase's date); NULL where the source does not say.",
    ),
    CustomColumn(
        "x_CommitmentTermEnd",
        "TIMESTAMPTZ",
        True,
        "End (exclusive) of the commitment's term as the source states it (AWS end time, an Azure purchase's date plus"
        " its Term in months); NULL where the source does not say.",
    ),
)


@dataclass(frozen=True)
class SourceChange:
    """One repair of a descriptive value, flagged in x_SourceChanges (docs/decisions/0011); money is never one."""

    column: str
    """The FOCUS column repaired."""
    repair: str
    """What was done, for users."""


SOURCE_CHANGES: dict[str, SourceChange] = {
    "InvalidTags": SourceChange("Tags", 'a tag cell that is no JSON object ("", text, a list) is read as no tags'),
    "ReservedTagKey": SourceChange(
        "Tags",
        "a source tag key in gpuledger's own namespace (gpuledger/...: FOCUS 1.3 AllocatedTags) takes the prefix"
        " source:",
    ),
    "InvalidSkuPriceDetails": SourceChange("SkuPriceDetails", "a cell that is no JSON object is read as empty"),
    "InvalidCostCategories": SourceChange(
        "x_CostCategories", "a CUR 2.0 cost_category cell that is no JSON object is read as empty"
    ),
    "InvalidProduct": SourceChange("ServiceName", "a CUR 2.0 product cell that is no JSON object is read as empty"),
    "MissingListCost": SourceChange("ListCost", "an empty ListCost is ListUnitPrice x PricingQuantity"),
    "MissingContractedCost": SourceChange(
        "ContractedCost", "an empty ContractedCost is ContractedUnitPrice x PricingQuantity, else ListCost (FOCUS)"
    ),
    "MissingContractedUnitPrice": SourceChange(
        "ContractedUnitPrice", "an empty unit price is ContractedCost / PricingQuantity, else ListUnitPrice"
    ),
    "UnmappedUnit": SourceChange(
        "PricingUnit", "a unit neither in models/units.py nor in UnitFormat is kept as the source spells it"
    ),
    "NonstandardValue": SourceChange(
        "ChargeFrequency", "an allowed value in another case (Usage-based) takes FOCUS's spelling"
    ),
    "MissingPricingCategory": SourceChange(
        "PricingCategory",
        "an empty PricingCategory of usage or a purchase is Committed with a commitment, else Standard",
    ),
    "MissingSkuPriceId": SourceChange("SkuPriceId", "an empty SkuPriceId is the SkuId (FOCUS allows them equal)"),
    "MissingRegionName": SourceChange("RegionName", "an empty RegionName is the RegionId"),
    "MissingResourceType": SourceChange(
        "ResourceType", "an empty ResourceType of a resource is its ServiceSubcategory"
    ),
    "MissingBillingAccountName": SourceChange(
        "BillingAccountName", "an empty BillingAccountName is the BillingAccountId"
    ),
    "MissingSubAccountName": SourceChange("SubAccountName", "an empty SubAccountName is the SubAccountId"),
    "NegativeUnitPrice": SourceChange(
        "ContractedUnitPrice",
        "a negative unit price on a row that needs none (a credit, a correction) is emptied (FOCUS)",
    ),
    "ResourceTypeWithoutResource": SourceChange(
        "ResourceType", "a ResourceType on a row without ResourceId is emptied (FOCUS), kept in x_SourceValues"
    ),
    "ConsumedQuantityOutsideUsage": SourceChange(
        "ConsumedQuantity", "a consumed quantity on a row that is no usage is emptied (FOCUS), kept in x_SourceValues"
    ),
    "InconsistentListUnitPrice": SourceChange(
        "ListUnitPrice", "a ListUnitPrice contradicting ListCost / PricingQuantity follows the cost"
    ),
    "InconsistentContractedUnitPrice": SourceChange(
        "ContractedUnitPrice", "a ContractedUnitPrice contradicting ContractedCost / PricingQuantity follows the cost"
    ),
    "CreditEffectiveCostSplit": SourceChange(
        "EffectiveCost",
        "a Credit whose EffectiveCost differs from its BilledCost keeps the billed amount; the difference is a derived"
        " Adjustment row (<line item>/effective, BilledCost 0): both totals stay the source's",
    ),
    "ServiceCategoryUnified": SourceChange(
        "ServiceCategory", "a ServiceName with several categories takes one (the first in FOCUS's order, Other last)"
    ),
    "NulInTags": SourceChange(
        "Tags", "a NUL character in a tag key or value (any format) is removed, the rest of the tag kept"
    ),
    "NegativeQuantity": SourceChange(
        "PricingQuantity",
        "a negative quantity on a row of positive cost (Azure) is kept as the source states it, the money too; flagged"
        " for review",
    ),
    "InvalidCommitmentTerm": SourceChange(
        "x_CommitmentTermStart",
        "a commitment start/end time that is no timestamp (AWS), or a Term that is no duration (Azure), is read as"
        " unknown",
    ),
}
"""Every repair the normalizers make; ``[ingest] strict = true`` rejects a delivery needing any."""

DERIVED_ROW_SUFFIX = re.compile(r"/[a-z]+(/[0-9]+)?$")
ORIGIN_LINE_ITEM_SQL = "regexp_replace(CAST(x_SourceLineItemId AS VARCHAR), '/[a-z]+(/[0-9]+)?$', '')"
"""The source line item a FOCUS row was made from (derived rows drop their /<kind>)."""


def origin_line_item(line_item_id: str) -> str:
    """Python twin of :data:`ORIGIN_LINE_ITEM_SQL`."""
    return DERIVED_ROW_SUFFIX.sub("", line_item_id)


FOCUS_COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in FOCUS_COLUMNS)
FOCUS_BY_NAME: dict[str, FocusColumn] = {c.name: c for c in FOCUS_COLUMNS}


def column_types() -> dict[str, str]:
    """Column name -> DuckDB type for every stored column, FOCUS first then custom (spec order)."""
    types = {c.name: c.type.sql for c in FOCUS_COLUMNS}
    types.update({c.name: c.sql_type for c in CUSTOM_COLUMNS})
    return types
