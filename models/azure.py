"""Reviewed Azure reference data and the Cost Management column contract (docs/decisions/0006).

The reader (``gpuledger/normalize/azure_cost_details.py``) matches file headers to :data:`AZURE_COLUMNS`
case-insensitively and exposes them under canonical names; the dictionaries below become ``ref.azure_*``
tables that ``sql/normalize/azure_cost_details.sql`` joins. A service, unit or region missing here still
yields conformant rows (``Other``, the source's own unit or region text); extend the tables rather
than guessing in SQL.
"""

from __future__ import annotations

from dataclasses import dataclass

# One literal for ProviderName, first-party PublisherName and InvoiceIssuerName, as for AWS
# (decision 0004): the official validator reads a differing issuer as a third-party charge.
# It is also the provider key of the GPU catalog (models/gpu_catalog.py).
AZURE_PROVIDER_NAME = "Microsoft"
# How Microsoft's FocusCost exports name Microsoft (SQL LIKE patterns); all become AZURE_PROVIDER_NAME.
AZURE_FIRST_PARTY = ("Microsoft", "Microsoft Corporation")

# Schema families, told apart by header (provider-exports.md 3.3); recorded as x_SourceVersion.
EA = "EA cost details"
EA_SHORT = "EA cost details (short names)"
MCA = "MCA cost details"
LEGACY = "Usage details 2019-10-01"
COST_DETAILS_FAMILIES = (EA, EA_SHORT, MCA)

# Columns only MCA files have (FinOps hubs tell EA from MCA the same way).
MCA_ONLY_HEADERS = frozenset(
    {"previousinvoiceid", "costinpricingcurrency", "exchangeratepricingtobilling", "paygcostinbillingcurrency"}
)

COST = "DECIMAL(38,10)"
DATE = "DATE"
TEXT = "VARCHAR"


@dataclass(frozen=True)
class AzureColumn:
    """One canonical column of the ``azure_cost_src`` view and the headers that can supply it."""

    name: str
    sql_type: str
    """DATE columns accept every date format Azure writes; costs are DECIMAL, ids VARCHAR."""
    headers: tuple[str, ...]
    """Accepted header names, lower-case, first present wins."""
    display: str
    """How errors name the column (EA spelling)."""
    required_in: frozenset[str] = frozenset()
    """Schema families whose files are rejected without it."""
    mca_headers: tuple[str, ...] | None = None
    """MCA's own choice where it differs: BillingAccountId is the billing *profile* (Microsoft's FOCUS rule)."""


_ALL = frozenset({EA, EA_SHORT, MCA, LEGACY})
_DETAILS = frozenset(COST_DETAILS_FAMILIES)

