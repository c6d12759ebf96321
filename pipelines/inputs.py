"""What each job of the nightly run reads, as one fingerprint per partition: a run re-executes a partition only when
its fingerprint differs from the one tagged on its last successful Dagster run (docs/decisions/0017).

The fingerprints are cheap by design (file sizes and modification times, a few small warehouse tables, the code's
own text): discovering that nothing changed must cost far less than redoing the work. Re-running is always safe,
so anything that cannot be fingerprinted cheaply (a Prometheus server) makes its partitions always stale.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import duckdb
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from gpuledger.chargeback.months import lifecycle_now
from gpuledger.publish.snapshot import ANALYST_FILE, crash_leftovers, last_attempt
from gpuledger.telemetry.ingest import source_files
from gpuledger.warehouse.fingerprints import code_version, file_stats, files_under, fingerprint
from models.config import CONFIG_FILE, Config, ingestion_settings
from models.delivery import Delivery

INPUTS_TAG = "gpuledger/inputs"
"""The run tag holding the fingerprint of the inputs a run read."""


def ingestion_inputs(home: Path, month: str, provider: str, deliveries: Sequence[Delivery], holds: object) -> str:
    """A (billing month, provider) partition reads its deliveries' files, the holds a person accepted, the code and
    what loading the provider's deliveries reads of the configuration (``ingestion_settings``)."""
    files = [f for d in deliveries for f in (*d.files, *([d.manifest] if d.manifest else []))]
    read = (code_version(), ingestion_settings(home, provider), _history_place(home), file_stats(home, files), holds)
    return fingerprint("focus_ingestion", month, provider, *read)


def month_holds(con: duckdb.DuckDBPyConnection, month: str) -> list[tuple[object, ...]]:
    """Holds of the month's deliveries and whether they were accepted: accepting one makes its partition stale."""
    return con.execute(
        "SELECT delivery_id, reason, accepted_at FROM meta.delivery_holds WHERE billing_period = $month ORDER BY ALL",
        {"month": month},
    ).fetchall()


def allocation_inputs(con: duckdb.DuckDBPyConnection, home: Path, config: Config, month: str) -> str | None:
    """A month's split reads the deliveries owning its slices and the telemetry; None (always stale) when a
    telemetry source is a server whose data cannot be fingerprinted without reading it."""
    if any(t.kind == "prometheus" for t in config.telemetry):
        return None
    owners = con.execute(
        "SELECT provider_name, billing_account_id, delivery_id FROM meta.slices"
        " WHERE strftime(billing_month(billing_period_start), '%Y-%m') = $month ORDER BY ALL",
        {"month": month},
    ).fetchall()
    telemetry = [source_files(t) for t in config.telemetry]
    return fingerprint("monthly_allocation", month, _home_inputs(home, config), owners, telemetry)


def publishing_inputs(
    con: duckdb.DuckDBPyConnection, home: Path, config: Config, months: dict[str, str | None]
) -> str | None:
    """Publishing reads every month's split (``months``: their input fingerprints), the deliveries, the issued
    statements and adjustments, and the day (months close by date), and writes the analyst file (its last attempt
    recorded); None (always stale) when a month's split is, when the analyst file is missing or a publish that
    crashed left files behind."""
    if None in months.values() or not (home / ANALYST_FILE).exists() or crash_leftovers(home):
        return None
    state = [
        con.execute(query).fetchall()
        for query in (
            "SELECT delivery_id, state FROM meta.deliveries ORDER BY ALL",
            "SELECT * FROM meta.slices ORDER BY ALL",
            "SELECT billing_month, version, content_sha256 FROM chargeback.statements ORDER BY ALL",
            "SELECT count(*), max(detected_at) FROM chargeback.adjustments",
        )
    ]
    attempt = last_attempt(home)
    return fingerprint(
        "publishing", sorted(months.items()), state, attempt, _home_inputs(home, config), lifecycle_now().date()
    )


def last_success(instance: DagsterInstance, job_name: str, inputs: str | None) -> str | None:
    """The id of the last successful run of ``job_name`` that read exactly these inputs, if any."""
    if inputs is None:
        return None
    runs = instance.get_run_records(
        RunsFilter(job_name=job_name, statuses=[DagsterRunStatus.SUCCESS], tags={INPUTS_TAG: inputs}), limit=1
    )
    return runs[0].dagster_run.run_id if runs else None


def instance_folder(home: Path) -> Path:
    """The folder of the Dagster instance holding ``home``'s run history: ``$DAGSTER_HOME`` when set, else
    ``<home>/dagster``."""
    return Path(os.environ.get("DAGSTER_HOME") or home / "dagster")


def _home_inputs(home: Path, config: Config) -> object:
    """The code, the configuration and the files it names (reporting rates; the advice rate card, read into it):
    what a month's split and the publish read besides their own data; and where the run history is."""
    toml = home / CONFIG_FILE
    rates = files_under(config.reporting.rates) if config.reporting.rates else []
    return (
        code_version(),
        toml.read_bytes() if toml.exists() else b"",
        file_stats(home, rates),
        config.advice.rates,
        _history_place(home),
    )


def _history_place(home: Path) -> str | None:
    """With the run history outside the home, the home's path: homes sharing one ``$DAGSTER_HOME`` must not skip
    each other's work; None when the history is the home's own (a moved home keeps its fingerprints)."""
    return None if instance_folder(home).resolve().is_relative_to(home.resolve()) else str(home.resolve())
