"""Seeded GCP Cloud Billing exports of the fictional Helios Labs, as extracts of the BigQuery tables.

:func:`write_gcp_demo_exports` writes billing account 01A2B3-C4D5E6-F7A8B9's standard and detailed usage
cost tables (``gcp_billing_export_v1_<ACCOUNT>``, ``gcp_billing_export_resource_v1_<ACCOUNT>``, hyphens as
underscores) for invoice months 2026-10 and 2026-11 in USD, each extracted twice: as newline-delimited
JSON (gzip, BigQuery's JSON rendering) and as Parquet, under
``<format>/<table>/invoice_month=YYYYMM/export_time=<UTC>/part-000.{jsonl.gz,parquet}``. Rows are hourly
and invoice months run on US/Pacific time. A later November ``export_time`` folder appends a correction of
October usage (cost_type ``adjustment``): each folder holds the rows appended since the previous one, so a
reader unions the folders of a month.

Usage slots (meter x hour) are drawn and priced in micros by one SQL query over a catalogue of meters (one
SKU of one resource), as the AWS demo generates its line items; the detailed table is those rows and the
standard table sums them without the resource, as BigQuery does.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

import duckdb

from gpuledger_demo.common import connect, digest, insert, quote, seeded_number, seeded_uuid

BILLING_ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
STANDARD_TABLE = f"gcp_billing_export_v1_{BILLING_ACCOUNT.replace('-', '_')}"
DETAILED_TABLE = f"gcp_billing_export_resource_v1_{BILLING_ACCOUNT.replace('-', '_')}"
FileFormat = Literal["jsonl", "parquet"]


@dataclass(frozen=True, kw_only=True)
class GcpExpectedTotal:
    """One invoice month of every delivery, summed in Decimal from the generated rows (both tables agree)."""

    billing_account_id: str
    invoice_month: str
    """``YYYYMM``."""
    currency: str
    cost: Decimal
    """Σ cost: before credits."""
    credits: Decimal
    """Σ credits.amount (negative)."""

    @property
    def net(self) -> Decimal:
        return self.cost + self.credits


@dataclass(frozen=True, kw_only=True)
class GcpDemoSource:
    """One extracted table in one file format, with what config wiring and reader tests need."""

    name: str
    provider: str = "gcp"
    format: Literal["gcp-bq"] = "gcp-bq"
    path: Path
    """The table folder; ``invoice_month=YYYYMM/export_time=<UTC>/`` folders under it, all of them current."""
    table: str
    detailed: bool
    file_format: FileFormat
    billing_account_id: str
    vm_resource_ids: Mapping[str, str]
    """Instance name -> ``resource.global_name`` (detailed table only), for mapping telemetry nodes."""
    checkpoint_resource_ids: tuple[str, ...]
    expected_totals: tuple[GcpExpectedTotal, ...]


_BUCKET = "helios-gcp-billing"
_ORG_NUMBER, _ORG_NAME = "482019374615", "helioslabs.example"
_START = datetime(2026, 10, 1, tzinfo=ZoneInfo("America/Los_Angeles")).astimezone(UTC)
_NOVEMBER = datetime(2026, 11, 1, tzinfo=ZoneInfo("America/Los_Angeles")).astimezone(UTC)
_END = datetime(2026, 12, 1, tzinfo=ZoneInfo("America/Los_Angeles")).astimezone(UTC)
_HOURS = int((_END - _START).total_seconds()) // 3600
# (invoice month, export_time folder): the second November extract appends the correction
_DELIVERIES = (
    ("202610", "2026-11-03T03:00:00Z"),
    ("202611", "2026-12-03T03:00:00Z"),
    ("202611", "2026-12-09T03:00:00Z"),
)
_CORRECTION_EXPORT_US = int(datetime(2026, 12, 8, 21, 14, 9, tzinfo=UTC).timestamp()) * 1_000_000 + 318207
_SERVICES = {"Compute Engine": "6F81-5844-456A", "Cloud Storage": "95FF-2EF5-5EA1", "Networking": "E505-1604-58F8"}
_USAGE_UNITS = {"hour": "seconds", "gibibyte hour": "byte-seconds", "gibibyte month": "byte-seconds"}


@dataclass(frozen=True)
class _Sku:
    description: str
    service: str
    pricing_unit: Literal["hour", "gibibyte hour", "gibibyte month", "gibibyte"]
    price: Decimal
    """USD per pricing unit, at most 6 decimals."""


@dataclass(frozen=True)
class _Project:
    id: str
    name: str
    team: str
    folder: str


_PROJECTS = {
    p.id: p
    for p in (
        _Project("helios-llm", "Helios LLM", "llm-pretrain", "ml"),
        _Project("helios-research", "Helios Research", "research", "ml"),
        _Project("helios-vision", "Helios Vision", "vision", "products"),
        _Project("helios-speech", "Helios Speech", "speech", "products"),
        _Project("helios-platform", "Helios Platform", "platform", "platform"),
    )
}

_Credit = Literal["SUSTAINED_USAGE_DISCOUNT", "COMMITTED_USAGE_DISCOUNT"]
_Labels = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, kw_only=True)
class _Resource:
    """A billed resource and its meters: (SKU, units an hour or GiB stored or GiB egress a day, credit)."""

    name: str
    project: str
    kind: Literal["instances", "disks", "buckets", "commitments"]
    zone: str | None
    meters: tuple[tuple[_Sku, float, _Credit | None], ...]
    duty: float = 1.0
    """Share of 6-hour blocks an instance runs."""
    growth: float = 0.0
    """Stored GiB grow by this share over the two months."""
    labels: _Labels = ()
    machine_type: str | None = None


# machine type -> (vCPUs, memory GiB, SKU family, core and RAM USD an hour on demand, the same on spot)
_MACHINES = {
    "a3-highgpu-8g": (208, 1872, "A3", ("0.0335", "0.0045"), ("0.01005", "0.00135")),
    "a2-ultragpu-8g": (96, 1360, "A2", ("0.031611", "0.004237"), None),
    "n1-standard-16": (16, 60, "N1 Predefined", ("0.031611", "0.004237"), None),
}
# GPU -> (USD an hour on demand, on spot)
_GPUS = {
    "Nvidia H100 80GB GPU": ("9.1", "2.73"),
    "Nvidia Tesla A100 80GB GPU": ("5.07", None),
    "Nvidia Tesla T4 GPU": ("0.35", None),
}
_INTERNET_EGRESS = _Sku(
    "Network Internet Data Transfer Out from Americas to Americas", "Networking", "gibibyte", Decimal("0.12")
)
_H100_COMMITMENT = _Sku(
    "Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year", "Compute Engine", "hour", Decimal("6.37")
)


def _compute_sku(name: str, pricing_unit: Literal["hour", "gibibyte hour"], price: str) -> _Sku:
    return _Sku(f"{name} running in Americas", "Compute Engine", pricing_unit, Decimal(price))


def _instance(
    name: str,
    project: str,
    zone: str,
    machine: str,
    gpus: tuple[str, int],
    duty: float,
    labels: _Labels,
    *,
    spot: bool = False,
    credit: _Credit | None = None,
    gpu_credit: _Credit | None = None,
    egress_gib_per_day: float = 0,
) -> _Resource:
    cores, ram, family, on_demand, spot_prices = _MACHINES[machine]
    core_price, ram_price = spot_prices if spot and spot_prices else on_demand
    gpu, count = gpus
    prefix = "Spot Preemptible " if spot else ""
    gpu_price = _GPUS[gpu][1] if spot else _GPUS[gpu][0]
    meters = [
        (_compute_sku(f"{prefix}{family} Instance Core", "hour", core_price), cores, credit),
        (_compute_sku(f"{prefix}{family} Instance Ram", "gibibyte hour", ram_price), ram, credit),
        (_compute_sku(f"{prefix}{gpu}", "hour", gpu_price or "0"), count, credit or gpu_credit),
    ]
    if egress_gib_per_day:
        meters.append((_INTERNET_EGRESS, egress_gib_per_day, None))
    return _Resource(
        name=name,
        project=project,
        kind="instances",
        zone=zone,
        meters=tuple(meters),
        duty=duty,
        labels=labels,
        machine_type=machine,
    )


def _storage(
    name: str,
    project: str,
    kind: Literal["disks", "buckets"],
    zone: str | None,
    sku: _Sku,
    gib: float,
    labels: _Labels,
    *,
    growth: float = 0,
    egress: tuple[_Sku, float] | None = None,
) -> _Resource:
    meters = ((sku, gib, None),) + (((*egress, None),) if egress else ())
    return _Resource(name=name, project=project, kind=kind, zone=zone, meters=meters, growth=growth, labels=labels)


def _catalogue() -> tuple[_Resource, ...]:
    llm = (("team", "llm-pretrain"), ("project", "helios-70b"))
    h100 = ("Nvidia H100 80GB GPU", 8)
    return (
        # the platform project's commitment covers llm-a3-01's eight GPUs (commitment sharing is on)
        _instance(
            "llm-a3-01",
            "helios-llm",
            "us-central1-a",
            "a3-highgpu-8g",
            h100,
            0.9,
            llm,
            gpu_credit="COMMITTED_USAGE_DISCOUNT",
        ),
        _instance("llm-a3-02", "helios-llm", "us-central1-a", "a3-highgpu-8g", h100, 0.8, llm, egress_gib_per_day=500),
        _instance(
            "res-a3-spot-01",
            "helios-research",
            "us-central1-b",
            "a3-highgpu-8g",
            h100,
            0.5,
            (("team", "research"), ("project", "helios-7b-sft")),
            spot=True,
        ),
        _instance(
            "vis-a2-01",
            "helios-vision",
            "us-central1-c",
            "a2-ultragpu-8g",
            ("Nvidia Tesla A100 80GB GPU", 8),
            0.85,
            (("team", "vision"), ("project", "detector-v9")),
        ),
        # a label without a value, and sustained-use discounts on an N1 with attached GPUs
        _instance(
            "speech-t4-01",
            "helios-speech",
            "us-central1-b",
            "n1-standard-16",
            ("Nvidia Tesla T4 GPU", 4),
            0.95,
            (("team", "speech"), ("project", "asr-v3"), ("asr-serving", None)),
            credit="SUSTAINED_USAGE_DISCOUNT",
        ),
        _storage(
            "llm-a3-01-data",
            "helios-llm",
            "disks",
            "us-central1-a",
            _Sku("SSD backed PD Capacity", "Compute Engine", "gibibyte month", Decimal("0.17")),
            4000,
            llm,
        ),
        _storage(
            "vis-a2-01-data",
            "helios-vision",
            "disks",
            "us-central1-c",
            _Sku("Balanced PD Capacity", "Compute Engine", "gibibyte month", Decimal("0.1")),
            2000,
            (),
        ),
        _storage(
            "helios-ckpt-gcp",
            "helios-llm",
            "buckets",
            None,
            _Sku("Standard Storage US Regional", "Cloud Storage", "gibibyte month", Decimal("0.02")),
            160_000,
            (("team", "llm-pretrain"), ("purpose", "checkpoints")),
            growth=0.4,
            egress=(
                _Sku(
                    "Download Worldwide Destinations (excluding Asia & Australia)",
                    "Cloud Storage",
                    "gibibyte",
                    Decimal("0.12"),
                ),
                300,
            ),
        ),
        _Resource(
            name="helios-h100-cud",
            project="helios-platform",
            kind="commitments",
            zone=None,
            meters=((_H100_COMMITMENT, 8, None),),
        ),
    )


# ---------------------------------------------------------------------------------------------
# Meters: each (resource, SKU) with its nested attributes, loaded as typed DuckDB values
# ---------------------------------------------------------------------------------------------

_PAIRS = "STRUCT(key VARCHAR, value VARCHAR)[]"
_METER_COLUMNS = (
    ("meter_id", "INTEGER"),
    ("std_id", "INTEGER"),
    ("key_hash", "BIGINT"),
    ("duty", "DOUBLE"),
    ("growth", "DOUBLE"),
    ("units", "DOUBLE"),
    ("price_e6", "BIGINT"),
    ("credit_type", "VARCHAR"),
    ("credit_name", "VARCHAR"),
    ("credit_full_name", "VARCHAR"),
    ("credit_id", "VARCHAR"),
    ("service", "STRUCT(id VARCHAR, description VARCHAR)"),
    ("sku", "STRUCT(id VARCHAR, description VARCHAR)"),
    (
        "project",
        f"STRUCT(id VARCHAR, number VARCHAR, name VARCHAR, labels {_PAIRS}, ancestry_numbers VARCHAR,"
        " ancestors STRUCT(resource_name VARCHAR, display_name VARCHAR)[])",
    ),
    ("labels", _PAIRS),
    ("system_labels", _PAIRS),
    ("location", "STRUCT(location VARCHAR, country VARCHAR, region VARCHAR, zone VARCHAR)"),
    ("resource", "STRUCT(name VARCHAR, global_name VARCHAR)"),
    ("tags", "STRUCT(key VARCHAR, value VARCHAR, inherited BOOLEAN, namespace VARCHAR)[]"),
    ("unit", "VARCHAR"),
    ("pricing_unit", "VARCHAR"),
    ("price", "DECIMAL(38, 9)"),
    ("subscription", "STRUCT(instance_id VARCHAR)"),
)


def _sql(value: object) -> str:
    """A Python value (dicts as STRUCTs, lists as LISTs) as a DuckDB literal; the column types cast it."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(k)}: {_sql(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(map(_sql, value)) + "]"
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    return quote(str(value))


