"""The AWS Cost and Usage Report line-item contract that every AWS reader produces.

CUR 2.0 (Data Exports) spells columns in snake case; legacy CUR 1 CSV spells them
``category/CamelCase`` and its Athena/Parquet flavour uses the same snake case as CUR 2.0.
Readers rename CUR 1 columns with :func:`cur1_to_snake` and then expose exactly
:data:`CUR_COLUMNS` (absent ones as NULL), so one SQL model (``sql/normalize/aws_cur.sql``)
serves both generations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COST = "DECIMAL(38,10)"
TIMESTAMP = "TIMESTAMPTZ"
TEXT = "VARCHAR"


@dataclass(frozen=True)
class CurColumn:
    """One canonical CUR column."""

    name: str
    """CUR 2.0 / Athena snake-case name."""
    sql_type: str
    """DuckDB type the reader casts to; costs are DECIMAL, IDs VARCHAR."""
    required: bool = False
    """A delivery without it is rejected, naming the file and the column."""
    product_map_key: str | None = None
    """Key in CUR 2.0's ``product`` map when the value is not a top-level column."""
    cur1_name: str | None = None
    """CUR 1 CSV spelling, named in errors about a missing required column."""
    repair: str | None = None
    """Descriptive column read leniently: a value that is no ``sql_type`` is NULL, flagged as this SourceChange."""


CUR_COLUMNS: tuple[CurColumn, ...] = (
    CurColumn("identity_line_item_id", TEXT),
    CurColumn("identity_time_interval", TEXT),
    CurColumn("bill_invoice_id", TEXT),
    CurColumn("bill_invoicing_entity", TEXT),
    CurColumn("bill_billing_entity", TEXT),
    CurColumn("bill_bill_type", TEXT),
    CurColumn("bill_payer_account_id", TEXT, required=True, cur1_name="bill/PayerAccountId"),
    CurColumn("bill_payer_account_name", TEXT),
    CurColumn("bill_billing_period_start_date", TIMESTAMP, required=True, cur1_name="bill/BillingPeriodStartDate"),
    CurColumn("bill_billing_period_end_date", TIMESTAMP, required=True, cur1_name="bill/BillingPeriodEndDate"),
    CurColumn("line_item_usage_account_id", TEXT, required=True, cur1_name="lineItem/UsageAccountId"),
    CurColumn("line_item_usage_account_name", TEXT),
    CurColumn("line_item_line_item_type", TEXT, required=True, cur1_name="lineItem/LineItemType"),
    CurColumn("line_item_usage_start_date", TIMESTAMP, required=True, cur1_name="lineItem/UsageStartDate"),
    CurColumn("line_item_usage_end_date", TIMESTAMP, required=True, cur1_name="lineItem/UsageEndDate"),
    CurColumn("line_item_product_code", TEXT, required=True, cur1_name="lineItem/ProductCode"),
    CurColumn("line_item_usage_type", TEXT),
    CurColumn("line_item_operation", TEXT),
    CurColumn("line_item_availability_zone", TEXT),
    CurColumn("line_item_resource_id", TEXT),
    CurColumn("line_item_usage_amount", COST),
    CurColumn("line_item_currency_code", TEXT, required=True, cur1_name="lineItem/CurrencyCode"),
    CurColumn("line_item_unblended_rate", COST),
    CurColumn("line_item_unblended_cost", COST, required=True, cur1_name="lineItem/UnblendedCost"),
    CurColumn("line_item_line_item_description", TEXT),
    CurColumn("line_item_legal_entity", TEXT),
    CurColumn("line_item_tax_type", TEXT),
    CurColumn("product_sku", TEXT),
    CurColumn("product_servicecode", TEXT),
    CurColumn("product_product_name", TEXT, product_map_key="product_name"),
    CurColumn("product_product_family", TEXT),
    CurColumn("product_region_code", TEXT),
    CurColumn("product_instance_type", TEXT),
    CurColumn("product_from_location", TEXT),
    CurColumn("product_to_location", TEXT),
    CurColumn("product_transfer_type", TEXT, product_map_key="transfer_type"),
    CurColumn("product_storage_class", TEXT, product_map_key="storage_class"),
    CurColumn("pricing_term", TEXT),
    CurColumn("pricing_unit", TEXT),
    CurColumn("pricing_rate_code", TEXT),
    CurColumn("pricing_rate_id", TEXT),
    CurColumn("pricing_public_on_demand_rate", COST),
    CurColumn("pricing_public_on_demand_cost", COST),
    CurColumn("reservation_reservation_a_r_n", TEXT),
    CurColumn("reservation_effective_cost", COST),
    CurColumn("reservation_unused_amortized_upfront_fee_for_billing_period", COST),
    CurColumn("reservation_unused_recurring_fee", COST),
    CurColumn("reservation_unused_quantity", COST),
    CurColumn("reservation_start_time", TIMESTAMP, repair="InvalidCommitmentTerm"),
    CurColumn("reservation_end_time", TIMESTAMP, repair="InvalidCommitmentTerm"),
    CurColumn("savings_plan_savings_plan_a_r_n", TEXT),
    CurColumn("savings_plan_savings_plan_effective_cost", COST),
    CurColumn("savings_plan_total_commitment_to_date", COST),
    CurColumn("savings_plan_used_commitment", COST),
    CurColumn("savings_plan_offering_type", TEXT),
    CurColumn("savings_plan_start_time", TIMESTAMP, repair="InvalidCommitmentTerm"),
    CurColumn("savings_plan_end_time", TIMESTAMP, repair="InvalidCommitmentTerm"),
)

