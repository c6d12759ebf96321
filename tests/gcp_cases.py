"""Hand-built GCP Cloud Billing export records (standard and detailed tables) with hand-computed totals.

Records are shaped like a BigQuery JSON extract: timestamps as ``YYYY-MM-DD HH:MM:SS UTC``, INT64 as
strings, FLOAT/NUMERIC as numbers or (in some rows) strings, empty arrays and objects where BigQuery
writes them.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
PROJECT = "ml-training-prod"
NOVEMBER = "202611"
DECEMBER = "202612"
MACHINE = "a3-highgpu-8g"
VM = "//compute.googleapis.com/projects/ml-training-prod/zones/us-central1-a/instances/4242424242"


def _credit(kind: str, amount: float | str, name: str = "") -> dict[str, Any]:
    return {"name": name or kind.title(), "amount": amount, "full_name": name or None, "id": kind, "type": kind}


def record(**overrides: Any) -> dict[str, Any]:
    """One detailed-export record for a GPU VM hour in November 2026; keyword arguments replace top-level keys."""
    base: dict[str, Any] = {
        "billing_account_id": ACCOUNT,
        "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
        "sku": {"id": "E8A1-0001-A3GP", "description": "Nvidia H100 80GB GPU running in Americas"},
        "usage_start_time": "2026-11-03 10:00:00 UTC",
        "usage_end_time": "2026-11-03 11:00:00 UTC",
        "project": {
            "id": PROJECT,
            "number": "012345678901",
            "name": "ML training (prod)",
            "labels": [{"key": "team", "value": "research"}, {"key": "cost-center", "value": "cc-7"}],
            "ancestry_numbers": "/123/012345678901/",
            "ancestors": [],
        },
        "labels": [{"key": "team", "value": "ml"}, {"key": "spot-ok"}],
        "system_labels": [
            {"key": "compute.googleapis.com/machine_spec", "value": MACHINE},
            {"key": "compute.googleapis.com/cores", "value": "208"},
        ],
        "tags": [{"key": "env", "value": "prod", "inherited": True, "namespace": "123456789012"}],
        "location": {"location": "us-central1-a", "country": "US", "region": "us-central1", "zone": "us-central1-a"},
        "resource": {"name": "trainer-0", "global_name": VM},
        "export_time": "2026-11-03 14:12:31.123456 UTC",
        "cost": 88.49,
        "currency": "USD",
        "currency_conversion_rate": 1.0,
        "usage": {"amount": 3600, "unit": "seconds", "amount_in_pricing_units": 1.0, "pricing_unit": "hour"},
        "credits": [],
        "invoice": {"month": NOVEMBER, "publisher_type": "GOOGLE"},
        "cost_type": "regular",
        "adjustment_info": {},
        "price": {"effective_price": 88.49, "tier_start_amount": 0, "unit": "hour", "pricing_unit_quantity": 1},
        "cost_at_list": 98.32,
        "transaction_type": "GOOGLE",
        "seller_name": "Google",
        "subscription": {},
    }
    base.update(copy.deepcopy(overrides))
    return base


def standard(**overrides: Any) -> dict[str, Any]:
    """A standard-export record: no ``resource`` and no ``subscription``."""
    row = record(**overrides)
    row.pop("resource", None)
    row.pop("subscription", None)
    return row


def storage(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "service": {"id": "95FF-2EF5-5EA1", "description": "Cloud Storage"},
        "sku": {"id": "E5F0-6A5D-7BAD", "description": "Standard Storage US Multi-region"},
        "labels": [],
        "system_labels": [],
        "tags": [],
        "location": {"location": "us", "country": "US", "region": None, "zone": None},
        # numbers as strings, as some BigQuery JSON extracts write them
        "cost": "12.5",
        "cost_at_list": "12.5",
        "usage": {
            "amount": "1649267441664000",
            "unit": "byte-seconds",
            "amount_in_pricing_units": "0.625",
            "pricing_unit": "gibibyte month",
        },
    }
    fields.update(overrides)
    return standard(**fields)


def every_credit_type() -> list[dict[str, Any]]:
    """November 2026 records carrying each credit type once (and a tax and rounding row)."""
    return [
        # 0: committed use discount covering part of a GPU hour; cost - 50.00 = 38.49
        record(credits=[_credit("COMMITTED_USAGE_DISCOUNT", -50.0, "Committed use discount: GPU")]),
        # 1: sustained use discount on an N2 core hour: 10.00 - 3.00 = 7.00
        standard(
            sku={"id": "BB77-5FDA-6D0C", "description": "N2 Instance Core running in Americas"},
            system_labels=[{"key": "compute.googleapis.com/machine_spec", "value": "n2-standard-8"}],
            cost=10.0,
            cost_at_list=10.0,
            credits=[_credit("SUSTAINED_USAGE_DISCOUNT", -3.0)],
        ),
        # 2: spend-based commitment fully covering Vertex AI usage: 20.00 - 20.00 = 0
        standard(
            service={"id": "C7E2-9256-1C43", "description": "Vertex AI"},
            sku={"id": "A100-VTX-0001", "description": "Vertex AI: Training on a2-highgpu-1g in Americas"},
            system_labels=[],
            cost=20.0,
            cost_at_list=20.0,
            credits=[_credit("COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE", "-20.0")],
        ),
        # 3: the hourly commitment fee itself, with a fee utilization offset: 30.00 - 0.25
        standard(
            sku={"id": "CMT-A3-0001", "description": "Commitment v1: A3 Cpu in Americas for 1 Year"},
            system_labels=[],
            labels=[],
            cost=30.0,
            cost_at_list=30.0,
            credits=[_credit("FEE_UTILIZATION_OFFSET", -0.25)],
        ),
        # 4: storage with free tier and a subscription benefit: 12.50 - 0.02 - 0.48 = 12.00
        storage(credits=[_credit("FREE_TIER", -0.02), _credit("SUBSCRIPTION_BENEFIT", -0.48)]),
        # 5: egress with a contract discount and a reseller margin; the promotion becomes its own Credit row
        standard(
            service={"id": "E505-1604-58F8", "description": "Networking"},
            sku={"id": "9DE9-9092-B3BC", "description": "Network Internet Data Transfer Out from Americas"},
            system_labels=[],
            labels=[{"key": "team", "value": "data"}],
            cost=3.67,
            cost_at_list=4.0,
            usage={"amount": 3.5e10, "unit": "bytes", "amount_in_pricing_units": 32.596290, "pricing_unit": "gibibyte"},
            credits=[
                _credit("DISCOUNT", -0.37, "Spending based discount"),
                _credit("RESELLER_MARGIN", -0.30),
                _credit("PROMOTION", -5.0, "Free trial credit"),
            ],
        ),
        # 6: a discount larger than the cost leaves a negative charge (never clamped)
        standard(
            service={"id": "24E6-581D-38E5", "description": "BigQuery"},
            sku={"id": "3362-E469-6BEF", "description": "Analysis"},
            system_labels=[],
            cost=1.0,
            cost_at_list=1.0,
            usage={"amount": 1.1e12, "unit": "bytes", "amount_in_pricing_units": 1.0, "pricing_unit": "tebibyte"},
            credits=[_credit("DISCOUNT", -1.5)],
        ),
        # 7: tax on the invoice
        standard(
            service={"id": "", "description": "Invoice"},
            sku={"id": "", "description": "Tax"},
            project=None,
            labels=[],
            system_labels=[],
            tags=[],
            location={},
            cost=5.0,
            cost_at_list=None,
            usage={},
            price={},
            cost_type="tax",
            usage_start_time="2026-11-01 07:00:00 UTC",
            usage_end_time="2026-12-01 08:00:00 UTC",
        ),
        # 8: rounding
        standard(
            service={"id": "", "description": "Invoice"},
            sku={"id": "", "description": "Rounding error"},
            project=None,
            labels=[],
            system_labels=[],
            tags=[],
            location={},
            cost=-0.004,
            cost_at_list=None,
            usage={},
            price={},
            cost_type="rounding_error",
            usage_start_time="2026-11-01 07:00:00 UTC",
            usage_end_time="2026-12-01 08:00:00 UTC",
        ),
    ]


# sum(cost) = 88.49 + 10 + 20 + 30 + 12.5 + 3.67 + 1 + 5 - 0.004 = 170.656
# sum(credits) = -50 - 3 - 20 - 0.25 - 0.02 - 0.48 - 0.37 - 0.30 - 5 - 1.5 = -80.92
EVERY_CREDIT_BILLED = Decimal("89.736")
EVERY_CREDIT_ROWS = 10  # nine records plus one PROMOTION Credit row


def december_with_corrections() -> list[dict[str, Any]]:
    """December 2026 invoice: a usage correction for November, its remonetized usage, a late usage row, a goodwill."""
    correction = {"id": "adj-1", "description": "Usage correction for November", "mode": "COMPLETE_NEGATION"}
    return [
        # negates a November GPU hour
        record(
            invoice={"month": DECEMBER, "publisher_type": "GOOGLE"},
            cost_type="adjustment",
            cost=-88.49,
            cost_at_list=-98.32,
            usage={"amount": -3600, "unit": "seconds", "amount_in_pricing_units": -1.0, "pricing_unit": "hour"},
            adjustment_info={**correction, "type": "USAGE_CORRECTION"},
            credits=[_credit("COMMITTED_USAGE_DISCOUNT", 50.0)],
        ),
        # remonetized at the corrected price
        record(
            invoice={"month": DECEMBER, "publisher_type": "GOOGLE"},
            cost_type="adjustment",
            cost=80.0,
            cost_at_list=98.32,
            adjustment_info={**correction, "mode": "COMPLETE_NEGATION_WITH_REMONETIZATION", "type": "USAGE_CORRECTION"},
            credits=[_credit("COMMITTED_USAGE_DISCOUNT", -50.0)],
        ),
        # usage reported late: November 30 (Pacific) usage on the December invoice
        record(
            invoice={"month": DECEMBER, "publisher_type": "GOOGLE"},
            usage_start_time="2026-12-01 07:00:00 UTC",
            usage_end_time="2026-12-01 08:00:00 UTC",
            cost=1.25,
            cost_at_list=1.25,
            usage={"amount": 3600, "unit": "seconds", "amount_in_pricing_units": 1.0, "pricing_unit": "hour"},
        ),
        # an in-period December charge
        record(
            invoice={"month": DECEMBER, "publisher_type": "GOOGLE"},
            usage_start_time="2026-12-02 10:00:00 UTC",
            usage_end_time="2026-12-02 11:00:00 UTC",
        ),
        # goodwill adjustment inside December
        standard(
            invoice={"month": DECEMBER, "publisher_type": "GOOGLE"},
            usage_start_time="2026-12-05 08:00:00 UTC",
            usage_end_time="2026-12-05 09:00:00 UTC",
            cost_type="adjustment",
            cost=-2.0,
            cost_at_list=None,
            usage={},
            price={},
            adjustment_info={"id": "adj-2", "description": "Goodwill", "type": "GOODWILL", "mode": "MANUAL_ADJUSTMENT"},
        ),
    ]


# -88.49 + 50 + 80 - 50 + 1.25 + 88.49 - 2 = 79.25
DECEMBER_BILLED = Decimal("79.25")


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in records)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def write_parquet(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    """The records as Parquet with nested columns, typed the way a BigQuery Parquet extract types them."""
    source = write_jsonl(path.with_suffix(".source.jsonl"), records)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    # Only for building fixtures: BigQuery's own Parquet carries typed numbers, nested lists and timestamps.
    con.execute(
        "COPY (SELECT * REPLACE (CAST(cost AS DOUBLE) AS cost, CAST(cost_at_list AS DOUBLE) AS cost_at_list,"
        " CAST(usage_start_time AS TIMESTAMPTZ) AS usage_start_time,"
        " CAST(usage_end_time AS TIMESTAMPTZ) AS usage_end_time,"
        " CAST(export_time AS TIMESTAMPTZ) AS export_time)"
        " FROM read_json($src, format = 'newline_delimited', sample_size = -1)) TO '"
        + str(path)
        + "' (FORMAT parquet)",
        {"src": str(source)},
    )
    con.close()
    source.unlink()
    return path


def as_focus_view(row: dict[str, Any]) -> dict[str, Any]:
    """The record as Google's FOCUS view (template 2024-03-19) renders it: credits apart, lower-case enums."""
    month = row["invoice"]["month"]
    winter = ("01", "02", "03", "12")
    project = row.get("project") or {}
    tags = [
        *({"key": t["key"], "value": t.get("value"), "x_type": "label"} for t in row.get("labels") or []),
        *({"key": t["key"], "value": t.get("value"), "x_type": "system_label"} for t in row.get("system_labels") or []),
        *({"key": t["key"], "value": t.get("value"), "x_type": "project_label"} for t in project.get("labels") or []),
        *(
            {
                "key": t["key"],
                "value": t["value"],
                "x_type": "tag",
                "x_inherited": t["inherited"],
                "x_namespace": t["namespace"],
            }
            for t in row.get("tags") or []
        ),
    ]
    resource = row.get("resource") or {}
    location = row.get("location") or {}
    usage = row.get("usage") or {}
    return {
        "AvailabilityZone": location.get("zone"),
        "BilledCost": row["cost"],
        "BillingAccountId": row["billing_account_id"],
        "BillingCurrency": row["currency"],
        # PARSE_TIMESTAMP('%Y%m', month, 'America/Los_Angeles'): 07:00 UTC in daylight time, 08:00 otherwise
        "BillingPeriodStart": f"{month[:4]}-{month[4:]}-01 {'08' if month[4:] in winter else '07'}:00:00 UTC",
        "BillingPeriodEnd": "2026-11-30 08:00:00 UTC",
        "ChargeCategory": {"regular": "usage", "tax": "tax"}.get(row["cost_type"], "adjustment"),
        "ChargeClass": "correction" if row.get("adjustment_info") else None,
        "ChargeDescription": row["sku"]["description"],
        "ChargePeriodStart": row["usage_start_time"],
        "ChargePeriodEnd": row["usage_end_time"],
        "ConsumedQuantity": usage.get("amount") if row["cost_type"] == "regular" else None,
        "ConsumedUnit": usage.get("unit") if row["cost_type"] == "regular" else None,
        "ContractedCost": row["cost"],
        "EffectiveCost": row["cost"],
        "ListCost": row.get("cost_at_list"),
        "PricingCategory": "standard",
        "ProviderName": "Google Cloud",
        "PublisherName": "Google Cloud",
        "RegionId": location.get("region"),
        "ResourceId": resource.get("global_name"),
        "ResourceName": resource.get("name"),
        "ServiceCategory": None,
        "ServiceName": row["service"]["description"],
        "SkuId": row["sku"]["id"] if row["cost_type"] == "regular" else None,
        "SubAccountId": row["billing_account_id"],
        "Tags": tags,
        "x_Credits": [
            {
                "Name": c.get("name"),
                "Amount": c["amount"],
                "FullName": c.get("full_name"),
                "Id": c.get("id"),
                "Type": c["type"],
            }
            for c in row.get("credits") or []
        ],
        "x_CostType": row["cost_type"],
        "x_CurrencyConversionRate": row.get("currency_conversion_rate"),
        "x_ExportTime": row.get("export_time"),
        "x_Location": location.get("location"),
        "x_Project": {k: project.get(k) for k in ("id", "number", "name")} if project else None,
        "x_ServiceId": row["service"]["id"],
    }