def _project_number(seed: int, project: str) -> str:
    return str(10**11 + int(seeded_number(seed, "gcp-project", project, digits=11)))


def _numeric_id(seed: int, *parts: object) -> str:
    """A Compute Engine resource id: 19 digits."""
    return str(10**18 + int(seeded_number(seed, "gcp-id", *parts, digits=18)))


def _sku_id(seed: int, description: str) -> str:
    code = digest(seed, "gcp-sku", description).hex().upper()
    return f"{code[:4]}-{code[4:8]}-{code[8:12]}"


def _global_name(seed: int, res: _Resource) -> str:
    if res.kind == "buckets":
        return f"//storage.googleapis.com/projects/_/buckets/{res.name}"
    where = f"zones/{res.zone}" if res.zone else "regions/us-central1"
    number = _project_number(seed, res.project)
    return f"//compute.googleapis.com/projects/{number}/{where}/{res.kind}/{_numeric_id(seed, res.name)}"


def instance_resource_ids(seed: int) -> dict[str, str]:
    """Instance name -> ``resource.global_name`` (the detailed table's ResourceId), for mapping telemetry nodes."""
    return {r.name: _global_name(seed, r) for r in _catalogue() if r.kind == "instances"}


def project_teams() -> dict[str, str]:
    """Project id (FOCUS SubAccountId) -> team, for the teams' own projects."""
    return {p.id: p.team for p in _PROJECTS.values() if p.team != "platform"}