# The CUR column each FOCUS column is made from (the main one, where several feed it): errors about a FOCUS
# value name the file's own column.
FOCUS_SOURCE_COLUMNS: dict[str, str] = {
    "AvailabilityZone": "line_item_availability_zone",
    "BilledCost": "line_item_unblended_cost",
    "BillingAccountId": "bill_payer_account_id",
    "BillingAccountName": "bill_payer_account_name",
    "BillingCurrency": "line_item_currency_code",
    "BillingPeriodEnd": "bill_billing_period_end_date",
    "BillingPeriodStart": "bill_billing_period_start_date",
    "ChargeCategory": "line_item_line_item_type",
    "ChargeDescription": "line_item_line_item_description",
    "ChargeFrequency": "line_item_line_item_type",
    "ChargePeriodEnd": "line_item_usage_end_date",
    "ChargePeriodStart": "line_item_usage_start_date",
    "ConsumedQuantity": "line_item_usage_amount",
    "ConsumedUnit": "pricing_unit",
    "ContractedCost": "line_item_unblended_cost",
    "ContractedUnitPrice": "line_item_unblended_rate",
    "EffectiveCost": "line_item_unblended_cost",
    "InvoiceId": "bill_invoice_id",
    "ListCost": "pricing_public_on_demand_cost",
    "ListUnitPrice": "pricing_public_on_demand_rate",
    "PricingCategory": "pricing_term",
    "PricingQuantity": "line_item_usage_amount",
    "PricingUnit": "pricing_unit",
    "RegionId": "product_region_code",
    "ResourceId": "line_item_resource_id",
    "ServiceCategory": "line_item_product_code",
    "ServiceName": "product_product_name",
    "ServiceSubcategory": "line_item_product_code",
    "SkuId": "product_sku",
    "SkuPriceId": "pricing_rate_code",
    "SubAccountId": "line_item_usage_account_id",
    "SubAccountName": "line_item_usage_account_name",
    "Tags": "resource_tags",
}

# Every lineItem/LineItemType the pipeline knows how to price; anything else is rejected.
LINE_ITEM_TYPES: tuple[str, ...] = (
    "Usage",
    "DiscountedUsage",
    "SavingsPlanCoveredUsage",
    "SavingsPlanNegation",
    "SavingsPlanUpfrontFee",
    "SavingsPlanRecurringFee",
    "RIFee",
    "Fee",
    "FlatRateSubscription",
    "Tax",
    "Credit",
    "Refund",
    "BundledDiscount",
    "Discount",
    "EdpDiscount",
    "PrivateRateDiscount",
    "DistributorDiscount",
)

_CAMEL_BOUNDARY = re.compile(r"(?<!^)(?=[A-Z])")


def cur1_to_snake(column: str) -> str:
    """``lineItem/UnblendedCost`` -> ``line_item_unblended_cost`` (Athena's rule, ARN -> a_r_n).

    Tag and cost-category columns follow the same rule after non-alphanumerics become ``_``:
    ``resourceTags/aws:createdBy`` -> ``resource_tags_aws_created_by``.
    """
    category, _, name = column.partition("/")
    words = _CAMEL_BOUNDARY.sub("_", re.sub(r"[^0-9A-Za-z]+", "_", name))
    snake = f"{_CAMEL_BOUNDARY.sub('_', category)}_{words}".lower()
    return re.sub(r"_+", "_", snake)
