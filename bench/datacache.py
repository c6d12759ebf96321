"""Benchmark inputs are generated once into ``bench/data/`` (ignored by git) and reused by later runs."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path


def generated_once(folder: Path, generate: Callable[[Path], None], what: str) -> Path:
    """``folder`` holding what ``generate`` writes there, generated only when no complete copy exists."""
    done = folder / ".complete"
    if not done.exists():
        # a copy without the marker was interrupted half-way: start over
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        started = time.perf_counter()
        generate(folder)
        done.write_text("")
        print(f"generated {what} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return folder