def _project(seed: int, project: _Project) -> dict[str, object]:
    folder, number = seeded_number(seed, "gcp-folder", project.folder, digits=12), _project_number(seed, project.id)
    return {
        "id": project.id,
        "number": number,
        "name": project.name,
        "labels": [{"key": "team", "value": project.team}, {"key": "cost-center", "value": f"cc-{project.folder}"}],
        "ancestry_numbers": f"/{_ORG_NUMBER}/{folder}/",
        "ancestors": [
            {"resource_name": f"projects/{number}", "display_name": project.id},
            {"resource_name": f"folders/{folder}", "display_name": project.folder},
            {"resource_name": f"organizations/{_ORG_NUMBER}", "display_name": _ORG_NAME},
        ],
    }


def _attributes(seed: int, res: _Resource, sku: _Sku) -> dict[str, object]:
    """What a standard-table row is grouped by: rows of meters with equal attributes merge there."""
    system_labels = []
    if res.machine_type:
        cores, ram = _MACHINES[res.machine_type][:2]
        system_labels = [
            {"key": "compute.googleapis.com/machine_spec", "value": res.machine_type},
            {"key": "compute.googleapis.com/cores", "value": str(cores)},
            {"key": "compute.googleapis.com/memory", "value": str(ram * 1024)},
        ]
    # the vision folder's environment tag is inherited by everything in it
    tags = [{"key": "environment", "value": "production", "inherited": True, "namespace": _ORG_NUMBER}]
    return {
        "service": {"id": _SERVICES[sku.service], "description": sku.service},
        "sku": {"id": _sku_id(seed, sku.description), "description": sku.description},
        "project": _project(seed, _PROJECTS[res.project]),
        "labels": [{"key": k, "value": v} for k, v in res.labels],
        "system_labels": system_labels,
        "location": {"location": res.zone or "us-central1", "country": "US", "region": "us-central1", "zone": res.zone},
        "tags": tags if res.project == "helios-vision" else [],
    }


