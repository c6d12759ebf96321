"""Lay out a demo home: generated sample exports and telemetry, plus the configuration that points at them."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from connectors.azure.exports import COMBINED_FORMAT
from gpuledger_demo.aws_exports import write_cur1_month, write_demo_exports
from gpuledger_demo.azure_exports import write_azure_demo_exports
from gpuledger_demo.coreweave_exports import SOURCE_NAME as COREWEAVE_SOURCE
from gpuledger_demo.coreweave_exports import write_coreweave_demo_exports
from gpuledger_demo.gcp_exports import write_gcp_demo_exports
from gpuledger_demo.telemetry import COREWEAVE_CLUSTER, DemoTelemetry, write_demo_telemetry
from models.config import CONFIG_FILE

EXPORTS_FOLDER = "exports"
TELEMETRY_FOLDER = "telemetry"
RATES_FILE = "rates/eur_usd.csv"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def write_demo_home(home: Path) -> Path:
    """(Re)generate the sample exports under ``<home>/exports``, the telemetry under ``<home>/telemetry``, and
    write ``<home>/gpuledger.toml``, keeping the ``[warehouse]`` table it had (the demo on a DuckLake)."""
    exports = home / EXPORTS_FOLDER
    sources = [(s.name, s.format, s.path) for s in write_demo_exports(exports)]
    # the Azure export pair (actual + amortized) is one combined source: the folder holding both exports
    azure = write_azure_demo_exports(exports)
    sources.append(("helios-azure-mca", COMBINED_FORMAT, azure[0].path.parent))
    # the GCP dataset extracted as Parquet: its detailed table (resource-level) is the one read
    gcp = next(s for s in write_gcp_demo_exports(exports) if s.detailed and s.file_format == "parquet")
    sources.append(("helios-gcp-billing", gcp.format, gcp.path.parent))
    # a specialist GPU cloud's FOCUS files, one folder per billing month
    sources.append((COREWEAVE_SOURCE, "focus", write_coreweave_demo_exports(exports)))
    return _write_home(home, sources)


def write_two_provider_home(home: Path, months: Sequence[str]) -> Path:
    """Lay out a smaller home of two providers over ``months`` (consecutive): the legacy CUR 1 payer (AWS) and the
    CoreWeave FOCUS export, with the demo's telemetry (2026-10 and 2026-11) and ``[warehouse]`` kept as
    :func:`write_demo_home` does. Every AWS month is a final assembly in two files but the last, whose first
    version (28 days metered) :func:`restate_last_aws_month` replaces."""
    exports = home / EXPORTS_FOLDER
    for month in months:
        aws = write_cur1_month(exports, month, reservation_bought=months[0], final=month != months[-1])
    coreweave = write_coreweave_demo_exports(exports, months=months)
    return _write_home(home, [(aws.name, aws.format, aws.path), (COREWEAVE_SOURCE, "focus", coreweave)])


def write_gpu_cloud_home(home: Path) -> Path:
    """Lay out the smallest home a nightly run does everything in: one GPU cloud (the demo's CoreWeave FOCUS export of
    2026-10 and 2026-11) and the telemetry of its cluster alone, configured as :func:`write_demo_home` does."""
    coreweave = write_coreweave_demo_exports(home / EXPORTS_FOLDER)
    return _write_home(home, [(COREWEAVE_SOURCE, "focus", coreweave)], clusters=(COREWEAVE_CLUSTER,))


def restate_last_aws_month(home: Path, months: Sequence[str]) -> None:
    """Deliver the final assembly of the last month of :func:`write_two_provider_home`'s AWS payer: AWS
    restating an in-month delivery."""
    write_cur1_month(home / EXPORTS_FOLDER, months[-1], reservation_bought=months[0])


def _write_home(home: Path, sources: list[tuple[str, str, Path]], clusters: Sequence[str] | None = None) -> Path:
    """Generate the telemetry and the rates, and write the configuration of ``sources`` (name, format, path) and of
    the telemetry of ``clusters`` (None: every cluster's)."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / CONFIG_FILE
    warehouse = tomllib.loads(config.read_text(encoding="utf-8")).get("warehouse") if config.exists() else None
    telemetry = write_demo_telemetry(home / TELEMETRY_FOLDER)
    lines = ["# Written by `gpuledger demo`: the generated sample exports of the fictional Helios Labs.\n"]
    for name, fmt, path in sources:
        # Names and paths come from our own generator; json-style quoting is valid TOML for them.
        lines.append(_table("[[sources]]", {"name": name, "format": fmt, "path": _relative(home, path)}))
    lines.append(_telemetry_toml(home, telemetry, clusters))
    lines.append(_table("[reporting]", {"currency": "USD", "rates": _relative(home, _write_rates(home))}))
    if isinstance(warehouse, dict):
        lines.append(_table("[warehouse]", warehouse))
    config.write_text("".join(lines), encoding="utf-8")
    return config


def _write_rates(home: Path) -> Path:
    """Daily EUR -> USD rates for the demo months: finance reports in USD, the Azure profile bills in EUR."""
    path = home / RATES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    start = date(2026, 10, 1)
    rows = ["date,currency,rate"]
    for day in range(61):  # 2026-10-01 .. 2026-11-30; a fixed wobble, so the month-end rate matters
        rate = Decimal("1.0800") + Decimal(day % 7 - 3) / Decimal(1000)
        rows.append(f"{start + timedelta(days=day)},EUR,{rate}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _relative(home: Path, path: Path) -> str:
    return path.resolve().relative_to(home.resolve()).as_posix()


def _table(header: str, values: dict[str, object]) -> str:
    # json.dumps writes strings, numbers and lists of them as valid TOML basic strings, numbers and arrays
    return f"\n{header}\n" + "".join(f"{_key(key)} = {json.dumps(value)}\n" for key, value in values.items())


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _telemetry_toml(home: Path, telemetry: DemoTelemetry, clusters: Sequence[str] | None) -> str:
    """The allocation sections, node mappings and telemetry sources of the generated telemetry (of ``clusters``)."""
    allocation = telemetry.allocation
    parts = [
        _table(
            "[allocation]",
            {
                "idle_threshold": allocation.idle_threshold,
                "idle_policy": allocation.idle_policy,
                "sample_interval_seconds": allocation.sample_interval_seconds,
            },
        ),
        _table("[teams]", {"tag_keys": list(allocation.team_tag_keys)}),
        _table("[teams.accounts]", dict(allocation.account_teams)),
        _table("[teams.job_accounts]", dict(allocation.job_account_teams)),
        _table("[checkpoints]", {"resources": list(allocation.checkpoint_resources)}),
    ]

    def included(cluster: str) -> bool:
        return clusters is None or cluster in clusters

    for node in filter(lambda n: included(n.cluster), allocation.nodes):
        parts.append(_table("[[nodes]]", {"cluster": node.cluster, "node": node.node, "resource_id": node.resource_id}))
    for source in filter(lambda t: included(t.cluster), telemetry.sources):
        entry: dict[str, object] = {"name": source.name, "kind": source.kind, "cluster": source.cluster}
        entry.update({key: _relative(home, path) for key, path in source.paths.items()})
        entry.update(source.options)
        parts.append(_table("[[telemetry]]", entry))
    return "".join(parts)
