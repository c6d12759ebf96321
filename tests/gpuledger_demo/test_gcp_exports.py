"""The generated GCP billing extracts: layout, determinism, BigQuery's JSON rendering, credits and corrections."""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger_demo.gcp_exports import (
    BILLING_ACCOUNT,
    DETAILED_TABLE,
    STANDARD_TABLE,
    GcpDemoSource,
    write_gcp_demo_exports,
)

pytestmark = pytest.mark.serial

BUCKET = "helios-gcp-billing"
DELIVERIES = (
    ("202610", "2026-11-03T03:00:00Z"),
    ("202611", "2026-12-03T03:00:00Z"),
    ("202611", "2026-12-09T03:00:00Z"),
)
CORRECTION = "export_time=2026-12-09T03:00:00Z"
PAIRS = "STRUCT(key VARCHAR, value VARCHAR)[]"
# explicit JSON columns, numbers as text: some rows carry them as strings
JSON_COLUMNS = {
    "billing_account_id": "VARCHAR",
    "service": "STRUCT(id VARCHAR, description VARCHAR)",
    "sku": "STRUCT(id VARCHAR, description VARCHAR)",
    "usage_start_time": "VARCHAR",
    "usage_end_time": "VARCHAR",
    "project": f"STRUCT(id VARCHAR, number VARCHAR, name VARCHAR, labels {PAIRS})",
    "labels": PAIRS,
    "system_labels": PAIRS,
    "location": "STRUCT(region VARCHAR, zone VARCHAR)",
    "export_time": "VARCHAR",
    "cost": "VARCHAR",
    "currency": "VARCHAR",
    "usage": "STRUCT(amount VARCHAR, unit VARCHAR, amount_in_pricing_units VARCHAR, pricing_unit VARCHAR)",
    "credits": "STRUCT(name VARCHAR, amount VARCHAR, id VARCHAR, type VARCHAR)[]",
    "invoice": "STRUCT(month VARCHAR, publisher_type VARCHAR)",
    "cost_type": "VARCHAR",
    "adjustment_info": "STRUCT(id VARCHAR, description VARCHAR, mode VARCHAR, type VARCHAR)",
    "cost_at_list": "VARCHAR",
}
DETAILED_JSON_COLUMNS = JSON_COLUMNS | {
    "resource": "STRUCT(name VARCHAR, global_name VARCHAR)",
    "price": "STRUCT(effective_price VARCHAR, unit VARCHAR)",
    "subscription": "STRUCT(instance_id VARCHAR)",
}
# the same facts from either format, costs as DECIMAL
CANONICAL = """
    invoice.month AS month, CAST(cost AS DECIMAL(38, 10)) AS cost, cost_type, sku.description AS sku,
    coalesce(list_sum(list_transform(credits, c -> CAST(c.amount AS DECIMAL(38, 10)))), 0) AS credits,
    list_transform(credits, c -> c.type) AS credit_types, CAST(usage.amount AS DOUBLE) AS amount
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, list[GcpDemoSource]]:
    root = tmp_path_factory.mktemp("gcp")
    return root, write_gcp_demo_exports(root)


@pytest.fixture(scope="module")
def root(demo) -> Path:
    return demo[0]


@pytest.fixture(scope="module")
def con():
    with duckdb.connect() as connection:
        connection.execute("SET TimeZone = 'UTC'")
        yield connection


def _relative_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _files(root: Path, fmt: str, table: str, pattern: str = "*/*/part-000.*") -> list[str]:
    return sorted(str(p) for p in (root / BUCKET / fmt / table).glob(pattern))


def _read(con: duckdb.DuckDBPyConnection, root: Path, fmt: str, table: str, pattern: str = "*/*/part-000.*"):
    """Every delivery of a table (they append, so all count), read with explicit types."""
    files = _files(root, fmt, table, pattern)
    if fmt == "parquet":
        return con.read_parquet(files, hive_partitioning=False)
    columns = DETAILED_JSON_COLUMNS if table == DETAILED_TABLE else JSON_COLUMNS
    return con.read_json(files, format="newline_delimited", columns=columns)


def _json_lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


# --- layout --------------------------------------------------------------------------------------


def test_layout_matches_the_extract_bucket(root, demo):
    expected = ["_expected_totals_gcp.json"]
    for fmt, suffix in (("jsonl", "jsonl.gz"), ("parquet", "parquet")):
        for table in (STANDARD_TABLE, DETAILED_TABLE):
            for month, export_time in DELIVERIES:
                expected.append(
                    f"{BUCKET}/{fmt}/{table}/invoice_month={month}/export_time={export_time}/part-000.{suffix}"
                )
    assert _relative_files(root) == sorted(expected)
    assert (STANDARD_TABLE, DETAILED_TABLE) == (
        "gcp_billing_export_v1_01A2B3_C4D5E6_F7A8B9",
        "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9",
    )
    sources = {s.name: s for s in demo[1]}
    assert set(sources) == {
        f"helios-gcp-{kind}-{fmt}" for kind in ("standard", "detailed") for fmt in ("jsonl", "parquet")
    }
    for source in sources.values():
        assert (source.provider, source.format, source.billing_account_id) == ("gcp", "gcp-bq", BILLING_ACCOUNT)
        assert source.path == root / BUCKET / source.file_format / source.table
        assert source.detailed == (source.table == DETAILED_TABLE)
    assert sum(p.stat().st_size for p in root.rglob("*")) < 10_000_000


def test_same_seed_same_bytes(root, tmp_path):
    again = tmp_path / "again"
    write_gcp_demo_exports(again)
    assert _relative_files(again) == _relative_files(root)
    for relative in _relative_files(root):
        assert (again / relative).read_bytes() == (root / relative).read_bytes(), relative


# --- totals --------------------------------------------------------------------------------------


def test_expected_totals_equal_a_resum_of_every_extract(root, demo, con):
    sources = demo[1]
    expected = [(t.invoice_month, t.currency, t.cost, t.credits, t.net) for t in sources[0].expected_totals]
    assert [m for m, *_ in expected] == ["202610", "202611"]
    assert all(s.expected_totals == sources[0].expected_totals for s in sources)
    sidecar = json.loads((root / "_expected_totals_gcp.json").read_text(encoding="utf-8"))
    assert [
        (s["invoice_month"], s["currency"], Decimal(s["cost"]), Decimal(s["credits"]), Decimal(s["net"]))
        for s in sidecar
    ] == expected
    assert {s["billing_account_id"] for s in sidecar} == {BILLING_ACCOUNT}
    counts = {}
    for source in sources:
        rows = _read(con, root, source.file_format, source.table).select(f"currency, {CANONICAL}")
        resum = rows.aggregate("month, currency, sum(cost), sum(credits), sum(cost + credits)", "month, currency")
        assert sorted(resum.fetchall()) == expected, source.name
        (counts[source.name],) = rows.aggregate("count(*)").fetchone()
    assert counts["helios-gcp-standard-jsonl"] == counts["helios-gcp-standard-parquet"]
    assert counts["helios-gcp-detailed-jsonl"] == counts["helios-gcp-detailed-parquet"]
    # the standard table sums instances that differ only in resource
    assert counts["helios-gcp-standard-parquet"] < counts["helios-gcp-detailed-parquet"]


def test_standard_rows_sum_the_detailed_rows_per_sku_and_hour(root, con):
    sums = {}
    for table in (STANDARD_TABLE, DETAILED_TABLE):
        rows = _read(con, root, "parquet", table)
        assert ("resource" in rows.columns) == (table == DETAILED_TABLE)
        keyed = rows.select("invoice.month AS month, sku.description AS sku, usage_start_time AS start, cost_type, *")
        keys = "month, sku, start, cost_type"
        total = "sum(CAST(cost AS DECIMAL(38, 10))), sum(usage.amount), count(*)"
        sums[table] = keyed.aggregate(f"{keys}, {total}", keys).order(keys).fetchall()
    assert [r[:6] for r in sums[STANDARD_TABLE]] == [r[:6] for r in sums[DETAILED_TABLE]]
    assert max(r[6] for r in sums[DETAILED_TABLE]) > 1


# --- corrections, credits and commitments --------------------------------------------------------


def test_the_correction_lands_in_the_later_invoice_month(root, con):
    select = f"CAST(usage_start_time AS VARCHAR) AS start, adjustment_info, {CANONICAL}"
    for fmt in ("jsonl", "parquet"):
        for table in (STANDARD_TABLE, DETAILED_TABLE):
            assert _read(con, root, fmt, table).filter("cost_type <> 'regular'").aggregate("count(*)").fetchone() == (
                2,
            )
            late = _read(con, root, fmt, table, f"invoice_month=202611/{CORRECTION}/part-000.*").select(select)
            negation, rebilled = (dict(zip(late.columns, row, strict=True)) for row in late.order("cost").fetchall())
            for row in (negation, rebilled):
                assert (row["month"], row["cost_type"], row["credits"]) == ("202611", "adjustment", 0)
                assert row["sku"] == "Nvidia H100 80GB GPU running in Americas"
                assert row["start"][:10] == negation["start"][:10] and row["start"].startswith("2026-10-")
                assert (row["adjustment_info"]["type"], row["adjustment_info"]["mode"]) == (
                    "USAGE_CORRECTION",
                    "COMPLETE_NEGATION_WITH_REMONETIZATION",
                )
            assert negation["cost"] < 0 < rebilled["cost"] < -negation["cost"]
            # the day's eight GPUs were billed three hours too many
            assert negation["amount"] + rebilled["amount"] == -3 * 8 * 3600
    # the negation undoes exactly what the October invoice billed that instance that day
    october = _read(con, root, "parquet", DETAILED_TABLE, "invoice_month=202610/*/part-000.*")
    billed = october.filter(
        f"strftime(usage_start_time, '%Y-%m-%d') = '{negation['start'][:10]}' AND resource.name = 'llm-a3-02'"
        f" AND sku.description = '{negation['sku']}'"
    )
    assert billed.aggregate("CAST(sum(CAST(cost AS DECIMAL(38, 10))) AS DECIMAL(38, 10))").fetchone() == (
        -negation["cost"],
    )


def test_credits_and_the_commitment_fee(root, con):
    rows = _read(con, root, "parquet", DETAILED_TABLE)
    credited = rows.filter("len(credits) > 0").select(
        "resource.name AS name, cost, credits[1].amount AS amount, credits[1].type AS type, subscription"
    )
    by_type = {
        t: (n, names) for t, n, names in credited.aggregate("type, count(*), list(DISTINCT name)", "type").fetchall()
    }
    assert by_type["COMMITTED_USAGE_DISCOUNT"][1] == ["llm-a3-01"]
    assert by_type["SUSTAINED_USAGE_DISCOUNT"][1] == ["speech-t4-01"]
    for name, cost, amount, kind, subscription in credited.fetchall():
        assert amount < 0
        if kind == "COMMITTED_USAGE_DISCOUNT":
            assert amount == -cost and subscription["instance_id"], name
        else:
            assert Decimal(str(amount)) == -(Decimal(str(cost)) * Decimal("0.2")).quantize(Decimal("1e-6")), name
    fees = rows.filter("sku.description LIKE 'Commitment v1:%'").select(
        "invoice.month AS month, cost, project.id AS project, subscription.instance_id AS commitment, usage_start_time"
    )
    per_month = fees.aggregate("month, count(*), min(cost), max(cost), list(DISTINCT project)", "month").order("month")
    # every hour of the Pacific invoice months; the fall-back to PST makes November an hour longer
    assert per_month.fetchall() == [
        ("202610", 744, 50.96, 50.96, ["helios-platform"]),
        ("202611", 721, 50.96, 50.96, ["helios-platform"]),
    ]
    [(commitment,)] = fees.select("commitment").distinct().fetchall()
    assert f"COMMITTED_USAGE_DISCOUNT:{commitment}" in {
        i for (i,) in rows.select("credits[1].id AS id").filter("id IS NOT NULL").distinct().fetchall()
    }


def test_invoice_months_run_on_pacific_time(root, con):
    rows = _read(con, root, "parquet", DETAILED_TABLE).filter("cost_type = 'regular'")
    bounds = rows.aggregate("invoice.month, min(usage_start_time), max(usage_end_time)", "invoice.month")
    assert sorted(bounds.fetchall()) == [
        ("202610", datetime(2026, 10, 1, 7, tzinfo=UTC), datetime(2026, 11, 1, 7, tzinfo=UTC)),
        ("202611", datetime(2026, 11, 1, 7, tzinfo=UTC), datetime(2026, 12, 1, 8, tzinfo=UTC)),
    ]
    late = rows.filter("invoice.month = '202610'").aggregate("max(export_time)").fetchone()[0]
    assert late < datetime(2026, 11, 3, 3, tzinfo=UTC)


def test_resources_and_labels(root, demo, con):
    source = demo[1][0]
    rows = _read(con, root, "parquet", DETAILED_TABLE)
    names = dict(
        rows.filter("resource.name IS NOT NULL").aggregate("resource.name, any_value(resource.global_name)").fetchall()
    )
    for name, global_name in source.vm_resource_ids.items():
        assert names[name] == global_name
        assert re.fullmatch(
            r"//compute\.googleapis\.com/projects/\d{12}/zones/us-central1-[abc]/instances/\d{19}", global_name
        )
    assert source.checkpoint_resource_ids == ("//storage.googleapis.com/projects/_/buckets/helios-ckpt-gcp",)
    assert names["helios-ckpt-gcp"] == source.checkpoint_resource_ids[0]
    specs = rows.select(
        "list_filter(system_labels, l -> l.key = 'compute.googleapis.com/machine_spec')[1].value AS spec"
    )
    assert {s for (s,) in specs.distinct().fetchall()} == {None, "a3-highgpu-8g", "a2-ultragpu-8g", "n1-standard-16"}
    labels = {(lab["key"], lab["value"]) for (ls,) in rows.select("labels").distinct().fetchall() for lab in ls}
    assert ("asr-serving", None) in labels and ("team", "vision") in labels
    projects = {p for (p,) in rows.select("project.id").distinct().fetchall()}
    assert projects == {"helios-llm", "helios-research", "helios-vision", "helios-speech", "helios-platform"}
    egress = (
        rows.filter("usage.unit = 'bytes'").aggregate("list(DISTINCT resource.name ORDER BY resource.name)").fetchone()
    )
    assert egress == (["helios-ckpt-gcp", "llm-a3-02"],)


# --- BigQuery's JSON rendering -------------------------------------------------------------------


def test_json_extract_quirks(root):
    # the first rows of every delivery are enough: a month's hours repeat the same shapes
    lines = [line for path in _files(root, "jsonl", DETAILED_TABLE) for line in _json_lines(Path(path))[:1000]]
    rows = [json.loads(line) for line in lines]
    assert all("null" not in line for line in lines), "NULL fields are left out"
    assert all(set(row) >= {"credits", "adjustment_info", "labels"} for row in rows)
    assert {json.dumps(r["adjustment_info"]) for r in rows if r["cost_type"] == "regular"} == {"{}"}
    assert any(r["credits"] == [] for r in rows) and any(r["credits"] for r in rows)
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    for row in rows:
        assert stamp.fullmatch(row["usage_start_time"]) and stamp.fullmatch(row["usage_end_time"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} UTC", row["export_time"])
        assert isinstance(row["cost"], str) == (row["cost_type"] == "adjustment")
        assert isinstance(row["usage"]["amount"], str) == (row["cost_type"] == "adjustment")
    assert sum(r["cost_type"] == "adjustment" for r in rows) == 2
    assert {"key": "asr-serving"} in [label for r in rows for label in r["labels"]]
    prices = {type(r["price"]["effective_price"]) for r in rows}
    assert prices == {str, float}, "NUMERIC is text in some rows and a number in others"
    zones = [r["location"] for r in rows if r["resource"]["name"] == "helios-ckpt-gcp"]
    assert zones and all("zone" not in z for z in zones)
    [standard, *_] = _files(root, "jsonl", STANDARD_TABLE)
    assert all("resource" not in json.loads(line) for line in _json_lines(Path(standard))[:100])