AZURE_COLUMNS: tuple[AzureColumn, ...] = (
    AzureColumn("usage_date", DATE, ("date", "usagedatetime", "usagedate"), "Date", _ALL),
    AzureColumn("billing_period_start", DATE, ("billingperiodstartdate",), "BillingPeriodStartDate", _DETAILS),
    AzureColumn("billing_period_end", DATE, ("billingperiodenddate",), "BillingPeriodEndDate", _DETAILS),
    AzureColumn(
        "billing_account_id",
        TEXT,
        ("billingaccountid", "subscriptionguid"),
        "BillingAccountId",
        _ALL,
        mca_headers=("billingprofileid",),
    ),
    AzureColumn(
        "billing_account_name",
        TEXT,
        ("billingaccountname",),
        "BillingAccountName",
        mca_headers=("billingprofilename",),
    ),
    AzureColumn(
        "billing_currency", TEXT, ("billingcurrencycode", "billingcurrency", "currency"), "BillingCurrency", _ALL
    ),
    AzureColumn("cost", COST, ("costinbillingcurrency", "cost", "pretaxcost"), "CostInBillingCurrency", _ALL),
    AzureColumn("cost_in_pricing_currency", COST, ("costinpricingcurrency",), "CostInPricingCurrency"),
    AzureColumn("exchange_rate", COST, ("exchangeratepricingtobilling",), "ExchangeRatePricingToBilling"),
    AzureColumn("pricing_currency", TEXT, ("pricingcurrency",), "PricingCurrency"),
    AzureColumn("quantity", COST, ("quantity", "usagequantity"), "Quantity", _ALL),
    AzureColumn("effective_price", COST, ("effectiveprice", "resourcerate"), "EffectivePrice"),
    AzureColumn("unit_price", COST, ("unitprice",), "UnitPrice"),
    AzureColumn("payg_price", COST, ("paygprice",), "PayGPrice"),
    AzureColumn("unit_of_measure", TEXT, ("unitofmeasure",), "UnitOfMeasure"),
    AzureColumn("charge_type", TEXT, ("chargetype",), "ChargeType", _DETAILS),
    AzureColumn("frequency", TEXT, ("frequency",), "Frequency"),
    AzureColumn("pricing_model", TEXT, ("pricingmodel",), "PricingModel"),
    AzureColumn("invoice_id", TEXT, ("invoiceid",), "InvoiceId"),
    AzureColumn("reseller_name", TEXT, ("resellername",), "ResellerName"),
    AzureColumn("subscription_id", TEXT, ("subscriptionid", "subscriptionguid"), "SubscriptionId"),
    AzureColumn("subscription_name", TEXT, ("subscriptionname",), "SubscriptionName"),
    AzureColumn("resource_group", TEXT, ("resourcegroup", "resourcegroupname"), "ResourceGroup"),
    AzureColumn("resource_id", TEXT, ("resourceid", "instanceid"), "ResourceId"),
    AzureColumn("resource_name", TEXT, ("resourcename",), "ResourceName"),
    AzureColumn("resource_location", TEXT, ("resourcelocation",), "ResourceLocation"),
    AzureColumn("resource_type", TEXT, ("resourcetype",), "ResourceType"),
    AzureColumn("consumed_service", TEXT, ("consumedservice",), "ConsumedService"),
    AzureColumn("product_name", TEXT, ("productname", "product"), "ProductName"),
    AzureColumn("product_id", TEXT, ("productid",), "ProductId"),
    AzureColumn("part_number", TEXT, ("partnumber",), "PartNumber"),
    AzureColumn("meter_category", TEXT, ("metercategory",), "MeterCategory"),
    AzureColumn("meter_subcategory", TEXT, ("metersubcategory",), "MeterSubCategory"),
    AzureColumn("meter_id", TEXT, ("meterid",), "MeterId"),
    AzureColumn("meter_name", TEXT, ("metername",), "MeterName"),
    AzureColumn("reservation_id", TEXT, ("reservationid",), "ReservationId"),
    AzureColumn("reservation_name", TEXT, ("reservationname",), "ReservationName"),
    AzureColumn("benefit_id", TEXT, ("benefitid",), "benefitId"),
    AzureColumn("benefit_name", TEXT, ("benefitname",), "benefitName"),
    # a reservation or savings plan purchase's term: months ("12", "36") or ISO 8601 ("P1Y", "P3Y")
    AzureColumn("term", TEXT, ("term",), "Term"),
    AzureColumn("publisher_type", TEXT, ("publishertype",), "PublisherType"),
    AzureColumn("publisher_name", TEXT, ("publishername",), "PublisherName"),
    AzureColumn("tags", TEXT, ("tags",), "Tags"),
    AzureColumn("vm_size", TEXT, ("additionalinfo",), "AdditionalInfo"),
)

# The canonical column (AZURE_COLUMNS) each FOCUS column is made from, the main one where several feed it:
# errors about a FOCUS value name the file's own header.
FOCUS_SOURCE_COLUMNS: dict[str, str] = {
    "BilledCost": "cost",
    "BillingAccountId": "billing_account_id",
    "BillingAccountName": "billing_account_name",
    "BillingCurrency": "billing_currency",
    "BillingPeriodEnd": "billing_period_end",
    "BillingPeriodStart": "billing_period_start",
    "ChargeCategory": "charge_type",
    "ChargeFrequency": "frequency",
    "ChargePeriodEnd": "usage_date",
    "ChargePeriodStart": "usage_date",
    "CommitmentDiscountId": "benefit_id",
    "ConsumedQuantity": "quantity",
    "ConsumedUnit": "unit_of_measure",
    "ContractedCost": "cost",
    "ContractedUnitPrice": "unit_price",
    "EffectiveCost": "cost",
    "InvoiceId": "invoice_id",
    "ListCost": "payg_price",
    "ListUnitPrice": "payg_price",
    "PricingCategory": "pricing_model",
    "PricingCurrency": "pricing_currency",
    "PricingQuantity": "quantity",
    "PricingUnit": "unit_of_measure",
    "PublisherName": "publisher_name",
    "RegionId": "resource_location",
    "ResourceId": "resource_id",
    "ResourceName": "resource_name",
    "ResourceType": "resource_type",
    "ServiceCategory": "consumed_service",
    "ServiceName": "consumed_service",
    "SkuId": "product_id",
    "SkuPriceId": "meter_id",
    "SubAccountId": "subscription_id",
    "SubAccountName": "subscription_name",
    "Tags": "tags",
}

