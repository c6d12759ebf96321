"""Benchmark: ingestion throughput of the DuckLake warehouse with 1 and 2 worker processes, against the file
warehouse (one writing process), on the same generated exports.

    python bench/lake.py --rows 500000 --postgres "host=127.0.0.1 port=5432 user=postgres" \\
        --data-path s3://bucket/bench/ --s3-endpoint-url http://127.0.0.1:9000

Three exports of different providers (CUR 2.0 Parquet, Azure CSV, GCP Parquet; bench/run.py's generators, N rows
each) are three independent ingestion partitions. Each configuration loads all three into a fresh warehouse, each
load in a process of its own, ``workers`` of them at a time, as ``gpuledger run`` does with ``[warehouse] workers``:
the file warehouse with one worker; a lake (a new Postgres database as its catalog, made with ``psql``, a new
folder of ``--data-path``) with 1 and with 2. Credentials of the data path come from the AWS chain (environment),
as in production. Prints, per configuration, wall seconds, FOCUS rows per second and the largest worker's peak RSS;
the last lines are machine-readable:

    bench-lake backend=B workers=W rows=N seconds=S rows_per_s=R peak_rss_mb=M
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

EXPORTS = ("cur2-parquet", "azure-csv", "gcp-parquet")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True, help="rows of each of the three exports")
    parser.add_argument("--postgres", required=True, help="libpq connection string of a server to make catalogs on")
    parser.add_argument("--data-path", required=True, help="where the lakes' data files go (s3://... or a folder)")
    parser.add_argument("--s3-endpoint-url", help="an S3-compatible server")
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "data")
    args = parser.parse_args()
    import run as single  # bench/run.py: the generators and the discovery of a generated export

    deliveries = [single.generated_export(args.data_dir, args.rows, fmt) for fmt in EXPORTS]
    results = [_measure(None, 1, deliveries, args)]
    for workers in (1, 2):
        results.append(_measure(_new_lake(args), workers, deliveries, args))
    for backend, workers, rows, seconds, rss in results:
        print(
            f"bench-lake backend={backend} workers={workers} rows={rows} seconds={seconds:.2f}"
            f" rows_per_s={rows / seconds:.0f} peak_rss_mb={rss:.0f}"
        )
    return 0


def _new_lake(args: argparse.Namespace) -> str:
    """``[warehouse]`` of a new lake: a new Postgres database for its catalog, a new folder for its files."""
    name = f"gpuledger_bench_{uuid.uuid4().hex[:8]}"
    # psql: CREATE DATABASE runs outside a transaction, which DuckDB's postgres_execute always opens
    subprocess.run(["psql", "-q", f"{args.postgres} dbname=postgres", "-c", f"CREATE DATABASE {name}"], check=True)
    lines = [
        "[warehouse]",
        f'catalog = "ducklake:postgres:{args.postgres} dbname={name}"',
        f'data_path = "{args.data_path.rstrip("/")}/{name}/"',
    ]
    if args.s3_endpoint_url:
        lines.append(f's3_endpoint_url = "{args.s3_endpoint_url}"')
    return "\n".join(lines) + "\n"


def _measure(
    warehouse: str | None, workers: int, deliveries: list[object], args: argparse.Namespace
) -> tuple[str, int, int, float, float]:
    from gpuledger.warehouse.home import open_warehouse

    home = Path(tempfile.mkdtemp(prefix="gpuledger-bench-lake-", dir=args.data_dir))
    if warehouse:
        (home / "gpuledger.toml").write_text(warehouse, encoding="utf-8")
    open_warehouse(home).close()  # migrated once, before the workers (gpuledger run does the same)
    backend = "lake" if warehouse else "file"
    print(f"{backend}, {workers} worker(s) ...", flush=True)
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers, maxtasksperchild=1) as pool:
        loads = pool.starmap(_load, [(str(home), d) for d in deliveries])
    seconds = time.perf_counter() - started
    rows, rss = sum(r for r, _ in loads), max(m for _, m in loads)
    print(f"  {rows:,} FOCUS rows in {seconds:.2f} s ({rows / seconds:,.0f} rows/s)", flush=True)
    return backend, workers, rows, seconds, rss


def _load(home: str, delivery: object) -> tuple[int, float]:
    """FOCUS rows loaded, and this worker's peak RSS in MB."""
    from gpuledger.gates.load import load_delivery
    from gpuledger.warehouse.home import open_warehouse

    try:
        with open_warehouse(Path(home)) as con:
            result = load_delivery(con, delivery)  # type: ignore[arg-type]
    except Exception as exc:  # the pool pickles the result: gpuledger's errors (several arguments) do not unpickle
        raise RuntimeError(f"{type(exc).__name__}: {exc}") from None
    return sum(s.rows for s in result.slices), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    raise SystemExit(main())
