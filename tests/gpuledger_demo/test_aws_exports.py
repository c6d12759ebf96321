"""The generated AWS sample exports: bucket layout, manifests, determinism, and CUR's pricing rules."""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger_demo.aws_exports import DemoSource, write_demo_exports, write_scaled_cur_export
from models.aws_cur import COST, CUR_COLUMNS, LINE_ITEM_TYPES, TIMESTAMP, cur1_to_snake

pytestmark = pytest.mark.serial

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CUR2 = "helios-billing-exports/cur2/helios-cur2"
CUR1 = "helios-legacy-billing/cur1/helios-legacy-cur"
TAG_HEADERS = [
    "resourceTags/user:team",
    "resourceTags/user:project",
    "resourceTags/aws:createdBy",
    "costCategory/Business Unit",
]
NOT_IN_DEMO = {"DistributorDiscount", "PrivateRateDiscount", "FlatRateSubscription"}
CHARGE_TYPES = {"Tax", "Credit", "Refund", "BundledDiscount", "Discount", "EdpDiscount"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, list[DemoSource]]:
    root = tmp_path_factory.mktemp("demo")
    return root, write_demo_exports(root)


@pytest.fixture(scope="module")
def root(demo) -> Path:
    return demo[0]


def _relative_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _manifest(root: Path, relative: str) -> dict:
    return json.loads((root / relative).read_text(encoding="utf-8"))


