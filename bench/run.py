"""Benchmark: normalization of an N-row billing export to FOCUS vs two raw DuckDB copies of the same file (read ->
Parquet file, and read -> a table of a DuckDB database file, the warehouse's storage), and vs the peer converter
(focus-converter 1.0.0) on the same file where it reads the format.

    python bench/run.py --rows 1000000 --format cur1-csv

Formats: ``cur2-parquet``, ``cur1-csv`` and ``cur1-parquet`` (AWS CUR 2.0, CUR 1 CSV and CUR 1 as Athena's
Parquet, generated at scale by the AWS demo, with the CUR 1 columns focus-converter requires), ``azure-csv`` (an
Azure MCA AmortizedCost export: CSV gzip parts and manifest.json) and ``gcp-parquet`` (a GCP detailed
billing export extracted to Parquet). The Azure and GCP exports are the demo's newest billing period
repeated up to N rows, each copy in a subscription / project of its own, and laid out as the connectors
find them; every format is loaded as a delivery discovered from its folder, like ``gpuledger import``.

Generates (or reuses) the export under bench/data/, then runs each phase in its own process so its
peak RSS is its own (generation too: a child's peak RSS starts at its parent's RSS). focus-converter runs from its
own virtual environment under bench/data/ (created on first use from PyPI with the pins it needs), FOCUS columns
only; it reads CUR 1 (CSV, and Athena Parquet), not CUR 2.0's maps, Azure's MCA files or a GCP Parquet extract.
The last line is machine-readable:

    bench format=F rows=N seconds=S raw_copy_seconds=R ratio=S/R peak_rss_mb=M raw_table_copy_seconds=T
        table_ratio=S/T [peer_seconds=P peer_speedup=P/S peer_peak_rss_mb=Q]
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from datacache import generated_once

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from models.delivery import Delivery

# bench format -> the source format it is loaded as
FORMATS = {
    "cur2-parquet": "aws-cur2",
    "cur1-csv": "aws-cur1",
    "cur1-parquet": "aws-cur1",
    "azure-csv": "azure-amortized",
    "gcp-parquet": "gcp-bq",
}
_ROWS_PER_PART = 1_000_000
"""Rows per data file of the replicated (Azure, GCP) exports."""
# bench format -> how focus-converter reads it: --provider, --data-format, --parquet-data-format
PEER_READS = {"cur1-csv": ("aws-cur", "csv", None), "cur1-parquet": ("aws", "parquet", "file")}
PEER_PINS = ("focus-converter==1.0.0", "multimethod<1.11", "click<8.2")
"""focus-converter 1.0.0's CLI imports only with these two extra pins (docs/performance.md)."""
# raw-copy phase -> where it writes: a Parquet file, or a table of a DuckDB database file (the warehouse's storage)
RAW_COPIES = {"raw-copy": "parquet", "raw-table-copy": "table"}
PEER_TIMEOUT_S = 3600
"""focus-converter's worker processes keep it alive after an error: a run this long has failed."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--format", choices=sorted(FORMATS), required=True)
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--no-peer", action="store_true", help="skip focus-converter")
    parser.add_argument("--phase", choices=("generate", "normalize", *RAW_COPIES), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase is None:
        # a child's peak RSS starts at its parent's RSS when it forks: generating here would inflate both phases
        _run_phase("generate", args)
    delivery = generated_export(args.data_dir, args.rows, args.format)
    if args.phase == "generate":
        return 0
    if args.phase == "normalize":
        _normalize(delivery, args.work)
        return 0
    if args.phase in RAW_COPIES:
        _raw_copy(delivery.files, args.work, RAW_COPIES[args.phase])
        return 0
    normalize_s, normalize_rss = _run_phase("normalize", args)
    # printed before the raw copy runs: that copy can fail (out of memory) after a long normalize
    print(f"normalize: {normalize_s:.2f}s peak RSS {normalize_rss:.0f} MB", flush=True)
    raw_s, raw_rss = _run_phase("raw-copy", args)
    print(f"raw copy: {raw_s:.2f}s peak RSS {raw_rss:.0f} MB", flush=True)
    table_s, table_rss = _run_phase("raw-table-copy", args)
    print(f"raw copy into a DuckDB table: {table_s:.2f}s peak RSS {table_rss:.0f} MB", flush=True)
    summary = (
        f"bench format={args.format} rows={args.rows} seconds={normalize_s:.2f} raw_copy_seconds={raw_s:.2f}"
        f" ratio={normalize_s / raw_s:.2f} peak_rss_mb={normalize_rss:.0f} raw_table_copy_seconds={table_s:.2f}"
        f" table_ratio={normalize_s / table_s:.2f}"
    )
    if args.format in PEER_READS and not args.no_peer:
        peer_s, peer_rss = _run_peer(delivery.files, args.format, args.data_dir)
        print(f"focus-converter 1.0.0: {peer_s:.2f}s peak RSS {peer_rss:.0f} MB")
        summary += f" peer_seconds={peer_s:.2f} peer_speedup={peer_s / normalize_s:.2f} peer_peak_rss_mb={peer_rss:.0f}"
    print(summary)
    return 0


def generated_export(data_dir: Path, rows: int, fmt: str) -> Delivery:
    """The N-row export's delivery, as discovered in its folder; generated first unless already there."""
    folder = generated_once(data_dir / f"{fmt}-{rows}", lambda f: _WRITERS[fmt](f, rows, fmt), f"{rows} rows of {fmt}")
    deliveries = _deliveries(folder, FORMATS[fmt])
    if len(deliveries) != 1:
        raise SystemExit(f"{folder}: expected one delivery, found {len(deliveries)}")
    return deliveries[0]


