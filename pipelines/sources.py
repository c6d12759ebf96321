"""The home's configured export and telemetry sources as observable Dagster source assets.

An observation reads what a source holds now, without loading it: an export source's complete deliveries (the
newest manifest per billing period), a telemetry source's files. Its data version is a digest of those, so the UI
shows when a source changed and which downstream assets are stale. (Whether a source delivers on time is the
publish's ``source_freshness`` check: Dagster's freshness policies look at materializations only.)
"""

import hashlib
import json
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    AssetSpec,
    BetaWarning,
    DataVersion,
    ObserveResult,
    multi_observable_source_asset,
)

from gpuledger.telemetry.ingest import source_files
from gpuledger.warehouse.fingerprints import file_stats
from models.config import Config, SourceConfig, TelemetryConfig
from pipelines.deliveries import discover

SOURCES_GROUP = "sources"


def export_source_key(name: str) -> AssetKey:
    """``sources/exports/<name>``: Dagster names allow [A-Za-z0-9_] only."""
    return AssetKey(["sources", "exports", re.sub(r"\W", "_", name)])


def telemetry_source_key(name: str) -> AssetKey:
    """``sources/telemetry/<name>``."""
    return AssetKey(["sources", "telemetry", re.sub(r"\W", "_", name)])


def source_assets(config: Config) -> list[AssetsDefinition]:
    """One observable source asset per configured export and telemetry source (none for an unconfigured home)."""
    assets = []
    if config.sources:
        assets.append(_export_sources(config.sources))
    if config.telemetry:
        assets.append(_telemetry_sources(config.telemetry))
    return assets


def _export_sources(sources: Sequence[SourceConfig]) -> AssetsDefinition:
    by_key = {export_source_key(s.name): s for s in sources}
    specs = [
        AssetSpec(
            key,
            group_name=SOURCES_GROUP,
            description=f"Export source {s.name!r} ({s.format}): its complete deliveries, newest per billing period.",
            kinds={s.provider},
            metadata={"path": str(s.path), "remote": s.remote is not None},
        )
        for key, s in by_key.items()
    ]
    return _observable("observe_export_sources", specs, [partial(export_observation, *item) for item in by_key.items()])


def export_observation(key: AssetKey, source: SourceConfig) -> ObserveResult:
    """The deliveries ``source`` holds now; the data version changes with any new, replaced or restated one (not
    with the folder's place: a home moved elsewhere holds the same)."""
    deliveries = sorted(discover(source), key=lambda d: (d.billing_period or "", d.version or ""))
    fingerprint = [
        [
            d.billing_period,
            d.version,
            d.version_time.isoformat() if d.version_time else None,
            file_stats(source.path, d.files),
        ]
        for d in deliveries
    ]
    newest = max((d.version_time for d in deliveries if d.version_time), default=None)
    return ObserveResult(
        asset_key=key,
        data_version=DataVersion(_digest(fingerprint)),
        metadata={
            "deliveries": len(deliveries),
            "billing_periods": sorted({d.billing_period for d in deliveries if d.billing_period}),
            "newest_delivery_time": newest.isoformat() if newest else "none",
        },
    )


def _telemetry_sources(telemetry: Sequence[TelemetryConfig]) -> AssetsDefinition:
    by_key = {telemetry_source_key(t.name): t for t in telemetry}
    specs = [
        AssetSpec(
            key,
            group_name=SOURCES_GROUP,
            description=f"Telemetry source {t.name!r} ({t.kind}) of "
            + (f"cluster {t.cluster!r}" if t.cluster else "the clusters its rows name")
            + ": jobs and GPU activity.",
            kinds={t.kind},
        )
        for key, t in by_key.items()
    ]
    return _observable(
        "observe_telemetry_sources", specs, [partial(telemetry_observation, *item) for item in by_key.items()]
    )


def _observable(
    name: str, specs: list[AssetSpec], observations: Sequence[Callable[[], ObserveResult]]
) -> AssetsDefinition:
    """Observable source assets ``specs``, observed together by one op ``name`` (one observation per spec)."""

    def observe(context: AssetExecutionContext) -> Iterator[ObserveResult]:
        for observation in observations:
            yield observation()

    with warnings.catch_warnings():
        # Dagster 1.13 marks observable sources beta; they are its documented way to version a source (pinned).
        warnings.simplefilter("ignore", BetaWarning)
        return multi_observable_source_asset(specs=specs, name=name)(observe)


def telemetry_observation(key: AssetKey, source: TelemetryConfig) -> ObserveResult:
    """The files of a file-based telemetry source; a metrics server (Prometheus) has no version to observe."""
    if not source.paths:
        return ObserveResult(asset_key=key, metadata={"url": str(source.options.get("url", ""))})
    files = source_files(source)
    newest = max((mtime_ns for found in files.values() for _, _, mtime_ns in found), default=None)
    return ObserveResult(
        asset_key=key,
        data_version=DataVersion(_digest(files)),
        metadata={
            "files": sum(map(len, files.values())),
            "newest_file_time": datetime.fromtimestamp(newest / 1e9, UTC).isoformat() if newest else "none",
        },
    )


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]
