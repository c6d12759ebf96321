"""Reviewed Google Cloud reference data and the Cloud Billing export contract the GCP readers produce.

The ``gcp-bq`` reader parses every record with the explicit schema in :data:`BQ_FIELDS` (never
inferred): scalars arrive as JSON text, numbers as text or numbers, and are cast strictly. The
``ref.gcp_*`` tables built from the dictionaries here are joined by ``sql/normalize/gcp_billing_export.sql``;
a service description missing here lands in ``Other / Other (Other)`` (still conformant).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# One literal for ProviderName, PublisherName (first-party rows) and InvoiceIssuerName: the official
# validator reads a differing issuer as a third-party charge (docs/decisions/0007); matches models.gpu_catalog.
GCP_PROVIDER_NAME = "Google Cloud"

# Invoice months are US/Pacific (provider-exports §2.3): BillingPeriodStart/End are this zone's month bounds.
GCP_INVOICE_TIME_ZONE = "America/Los_Angeles"
LOOKUP_FOLDER = "_billing"
"""Folder of billing lookups inside a landed dataset folder: its ``_`` prefix keeps export discovery away."""
SKU_PRICES_FILE = "sku_prices.parquet"

TEXT = "VARCHAR"
COST = "DECIMAL(38,10)"
TIMESTAMP = "TIMESTAMPTZ"


@dataclass(frozen=True)
class BqField:
    """One scalar of a billing export record, addressed by its dotted path (``usage.amount``)."""

    path: str
    sql_type: str
    required: bool = False
    """Every record must carry a non-empty value; a record without one is refused with its row and path."""

    @property
    def column(self) -> str:
        """Name in the typed source view: the path with dots as underscores (``usage_amount``)."""
        return self.path.replace(".", "_")


BQ_FIELDS: tuple[BqField, ...] = (
    BqField("billing_account_id", TEXT, required=True),
    BqField("invoice.month", TEXT, required=True),
    BqField("invoice.publisher_type", TEXT),
    BqField("cost_type", TEXT, required=True),
    BqField("service.id", TEXT),
    BqField("service.description", TEXT, required=True),
    BqField("sku.id", TEXT),
    BqField("sku.description", TEXT),
    BqField("usage_start_time", TIMESTAMP, required=True),
    BqField("usage_end_time", TIMESTAMP, required=True),
    BqField("export_time", TIMESTAMP),
    BqField("project.id", TEXT),
    BqField("project.number", TEXT),
    BqField("project.name", TEXT),
    BqField("location.location", TEXT),
    BqField("location.country", TEXT),
    BqField("location.region", TEXT),
    BqField("location.zone", TEXT),
    BqField("resource.name", TEXT),
    BqField("resource.global_name", TEXT),
    BqField("usage.amount", COST),
    BqField("usage.unit", TEXT),
    BqField("usage.amount_in_pricing_units", COST),
    BqField("usage.pricing_unit", TEXT),
    BqField("adjustment_info.id", TEXT),
    BqField("adjustment_info.description", TEXT),
    BqField("adjustment_info.mode", TEXT),
    BqField("adjustment_info.type", TEXT),
    BqField("price.effective_price", COST),
    BqField("price.tier_start_amount", COST),
    BqField("price.unit", TEXT),
    BqField("price.pricing_unit_quantity", COST),
    BqField("cost", COST, required=True),
    BqField("cost_at_list", COST),
    BqField("cost_at_effective_price_default", COST),
    BqField("currency", TEXT, required=True),
    BqField("currency_conversion_rate", COST),
    BqField("transaction_type", TEXT),
    BqField("seller_name", TEXT),
    BqField("subscription.instance_id", TEXT),
)

# Repeated {key, value} records: kept as lists; a key may come without a value (-> Tags value true).
# The export field each FOCUS column is made from (the main one): errors about a FOCUS value name the record's
# own field.
FOCUS_SOURCE_FIELDS: dict[str, str] = {
    "BilledCost": "cost",
    "BillingAccountId": "billing_account_id",
    "BillingCurrency": "currency",
    "BillingPeriodEnd": "invoice.month",
    "BillingPeriodStart": "invoice.month",
    "ChargeCategory": "cost_type",
    "ChargeDescription": "sku.description",
    "ChargePeriodEnd": "usage_end_time",
    "ChargePeriodStart": "usage_start_time",
    "ConsumedQuantity": "usage.amount",
    "ConsumedUnit": "usage.unit",
    "ContractedCost": "cost",
    "EffectiveCost": "cost",
    "ListCost": "cost_at_list",
    "PricingQuantity": "price.pricing_unit_quantity",
    "PricingUnit": "price.unit",
    "RegionId": "location.region",
    "ResourceId": "resource.global_name",
    "ResourceName": "resource.name",
    "ServiceCategory": "service.description",
    "ServiceName": "service.description",
    "SkuId": "sku.id",
    "SubAccountId": "project.id",
    "SubAccountName": "project.name",
    "Tags": "labels",
}
BQ_KEY_VALUE_LISTS: tuple[str, ...] = ("labels", "system_labels", "project.labels")
# Resource-manager tags carry a namespace (the parent's id) besides key and value.
BQ_TAG_FIELDS: tuple[str, ...] = ("key", "value", "inherited", "namespace")
# credits[] fields; ``amount`` is money (negative), the rest text.
BQ_CREDIT_FIELDS: tuple[str, ...] = ("name", "amount", "full_name", "id", "type")

# Objects and arrays whose shape is checked per record: a wrong shape would otherwise read as NULL and
# drop money (credits) or attributes silently.
BQ_OBJECTS: tuple[str, ...] = (
    "invoice",
    "service",
    "sku",
    "project",
    "location",
    "resource",
    "usage",
    "adjustment_info",
    "price",
    "subscription",
)
BQ_ARRAYS: tuple[str, ...] = ("credits", "labels", "system_labels", "tags", "project.labels")

COST_TYPES: tuple[str, ...] = ("regular", "tax", "adjustment", "rounding_error")


class CreditTreatment(StrEnum):
    """How a credit enters FOCUS (docs/decisions/0007)."""

    ON_ROW = "on_row"
    """A price reduction of the charge it sits on: BilledCost = cost + credit on that very row."""
    CREDIT_ROW = "credit_row"
    """Funded money paying for the charge: its own FOCUS row with ChargeCategory 'Credit'."""


@dataclass(frozen=True)
class CreditType:
    treatment: CreditTreatment
    committed: bool = False
    """A committed use discount: the charge it reduces is priced 'Committed'."""


# Every credits.type the export documents; anything else is refused with file, row and column.
GCP_CREDIT_TYPES: dict[str, CreditType] = {
    "COMMITTED_USAGE_DISCOUNT": CreditType(CreditTreatment.ON_ROW, committed=True),
    "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE": CreditType(CreditTreatment.ON_ROW, committed=True),
    "FEE_UTILIZATION_OFFSET": CreditType(CreditTreatment.ON_ROW),
    "SUSTAINED_USAGE_DISCOUNT": CreditType(CreditTreatment.ON_ROW),
    "DISCOUNT": CreditType(CreditTreatment.ON_ROW),
    "FREE_TIER": CreditType(CreditTreatment.ON_ROW),
    "SUBSCRIPTION_BENEFIT": CreditType(CreditTreatment.ON_ROW),
    "RESELLER_MARGIN": CreditType(CreditTreatment.ON_ROW),
    "PROMOTION": CreditType(CreditTreatment.CREDIT_ROW),
}

# service.description -> (ServiceCategory, ServiceSubcategory), reviewed against the FOCUS 1.2 table.
# Keyed by the description because it is what ServiceName holds (one ServiceName, one category).
GCP_SERVICE_CATEGORIES: dict[str, tuple[str, str]] = {
    "Compute Engine": ("Compute", "Virtual Machines"),
    "Kubernetes Engine": ("Compute", "Containers"),
    "Cloud Run": ("Compute", "Serverless Compute"),
    "Cloud Run Functions": ("Compute", "Serverless Compute"),
    "Cloud Functions": ("Compute", "Serverless Compute"),
    "Batch": ("Compute", "Other (Compute)"),
    "Cloud TPU": ("Compute", "Other (Compute)"),
    "App Engine": ("Web", "Application Platforms"),
    "Vertex AI": ("AI and Machine Learning", "AI Platforms"),
    "Gemini API": ("AI and Machine Learning", "Generative AI"),
    "Generative Language API": ("AI and Machine Learning", "Generative AI"),
    "Cloud Storage": ("Storage", "Object Storage"),
    "Filestore": ("Storage", "File Storage"),
    "Backup and DR Service": ("Storage", "Backup Storage"),
    "Networking": ("Networking", "Network Connectivity"),
    "Cloud CDN": ("Networking", "Content Delivery"),
    "Cloud DNS": ("Networking", "Network Routing"),
    "Cloud Armor": ("Networking", "Network Security"),
    "BigQuery": ("Databases", "Data Warehouses"),
    "BigQuery Storage API": ("Databases", "Data Warehouses"),
    "BigQuery Reservation API": ("Databases", "Data Warehouses"),
    "Cloud SQL": ("Databases", "Relational Databases"),
    "Cloud Spanner": ("Databases", "Relational Databases"),
    "Cloud Bigtable": ("Databases", "NoSQL Databases"),
    "Cloud Firestore": ("Databases", "NoSQL Databases"),
    "Cloud Memorystore for Redis": ("Databases", "Caching"),
    "Cloud Dataflow": ("Analytics", "Data Processing"),
    "Cloud Dataproc": ("Analytics", "Data Processing"),
    "Cloud Pub/Sub": ("Integration", "Messaging"),
    "Cloud Composer": ("Integration", "Workflow Orchestration"),
    "Cloud Logging": ("Management and Governance", "Observability"),
    "Cloud Monitoring": ("Management and Governance", "Observability"),
    "Cloud Trace": ("Management and Governance", "Observability"),
    "Support": ("Management and Governance", "Support"),
    "Cloud Key Management Service (KMS)": ("Security", "Secret Management"),
    "Secret Manager": ("Security", "Secret Management"),
    "Identity Platform": ("Identity", "Identity and Access Management"),
    "Artifact Registry": ("Developer Tools", "Developer Platforms"),
    "Cloud Build": ("Developer Tools", "Continuous Integration and Deployment"),
    "Invoice": ("Other", "Other (Other)"),
}

GCP_REGION_NAMES: dict[str, str] = {
    "us-central1": "Iowa",
    "us-east1": "South Carolina",
    "us-east4": "Northern Virginia",
    "us-east5": "Columbus",
    "us-south1": "Dallas",
    "us-west1": "Oregon",
    "us-west2": "Los Angeles",
    "us-west3": "Salt Lake City",
    "us-west4": "Las Vegas",
    "northamerica-northeast1": "Montréal",
    "northamerica-northeast2": "Toronto",
    "southamerica-east1": "São Paulo",
    "europe-north1": "Finland",
    "europe-west1": "Belgium",
    "europe-west2": "London",
    "europe-west3": "Frankfurt",
    "europe-west4": "Netherlands",
    "europe-west6": "Zurich",
    "europe-west9": "Paris",
    "europe-central2": "Warsaw",
    "asia-east1": "Taiwan",
    "asia-northeast1": "Tokyo",
    "asia-northeast3": "Seoul",
    "asia-south1": "Mumbai",
    "asia-southeast1": "Singapore",
    "australia-southeast1": "Sydney",
    "me-west1": "Tel Aviv",
}