def _meter_rows(seed: int, catalogue: tuple[_Resource, ...]) -> list[list[str]]:
    """One row of SQL literals per (resource, SKU), in ``_METER_COLUMNS`` order."""
    commitment = _numeric_id(seed, "helios-h100-cud")
    std_ids: dict[str, int] = {}
    rows = []
    for res in catalogue:
        for sku, units, credit in res.meters:
            attributes = _attributes(seed, res, sku)
            covered = credit == "COMMITTED_USAGE_DISCOUNT" or sku == _H100_COMMITMENT
            name = None
            if credit == "SUSTAINED_USAGE_DISCOUNT":
                name = "Sustained Usage Discount"
            elif credit:
                name = f"Committed use discount: {sku.description.removesuffix(' running in Americas')}"
            values: dict[str, object] = {
                "meter_id": len(rows),
                "std_id": std_ids.setdefault(json.dumps(attributes, sort_keys=True), len(std_ids)),
                "key_hash": int.from_bytes(digest(seed, "gcp-resource", res.name)[:4], "big"),
                "duty": res.duty,
                "growth": res.growth,
                "units": units,
                "price_e6": int(sku.price.scaleb(6)),
                "credit_type": credit,
                "credit_name": name,
                "credit_full_name": name and f"{name} ({res.project})",
                "credit_id": credit and f"{credit}:{commitment if covered else _project_number(seed, res.project)}",
                **attributes,
                "resource": {"name": res.name, "global_name": _global_name(seed, res)},
                "unit": _USAGE_UNITS.get(sku.pricing_unit, "bytes"),
                "pricing_unit": sku.pricing_unit,
                "price": sku.price,
                "subscription": {"instance_id": commitment} if covered else None,
            }
            rows.append([_sql(values[column]) for column, _ in _METER_COLUMNS])
    return rows


