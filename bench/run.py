"""Benchmark: normalization of an N-row AWS export to FOCUS vs a raw DuckDB read -> Parquet copy.

    python bench/run.py --rows 1000000 --format cur2-parquet

Generates (or reuses) the export under bench/data/, then runs each phase in its own process so its
peak RSS is its own. The last line is machine-readable:

    bench format=F rows=N seconds=S raw_copy_seconds=R ratio=S/R peak_rss_mb=M
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FORMATS = {"cur2-parquet": "aws-cur2", "cur1-csv": "aws-cur1"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--format", choices=sorted(FORMATS), required=True)
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "data")
    parser.add_argument("--phase", choices=("normalize", "raw-copy"), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    files = _export(args.data_dir, args.rows, args.format)
    if args.phase == "normalize":
        _normalize(files, args.format, args.work)
        return 0
    if args.phase == "raw-copy":
        _raw_copy(files, args.work)
        return 0
    normalize_s, normalize_rss = _run_phase("normalize", args)
    raw_s, raw_rss = _run_phase("raw-copy", args)
    print(
        f"normalize: {normalize_s:.2f}s peak RSS {normalize_rss:.0f} MB;"
        f" raw copy: {raw_s:.2f}s peak RSS {raw_rss:.0f} MB"
    )
    print(
        f"bench format={args.format} rows={args.rows} seconds={normalize_s:.2f} raw_copy_seconds={raw_s:.2f}"
        f" ratio={normalize_s / raw_s:.2f} peak_rss_mb={normalize_rss:.0f}"
    )
    return 0


def _export(data_dir: Path, rows: int, fmt: str) -> list[Path]:
    from gpuledger.demo.aws_exports import write_scaled_cur_export

    folder = data_dir / f"{fmt}-{rows}"
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        write_scaled_cur_export(folder, rows, fmt)  # type: ignore[arg-type]
        done.write_text("")
        print(f"generated {rows} rows of {fmt} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != ".complete")


def _run_phase(phase: str, args: argparse.Namespace) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one phase in a child process."""
    with tempfile.TemporaryDirectory(prefix="gpuledger-bench-") as work:
        command = [
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
        ]
        started = time.perf_counter()
        child = subprocess.Popen(command)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{phase} failed")
        return elapsed, usage.ru_maxrss / 1024


def _normalize(files: list[Path], fmt: str, work: Path) -> None:
    from gpuledger.load import load_delivery
    from gpuledger.pipeline import open_warehouse
    from models.delivery import Delivery

    with open_warehouse(work) as con:
        result = load_delivery(con, Delivery(FORMATS[fmt], tuple(files)))
    print(f"normalized into {sum(s.rows for s in result.slices)} FOCUS rows", file=sys.stderr)


def _raw_copy(files: list[Path], work: Path) -> None:
    import duckdb

    con = duckdb.connect(
        str(work / "raw.duckdb"),
        config={
            "memory_limit": os.environ.get("GPULEDGER_MEMORY_LIMIT", "1GB"),
            "preserve_insertion_order": "false",
            "temp_directory": str(work / "tmp"),
        },
    )
    names = [str(f) for f in files]
    reader = "read_parquet($files)" if names[0].endswith(".parquet") else "read_csv($files)"
    con.sql(f"SELECT * FROM {reader}", params={"files": names}).write_parquet(str(work / "raw.parquet"))


if __name__ == "__main__":
    sys.exit(main())