def _current_deliveries(root: Path) -> dict[str, tuple[str, list[Path]]]:
    """Manifest -> (format, the data files it lists), as the pipeline will read them."""
    deliveries = {}
    for manifest_path in sorted(root.rglob("*-Manifest.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if "dataFiles" in manifest:
            files = [root / uri.removeprefix("s3://") for uri in manifest["dataFiles"]]
            deliveries[manifest_path.parent.name] = ("aws-cur2", files)
        else:
            files = [root / manifest["bucket"] / key for key in manifest["reportKeys"]]
            deliveries[manifest_path.parent.name] = ("aws-cur1", files)
    return deliveries


def _all_deliveries(root: Path) -> dict[Path, tuple[str, list[Path]]]:
    """Every delivery on disk, superseded and unmanifested ones included: data folder -> files."""
    groups: dict[Path, tuple[str, list[Path]]] = {}
    for path in sorted(root.rglob("*")):
        if path.name.endswith((".parquet", ".csv.gz")):
            fmt = "aws-cur2" if path.name.endswith(".parquet") else "aws-cur1"
            groups.setdefault(path.parent, (fmt, []))[1].append(path)
    return groups


def _canonical(con: duckdb.DuckDBPyConnection, fmt: str, files: list[Path]) -> duckdb.DuckDBPyRelation:
    """The files as canonical CUR columns (costs DECIMAL), read independently of the pipeline."""
    names = [str(f) for f in files]
    if fmt == "aws-cur2":
        raw = con.read_parquet(names, hive_partitioning=False)
        sources = {c: c for c in raw.columns}
    else:
        raw = con.read_csv(names, header=True, all_varchar=True)
        sources = {cur1_to_snake(c): c for c in raw.columns}
    selects = []
    for column in CUR_COLUMNS:
        if column.name not in sources:
            has_map = column.product_map_key and "product" in sources
            value = f"map_extract_value(product, '{column.product_map_key}')" if has_map else "NULL"
        elif fmt == "aws-cur2":
            value = f'"{sources[column.name]}"'
        else:
            value = f"nullif(\"{sources[column.name]}\", '')"
        selects.append(f"CAST({value} AS {column.sql_type}) AS {column.name}")
    return raw.select(", ".join(selects))


# --- layout and manifests ----------------------------------------------------------------------


def test_layout_matches_the_export_buckets(root, demo):
    files = [UUID.sub("<id>", f) for f in _relative_files(root)]
    assert files == sorted(
        [
            f"{CUR2}/data/BILLING_PERIOD=2026-10/helios-cur2-00001.snappy.parquet",
            f"{CUR2}/data/BILLING_PERIOD=2026-11/<id>/helios-cur2-00001.snappy.parquet",
            f"{CUR2}/data/BILLING_PERIOD=2026-11/<id>/helios-cur2-00001.snappy.parquet",
            f"{CUR2}/data/BILLING_PERIOD=2026-12/<id>/helios-cur2-00001.snappy.parquet",
            f"{CUR2}/metadata/BILLING_PERIOD=2026-10/helios-cur2-Manifest.json",
            f"{CUR2}/metadata/BILLING_PERIOD=2026-11/helios-cur2-Manifest.json",
            f"{CUR1}/20261001-20261101/<id>/helios-legacy-cur-1.csv.gz",
            f"{CUR1}/20261001-20261101/<id>/helios-legacy-cur-2.csv.gz",
            f"{CUR1}/20261001-20261101/helios-legacy-cur-Manifest.json",
            f"{CUR1}/20261101-20261201/<id>/helios-legacy-cur-1.csv.gz",
            f"{CUR1}/20261101-20261201/<id>/helios-legacy-cur-1.csv.gz",
            f"{CUR1}/20261101-20261201/helios-legacy-cur-Manifest.json",
        ]
    )
    assert demo[1] == [
        DemoSource(name="helios-cur2", provider="aws", format="aws-cur2", path=root / CUR2),
        DemoSource(name="helios-legacy-cur", provider="aws", format="aws-cur1", path=root / CUR1),
    ]
    assert sum(p.stat().st_size for p in root.rglob("*")) < 10_000_000


def test_cur2_manifests_list_only_the_newest_execution(root):
    con = duckdb.connect()
    for period in ("2026-10", "2026-11"):
        manifest = _manifest(root, f"{CUR2}/metadata/BILLING_PERIOD={period}/helios-cur2-Manifest.json")
        assert list(manifest) == [
            "executionId",
            "exportArn",
            "billingPeriod",
            "columns",
            "dataFiles",
            "additionalOutputFiles",
        ]
        assert UUID.fullmatch(manifest["executionId"])
        assert re.fullmatch(
            rf"arn:aws:bcm-data-exports:us-east-1:012345678901:export/helios-cur2-{UUID.pattern}",
            manifest["exportArn"],
        )
        assert manifest["billingPeriod"] == period
        assert manifest["additionalOutputFiles"] == []
        [uri] = manifest["dataFiles"]
        assert uri.startswith(f"s3://helios-billing-exports/cur2/helios-cur2/data/BILLING_PERIOD={period}/")
        local = root / uri.removeprefix("s3://")
        assert local.is_file()
        schema = con.execute("DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = false)", [str(local)])
        described = {name: sql_type for name, sql_type, *_ in schema.fetchall()}
        types = {"string": "VARCHAR", "double": "DOUBLE", "timestamp": "TIMESTAMP WITH TIME ZONE"}
        types["map<string,string>"] = "MAP(VARCHAR, VARCHAR)"
        assert described == {c["name"]: types[c["type"]] for c in manifest["columns"]}
    november = _manifest(root, f"{CUR2}/metadata/BILLING_PERIOD=2026-11/helios-cur2-Manifest.json")
    executions = sorted(p.name for p in (root / CUR2 / "data" / "BILLING_PERIOD=2026-11").iterdir())
    assert len(executions) == 2 and november["executionId"] in executions
    assert f"/{november['executionId']}/" in november["dataFiles"][0]


def test_cur1_manifests_name_the_newest_assembly(root):
    for period, end, parts in (("20261001", "20261101", 2), ("20261101", "20261201", 1)):
        folder = f"{CUR1}/{period}-{end}"
        manifest = _manifest(root, f"{folder}/helios-legacy-cur-Manifest.json")
        assert sorted(manifest) == sorted(
            [
                "assemblyId",
                "account",
                "columns",
                "charset",
                "compression",
                "contentType",
                "reportId",
                "reportName",
                "billingPeriod",
                "bucket",
                "reportKeys",
            ]
        )
        assert manifest["account"] == "004455667788"
        assert (manifest["charset"], manifest["compression"], manifest["contentType"]) == ("UTF-8", "GZIP", "text/csv")
        assert manifest["reportName"] == "helios-legacy-cur"
        assert manifest["bucket"] == "helios-legacy-billing"
        assert manifest["billingPeriod"] == {"start": f"{period}T000000.000Z", "end": f"{end}T000000.000Z"}
        assert manifest["reportKeys"] == [
            f"cur1/helios-legacy-cur/{period}-{end}/{manifest['assemblyId']}/helios-legacy-cur-{n}.csv.gz"
            for n in range(1, parts + 1)
        ]
        for key in manifest["reportKeys"]:
            with gzip.open(root / "helios-legacy-billing" / key, "rt", encoding="utf-8") as handle:
                header = next(csv.reader(handle))
            assert header == [f"{c['category']}/{c['name']}" for c in manifest["columns"]]
    november = root / CUR1 / "20261101-20261201"
    assemblies = sorted(p.name for p in november.iterdir() if p.is_dir())
    assert len(assemblies) == 2
    assert _manifest(root, f"{CUR1}/20261101-20261201/helios-legacy-cur-Manifest.json")["assemblyId"] in assemblies


def test_cur1_headers_are_the_canonical_columns_in_cur1_spelling(root):
    [first] = (root / CUR1 / "20261001-20261101").glob("*/helios-legacy-cur-1.csv.gz")
    with gzip.open(first, "rt", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    canonical = {c.name for c in CUR_COLUMNS} - {"bill_payer_account_name", "line_item_usage_account_name"}
    assert header[-4:] == TAG_HEADERS
    assert {cur1_to_snake(h) for h in header[:-4]} == canonical
    assert len(header) == len(set(header))
    for expected in ("identity/LineItemId", "bill/PayerAccountId", "lineItem/UnblendedCost", "product/ProductName"):
        assert expected in header
    for expected in ("product/servicecode", "product/regionCode", "reservation/ReservationARN", "pricing/RateCode"):
        assert expected in header
    assert "savingsPlan/SavingsPlanEffectiveCost" in header and "costCategory/Business Unit" in header


def test_restated_november_replaces_amounts_and_adds_a_late_credit(root):
    con = duckdb.connect()
    totals = {}
    for folder in sorted((root / CUR2 / "data" / "BILLING_PERIOD=2026-11").iterdir()):
        rows = _canonical(con, "aws-cur2", list(folder.glob("*.parquet")))
        ids = {r[0] for r in rows.select("identity_line_item_id").fetchall()}
        types = Counter(t for (t,) in rows.select("line_item_line_item_type").fetchall())
        (billed,) = rows.aggregate("sum(line_item_unblended_cost)").fetchone()
        totals[folder.name] = (len(ids), types, billed, ids)
    current = _manifest(root, f"{CUR2}/metadata/BILLING_PERIOD=2026-11/helios-cur2-Manifest.json")["executionId"]
    (old_name,) = set(totals) - {current}
    old, new = totals[old_name], totals[current]
    assert new[0] > old[0] and new[2] != old[2]
    assert old[1]["Credit"] == 0 and new[1]["Credit"] == 1
    assert not old[3] & new[3], "line item ids are not stable across versions"


# --- determinism and content --------------------------------------------------------------------


def test_same_seed_same_bytes(root, tmp_path):
    again = tmp_path / "again"
    write_demo_exports(again)
    assert _relative_files(again) == _relative_files(root)
    for relative in _relative_files(root):
        assert (again / relative).read_bytes() == (root / relative).read_bytes(), relative


def test_account_ids_keep_leading_zeros(root):
    for files in (_current_deliveries(root)[name][1] for name in ("20261001-20261101", "20261101-20261201")):
        for path in files:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
            assert {r["bill/PayerAccountId"] for r in rows} == {"004455667788"}
            assert {"003344556677", "098765432109"} <= {r["lineItem/UsageAccountId"] for r in rows}
    con = duckdb.connect()
    path = root / CUR2 / "data" / "BILLING_PERIOD=2026-10" / "helios-cur2-00001.snappy.parquet"
    rows = con.read_parquet(str(path), hive_partitioning=False)
    assert dict(zip(rows.columns, rows.types, strict=True))["bill_payer_account_id"] == "VARCHAR"
    assert rows.select("bill_payer_account_id").distinct().fetchall() == [("012345678901",)]
    accounts = {a for (a,) in rows.select("line_item_usage_account_id").distinct().fetchall()}
    assert "000123456789" in accounts and len(accounts - {"012345678901"}) >= 2


def test_cur1_text_formats(root):
    number = re.compile(r"-?\d+(\.\d{0,9}[1-9])?")
    costs = {c.name for c in CUR_COLUMNS if c.sql_type == COST}
    timestamps = {c.name for c in CUR_COLUMNS if c.sql_type == TIMESTAMP and not c.repair}
    terms = {c.name for c in CUR_COLUMNS if c.repair}
    for _, files in _current_deliveries(root).values():
        for path in (f for f in files if f.name.endswith(".csv.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    for header, value in row.items():
                        name = cur1_to_snake(header)
                        if value and name in costs:
                            assert number.fullmatch(value), (header, value)
                        if name in timestamps and name.startswith("bill_"):
                            assert re.fullmatch(r"\d{4}-\d\d-01T00:00:00\.000Z", value), (header, value)
                        elif name in timestamps:
                            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:00:00Z", value), (header, value)
                        elif value and name in terms:
                            assert re.fullmatch(r"\d{4}-\d\d-01T00:00:00\.000Z", value), (header, value)


def test_every_line_item_type_appears(root):
    con = duckdb.connect()
    seen = set()
    for fmt, files in _current_deliveries(root).values():
        rows = _canonical(con, fmt, files).select("line_item_line_item_type").distinct().fetchall()
        seen |= {t for (t,) in rows}
    assert seen == set(LINE_ITEM_TYPES) - NOT_IN_DEMO


def test_tags_on_most_resources(root):
    con = duckdb.connect()
    path = root / CUR2 / "data" / "BILLING_PERIOD=2026-10" / "helios-cur2-00001.snappy.parquet"
    rows = con.read_parquet(str(path), hive_partitioning=False).filter("line_item_resource_id IS NOT NULL")
    keys = {k for (ks,) in rows.select("map_keys(resource_tags)").distinct().fetchall() for k in ks}
    assert keys == {"user_team", "user_project", "aws_created_by"}
    tagged = rows.aggregate(
        "count(DISTINCT line_item_resource_id)"
        " FILTER (WHERE map_extract_value(resource_tags, 'user_team') IS NOT NULL),"
        " count(DISTINCT line_item_resource_id)"
    ).fetchone()
    assert 0.7 <= tagged[0] / tagged[1] <= 0.95
    product_keys = {k for (ks,) in rows.select("map_keys(product)").distinct().fetchall() for k in ks}
    assert {"product_name", "region", "transfer_type", "storage_class"} <= product_keys


# --- pricing consistency ------------------------------------------------------------------------


def _violations(con: duckdb.DuckDBPyConnection, rows: duckdb.DuckDBPyRelation, hours: int) -> dict[str, int]:
    """Rows breaking each CUR pricing rule (0 everywhere when consistent)."""
    rows.create_view("li", replace=True)
    checks = {
        "usage cost": """line_item_line_item_type IN ('Usage', 'SavingsPlanCoveredUsage')
            AND line_item_unblended_cost <> round(line_item_unblended_rate * line_item_usage_amount, 10)""",
        "public cost": """pricing_public_on_demand_rate IS NOT NULL AND pricing_public_on_demand_cost
            <> round(pricing_public_on_demand_rate * line_item_usage_amount, 10)""",
        "on-demand rate": """line_item_line_item_type IN ('Usage', 'SavingsPlanCoveredUsage')
            AND pricing_term = 'OnDemand' AND line_item_unblended_rate <> pricing_public_on_demand_rate""",
        "spot rate": """pricing_term = 'Spot'
            AND NOT (line_item_usage_type LIKE '%SpotUsage:%'
                     AND line_item_unblended_rate < pricing_public_on_demand_rate)""",
        "discounted usage": """line_item_line_item_type = 'DiscountedUsage' AND NOT (
            line_item_unblended_rate = 0 AND line_item_unblended_cost = 0 AND reservation_effective_cost > 0
            AND pricing_public_on_demand_cost > 0 AND reservation_reservation_a_r_n IS NOT NULL)""",
        "covered usage": """line_item_line_item_type = 'SavingsPlanCoveredUsage' AND NOT (
            savings_plan_savings_plan_effective_cost > 0 AND savings_plan_savings_plan_a_r_n IS NOT NULL
            AND savings_plan_savings_plan_effective_cost < line_item_unblended_cost)""",
        "priced": f"""line_item_line_item_type NOT IN {tuple(CHARGE_TYPES)} AND (product_sku IS NULL
            OR pricing_rate_code IS NULL OR pricing_unit IS NULL OR line_item_usage_amount IS NULL)""",
        "unpriced": f"""line_item_line_item_type IN {tuple(CHARGE_TYPES)} AND (product_sku IS NOT NULL
            OR pricing_rate_code IS NOT NULL OR line_item_usage_amount IS NOT NULL
            OR line_item_unblended_rate IS NOT NULL)""",
        "one-time fee": """line_item_line_item_type IN ('Fee', 'SavingsPlanUpfrontFee') AND NOT (
            line_item_usage_amount = 1 AND line_item_unblended_cost = line_item_unblended_rate
            AND bill_bill_type = 'Purchase'
            AND coalesce(reservation_reservation_a_r_n, savings_plan_savings_plan_a_r_n) IS NOT NULL)""",
    }
    found = {name: con.execute(f"SELECT count(*) FROM li WHERE {sql}").fetchone()[0] for name, sql in checks.items()}
    # each covered row has a negation of the same usage with the opposite rate and cost
    found["negations"] = con.execute(
        """SELECT count(*) FROM li AS c FULL JOIN li AS n
           ON c.line_item_line_item_type = 'SavingsPlanCoveredUsage'
           AND n.line_item_line_item_type = 'SavingsPlanNegation'
           AND n.line_item_resource_id = c.line_item_resource_id
           AND n.line_item_usage_start_date = c.line_item_usage_start_date
           AND n.line_item_usage_amount = c.line_item_usage_amount
           AND n.line_item_unblended_rate = -c.line_item_unblended_rate
           AND n.line_item_unblended_cost = -c.line_item_unblended_cost
           AND n.savings_plan_savings_plan_a_r_n = c.savings_plan_savings_plan_a_r_n
           WHERE (c.line_item_line_item_type = 'SavingsPlanCoveredUsage' AND n.line_item_resource_id IS NULL)
              OR (n.line_item_line_item_type = 'SavingsPlanNegation' AND c.line_item_resource_id IS NULL)"""
    ).fetchone()[0]
    fees = con.execute(
        """SELECT line_item_line_item_type, line_item_usage_amount, line_item_unblended_rate,
               line_item_unblended_cost, savings_plan_total_commitment_to_date, savings_plan_used_commitment,
               reservation_unused_quantity, reservation_unused_recurring_fee,
               reservation_unused_amortized_upfront_fee_for_billing_period,
               (SELECT coalesce(sum(savings_plan_savings_plan_effective_cost), 0) FROM li),
               (SELECT coalesce(sum(line_item_usage_amount), 0) FROM li
                WHERE line_item_line_item_type = 'DiscountedUsage')
           FROM li WHERE line_item_line_item_type IN ('SavingsPlanRecurringFee', 'RIFee')"""
    ).fetchall()
    found["recurring fees"] = 0
    for kind, amount, rate, cost, total, used, unused, unused_fee, unused_upfront, sp_used, ri_hours in fees:
        ok = cost == rate * amount and amount % hours == 0
        if kind == "SavingsPlanRecurringFee":
            ok = ok and amount == hours and used == sp_used and 0 < used <= total and total >= cost
        else:
            ok = ok and unused == amount - ri_hours and unused > 0 and unused_fee == unused * rate
            ok = ok and unused_upfront is not None and unused_upfront > 0
        found["recurring fees"] += not ok
    return {name: count for name, count in found.items() if count}


@pytest.mark.parametrize("which", ["current", "superseded and in progress"])
def test_pricing_rules_hold(root, which):
    con = duckdb.connect()
    current = {tuple(files) for _, files in _current_deliveries(root).values()}
    checked = 0
    for fmt, files in _all_deliveries(root).values():
        if (tuple(files) in current) != (which == "current"):
            continue
        rows = _canonical(con, fmt, files)
        (start,) = rows.aggregate("min(bill_billing_period_start_date)").fetchone()
        (end,) = rows.aggregate("max(bill_billing_period_end_date)").fetchone()
        assert _violations(con, rows, int((end - start).total_seconds()) // 3600) == {}, files
        checked += 1
    assert checked == (4 if which == "current" else 3)


def test_fee_rows_per_month(root):
    con = duckdb.connect()
    counts = {}
    for name, (fmt, files) in _current_deliveries(root).items():
        rows = _canonical(con, fmt, files).filter(
            "line_item_line_item_type NOT LIKE '%Usage' AND line_item_line_item_type <> 'SavingsPlanNegation'"
        )
        counts[name] = Counter(t for (t,) in rows.select("line_item_line_item_type").fetchall())
    october_sp, november_sp = counts["BILLING_PERIOD=2026-10"], counts["BILLING_PERIOD=2026-11"]
    assert october_sp["SavingsPlanUpfrontFee"] == 1 and november_sp["SavingsPlanUpfrontFee"] == 0
    assert october_sp["SavingsPlanRecurringFee"] == november_sp["SavingsPlanRecurringFee"] == 1
    october_ri, november_ri = counts["20261001-20261101"], counts["20261101-20261201"]
    assert october_ri["Fee"] == 1 and november_ri["Fee"] == 0
    assert october_ri["RIFee"] == november_ri["RIFee"] == 1
    for month in counts.values():
        assert month["Tax"] >= 2


def test_every_commitment_row_states_a_one_year_term_from_its_first_fee(root):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    terms = set()
    for fmt, files in _current_deliveries(root).values():
        rows = _canonical(con, fmt, files).select(
            "line_item_line_item_type IN ('RIFee', 'Fee', 'DiscountedUsage')"
            " AND reservation_reservation_a_r_n IS NOT NULL AS ri,"
            " line_item_line_item_type LIKE 'SavingsPlan%' AND savings_plan_savings_plan_a_r_n IS NOT NULL AS sp,"
            " reservation_start_time, reservation_end_time, savings_plan_start_time, savings_plan_end_time"
        )
        terms |= set(rows.distinct().fetchall())
    # both commitments were bought in October 2026 and run 8760 hours (the fees' amortization)
    year = (datetime(2026, 10, 1, tzinfo=UTC), datetime(2027, 10, 1, tzinfo=UTC))
    assert terms == {
        (False, False, None, None, None, None),
        (True, False, *year, None, None),
        (False, True, None, None, *year),
    }


# --- the scaled benchmark export ----------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "source_format"), [("cur2-parquet", "aws-cur2"), ("cur1-csv", "aws-cur1")])
@pytest.mark.parametrize("rows", [5000, 5001])
def test_scaled_export_has_exactly_n_rows(tmp_path, fmt, source_format, rows):
    files = write_scaled_cur_export(tmp_path / "a", rows, fmt)
    assert [f.parent for f in files] == [tmp_path / "a"]
    con = duckdb.connect()
    canonical = _canonical(con, source_format, files)
    assert canonical.aggregate("count(*)").fetchone() == (rows,)
    types = {t for (t,) in canonical.select("line_item_line_item_type").distinct().fetchall()}
    assert types == set(LINE_ITEM_TYPES) - NOT_IN_DEMO
    assert _violations(con, canonical, 720) == {}
    (unique_ids,) = canonical.aggregate("count(DISTINCT identity_line_item_id)").fetchone()
    assert unique_ids == rows
    if rows == 5000:
        again = write_scaled_cur_export(tmp_path / "b", rows, fmt)
        assert [f.read_bytes() for f in again] == [f.read_bytes() for f in files]
        other_seed = write_scaled_cur_export(tmp_path / "c", rows, fmt, seed=7)
        assert [f.read_bytes() for f in other_seed] != [f.read_bytes() for f in files]


def test_scaled_export_refuses_too_few_rows(tmp_path):
    with pytest.raises(ValueError, match="at least"):
        write_scaled_cur_export(tmp_path, 10, "cur2-parquet")


def test_scaled_export_usage_mix(tmp_path):
    [path] = write_scaled_cur_export(tmp_path, 20_000, "cur2-parquet", seed=11)
    con = duckdb.connect()
    rows = con.read_parquet(str(path), hive_partitioning=False)
    mix = dict(rows.aggregate("line_item_line_item_type, count(*)").fetchall())
    assert mix["Usage"] > 0.6 * 20_000
    assert mix["SavingsPlanCoveredUsage"] == mix["SavingsPlanNegation"]
    (untagged,) = rows.aggregate("avg((map_extract_value(resource_tags, 'user_team') IS NULL)::INTEGER)").fetchone()
    assert 0.03 < untagged < 0.4
    assert Decimal(str(rows.aggregate("sum(line_item_unblended_cost)").fetchone()[0])) > 0