def _deliveries(path: Path, source_format: str) -> list[Delivery]:
    """What ``gpuledger import PATH --format F`` would load: export folders by their manifests, loose files."""
    import duckdb

    from pipelines.deliveries import deliveries_from_paths

    with duckdb.connect() as con:
        return deliveries_from_paths(con, [path], source_format)


def _newest(path: Path, source_format: str) -> Delivery:
    """The newest billing period's delivery of a demo export."""
    return max(_deliveries(path, source_format), key=lambda d: d.billing_period or "")


def _write_aws(folder: Path, rows: int, fmt: str) -> None:
    from gpuledger_demo.aws_exports import write_scaled_cur_export

    write_scaled_cur_export(folder, rows, fmt)  # type: ignore[arg-type]


def _write_azure(folder: Path, rows: int, fmt: str) -> None:
    """The demo's newest AmortizedCost run repeated, one subscription per copy, as a run with its manifest."""
    from connectors.azure.exports import read_manifest
    from gpuledger_demo.azure_exports import write_azure_demo_exports

    with tempfile.TemporaryDirectory(prefix="gpuledger-bench-demo-") as scratch:
        source = next(s for s in write_azure_demo_exports(Path(scratch)) if s.format == FORMATS[fmt])
        demo = _newest(source.path, source.format)
        assert demo.manifest is not None
        manifest = read_manifest(demo.manifest)
        run = folder / demo.manifest.parent.relative_to(source.path)
        subscription = "left(SubscriptionId, 24) || printf('%012x', k)"
        parts = _replicate(
            "read_csv($files, all_varchar = true)",
            demo.files,
            rows,
            f"{subscription} AS SubscriptionId, subscriptionName || '-' || k AS subscriptionName,"
            f" replace(ResourceId, SubscriptionId, {subscription}) AS ResourceId",
            "FORMAT csv, HEADER true, COMPRESSION gzip",
            lambda number: run / f"part_0_{number + 1:04d}.csv.gz",
        )
    blob_folder = posixpath.dirname(manifest["blobs"][0]["blobName"])
    blobs = [
        {"blobName": f"{blob_folder}/{path.name}", "byteCount": path.stat().st_size, "dataRowCount": count}
        for path, count in parts
    ]
    manifest |= {"byteCount": sum(b["byteCount"] for b in blobs), "blobCount": len(blobs), "dataRowCount": rows}
    manifest["blobs"] = blobs
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _write_gcp(folder: Path, rows: int, fmt: str) -> None:
    """The demo's newest invoice month of the detailed table repeated, one project per copy, as one extract."""
    from gpuledger_demo.gcp_exports import write_gcp_demo_exports

    with tempfile.TemporaryDirectory(prefix="gpuledger-bench-demo-") as scratch:
        sources = write_gcp_demo_exports(Path(scratch))
        source = next(s for s in sources if s.detailed and s.file_format == "parquet")
        demo = _newest(source.path, FORMATS[fmt])
        # the month's extracts as one, named by the newest export time: a full re-extract of the month
        extract = folder / demo.files[-1].parent.relative_to(source.path.parent)
        _replicate(
            "read_parquet($files, hive_partitioning = false)",
            demo.files,
            rows,
            "CASE WHEN project.id IS NULL THEN project"
            " ELSE struct_update(project, id := project.id || '-' || k, name := project.name || ' ' || k) END"
            " AS project",
            "FORMAT parquet, COMPRESSION snappy",
            lambda number: extract / f"part-{number:03d}.parquet",
        )


_WRITERS: dict[str, Callable[[Path, int, str], None]] = {
    "cur2-parquet": _write_aws,
    "cur1-csv": _write_aws,
    "cur1-parquet": _write_aws,
    "azure-csv": _write_azure,
    "gcp-parquet": _write_gcp,
}


