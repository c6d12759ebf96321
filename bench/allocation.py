"""Benchmark: GPU sample aggregation and the cost split at cluster scale.

    python bench/allocation.py --nodes 1000 --days 30

A synthetic fleet of ``--nodes`` p5.48xlarge nodes (8 GPUs each) billed hourly for ``--days`` days, with
8-hour jobs (4 or 8 GPUs, four teams) and, per GPU and minute, the DCGM profiling fields a dcgm-exporter
sends: SM, tensor-pipe and DRAM activity and the framebuffer in use (four samples). Samples are generated
inside DuckDB and streamed through the production aggregation (``sql/telemetry/gpu_activity.sql``: SM activity
prices, p95 and means kept, the framebuffer's high-water mark); a plain DuckDB GROUP BY of the same means and
maxima over the same files is the raw baseline. Then the hourly charges are
split with the production ``allocate_month``. Everything runs in a child process so its peak RSS is its
own. The last line is machine-readable:

    bench allocation nodes=N gpu_hours=H seconds=S samples_per_s=X peak_rss_mb=M
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from datacache import generated_once

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

START = datetime(2026, 11, 1, tzinfo=UTC)
SLOT_HOURS = 8

METRIC_COLUMNS = ("sm_active", "tensor_active", "dram_active", "fb_used_mib")
"""Samples per GPU and minute: the DCGM profiling fields of a sample file (``models.telemetry.SAMPLE_FILE_METRICS``)."""

# One row per (node, GPU, minute) of a batch of nodes, from a single range (nothing materialized first).
# Jobs fill 80% of the 8-hour slots with 4 or 8 GPUs; busy GPUs run at SM activity 55-99% with 60-80 GB of
# framebuffer in use, the rest at 0-2% with none.
SAMPLES_SQL = f"""
SELECT
    node_name AS node,
    CAST(gpu AS VARCHAR) AS gpu,
    TIMESTAMP '{START:%Y-%m-%d %H:%M:%S}' + to_minutes(minute) AS timestamp,
    sm_active,
    round(sm_active * 0.6, 3) AS tensor_active,
    round(sm_active * 0.5, 3) AS dram_active,
    CASE WHEN busy THEN 60000 + draw % 20000 ELSE 0 END AS fb_used_mib
