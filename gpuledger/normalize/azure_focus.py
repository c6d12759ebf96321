"""Azure Cost Management FocusCost exports (1.0, 1.0r2, 1.2-preview, 1.2): the generic FOCUS reader plus Azure.

Microsoft's pre-1.2 ``x_`` columns fill the 1.2 columns they became (x_InvoiceId -> InvoiceId, x_PricingCurrency
-> PricingCurrency, x_SkuMeterName -> SkuMeter, x_SkuDetails -> SkuPriceDetails); the meter category and name
become x_ServiceCode and x_UsageType; the VM size (x_SkuDetails ``ServiceType``, or ArmSkuName) becomes
x_InstanceType, the GPU catalog's key. MCA exports bill per billing profile (BillingAccountId is the profile).
"""

from __future__ import annotations

from types import MappingProxyType

from gpuledger.normalize.focus_passthrough import FocusProfile, SourceColumns
from gpuledger.warehouse.sqlfiles import quote_ident
from models.azure import AZURE_FIRST_PARTY, AZURE_PROVIDER_NAME


def _instance_type(source: SourceColumns) -> str:
    """The VM size of VM rows: Azure's AdditionalInfo (x_SkuDetails) names it ServiceType."""
    candidates = []
    if "x_SkuDetails" in source.header_types:
        text = f"nullif(trim(CAST({quote_ident('x_SkuDetails')} AS VARCHAR)), '')"
        candidates.append(f"CASE WHEN json_valid({text}) THEN json_extract_string({text}, '$.ServiceType') END")
    candidates.append(source.text("ArmSkuName"))
    size = f"coalesce({', '.join(candidates)})"
    # Only VM sizes (Standard_NC24ads_A100_v4): other meters use ServiceType for other things.
    return f"CASE WHEN regexp_matches({size}, '^(Standard|Basic)_') THEN {size} END"


PROFILE = FocusProfile(
    extras=MappingProxyType(
        {
            "x_ServiceCode": ("x_SkuMeterCategory",),
            "x_UsageType": ("x_SkuMeterName", "SkuMeter"),
            "x_AmortizationClass": ("x_AmortizationClass",),
        }
    ),
    json_extras=(),
    aliases=MappingProxyType(
        {
            "InvoiceId": "x_InvoiceId",
            "PricingCurrency": "x_PricingCurrency",
            "SkuMeter": "x_SkuMeterName",
            "SkuPriceDetails": "x_SkuDetails",
        }
    ),
    first_party=MappingProxyType({AZURE_PROVIDER_NAME: AZURE_FIRST_PARTY}),
    billing_account_type=(
        "CASE WHEN {BillingAccountId} ILIKE '%/billingProfiles/%' THEN 'Billing Profile' ELSE 'Billing Account' END"
    ),
    sub_account_type="'Subscription'",
    instance_type=_instance_type,
    pricing_rate="x_BillingExchangeRate",
)