def _replicate(
    reader: str, files: tuple[Path, ...], rows: int, vary: str, options: str, part: Callable[[int], Path]
) -> list[tuple[Path, int]]:
    """Write ``rows`` rows of the demo files' rows repeated, ``_ROWS_PER_PART`` to a file; return (file, rows).

    Row n is demo row ``n % len(demo)`` of copy ``k = n // len(demo)``; ``vary`` is a REPLACE list (over the
    demo's columns and ``k``) that makes each copy's rows its own. The last copy may be partial.
    """
    import duckdb

    from gpuledger.warehouse.sqlfiles import quote_literal

    written = []
    with duckdb.connect() as con:
        con.execute(
            f"CREATE TEMP TABLE demo AS SELECT row_number() OVER () - 1 AS i, * FROM {reader}",
            {"files": [str(f) for f in files]},
        )
        size = con.execute("SELECT count(*) FROM demo").fetchone()[0]  # type: ignore[index]
        for number, start in enumerate(range(0, rows, _ROWS_PER_PART)):
            stop = min(rows, start + _ROWS_PER_PART)
            target = part(number)
            target.parent.mkdir(parents=True, exist_ok=True)
            con.execute(
                f"COPY (SELECT * EXCLUDE (n, k, i) REPLACE ({vary}) FROM (SELECT g.n, g.n // {size} AS k, d.*"
                f" FROM range({start}, {stop}) AS g(n) JOIN demo AS d ON d.i = g.n % {size}) ORDER BY n)"
                f" TO {quote_literal(str(target))} ({options})"
            )
            written.append((target, stop - start))
    return written


def _run_phase(phase: str, args: argparse.Namespace) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one phase in a child process."""
    with tempfile.TemporaryDirectory(prefix="gpuledger-bench-") as work:
        return _timed(
            [
                sys.executable,
                __file__,
                "--rows",
                str(args.rows),
                "--format",
                args.format,
                "--data-dir",
                str(args.data_dir),
                "--phase",
                phase,
                "--work",
                work,
            ],
            phase,
        )


def _run_peer(files: tuple[Path, ...], fmt: str, data_dir: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of focus-converter 1.0.0 converting the same file to FOCUS (its columns only)."""
    (source,) = files
    provider, data_format, parquet_layout = PEER_READS[fmt]
    converter = _peer_venv(data_dir) / "bin" / "focus-converter"
    with tempfile.TemporaryDirectory(prefix="gpuledger-bench-peer-") as work:
        command = [str(converter), "convert", "--provider", provider, "--data-format", data_format]
        command += ["--data-path", str(source), "--export-path", work, "--no-export-include-source-columns"]
        command += ["--parquet-data-format", parquet_layout] if parquet_layout else []
        elapsed, rss = _timed(command, "focus-converter", timeout=PEER_TIMEOUT_S)
        if not any(Path(work).iterdir()):
            raise SystemExit("focus-converter wrote nothing")
        return elapsed, rss


def _peer_venv(data_dir: Path) -> Path:
    """focus-converter's own virtual environment (its pins clash with gpuledger's), created once."""
    venv = data_dir / "focus-converter-1.0.0-venv"
    ready = venv / ".installed"
    if not ready.exists():
        print(f"installing {' '.join(PEER_PINS)} into {venv}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", *PEER_PINS]
        subprocess.run(pip, check=True)
        ready.touch()
    return venv


def _timed(command: list[str], what: str, timeout: float | None = None) -> tuple[float, float]:
    """Run ``command``; its wall seconds and the peak RSS (MB) of its largest process, waited-for children included."""
    started = time.perf_counter()
    child = subprocess.Popen(command, start_new_session=True)
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if timeout is not None and time.perf_counter() - started > timeout:
            os.killpg(child.pid, signal.SIGKILL)
            raise SystemExit(f"{what} still running after {timeout:.0f} s: stopped")
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        os.killpg(child.pid, signal.SIGKILL)  # its workers may outlive it
        raise SystemExit(f"{what} failed")
    return elapsed, usage.ru_maxrss / 1024


def _normalize(delivery: Delivery, work: Path) -> None:
    from gpuledger.gates.load import load_delivery
    from gpuledger.warehouse.home import open_warehouse

    with open_warehouse(work) as con:
        result = load_delivery(con, delivery)
    print(f"normalized into {sum(s.rows for s in result.slices)} FOCUS rows", file=sys.stderr)


def _raw_copy(files: tuple[Path, ...], work: Path, into: str) -> None:
    import duckdb

    con = duckdb.connect(
        str(work / "raw.duckdb"),
        config={
            "memory_limit": os.environ.get("GPULEDGER_MEMORY_LIMIT", "1GB"),
            "preserve_insertion_order": "false",
            "temp_directory": str(work / "tmp"),
        },
    )
    from gpuledger.warehouse.sqlfiles import quote_literal

    # literals, not bound parameters: a relation with parameters is executed whole into memory before it is written
    # (that doubled the copy's time and its RSS), where COPY of a literal scan streams
    reader = "read_parquet" if files[0].name.endswith(".parquet") else "read_csv"
    names = ", ".join(quote_literal(str(f)) for f in files)
    scan = f"SELECT * FROM {reader}([{names}])"
    if into == "parquet":
        con.execute(f"COPY ({scan}) TO {quote_literal(str(work / 'raw.parquet'))}")
    else:  # the warehouse's own storage, as gpuledger's load writes it
        con.execute(f"CREATE TABLE raw AS {scan}")


if __name__ == "__main__":
    sys.exit(main())