# ---------------------------------------------------------------------------------------------
# Lines: one SQL query draws and prices every meter's hourly slots, as the AWS demo does
# ---------------------------------------------------------------------------------------------

# mix32 is the AWS demo's 0x45d9f3b xorshift-multiply hash: draws that are fixed across DuckDB versions
_LINES_SQL = """
CREATE OR REPLACE TEMP MACRO mix_step(x) AS (xor(x, x >> 16) * 73244475) % 4294967296;
CREATE OR REPLACE TEMP MACRO mix32(x) AS xor(mix_step(mix_step(x)), mix_step(mix_step(x)) >> 16);
CREATE OR REPLACE TEMP MACRO div_round(n, d) AS (n * 2 + d) // (2 * d);
CREATE OR REPLACE TEMP TABLE lines AS
WITH slots AS (
    SELECT m.meter_id, m.units, m.growth, m.pricing_unit, m.price_e6, m.credit_type, h.h,
        -- instances run in 6-hour blocks, duty is their share; u varies egress by the hour
        m.duty >= 1 OR (mix32((m.key_hash + h.h // 6 * 2654435761) % 4294967296) // 1024 % 1000000) / 1e6 < m.duty
            AS running,
        (mix32((m.key_hash + h.h * 2246822519) % 4294967296) // 1024 % 1000000) / 1e6 AS u
    FROM meters AS m CROSS JOIN range({hours}) AS h(h)
),
measured AS (
    SELECT *,
        -- n: units an hour, GiB stored (growing over the two months), or MiB sent
        CASE pricing_unit
            WHEN 'gibibyte month' THEN CAST(round(units * (1 + growth * h / {hours})) AS BIGINT)
            WHEN 'gibibyte' THEN CAST(round(units / 24 * (0.4 + 1.2 * u) * 1024) AS BIGINT)
            ELSE CAST(units AS BIGINT)
        END AS n
    FROM slots
    WHERE running
),
priced AS (
    SELECT *,
        -- micros; a month of storage is 730 hours
        CASE pricing_unit
            WHEN 'gibibyte month' THEN div_round(n * price_e6, 730)
            WHEN 'gibibyte' THEN div_round(n * price_e6, 1024)
            ELSE n * price_e6
        END AS cost_micros,
        {start} + h * 3600 AS start_s
    FROM measured
    WHERE n > 0
)
SELECT meter_id,
    -- epoch microseconds: naive timestamps format several times faster than TIMESTAMPTZ, which goes through ICU
    start_s * 1000000 AS start_us,
    (start_s + 3600) * 1000000 AS end_us,
    -- appended 3-4 hours after the hour ends, at one time for every row of the hour: monotonic in the hour
    (start_s + 3600 + 10800 + mix32(h) % 3600) * 1000000 + mix32(h + {hours}) % 1000000 AS export_us,
    CAST(CASE pricing_unit
        WHEN 'hour' THEN n * 3600
        WHEN 'gibibyte' THEN n * 1048576
        ELSE n * 3865470566400
    END AS DOUBLE) AS amount,
    CASE pricing_unit WHEN 'gibibyte month' THEN n / 730 WHEN 'gibibyte' THEN n / 1024 ELSE n END::DOUBLE
        AS amount_in_pricing_units,
    cost_micros,
    CASE credit_type
        WHEN 'SUSTAINED_USAGE_DISCOUNT' THEN -div_round(cost_micros * 2, 10)
        WHEN 'COMMITTED_USAGE_DISCOUNT' THEN -cost_micros
    END AS credit_micros,
    CASE WHEN h < {october_hours} THEN '202610' ELSE '202611' END AS invoice_month,
    'regular' AS cost_type,
    NULL::VARCHAR AS adjustment_id,
    NULL::VARCHAR AS adjustment_description,
    NULL::VARCHAR AS adjustment_type,
    NULL::VARCHAR AS adjustment_mode,
    CASE WHEN h < {october_hours} THEN '{october_delivery}' ELSE '{november_delivery}' END AS delivery
FROM priced
"""


