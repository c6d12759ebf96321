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

``--split K`` measures one huge delivery instead (decision 0021): the CUR 2.0 export cut into K Parquet files, loaded
whole on the file warehouse and on a lake, then staged a part per file on a lake by 1 and by 2 processes
(``[warehouse] part_size_mb = 0``, ``workers``); the last lines then read

    bench-lake-parts backend=B parts=P workers=W rows=N seconds=S rows_per_s=R peak_rss_mb=M
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
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
    parser.add_argument("--split", type=int, help="one CUR 2.0 delivery cut into this many files, staged in parts")
    args = parser.parse_args()
    import run as single  # bench/run.py: the generators and the discovery of a generated export

    if args.split:
        return _measure_parts(
            _split_delivery(single.generated_export(args.data_dir, args.rows, EXPORTS[0]), args), args
        )
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


def _split_delivery(delivery: object, args: argparse.Namespace) -> object:
    """The export's one file cut into ``--split`` Parquet files by row ranges (the provider's line-item ids are
    unique, so the files list each line item once), as one loose-files delivery."""
    import duckdb

    from gpuledger.warehouse.sqlfiles import quote_literal
    from models.delivery import Delivery

    whole = delivery.files[0]  # type: ignore[attr-defined]
    folder = args.data_dir / f"{whole.parent.name}-split-{args.split}"
    if not folder.exists():
        scratch = folder.with_name(folder.name + ".partial")
        scratch.mkdir(parents=True, exist_ok=True)
        with duckdb.connect() as con:
            rows = con.execute("SELECT count(*) FROM read_parquet($f)", {"f": str(whole)}).fetchone()[0]  # type: ignore[index]
            size = -(-rows // args.split)
            for number in range(args.split):
                target = scratch / f"helios-bench-{number + 1:05d}.snappy.parquet"
                rows_of = "SELECT * EXCLUDE (file_row_number) FROM read_parquet($f, file_row_number = true)"
                con.execute(
                    f"COPY ({rows_of} WHERE file_row_number >= $low AND file_row_number < $high)"
                    f" TO {quote_literal(str(target))} (FORMAT parquet)",
                    {"f": str(whole), "low": number * size, "high": (number + 1) * size},
                )
        scratch.rename(folder)
    return Delivery("aws-cur2", tuple(sorted(folder.glob("*.parquet"))))


def _measure_parts(delivery: object, args: argparse.Namespace) -> int:
    configurations = [(None, None, 1), (_new_lake(args), None, 1), (_new_lake(args), 0, 1), (_new_lake(args), 0, 2)]
    results = []
    for warehouse, part_size_mb, workers in configurations:
        home = Path(tempfile.mkdtemp(prefix="gpuledger-bench-parts-", dir=args.data_dir))
        if warehouse:
            extra = f"part_size_mb = {part_size_mb}\nworkers = {workers}\n" if part_size_mb is not None else ""
            (home / "gpuledger.toml").write_text(warehouse + extra, encoding="utf-8")
        backend = "lake" if warehouse else "file"
        parts = len(delivery.files) if part_size_mb == 0 else 1  # type: ignore[attr-defined]
        print(f"{backend}, {parts} part(s), {workers} worker(s) ...", flush=True)
        # a loading process of its own (not a Pool's daemonic worker: it starts the part processes)
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows, seconds, rss = pool.submit(_load_in_parts, str(home), delivery).result()
        print(f"  {rows:,} FOCUS rows in {seconds:.2f} s ({rows / seconds:,.0f} rows/s)", flush=True)
        results.append((backend, parts, workers, rows, seconds, rss))
    for backend, parts, workers, rows, seconds, rss in results:
        print(
            f"bench-lake-parts backend={backend} parts={parts} workers={workers} rows={rows} seconds={seconds:.2f}"
            f" rows_per_s={rows / seconds:.0f} peak_rss_mb={rss:.0f}"
        )
    return 0


def _load_in_parts(home: str, delivery: object) -> tuple[int, float, float]:
    """FOCUS rows loaded, seconds, and the largest resident set in MB of this process or a part process it started
    (sampled from /proc: ``ru_maxrss`` would carry the bench process's own peak over ``exec``)."""
    from gpuledger.gates.load import load_delivery
    from gpuledger.warehouse.home import open_warehouse
    from pipelines.deliveries import part_staging

    open_warehouse(Path(home)).close()  # migrated before the clock starts
    part_bytes, stager = part_staging(Path(home))
    peak = [0]
    loading = threading.Event()
    sampler = threading.Thread(target=_sample_rss, args=(os.getpid(), peak, loading), daemon=True)
    sampler.start()
    started = time.perf_counter()
    with open_warehouse(Path(home)) as con:
        result = load_delivery(con, delivery, part_bytes=part_bytes, stager=stager)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    loading.set()
    sampler.join()
    return sum(s.rows for s in result.slices), seconds, peak[0] / 1024


def _sample_rss(pid: int, peak: list[int], done: threading.Event) -> None:
    """The largest VmRSS (kB) of ``pid`` and its descendants, every 50 ms until ``done``."""
    while not done.wait(0.05):
        for process in _tree(pid):
            try:
                status = Path(f"/proc/{process}/status").read_text(encoding="utf-8")
            except OSError:  # ended meanwhile
                continue
            rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
            peak[0] = max(peak[0], rss)


def _tree(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                pending += [int(child) for child in children.read_text(encoding="utf-8").split()]
            except OSError:
                continue
    return found


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
