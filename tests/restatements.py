"""Provider restatements of the demo's months, made the way providers deliver them (shared by the lifecycle and
report tests)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import uuid
from decimal import Decimal
from pathlib import Path

OCTOBER = "exports/heliosfinops/cost-exports/helios-mca/helios-{}-cost/20261001-20261031"


def restate_october(home: Path, extra: Decimal, *, run: int = 1) -> None:
    """New ActualCost and AmortizedCost runs for October in which one on-demand charge costs ``extra`` more
    (EUR) than in the newest runs: a provider restatement, consistent between the two datasets as Azure's are.
    ``run`` numbers the restatement: a later one gets a later run."""
    runs = {name: _newest_run(home / OCTOBER.format(name)) for name in ("actual", "amortized")}
    parts = {name: csv_rows(folder / "part_0_0001.csv.gz") for name, folder in runs.items()}
    header = parts["amortized"][0]
    pricing, cost = header.index("pricingModel"), header.index("costInBillingCurrency")
    actual_lines = {tuple(row) for row in parts["actual"][1:]}
    line = next(row for row in parts["amortized"][1:] if row[pricing] == "OnDemand" and tuple(row) in actual_lines)
    for name, rows in parts.items():
        changed = [[*row[:cost], str(Decimal(row[cost]) + extra), *row[cost + 1 :]] if row == line else row
                   for row in rows]  # fmt: skip
        write_run(runs[name], changed, run=run)


def csv_rows(part: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(gzip.decompress(part.read_bytes()).decode("utf-8-sig"))))


def _newest_run(folder: Path) -> Path:
    return max(folder.iterdir(), key=_submitted)


def _submitted(run: Path) -> str:
    return json.loads((run / "manifest.json").read_text())["runInfo"]["submittedTime"]


def write_run(old_run: Path, first_part: list[list[str]], *, run: int) -> None:
    """Run ``run`` after ``old_run`` of its export: the same parts but the first one, and a manifest naming them."""
    run_id = str(uuid.UUID(int=run))
    new_run = old_run.parent / run_id
    shutil.copytree(old_run, new_run)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(first_part)
    (new_run / "part_0_0001.csv.gz").write_bytes(gzip.compress(out.getvalue().encode("utf-8")))
    manifest = json.loads((new_run / "manifest.json").read_text())
    manifest["runInfo"].update(runId=run_id, submittedTime=f"2026-11-20T{6 + run:02d}:00:00Z")
    for blob in manifest["blobs"]:
        blob["blobName"] = blob["blobName"].replace(old_run.name, run_id)
        blob["byteCount"] = (new_run / Path(blob["blobName"]).name).stat().st_size
    manifest["byteCount"] = sum(b["byteCount"] for b in manifest["blobs"])
    (new_run / "manifest.json").write_text(json.dumps(manifest))