def _load(con: duckdb.DuckDBPyConnection, seed: int, catalogue: tuple[_Resource, ...]) -> None:
    con.execute(f"CREATE OR REPLACE TEMP TABLE meters ({', '.join(f'{n} {t}' for n, t in _METER_COLUMNS)})")
    # rows of SQL literals that _meter_rows quotes (binding costs seconds per value here)
    rows = ", ".join(f"({', '.join(r)})" for r in _meter_rows(seed, catalogue))
    con.execute("INSERT INTO meters VALUES " + rows)  # noqa: S608
    con.execute(
        _LINES_SQL.format(
            hours=_HOURS,
            start=int(_START.timestamp()),
            october_hours=int((_NOVEMBER - _START).total_seconds()) // 3600,
            october_delivery=_DELIVERIES[0][1],
            november_delivery=_DELIVERIES[1][1],
        )
    )


def _append_correction(con: duckdb.DuckDBPyConnection, seed: int, catalogue: tuple[_Resource, ...]) -> None:
    """November's late extract: an October day of llm-a3-02's GPUs metered 3 hours too many, negated and rebilled.

    The day is the busiest of October 10-20, so the correction is whole hours of a running machine.
    """
    gpu = next(
        i
        for i, (r, m) in enumerate((r, m) for r in catalogue for m in r.meters)
        if r.name == "llm-a3-02" and m[0].description.startswith("Nvidia")
    )
    first, last = (int(datetime(2026, 10, d, tzinfo=UTC).timestamp()) // 86400 for d in (10, 20))
    day, hours, amount, units, cost = con.execute(
        # the meter id and day bounds are integers computed here
        "SELECT start_us // 86400000000 AS day, count(*), sum(amount), sum(amount_in_pricing_units),"  # noqa: S608
        f" sum(cost_micros) FROM lines WHERE meter_id = {gpu} AND start_us // 86400000000 BETWEEN {first} AND {last}"
        " GROUP BY day ORDER BY count(*) DESC, day LIMIT 1"
    ).fetchone()
    start = datetime.fromtimestamp(day * 86400, UTC)
    adjustment = [
        seeded_uuid(seed, "gcp-adjustment", day),
        f"Correction: Nvidia H100 80GB GPU usage metered twice on {start:%Y-%m-%d} during a live migration",
        "USAGE_CORRECTION",
        "COMPLETE_NEGATION_WITH_REMONETIZATION",
    ]
    rows = []
    for sign, kept in ((-1, hours), (1, hours - 3)):
        # every hour of the day cost the same, so the corrected amounts are exact
        rows.append(
            [
                gpu,
                day * 86_400_000_000,
                (day + 1) * 86_400_000_000,
                _CORRECTION_EXPORT_US,
                sign * amount * kept / hours,
                sign * units * kept / hours,
                sign * cost * kept // hours,
                None,
                "202611",
                "adjustment",
                *adjustment,
                _DELIVERIES[2][1],
            ]
        )
    insert(con, "lines", rows)


# ---------------------------------------------------------------------------------------------
# Tables: the detailed rows as they are, the standard rows summed over resources
# ---------------------------------------------------------------------------------------------

# Both tables' rows, sorted while they are narrow. A standard row sums the meters that differ only in
# resource, and at most one of those carries a credit; a negation and its re-monetization stay two rows.
_TABLES_SQL = """
CREATE OR REPLACE TEMP TABLE detailed_lines AS SELECT * FROM lines ORDER BY start_us, meter_id, cost_micros;
CREATE OR REPLACE TEMP TABLE standard_lines AS
SELECT m.std_id, l.start_us, l.end_us, l.export_us, l.invoice_month, l.cost_type,
    l.adjustment_id, l.adjustment_description, l.adjustment_type, l.adjustment_mode, l.delivery,
    sign(l.cost_micros) AS cost_sign,
    min(l.meter_id) AS meter_id, sum(l.amount) AS amount,
    sum(l.amount_in_pricing_units) AS amount_in_pricing_units, sum(l.cost_micros) AS cost_micros,
    sum(l.credit_micros) AS credit_micros, max(m.credit_type) AS credit_type,
    max(m.credit_name) AS credit_name, max(m.credit_full_name) AS credit_full_name, max(m.credit_id) AS credit_id
FROM lines AS l JOIN meters AS m USING (meter_id)
GROUP BY ALL
ORDER BY start_us, meter_id, cost_micros;
"""
_DETAILED_SOURCE = "(SELECT * FROM detailed_lines JOIN meters USING (meter_id))"
_STANDARD_SOURCE = """(
    SELECT s.*, m.service, m.sku, m.project, m.labels, m.system_labels, m.location, m.tags, m.unit, m.pricing_unit
    FROM standard_lines AS s JOIN meters AS m USING (meter_id)
)"""


_USAGE = (
    "{{'amount': {}, 'unit': unit, 'amount_in_pricing_units': amount_in_pricing_units, 'pricing_unit': pricing_unit}}"
)
_PRICE = "{{'effective_price': {}, 'tier_start_amount': {}, 'unit': pricing_unit, 'pricing_unit_quantity': {}}}"


def _columns(detailed: bool) -> dict[str, str]:
    """Column name -> SQL, in BigQuery's schema order; the standard table has no resource, price or subscription."""
    columns = {
        "billing_account_id": f"'{BILLING_ACCOUNT}'",
        "service": "service",
        "sku": "sku",
        "usage_start_time": "make_timestamp(start_us)::TIMESTAMPTZ",
        "usage_end_time": "make_timestamp(end_us)::TIMESTAMPTZ",
        "project": "project",
        "labels": "labels",
        "system_labels": "system_labels",
        "location": "location",
        "resource": "resource",
        "export_time": "make_timestamp(export_us)::TIMESTAMPTZ",
        "cost": "cost_micros / 1e6",
        "currency": "'USD'",
        "currency_conversion_rate": "1.0::DOUBLE",
        "usage": _USAGE.format("amount"),
        "credits": "CASE WHEN credit_micros IS NULL THEN [] ELSE [{'name': credit_name, 'amount': credit_micros / 1e6,"
        " 'full_name': credit_full_name, 'id': credit_id, 'type': credit_type}] END",
        "invoice": "{'month': invoice_month, 'publisher_type': 'GOOGLE'}",
        "cost_type": "cost_type",
        "adjustment_info": "CASE WHEN adjustment_id IS NOT NULL THEN {'id': adjustment_id,"
        " 'description': adjustment_description, 'mode': adjustment_mode, 'type': adjustment_type} END",
        "tags": "tags",
        "price": _PRICE.format("price", "0::DECIMAL(38, 9)", "1::DECIMAL(38, 9)"),
        "cost_at_list": "cost_micros / 1e6",
        "transaction_type": "'GOOGLE'",
        "seller_name": "NULL::VARCHAR",
        "subscription": "subscription",
    }
    return {k: v for k, v in columns.items() if detailed or k not in ("resource", "price", "subscription")}


# columns that are one meter's attributes or constants: rendered once per meter, not per row
_PER_METER = frozenset(
    {
        "billing_account_id",
        "service",
        "sku",
        "project",
        "labels",
        "system_labels",
        "location",
        "resource",
        "currency",
        "currency_conversion_rate",
        "tags",
        "transaction_type",
        "subscription",
    }
)


def _struct_json(columns: dict[str, str]) -> str:
    return "to_json({" + ", ".join(f"'{name}': {sql}" for name, sql in columns.items()) + "})"


def _members(columns: dict[str, str]) -> str:
    """SQL for the JSON members of ``columns``, braces off and NULL fields left out (NULL when none is left)."""
    text = _struct_json(columns)
    text = f"replace(regexp_replace({text}, '\"[a-z_]+\":null,?', '', 'g'), ',}}', '}}')"
    return f"nullif(substr({text}, 2, length({text}) - 2), '')"


def _json_line_sql(detailed: bool, source: str) -> str:
    """A query of one JSON text per row of ``source``, as BigQuery's JSON extract writes it.

    Timestamps as text; NUMERIC as text in some rows and a number in others; the corrections carry all their
    numbers as strings; NULL fields left out, but an empty ``adjustment_info`` record kept as ``{}``.
    """

    def number(sql: str) -> str:
        return f"CASE WHEN cost_type = 'adjustment' THEN to_json(CAST({sql} AS VARCHAR)) ELSE to_json({sql}) END"

    text_price = _PRICE.format("CAST(price::DOUBLE AS VARCHAR)", "'0'", "'1'")
    columns = _columns(detailed) | {
        "usage_start_time": "strftime(make_timestamp(start_us), '%Y-%m-%d %H:%M:%S UTC')",
        "usage_end_time": "strftime(make_timestamp(end_us), '%Y-%m-%d %H:%M:%S UTC')",
        "export_time": "strftime(make_timestamp(export_us), '%Y-%m-%d %H:%M:%S.%f UTC')",
        "cost": number("cost_micros / 1e6"),
        "usage": _USAGE.format(number("amount")),
        "adjustment_info": f"coalesce(to_json({_columns(detailed)['adjustment_info']}), '{{}}'::JSON)",
        "price": f"CASE WHEN (meter_id + start_us // 3600000000) % 5 = 0 THEN to_json({text_price})"
        f" ELSE to_json({_PRICE.format('price::DOUBLE', 0, 1)}) END",
        "cost_at_list": number("cost_micros / 1e6"),
    }
    del columns["seller_name"]  # always NULL, so never written
    if not detailed:
        del columns["price"]
    # consecutive columns of one kind form a segment: per-meter ones are rendered in ``fragments``
    segments: list[tuple[bool, dict[str, str]]] = []
    for name, sql in columns.items():
        if not segments or segments[-1][0] != (name in _PER_METER):
            segments.append((name in _PER_METER, {}))
        segments[-1][1][name] = sql
    fragments = ", ".join(f"{_members(cols)} AS f{i}" for i, (per_meter, cols) in enumerate(segments) if per_meter)
    # the per-row columns are never NULL (adjustment_info is coalesced, seller_name left out)
    parts = [f"f{i}" if per_meter else _struct_json(cols) + "[2:-2]" for i, (per_meter, cols) in enumerate(segments)]
    return (
        f"WITH fragments AS (SELECT meter_id, {fragments} FROM meters)"  # noqa: S608  (this module's columns)
        f" SELECT '{{' || concat_ws(',', {', '.join(parts)}) || '}}' FROM {source} JOIN fragments USING (meter_id)"
    )


def _write_extracts(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    for table, detailed, source in (
        (STANDARD_TABLE, False, _STANDARD_SOURCE),
        (DETAILED_TABLE, True, _DETAILED_SOURCE),
    ):
        for month, delivery in _DELIVERIES:
            folder = f"{table}/invoice_month={month}/export_time={delivery}"
            where = f"WHERE invoice_month = '{month}' AND delivery = '{delivery}'"
            parquet = root / "parquet" / folder / "part-000.parquet"
            parquet.parent.mkdir(parents=True, exist_ok=True)
            select = ", ".join(f"{sql} AS {name}" for name, sql in _columns(detailed).items())
            con.execute(
                # COPY TO takes no parameters: the path quoted, columns and filter this module's own
                f"COPY (SELECT {select} FROM {source} {where})"  # noqa: S608
                f" TO {quote(str(parquet))} (FORMAT parquet, COMPRESSION snappy)"
            )
            lines = con.execute(f"{_json_line_sql(detailed, source)} {where}").fetchall()
            jsonl = root / "jsonl" / folder / "part-000.jsonl.gz"
            jsonl.parent.mkdir(parents=True, exist_ok=True)
            data = "".join(line + "\n" for (line,) in lines).encode("utf-8")
            jsonl.write_bytes(gzip.compress(data, compresslevel=1, mtime=0))


def write_gcp_demo_exports(root: Path, seed: int = 2026) -> list[GcpDemoSource]:
    """Write Helios Labs' GCP billing extracts for invoice months 202610 and 202611 under ``root/helios-gcp-billing``.

    The same seed gives byte-identical files. The expected totals also go to ``root/_expected_totals_gcp.json``.
    """
    catalogue = _catalogue()
    bucket = root / _BUCKET
    con = connect()
    # one thread keeps the sorted rows' order through the joins to the wide nested attributes (never sorted
    # themselves), and is the faster at this size
    con.execute("SET threads = 1")
    con.execute("SET preserve_insertion_order = true")
    try:
        _load(con, seed, catalogue)
        _append_correction(con, seed, catalogue)
        con.execute(_TABLES_SQL)
        _write_extracts(con, bucket)
        sums: dict[str, list[int]] = {}
        for month, cost, credit in con.execute(
            "SELECT invoice_month, cost_micros, credit_micros FROM lines"
        ).fetchall():
            month_sums = sums.setdefault(month, [0, 0])
            month_sums[0] += cost
            month_sums[1] += credit or 0
    finally:
        con.close()
    totals = tuple(
        GcpExpectedTotal(
            billing_account_id=BILLING_ACCOUNT,
            invoice_month=month,
            currency="USD",
            cost=Decimal(cost).scaleb(-6),
            credits=Decimal(credits).scaleb(-6),
        )
        for month, (cost, credits) in sorted(sums.items())
    )
    vms = instance_resource_ids(seed)
    checkpoints = tuple(_global_name(seed, r) for r in catalogue if r.kind == "buckets")
    sources = [
        GcpDemoSource(
            name=f"helios-gcp-{'detailed' if detailed else 'standard'}-{fmt}",
            path=bucket / fmt / table,
            table=table,
            detailed=detailed,
            file_format=fmt,
            billing_account_id=BILLING_ACCOUNT,
            vm_resource_ids=vms,
            checkpoint_resource_ids=checkpoints,
            expected_totals=totals,
        )
        for fmt in ("jsonl", "parquet")
        for table, detailed in ((STANDARD_TABLE, False), (DETAILED_TABLE, True))
    ]
    sidecar = [
        {
            "billing_account_id": t.billing_account_id,
            "invoice_month": t.invoice_month,
            "currency": t.currency,
            "cost": str(t.cost),
            "credits": str(t.credits),
            "net": str(t.net),
        }
        for t in totals
    ]
    (root / "_expected_totals_gcp.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    return sources