# ChargeType and PricingModel values the model prices; any other value is rejected with file, row, column.
CHARGE_TYPES: tuple[str, ...] = (
    "Usage",
    "Purchase",
    "Refund",
    "UnusedReservation",
    "UnusedSavingsPlan",
    "RoundingAdjustment",
    "Tax",
    "Credit",
)
# Microsoft's schema pages spell "On Demand"; files say "OnDemand". Empty: marketplace and some fees.
PRICING_MODELS: tuple[str, ...] = ("OnDemand", "On Demand", "Reservation", "SavingsPlan", "Savings Plan", "Spot", "")

# Resource locations that name no region.
NO_REGION_LOCATIONS: tuple[str, ...] = ("", "unassigned", "unknown", "all regions", "n/a", "intercontinental")

# Service name (MeterCategory, or the name a consumed service maps to) -> (ServiceCategory, ServiceSubcategory).
AZURE_SERVICE_CATEGORIES: dict[str, tuple[str, str]] = {
    "Virtual Machines": ("Compute", "Virtual Machines"),
    "Virtual Machines Licenses": ("Compute", "Virtual Machines"),
    "Azure Kubernetes Service": ("Compute", "Containers"),
    "Container Instances": ("Compute", "Containers"),
    "Azure Container Apps": ("Compute", "Containers"),
    "Functions": ("Compute", "Serverless Compute"),
    "Batch": ("Compute", "Other (Compute)"),
    "Azure Savings Plan for Compute": ("Compute", "Other (Compute)"),
    "Azure Machine Learning": ("AI and Machine Learning", "Machine Learning"),
    "Machine Learning Studio": ("AI and Machine Learning", "Machine Learning"),
    "Cognitive Services": ("AI and Machine Learning", "AI Platforms"),
    "Foundry Models": ("AI and Machine Learning", "Generative AI"),
    "Storage": ("Storage", "Storage Platforms"),
    "Azure NetApp Files": ("Storage", "File Storage"),
    "Azure Managed Lustre": ("Storage", "File Storage"),
    "Backup": ("Storage", "Backup Storage"),
    "Bandwidth": ("Networking", "Network Connectivity"),
    "Virtual Network": ("Networking", "Network Infrastructure"),
    "NAT Gateway": ("Networking", "Network Infrastructure"),
    "Load Balancer": ("Networking", "Application Networking"),
    "Application Gateway": ("Networking", "Application Networking"),
    "VPN Gateway": ("Networking", "Network Connectivity"),
    "ExpressRoute": ("Networking", "Network Connectivity"),
    "Azure DNS": ("Networking", "Network Routing"),
    "Content Delivery Network": ("Networking", "Content Delivery"),
    "Azure Front Door Service": ("Networking", "Content Delivery"),
    "Azure Firewall": ("Networking", "Network Security"),
    "SQL Database": ("Databases", "Relational Databases"),
    "Azure Database for PostgreSQL": ("Databases", "Relational Databases"),
    "Azure Database for MySQL": ("Databases", "Relational Databases"),
    "Azure Cosmos DB": ("Databases", "NoSQL Databases"),
    "Redis Cache": ("Databases", "Caching"),
    "Azure Synapse Analytics": ("Databases", "Data Warehouses"),
    "Azure Databricks": ("Analytics", "Data Processing"),
    "Azure Data Factory v2": ("Integration", "Workflow Orchestration"),
    "Event Hubs": ("Integration", "Messaging"),
    "Service Bus": ("Integration", "Messaging"),
    "Log Analytics": ("Management and Governance", "Observability"),
    "Azure Monitor": ("Management and Governance", "Observability"),
    "Network Watcher": ("Management and Governance", "Observability"),
    "Azure Support": ("Management and Governance", "Support"),
    "Key Vault": ("Security", "Secret Management"),
    "Microsoft Defender for Cloud": ("Security", "Security Posture Management"),
    "Container Registry": ("Developer Tools", "Developer Platforms"),
    "Azure App Service": ("Web", "Application Platforms"),
    "Azure Reservations": ("Other", "Other (Other)"),
    "Azure Marketplace": ("Other", "Other (Other)"),
}