FROM (
    SELECT
        *,
        CASE WHEN busy THEN 0.55 + draw % 45 / 100.0 ELSE draw % 3 / 100.0 END AS sm_active
    FROM (
        SELECT
            'n' || lpad(CAST(node AS VARCHAR), 5, '0') AS node_name,
            gpu,
            minute,
            (i * 2654435761) % 4294967296 AS draw,
            (node * 7919 + minute // {SLOT_HOURS * 60} * 104729) % 10 < 8
                AND gpu < 4 + 4 * ((node + minute // {SLOT_HOURS * 60}) % 2) AS busy
        FROM (
            SELECT i, $first_node + i // (8 * $minutes) AS node, i // $minutes % 8 AS gpu, i % $minutes AS minute
            FROM range($samples) AS t(i)
        )
    )
)
"""

JOBS_SQL = f"""
INSERT INTO gpu.jobs BY NAME
SELECT
    format('{{}}-{{}}', node, slot) AS job_id,
    'bench' AS cluster,
    'team-' || (node % 4) AS account,
    ['n' || lpad(CAST(node AS VARCHAR), 5, '0')] AS nodes,
    4 + 4 * ((node + slot) % 2) AS gpu_count,
    $start + to_hours(slot * {SLOT_HOURS}) AS start_time,
    $start + to_hours(slot * {SLOT_HOURS} + {SLOT_HOURS}) AS end_time,
    CASE WHEN (node + slot) % 7 = 0 THEN 'FAILED' ELSE 'COMPLETED' END AS state,
    'run-' || (node % 50) AS run_group,
    'bench' AS source
FROM range($nodes) AS n(node), range($slots) AS s(slot)
WHERE (node * 7919 + slot * 104729) % 10 < 8
"""

CHARGES_SQL = """
INSERT INTO focus.cost_rows (BilledCost, EffectiveCost, ListCost, ContractedCost, BillingAccountId, SubAccountId,
    BillingCurrency, BillingPeriodStart, BillingPeriodEnd, ChargeCategory, ChargeFrequency, ChargePeriodStart,
    ChargePeriodEnd, InvoiceIssuerName, ProviderName, PublisherName, ServiceCategory, ServiceName,
    ServiceSubcategory, ResourceId, ConsumedQuantity, ConsumedUnit, Tags, x_SourceFormat, x_DeliveryId, x_SourceFile,
    x_SourceLineItemId, x_IngestedAt, x_InstanceType, x_UsageType)
SELECT 55.04, 39.6288, 55.04, 55.04, '012345678901', '000123456789', 'USD', $start, $period_end, 'Usage',
    'Usage-Based', $start + to_hours(hour), $start + to_hours(hour + 1), 'AWS', 'AWS', 'AWS', 'Compute',
    'Amazon Elastic Compute Cloud', 'Virtual Machines', 'i-bench' || node, 1, 'Hours',
    '{"team":"team-' || (node % 4) || '"}', 'aws-cur2', 'bench', 'bench.parquet', node || '/' || hour, $start,
    'p5.48xlarge', 'BoxUsage:p5.48xlarge'
FROM range($nodes) AS n(node), range($hours) AS h(hour)
"""


NODES_PER_FILE = 50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    files = _sample_files(args.data_dir, args.nodes, args.days)
    if args.child:
        _child(files, args.nodes, args.days, args.child)
        return 0
    with tempfile.TemporaryDirectory(prefix="gpuledger-bench-") as work:
        command = [sys.executable, __file__, "--nodes", str(args.nodes), "--days", str(args.days)]
        command += ["--data-dir", str(args.data_dir), "--child", work]
        report = Path(work) / "report.txt"
        with report.open("w") as out:
            child = subprocess.Popen(command, stdout=out)
            _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("benchmark failed")
        results = dict(item.split("=", 1) for item in report.read_text().split())
    samples = int(results["samples"])
    aggregate_s, raw_s, split_s = (float(results[k]) for k in ("aggregate_s", "raw_aggregate_s", "split_s"))
    print(
        f"aggregation: {samples} samples in {aggregate_s:.1f}s ({samples / aggregate_s:,.0f}/s, validated);"
        f" raw DuckDB GROUP BY of the same files {raw_s:.1f}s (ratio {aggregate_s / raw_s:.2f})"
    )
    print(f"split: {results['charges']} charges -> {results['split_rows']} rows in {split_s:.1f}s")
    print(
        f"bench allocation nodes={args.nodes} gpu_hours={results['gpu_hours']} seconds={split_s:.1f}"
        f" samples_per_s={samples / aggregate_s:.0f} peak_rss_mb={usage.ru_maxrss / 1024:.0f}"
    )
    return 0


def _sample_files(data_dir: Path, nodes: int, days: int) -> list[Path]:
    """Per-minute samples as Parquet, NODES_PER_FILE nodes a file, generated once and reused."""
    minutes = days * 24 * 60

    def generate(folder: Path) -> None:
        con = duckdb.connect(config={"memory_limit": "2GB", "preserve_insertion_order": False})
        con.execute("SET enable_progress_bar = false")
        for first in range(0, nodes, NODES_PER_FILE):
            count = min(NODES_PER_FILE, nodes - first)
            params = {"first_node": first, "minutes": minutes, "samples": count * 8 * minutes}
            # COPY cannot bind its target; the path is built from integers only.
            con.execute(f"COPY ({SAMPLES_SQL}) TO '{folder / f'part-{first:05d}.parquet'}' (FORMAT parquet)", params)

    folder = generated_once(data_dir / f"dcgm-{nodes}n-{days}d", generate, f"samples for {nodes} nodes")
    return sorted(folder.glob("part-*.parquet"))


def _child(files: list[Path], nodes: int, days: int, work: Path) -> None:
    from gpuledger.allocation.allocate import allocate_month
    from gpuledger.telemetry.files import read_samples_file
    from gpuledger.telemetry.ingest import insert_frame
    from gpuledger.telemetry.samples import SampleAggregation
    from gpuledger.warehouse.home import open_warehouse
    from models.allocation import AllocationConfig, NodeMapping
    from models.billing_month import BillingMonth

    con = open_warehouse(work)
    con.execute("SET enable_progress_bar = false")
    names = [str(f) for f in files]
    raw_s = _timed(
        con,
        "SELECT count(*) FROM (SELECT node, gpu, date_trunc('hour', timestamp), count(*), avg(sm_active),"
        " avg(tensor_active), avg(dram_active), max(fb_used_mib) FROM read_parquet($files) GROUP BY ALL)",
        {"files": names},
    )
    started = time.perf_counter()
    activity = read_samples_file(
        files, cluster="bench", aggregation=SampleAggregation("bench", 0.05), interval_seconds=60, con=con
    )
    aggregate_s = time.perf_counter() - started
    # every field of every GPU-minute is a sample (the pricing metric's count is one field's)
    samples = int(activity["samples"].sum()) * len(METRIC_COLUMNS)
    insert_frame(con, "gpu.activity", activity)
    del activity

    period_end = BillingMonth.of_day(START).end
    shape = {"nodes": nodes, "start": START}
    con.execute(JOBS_SQL, shape | {"slots": days * 24 // SLOT_HOURS})
    con.execute(CHARGES_SQL, shape | {"hours": days * 24, "period_end": period_end})
    con.execute(
        "INSERT INTO meta.slices BY NAME SELECT 'AWS' AS provider_name, '012345678901' AS billing_account_id,"
        " $start AS billing_period_start, 'bench' AS delivery_id, now() AS replaced_at",
        {"start": START},
    )
    config = AllocationConfig(nodes=tuple(NodeMapping("bench", f"n{n:05d}", f"i-bench{n}") for n in range(nodes)))
    started = time.perf_counter()
    result = allocate_month(con, config, START.strftime("%Y-%m"))
    split_s = time.perf_counter() - started
    gpu_hours = con.execute("SELECT round(sum(gpu_hours)) FROM allocation.cost_split").fetchone()
    con.close()
    print(
        f"samples={samples} aggregate_s={aggregate_s:.3f} raw_aggregate_s={raw_s:.3f} split_s={split_s:.3f}"
        f" charges={nodes * days * 24} split_rows={result.split_rows} gpu_hours={int(gpu_hours[0] if gpu_hours else 0)}"
    )


def _timed(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, object]) -> float:
    started = time.perf_counter()
    con.execute(sql, params).fetchall()
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