# ConsumedService (lower-case) -> service name, for rows without a MeterCategory (purchases, some fees).
AZURE_CONSUMED_SERVICES: dict[str, str] = {
    "microsoft.capacity": "Azure Reservations",
    "microsoft.billingbenefits": "Azure Savings Plan for Compute",
    "microsoft.compute": "Virtual Machines",
    "microsoft.containerservice": "Azure Kubernetes Service",
    "microsoft.machinelearningservices": "Azure Machine Learning",
    "microsoft.cognitiveservices": "Cognitive Services",
    "microsoft.storage": "Storage",
    "microsoft.network": "Virtual Network",
    "microsoft.saas": "Azure Marketplace",
}

# ARM resource location (lower-case, spaces removed) -> (RegionId, RegionName). Includes the legacy
# "US East"-style spellings older exports use.
AZURE_REGIONS: dict[str, tuple[str, str]] = {
    "eastus": ("eastus", "East US"),
    "eastus2": ("eastus2", "East US 2"),
    "centralus": ("centralus", "Central US"),
    "northcentralus": ("northcentralus", "North Central US"),
    "southcentralus": ("southcentralus", "South Central US"),
    "westcentralus": ("westcentralus", "West Central US"),
    "westus": ("westus", "West US"),
    "westus2": ("westus2", "West US 2"),
    "westus3": ("westus3", "West US 3"),
    "canadacentral": ("canadacentral", "Canada Central"),
    "brazilsouth": ("brazilsouth", "Brazil South"),
    "northeurope": ("northeurope", "North Europe"),
    "westeurope": ("westeurope", "West Europe"),
    "uksouth": ("uksouth", "UK South"),
    "ukwest": ("ukwest", "UK West"),
    "francecentral": ("francecentral", "France Central"),
    "germanywestcentral": ("germanywestcentral", "Germany West Central"),
    "swedencentral": ("swedencentral", "Sweden Central"),
    "switzerlandnorth": ("switzerlandnorth", "Switzerland North"),
    "norwayeast": ("norwayeast", "Norway East"),
    "polandcentral": ("polandcentral", "Poland Central"),
    "italynorth": ("italynorth", "Italy North"),
    "japaneast": ("japaneast", "Japan East"),
    "japanwest": ("japanwest", "Japan West"),
    "koreacentral": ("koreacentral", "Korea Central"),
    "eastasia": ("eastasia", "East Asia"),
    "southeastasia": ("southeastasia", "Southeast Asia"),
    "australiaeast": ("australiaeast", "Australia East"),
    "centralindia": ("centralindia", "Central India"),
    "southindia": ("southindia", "South India"),
    "uaenorth": ("uaenorth", "UAE North"),
    "qatarcentral": ("qatarcentral", "Qatar Central"),
    "southafricanorth": ("southafricanorth", "South Africa North"),
    "global": ("global", "Global"),
    "useast": ("eastus", "East US"),
    "useast2": ("eastus2", "East US 2"),
    "uscentral": ("centralus", "Central US"),
    "usnorthcentral": ("northcentralus", "North Central US"),
    "ussouthcentral": ("southcentralus", "South Central US"),
    "uswest": ("westus", "West US"),
    "uswest2": ("westus2", "West US 2"),
    "euwest": ("westeurope", "West Europe"),
    "eunorth": ("northeurope", "North Europe"),
    "asiasoutheast": ("southeastasia", "Southeast Asia"),
    "asiaeast": ("eastasia", "East Asia"),
}

# ARM resource type (lower-case) -> FOCUS ResourceType display name; others keep the ARM type.
AZURE_RESOURCE_TYPES: dict[str, str] = {
    "microsoft.compute/virtualmachines": "Virtual machine",
    "microsoft.compute/virtualmachinescalesets": "Virtual machine scale set",
    "microsoft.compute/disks": "Disk",
    "microsoft.compute/snapshots": "Snapshot",
    "microsoft.containerservice/managedclusters": "Kubernetes service",
    "microsoft.machinelearningservices/workspaces": "Machine learning workspace",
    "microsoft.storage/storageaccounts": "Storage account",
    "microsoft.network/publicipaddresses": "Public IP address",
    "microsoft.network/loadbalancers": "Load balancer",
    "microsoft.network/natgateways": "NAT gateway",
    "microsoft.network/virtualnetworkgateways": "Virtual network gateway",
    "microsoft.capacity/reservationorders/reservations": "Reservation",
    "microsoft.billingbenefits/savingsplanorders/savingsplans": "Savings Plan",
}
