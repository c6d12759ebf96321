"""``gpuledger``: the command line (its commands and flags are documented in README's Command line table)."""

from __future__ import annotations

import argparse
import code
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path

import duckdb

from gpuledger.allocation.allocate import gpu_cost_without_telemetry
from gpuledger.gates.load import LoadResult, SliceTotal, held_deliveries, load_delivery, publish_accepted
from gpuledger.gates.vacuum import DEFAULT_LEASE, vacuum
from gpuledger.publish.focus_1_3 import EXPORT_VIEW, Dataset, stage_export
from gpuledger.reports.report import Report, report_month
from gpuledger.warehouse.database import WAREHOUSE_FILE, connect, ensure_schema, schema_fingerprint
from gpuledger.warehouse.home import (
    RunBusy,
    connect_warehouse,
    exclusive_run,
    interrupted_run,
    locate_home,
    open_warehouse,
    resolve_home,
    warehouse_location,
)
from gpuledger.warehouse.sqlfiles import load_sql
from models.billing_month import BillingMonth
from models.config import CONFIG_FILE, Config, load_config, load_warehouse_config
from models.delivery import Delivery
from models.errors import GpuledgerError, InputError, describe_error, environment_failure, printable
from models.focus import FOCUS_VERSION
from models.focus_1_3 import FOCUS_1_3_VERSION
from models.formats import FORMATS, PROVIDERS
from pipelines.deliveries import deliveries_from_paths, part_staging
from pipelines.inputs import instance_folder

DESCRIPTION = (
    "FinOps cost ingestion and GPU showback: cloud billing exports (AWS, Azure, GCP, FOCUS files) become FOCUS 1.2"
    " rows in DuckDB, split into run, idle, checkpoint storage, egress and other per team and job, published"
    " read-only for analysts, with monthly chargeback reports."
)
HOME_HELP = (
    "the gpuledger home (default: $GPULEDGER_HOME, else ./.home when it holds a gpuledger.toml, else"
    " ~/.local/share/gpuledger)"
)
EXIT_HELD = 3
"""Exit status of ``run``, ``import`` and ``status`` when a delivery is held for ``gpuledger accept``."""
EXIT_BROKEN_PIPE = 141
"""Exit status when the reader of the output went away (``gpuledger status | head -1``): 128 + SIGPIPE, as the
shell reports for a command SIGPIPE stopped."""
EXAMPLE_QUERY = "SELECT * FROM views.cost_by_team_month_category"
# --out's extension -> (COPY's FORMAT, its COMPRESSION)
_EXPORT_FORMATS = {".parquet": ("parquet", "zstd"), ".csv": ("csv", "none")}
FOCUS_EXPORT_VERSIONS = (FOCUS_VERSION, FOCUS_1_3_VERSION)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gpuledger`` with ``argv`` (default: the process's arguments); the exit status."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # nobody reads the rest: stop quietly, and keep the interpreter's final flush from failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        status = int(args.handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except GpuledgerError as exc:
        if context := getattr(exc, "context", None):
            print(f"gpuledger: {context}", file=sys.stderr)
        print(f"gpuledger: error: {environment_failure(exc, _home_of(args)) or exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise
    except Exception as exc:
        # the machine ran out of something: one line; anything else is a bug and keeps its traceback
        if failure := environment_failure(exc, _home_of(args)):
            print(f"gpuledger: error: {failure}", file=sys.stderr)
            return 1
        raise


def _home_of(args: argparse.Namespace) -> Path | None:
    return resolve_home(args.home) if hasattr(args, "home") else None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuledger",
        description=_wrapped(DESCRIPTION),
        epilog="Start with the demo, then look around:\n  gpuledger demo --home .home\n  gpuledger status --home .home",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpuledger {version('gpuledger')}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    def command(name: str, summary: str, description: str, example: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=summary,
            description=_wrapped(description),
            epilog=f"Example:\n  {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument("--home", help=HOME_HELP)
        return sub

    demo = command(
        "demo",
        "generate sample exports and run the whole pipeline on them",
        "Write sample billing exports (AWS CUR 2.0 and CUR 1, Azure, GCP, a CoreWeave FOCUS file) and GPU telemetry"
        " of a fictional ML company into the home, run the pipeline on them, and write the chargeback reports of"
        " the closed month.",
        "gpuledger demo --home .home",
    )
    demo.set_defaults(handler=_demo)

    run = command(
        "run",
        "run the pipeline on the configured sources",
        "What the nightly schedule does: pull the remote sources, load every delivery, split the cost per team"
        " and job, and publish analyst.duckdb; prints the showback per team. Exit 3 when a delivery is held for"
        " review.",
        "gpuledger run --home .home",
    )
    run.set_defaults(handler=_run)

    mig = command(
        "migrate",
        "bring the warehouse to this version's schema now",
        "Bring the warehouse's tables, views and reference tables to this version of gpuledger, once, in one"
        " transaction (every command also does it when it opens a warehouse of an older version); a warehouse"
        " already at this version is left as it is.",
        "gpuledger migrate --home .home",
    )
    mig.set_defaults(handler=_migrate)

    vac = command(
        "vacuum",
        "remove the warehouse's invisible rows now",
        "Loading only appends: the rows of a slice's earlier owners and of loads that never published stay in the"
        " warehouse, invisible, until the vacuum removes them (the nightly run does, after the publish). Rows"
        " younger than the lease stay; every slice owner is reconciled to its source again before the removal"
        " commits.",
        "gpuledger vacuum --home .home --lease-minutes 0",
    )
    vac.add_argument(
        "--lease-minutes",
        type=int,
        default=int(DEFAULT_LEASE.total_seconds() // 60),
        help="keep rows younger than this (default: %(default)s)",
    )
    vac.set_defaults(handler=_vacuum)

    imp = command(
        "import",
        "ingest export files or folders, replacing their slices",
        "Load billing export files or folders you downloaded, replacing the months and accounts they deliver;"
        " prints the rows and totals per slice. Exit 3 when a delivery is held for review.",
        "gpuledger import ~/Downloads/cur2-export --home .home --format aws-cur2",
    )
    imp.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    imp.add_argument(
        "--format",
        default="auto",
        choices=("auto", *FORMATS),
        help="the export's format (default: told from the files' columns)",
    )
    imp.add_argument(
        "--source",
        help="the source the files are a delivery of (default: the configured source whose folder holds them, else"
        " the export's name); a slice belongs to the source that delivered it",
    )
    imp.add_argument(
        "--strict",
        action="store_true",
        help="also refuse a delivery whose descriptive values needed repairs (as [ingest] strict = true)",
    )
    imp.set_defaults(handler=_import)

    accept = command(
        "accept",
        "publish deliveries held for review, then run the pipeline",
        "Publish deliveries that were loaded but held for review (`gpuledger status` lists them with why), then"
        " run the pipeline.",
        "gpuledger accept aws-cur2:012345678901:2026-11:33741432:ae84c50cced8 --home .home",
    )
    accept.add_argument("deliveries", nargs="+", metavar="DELIVERY_ID")
    accept.set_defaults(handler=_accept)

    sync = command(
        "sync",
        "pull new deliveries of the remote sources",
        "Download new deliveries of the sources configured with [sources.s3], [sources.azure_blob],"
        " [sources.azure_cost_details] or [sources.bigquery] into <home>/landing/ (`gpuledger run` syncs first too).",
        "gpuledger sync --home .home --source helios-cur2",
    )
    sync.add_argument("--source", help="only this source")
    sync.add_argument("--month", help="only this billing month YYYY-MM")
    sync.add_argument(
        "--backfill",
        action="store_true",
        help="Azure sources with a scope: have Azure generate --month first (runs the export), then pull it",
    )
    sync.set_defaults(handler=_sync)

    status = command(
        "status",
        "what was pulled, loaded and published, and the billing months",
        "Per source: deliveries pulled and loaded, the newest period, freshness; repaired values; billing months"
        " and their statements; the last run and publish. Exit 1 when the last run or publish failed or the last run"
        " was interrupted (killed), 3 when a delivery is held for review.",
        "gpuledger status --home .home",
    )
    status.set_defaults(handler=_status)

    export = command(
        "export-focus",
        "write FOCUS rows to a Parquet or CSV file",
        "Write the FOCUS rows, optionally of one provider and billing month, to a file: Parquet (typed:"
        " DECIMAL costs, UTC timestamps) or CSV, chosen by the file's extension. FOCUS 1.2 by default; with"
        " --focus-version 1.3 the 1.3 CostAndUsage dataset (--allocated: every charge as the pieces the cost split"
        " cut it into) or the ContractCommitment dataset, written only when the project's 1.3 checks pass.",
        "gpuledger export-focus --home .home --out focus.parquet --provider aws --month 2026-11\n"
        "gpuledger export-focus --home .home --focus-version 1.3 --allocated --out allocated.parquet",
    )
    export.add_argument("--out", required=True, type=Path, metavar="FILE", help="FILE.parquet or FILE.csv")
    export.add_argument(
        "--focus-version", choices=FOCUS_EXPORT_VERSIONS, default=FOCUS_VERSION, help="default %(default)s"
    )
    export.add_argument(
        "--allocated", action="store_true", help="1.3: the split's allocated rows (team, user, job in AllocatedTags)"
    )
    export.add_argument(
        "--dataset",
        choices=[name.replace("_", "-") for name in (Dataset.COST_AND_USAGE, Dataset.CONTRACT_COMMITMENT)],
        default="cost-and-usage",
        help="1.3: which dataset (default %(default)s)",
    )
    export.add_argument(
        "--provider",
        help=f"a provider ({', '.join(PROVIDERS)}) or a FOCUS ProviderName (AWS, Microsoft, Google Cloud, ...),"
        " in any case",
    )
    export.add_argument("--month", help="billing month YYYY-MM")
    export.set_defaults(handler=_export_focus)

    report = command(
        "report",
        "issue a closed month's chargeback and write its reports",
        "Issue the chargeback statement of a closed billing month if it never was, and write its reports (HTML,"
        " PDF, CSV and XLSX per team) to <home>/reports/<month>/v<version>/.",
        "gpuledger report --home .home --month 2026-10",
    )
    report.add_argument("--month", required=True, help="billing month YYYY-MM (closed)")
    report.add_argument("--team", help="only this team (with the company summary)")
    report.add_argument(
        "--issue", action="store_true", help="issue a new version if the figures changed since the latest one"
    )
    report.set_defaults(handler=_report)

    advise = command(
        "advise",
        "list a month's estimated savings per team (estimates, never billed)",
        "List what a billing month could have cost less, per team and currency, largest first: right-sizing, a"
        " cheaper provider, spot, checkpoint interval and retention, notebook auto-stop, owned GPUs. Each is an"
        " ESTIMATE, with its method and evidence (--verbose), as last published in analyst.duckdb; opportunities"
        " overlap, so they are never added up.",
        "gpuledger advise --home .home --month 2026-10 --team research",
    )
    advise.add_argument("--month", required=True, help="billing month YYYY-MM")
    advise.add_argument("--team", help="only this team's opportunities")
    advise.add_argument(
        "--verbose", action="store_true", help="also each opportunity's method, evidence and every run group"
    )
    advise.set_defaults(handler=_advise)

    sql = command(
        "sql",
        "query the published analyst.duckdb (read-only)",
        "Open <home>/analyst.duckdb read-only: in the DuckDB CLI when `duckdb` is on PATH, else in a Python prompt"
        " with `con` connected; --query runs one query and prints its result.",
        f"gpuledger sql --home .home --query {shlex.quote(EXAMPLE_QUERY)}",
    )
    sql.add_argument("--query", help="run this SQL and print the result, instead of opening a prompt")
    sql.set_defaults(handler=_sql)
    return parser


def _wrapped(text: str) -> str:
    """A description wrapped as argparse would (its raw formatter keeps the examples' line breaks, and these)."""
    return textwrap.fill(text, width=min(100, shutil.get_terminal_size().columns - 2))


def _demo(args: argparse.Namespace) -> int:
    from gpuledger.chargeback.months import CLOSED, ISSUED, month_states
    from gpuledger_demo.setup import write_demo_home
    from pipelines.runner import close_month

    home = resolve_home(args.home)
    _progress(f"Writing sample exports and GPU telemetry to {home} ...")
    write_demo_home(home)
    status = _run(args, home)
    with closing(open_warehouse(home)) as con:
        closed = [m.month for m in month_states(con) if m.state in (CLOSED, ISSUED)]
    for month in closed:  # the demo closes its closed months through Dagster (issued once, rendered every time)
        print()
        _rendering(month)
        _print_report(home, close_month(home, month))
    return status


def _report(args: argparse.Namespace) -> int:
    if not _MONTH.fullmatch(args.month):
        print(f"gpuledger: --month {args.month!r} is not YYYY-MM", file=sys.stderr)
        return 2
    home = _existing_home(args, WAREHOUSE_FILE, CONFIG_FILE)
    _rendering(args.month)
    _print_report(home, report_month(home, args.month, team=args.team, issue=args.issue))
    return 0


_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def _rendering(month: str) -> None:
    _progress(f"Rendering the chargeback reports of {month} (HTML, PDF, CSV, XLSX) ...")


def _print_report(home: Path, report: Report) -> None:
    """Say which version of a month's chargeback the reports written show, and where they are."""
    done = "issued now" if report.issued_now else "issued before"
    print(f"Chargeback {report.month} version {report.version} ({done}): reports in {report.folder}/")
    for path in report.files:
        print(f"  {path}")
    if report.pdf_missing:
        print(f"  {report.pdf_missing}")
    if report.issued_now and report.publish_refused is None:
        print(f"  analysts see version {report.version}: the analyst file was published again")
    if report.publish_refused:
        print(f"  warning: issued, but the analyst file was not published again: {report.publish_refused}")
    if report.pending_adjustments:
        print(
            f"  note: {report.pending_adjustments} adjustment(s): figures changed since version {report.version}"
            f" (a restatement); to issue the next version: {_hint(home, 'report', '--month', report.month, '--issue')}"
        )


def _run(args: argparse.Namespace, home: Path | None = None) -> int:
    from connectors.progress import show_progress
    from gpuledger.publish.snapshot import ANALYST_FILE, PUBLISHED_FOLDER
    from pipelines.runner import run_pipeline

    home = home or _existing_home(args, CONFIG_FILE, WAREHOUSE_FILE)
    _progress(f"Running the pipeline on {home} through Dagster ...")
    with show_progress(sys.stderr):  # the run syncs the remote sources first
        outcome = run_pipeline(home)
    partitions = outcome.partitions
    with closing(open_warehouse(home)) as con:
        slices = con.execute(
            "SELECT ProviderName, BillingAccountId, strftime(billing_month(BillingPeriodStart), '%Y-%m'),"
            " BillingCurrency, count(*), sum(BilledCost), sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        teams = con.execute(
            "SELECT strftime(billing_month, '%Y-%m'), team, currency, round(total_cost, 2),"
            " CASE WHEN total_cost > 0 THEN format('{:.1f}%', 100 * idle_cost / total_cost) ELSE '-' END,"
            " round(gpu_hours, 1), completed_runs, coalesce(CAST(round(cost_per_completed_run, 2) AS VARCHAR), '-')"
            " FROM showback.team_month ORDER BY 1, 2, 3"
        ).fetchall()
        config = load_config(home)
        no_telemetry = _gpu_cost_without_telemetry(con, config)
        duplicates = _duplicate_samples(con, config)
    ran = ", ".join(f"{p} {m}".strip() for m, p in partitions) or "none"
    print(f"Ran {len(partitions)} partition(s) through Dagster: {ran}")
    if outcome.skipped:
        skipped = ", ".join(f"{p} {m}".strip() for m, p in outcome.skipped)
        print(f"Skipped {len(outcome.skipped)} whose inputs had not changed since their last successful run: {skipped}")
    print(_table(["provider", "billing account", "month", "currency", "rows", "billed", "effective"], slices))
    print("\nShowback per team (EffectiveCost; idle share of the team's cost):")
    print(_table(["month", "team", "currency", "total", "idle", "GPU-hours", "runs done", "per run"], teams))
    if no_telemetry:
        print("\n".join(["", *no_telemetry]))
    if duplicates:
        print("\n".join(["", *duplicates]))
    analyst = home / ANALYST_FILE
    print(f"\nResults in {analyst} (published for analysts; open it read-only):")
    print("  focus.costs (FOCUS 1.2), allocation.cost_split, showback.team_month, showback.job_costs,")
    print("  showback.user_month, showback.idle_by_hour_of_week, showback.team_month_reporting, meta.months,")
    print("  chargeback.*, ref.gpu_models, ref.gpu_instances, views.* (rounded to cents; e.g. views.completed_runs,")
    print("  views.idle_by_instance); ESTIMATED savings apart from billed money: advice.*, views.savings_opportunities")
    print(f"  SQL prompt: {_hint(home, 'sql')}")
    print(f"  one query:  {_hint(home, 'sql', '--query', EXAMPLE_QUERY)}")
    print(f"  Python:     {_python_query(analyst, EXAMPLE_QUERY)}")
    print(f"  Parquet: {home / PUBLISHED_FOLDER / 'focus'}/ProviderName=*/billing_month=*/*.parquet")
    print(f"  pipeline warehouse: {warehouse_location(home)}")
    print(f"  status:     {_hint(home, 'status')}")
    if teams:
        print(f"  savings:    {_hint(home, 'advise', '--month', max(row[0] for row in teams))}")
    print(f"  Dagster run history: {instance_folder(home)}")
    _print_held(outcome.held, home)
    for reason in (*outcome.unsynced, *outcome.refused):  # last: the lines a person or cron reads first
        print(f"gpuledger: error: {reason}", file=sys.stderr)
    return 1 if outcome.refused or outcome.unsynced else EXIT_HELD if outcome.held else 0


def _gpu_cost_without_telemetry(con: duckdb.DuckDBPyConnection, config: Config) -> list[str]:
    """One warning per billing month and currency with GPU instances billed when no telemetry source is configured:
    the split has no job to give their time to, so all of it is idle."""
    if config.telemetry:
        return []
    return [
        f"warning: {month} {currency}: {instances} GPU instance{'' if instances == 1 else 's'} billed"
        f" {Decimal(cost):,.2f} (EffectiveCost) but no telemetry source is configured: their cost is idle (no job)"
        " until one is ([[telemetry]] in gpuledger.toml)"
        for month, currency, instances, cost in gpu_cost_without_telemetry(con)
    ]


def _duplicate_samples(con: duckdb.DuckDBPyConnection, config: Config) -> list[str]:
    """One note per telemetry source whose loaded samples held copies (two exporters, a double scrape): each counted
    once, so no money moved, but a GPU scraped twice is worth fixing where it is scraped."""
    return [
        f"note: telemetry {source.name}: {line}"
        for source in config.telemetry
        for (line,) in con.execute(load_sql("telemetry/duplicate_samples.sql"), {"source": source.name}).fetchall()
    ]


def _print_held(held: dict[str, list[str]], home: Path) -> None:
    if not held:
        return
    print("\nHeld for review (loaded and checked, not published; accepting one publishes it):")
    for delivery_id, reasons in held.items():
        print(f"  {delivery_id}")
        print("\n".join(f"    {reason}" for reason in reasons))
        print(f"    to accept: {_hint(home, 'accept', delivery_id)}")


def _progress(line: str) -> None:
    """Say what a long step is doing before it starts, as the pipeline's stages do (stderr is for errors)."""
    print(line, flush=True)


def _existing_home(args: argparse.Namespace, *readable: str) -> Path:
    """The home, when it holds one of ``readable`` (files of a home) for the command to read; else one line naming
    the home, how it was chosen and how to get one, and nothing is created."""
    choice = locate_home(args.home)
    if any((choice.path / name).exists() for name in readable):
        return choice.path
    raise GpuledgerError(
        f"{choice.path} ({choice.chosen_by}) holds no {_either(readable)}: choose the home with --home DIR or"
        f" $GPULEDGER_HOME, or write the demo's there: {_hint(choice.path, 'demo')}"
    )


def _either(names: Sequence[str]) -> str:
    return " or ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} or {names[-1]}"


def _hint(home: Path, *words: str) -> str:
    """The command line ``gpuledger WORDS... --home HOME`` as it works pasted into a shell in the current folder:
    ``gpuledger`` when the shell finds this one, else its path."""
    script = Path(sys.executable).parent / "gpuledger"
    on_path = shutil.which("gpuledger")
    if on_path and script.exists() and Path(on_path).resolve() == script.resolve():
        program = "gpuledger"
    elif script.exists():
        program = _shell_path(script)
    else:  # not installed as a console script (python -m pipelines.cli)
        program = f"{_shell_path(Path(sys.executable))} -m pipelines.cli"
    command, *rest = words
    return " ".join([program, command, "--home", _shell_path(home), *map(shlex.quote, rest)])


def _python_query(database: Path, query: str) -> str:
    """A shell command printing ``query``'s result from ``database`` opened read-only, with this Python."""
    # json.dumps writes valid Python string literals; the connection is kept in a name so it stays open
    program = (
        f"import duckdb; con = duckdb.connect({json.dumps(str(_from_here(database)))}, read_only=True);"
        f" con.sql({json.dumps(query)}).show()"
    )
    return f"{_shell_path(Path(sys.executable))} -c {shlex.quote(program)}"


def _shell_path(path: Path) -> str:
    """``path`` for a shell in the current folder, quoted."""
    return shlex.quote(str(_from_here(path)))


def _from_here(path: Path) -> Path:
    """``path`` relative to the current folder when below it (``.venv/bin/gpuledger``), else absolute."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    return absolute.relative_to(Path.cwd()) if absolute.is_relative_to(Path.cwd()) else absolute


def _sync(args: argparse.Namespace) -> int:
    from connectors.progress import show_progress
    from connectors.sync import remote_sources, sync_source

    home = _existing_home(args, CONFIG_FILE)
    if args.backfill and (args.source is None or args.month is None):
        print("gpuledger: --backfill needs --source NAME and --month YYYY-MM", file=sys.stderr)
        return 2
    config = load_config(home)
    try:
        sources = remote_sources(config.sources, args.source)
    except ValueError as exc:
        print(f"gpuledger: {exc}", file=sys.stderr)
        return 2
    for source in sources:
        with show_progress(sys.stderr):
            result = sync_source(source, args.month, backfill=args.backfill)
        rows = [(p.billing_period or "-", p.version or "-", p.files, p.downloaded_bytes) for p in result.pulled]
        # a discovered destination (s3 discover, azure scope) is known from the landing only after a sync
        landed = next(s.path for s in load_config(home).sources if s.name == source.name)
        print(f"{source.name}: {len(rows)} new deliver{'y' if len(rows) == 1 else 'ies'} -> {landed}")
        if rows:
            print(_table(["period", "version", "files", "downloaded bytes"], rows))
        if result.unchanged:
            print(f"  already landed: {', '.join(result.unchanged)}")
        for warning in result.warnings:
            print(f"  warning: {warning}")
        # [teams] accounts maps SubAccountId (a GCP project) to a team; tag rules cannot be checked here
        if unmapped := [p for p in result.linked_projects if p not in config.allocation.account_teams]:
            print(f"  warning: linked project(s) with no team in [teams] accounts: {', '.join(unmapped)}")
    if not sources:
        print(f"no remote sources configured ([sources.s3], [sources.azure_blob], [sources.azure_cost_details] or"
              f" [sources.bigquery]) in {home / CONFIG_FILE}")  # fmt: skip
    return 0


def _status(args: argparse.Namespace) -> int:
    from gpuledger.gates.freshness import STALE_AFTER_HOURS
    from gpuledger.publish.snapshot import ANALYST_FILE, last_attempt
    from gpuledger.warehouse.lake import attach_statements
    from models.landing import read_ledger
    from pipelines.runner import last_run

    home = _existing_home(args, CONFIG_FILE, WAREHOUSE_FILE, ANALYST_FILE)
    config = load_config(home)
    loaded: dict[str, tuple[int, object, datetime | None]] = {}
    repairs: dict[str, str] = {}
    held: dict[str, list[str]] | None = None
    no_telemetry: list[str] = []
    duplicates: list[str] = []
    if (home / WAREHOUSE_FILE).exists() or load_warehouse_config(home).is_lake:
        try:
            # read-only, so a running pipeline is never blocked (its write lock makes this fail instead)
            with closing(connect_warehouse(home, read_only=True)) as con:
                rows = con.execute(
                    "SELECT source_name, count(*), max(billing_period), max(first_ingested_at)"
                    " FROM meta.deliveries GROUP BY ALL"
                ).fetchall()
                repaired = con.execute(
                    "SELECT d.source_name, r.change, sum(r.rows) FROM meta.delivery_repairs AS r"
                    " JOIN meta.deliveries AS d USING (delivery_id) JOIN (SELECT DISTINCT delivery_id FROM meta.slices)"
                    " USING (delivery_id) GROUP BY ALL ORDER BY ALL"
                ).fetchall()
                held = {d: [h.describe() for h in holds] for d, holds in held_deliveries(con).items()}
                no_telemetry = _gpu_cost_without_telemetry(con, config)
                duplicates = _duplicate_samples(con, config)
            loaded = {str(name): (count, period, at) for name, count, period, at in rows}
            for name, change, count in repaired:
                repairs[str(name)] = ", ".join(filter(None, [repairs.get(str(name)), f"{change} {count:,}"]))
        except duckdb.Error as exc:
            print(f"warehouse not readable now ({describe_error(exc)}): showing pulled deliveries only")
    stale_before = datetime.now(UTC) - timedelta(hours=STALE_AFTER_HOURS)
    table = []
    for source in config.sources:
        pulled = read_ledger(source.remote.landing) if source.remote else []
        mine = [e for e in pulled if e.source == source.name]
        last = mine[-1] if mine else None  # the ledger lists deliveries oldest first
        count, period, at = loaded.get(source.name, (0, None, None))
        newest = datetime.fromisoformat(last.synced_at) if last else at
        table.append(
            (
                source.name,
                source.format,
                source.remote.kind if source.remote else "folder",
                f"{last.synced_at} {last.billing_period or ''}".strip() if last else "-",
                len(mine),
                count,
                period or "-",
                f"{at:%Y-%m-%dT%H:%M:%SZ}" if at else "-",
                "STALE" if newest is None or newest < stale_before else "ok",
            )
        )
    header = ["source", "format", "from", "last pulled", "pulled", "loaded", "newest period", "last loaded",
              f"new in {STALE_AFTER_HOURS}h"]  # fmt: skip
    print(_table(header, table) if table else f"no sources configured in {home / CONFIG_FILE}")
    if no_telemetry:
        print("\n".join(["", *no_telemetry]))
    if duplicates:
        print("\n".join(["", *duplicates]))
    if repairs:
        print("\nRepaired values in the loaded deliveries (x_SourceChanges, rows):")
        print("\n".join(f"  {name}: {changes}" for name, changes in sorted(repairs.items())))
    analyst = home / ANALYST_FILE
    if analyst.exists():  # the published file: never locked by a run, so months show even mid-run
        with closing(connect(analyst, read_only=True)) as con:
            months = con.execute(
                "SELECT strftime(m.billing_month, '%Y-%m'), m.state, m.closes_on, coalesce(max(s.version), 0),"
                " (SELECT count(*) FROM chargeback.adjustments AS a WHERE a.billing_month = m.billing_month)"
                " FROM meta.months AS m LEFT JOIN chargeback.statements AS s USING (billing_month)"
                " GROUP BY ALL ORDER BY 1"
            ).fetchall()
            try:
                shared = con.execute(load_sql("allocation/node_shared_share.sql")).fetchall()
            except duckdb.BinderException:  # a file published before the figure existed
                shared = []
        print("\nBilling months (as last published):")
        print(_table(["month", "state", "closes on", "statement version", "adjustments"], months))
        if shared:
            print("\nJobs' GPU cost priced by node-level activity shared between jobs (no label or GPU index):")
            print(_table(["month", "currency", "node-shared", "of jobs' GPU cost", "share"], shared))
    status = 0
    run = last_run(home)
    if interrupted := interrupted_run(home):
        print(
            f"\nlast run: started {interrupted.started} (pid {interrupted.pid}): interrupted, it ended without"
            " finishing (killed, out of memory or disk, or the machine stopped); the next run takes over its lock"
        )
        status = 1
    elif run is not None:
        print(f"\nlast run: {run['finished_at']}: {run['outcome']}")
        if run["outcome"] == "failed":
            print(f"  error: {run['error']}")
            if run.get("log"):
                print(f"  Dagster's log of the run: {run['log']}")
            status = 1
        for reason in run.get("unsynced", []):  # the rest of the run went on without these
            print(f"  {reason}")
            status = 1
        for reason in run.get("refused", []):
            print(f"  refused, not loaded: {reason}")
            status = 1
        if held is None:  # the warehouse is busy: what the last run held
            held = run.get("held") or {}
    if held:
        _print_held(held, home)
        status = status or EXIT_HELD
    attempt = last_attempt(home)
    if attempt is None:
        print("\nnot published yet")
        return status
    print(f"\nlast published: {attempt['published_at'] or 'never'} -> {analyst} ({attempt['published_rows']} rows)")
    lake = load_warehouse_config(home)
    if attempt.get("lake_snapshot") is not None and lake.is_lake:
        print("  the same tables, exact, on the lake as published (DuckDB 1.5, read-only):")
        print("\n".join(f"  {sql};" for sql in attach_statements(lake, int(attempt["lake_snapshot"]))))
    failed = [str(check) for check in attempt["failed_checks"]]
    if failed:
        print(f"last attempt {attempt['attempted_at']} was refused; failed checks:")
        print("\n".join(f"  {check}" for check in failed))
        return 1
    return status


def _import(args: argparse.Namespace) -> int:
    home = resolve_home(args.home)
    config = load_config(home)
    rules = replace(config.ingest, strict=True) if args.strict else config.ingest
    held = False
    with exclusive_run(home), closing(open_warehouse(home)) as con:
        deliveries = []
        for path in (p.resolve() for p in args.paths):
            with _discovery_notes() as notes:
                found = deliveries_from_paths(con, [path], args.format)
            for note in dict.fromkeys(notes):  # discovery may pass a folder twice
                print(f"note: {note}")
            if not found:
                why = f"; {notes[-1]}" if notes else ""
                raise InputError(path, f"no complete delivery to import here{why}")
            deliveries += found
        part_bytes, stager = part_staging(home)
        for delivery in deliveries:
            result = load_delivery(
                con, _as_source(delivery, config, args.source), rules, part_bytes=part_bytes, stager=stager
            )
            _print_load(result, home)
            held = held or result.held
    return EXIT_HELD if held else 0


@contextmanager
def _discovery_notes() -> Iterator[list[str]]:
    """What export discovery passed over (a run without its manifest, an export without its pair), as text."""
    notes: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: notes.append(printable(record.getMessage(), limit=400))  # type: ignore[method-assign]
    discovery = logging.getLogger("connectors")
    level, propagate = discovery.level, discovery.propagate
    discovery.setLevel(logging.INFO)
    discovery.propagate = False  # printed as notes, not again by the console's handler
    discovery.addHandler(handler)
    try:
        yield notes
    finally:
        discovery.removeHandler(handler)
        discovery.setLevel(level)
        discovery.propagate = propagate


def _as_source(delivery: Delivery, config: Config, name: str | None) -> Delivery:
    """The source an imported delivery comes from: ``--source``, else the configured source whose folder holds its
    files, else the name discovery gave it (the export's), so that it replaces only that source's slices."""
    if name is None:
        holders = [s.name for s in config.sources if all(f.is_relative_to(s.path.resolve()) for f in delivery.files)]
        name = holders[0] if delivery.files and holders else delivery.source_name
    return replace(delivery, source_name=name)


def _migrate(args: argparse.Namespace) -> int:
    home = _existing_home(args, WAREHOUSE_FILE, CONFIG_FILE)
    with exclusive_run(home), closing(connect_warehouse(home)) as con:
        migrated = ensure_schema(con)
    done = "migrated to" if migrated else "already at"
    print(f"{warehouse_location(home)}: {done} schema {schema_fingerprint()[:12]}")
    return 0


def _vacuum(args: argparse.Namespace) -> int:
    home = _existing_home(args, WAREHOUSE_FILE, CONFIG_FILE)
    if args.lease_minutes < 0:
        print("gpuledger: --lease-minutes must be 0 or more", file=sys.stderr)
        return 2
    with exclusive_run(home), closing(open_warehouse(home)) as con:
        removed = vacuum(con, timedelta(minutes=args.lease_minutes))
    print(
        f"removed {removed.rows:,} invisible rows ({removed.slices:,} slices of {removed.deliveries:,} deliveries);"
        " every slice owner still reconciles to its source"
    )
    return 0


def _accept(args: argparse.Namespace) -> int:
    """Publish each accepted delivery's staged rows here (an imported one is in no configured source a run would
    find), then run the pipeline on what is published."""
    home = _existing_home(args, WAREHOUSE_FILE, CONFIG_FILE)
    rules = load_config(home).ingest
    with exclusive_run(home), closing(open_warehouse(home)) as con:
        for delivery_id in args.deliveries:
            holds, result = publish_accepted(con, delivery_id, rules)
            for hold in holds:
                print(f"accepted {delivery_id}: {hold.describe()}")
            _print_load(result, home)
    return _run(args, home)


def _print_load(result: LoadResult, home: Path) -> None:
    if result.held:
        accept = _hint(home, "accept", result.delivery_id)
        print(f"{result.delivery_id}: held for review, not published; to accept: {accept}")
        for hold in result.holds:
            print(f"  {hold.describe()}")
    else:
        print(f"{result.delivery_id}: {'unchanged (already loaded)' if result.unchanged else 'loaded'}")
    rows = sum(s.rows for s in result.slices)
    if result.repairs:
        repaired = ", ".join(f"{change} {count:,}" for change, count in result.repairs)
        print(f"  {rows:,} rows; repaired {sum(c for _, c in result.repairs):,} values: {repaired} (x_SourceChanges)")
    print(
        _table(
            ["provider", "billing account", "month", "currency", "rows", "billed", "effective"],
            [_slice_row(s) for s in result.slices],
        )
    )


def _slice_row(s: SliceTotal) -> tuple[object, ...]:
    return (
        s.provider_name,
        s.billing_account_id,
        str(BillingMonth.of_period_start(s.billing_period_start)),
        s.currency or "-",
        s.rows,
        s.billed_cost,
        s.effective_cost,
    )


def _export_focus(args: argparse.Namespace) -> int:
    suffix = args.out.suffix.lower()
    if suffix not in _EXPORT_FORMATS:
        print(f"gpuledger: --out {args.out}: name a .parquet or a .csv file", file=sys.stderr)
        return 2
    if args.month is not None and not _MONTH.fullmatch(args.month):
        print(f"gpuledger: --month {args.month!r} is not YYYY-MM", file=sys.stderr)
        return 2
    dataset = Dataset(args.dataset.replace("-", "_"))
    if args.allocated and dataset is Dataset.CONTRACT_COMMITMENT:
        print("gpuledger: --allocated is of the cost-and-usage dataset", file=sys.stderr)
        return 2
    if args.focus_version == FOCUS_VERSION and (args.allocated or dataset is not Dataset.COST_AND_USAGE):
        print("gpuledger: --allocated and --dataset need --focus-version 1.3", file=sys.stderr)
        return 2
    file_format, compression = _EXPORT_FORMATS[suffix]
    with closing(_read_warehouse(_existing_home(args, WAREHOUSE_FILE, CONFIG_FILE))) as con:
        if args.provider is not None and args.provider.casefold() not in map(str.casefold, known := _providers(con)):
            print(f"gpuledger: --provider {args.provider!r} is none of {', '.join(known)}", file=sys.stderr)
            return 2
        if args.focus_version == FOCUS_VERSION:
            con.execute(f"CREATE TEMP VIEW {EXPORT_VIEW} AS SELECT * FROM focus.costs")  # noqa: S608  (our names)
        else:
            staged = Dataset.ALLOCATED_COST_AND_USAGE if args.allocated else dataset
            if failed := stage_export(con, staged):
                for result in failed:
                    print(
                        f"gpuledger: FOCUS 1.3 check {result.check} fails on {result.violations} rows", file=sys.stderr
                    )
                    for violation in result.sample:
                        print(
                            f"  {violation.column_name}: {violation.problem} ({violation.line_item_id})",
                            file=sys.stderr,
                        )
                print(f"gpuledger: {args.out} not written", file=sys.stderr)
                return 1
        args.out.parent.mkdir(parents=True, exist_ok=True)
        params = {
            "provider": args.provider,
            "month": args.month,
            "out": str(args.out),
            "format": file_format,
            "compression": compression,
        }
        # COPY streams to the file (a relation with bound parameters would be held in memory whole)
        export_sql = "export_contract_commitment" if dataset is Dataset.CONTRACT_COMMITMENT else "export_focus"
        written = con.execute(load_sql(f"publish/{export_sql}.sql"), params).fetchone()
    print(f"wrote {written[0] if written else 0} FOCUS {args.focus_version} rows to {args.out}")
    return 0


def _providers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What --provider may name: the provider keys, their ProviderNames and every ProviderName stored."""
    stored = [
        str(name) for (name,) in con.execute("SELECT DISTINCT ProviderName FROM focus.costs ORDER BY 1").fetchall()
    ]
    return list(dict.fromkeys([*PROVIDERS, *(p.name for p in PROVIDERS.values() if p.name), *stored]))


def _read_warehouse(home: Path) -> duckdb.DuckDBPyConnection:
    """The warehouse opened read-only (nothing created or migrated); a run writing it makes this one line."""
    try:
        return connect_warehouse(home, read_only=True)
    except (duckdb.IOException, RunBusy) as exc:
        raise GpuledgerError(f"{warehouse_location(home)} is being written (a run?): {describe_error(exc)}") from None


def _advise(args: argparse.Namespace) -> int:
    from gpuledger.chargeback.statement import advice_rows
    from gpuledger.publish.snapshot import ANALYST_FILE
    from gpuledger.reports.formatting import money
    from gpuledger.reports.html import RUNS_LISTED

    if not _MONTH.fullmatch(args.month):
        print(f"gpuledger: --month {args.month!r} is not YYYY-MM", file=sys.stderr)
        return 2
    home = _existing_home(args, ANALYST_FILE)
    # the published file: never locked by a run, as status reads the months
    with closing(connect(home / ANALYST_FILE, read_only=True)) as con:
        teams = [str(team) for (team,) in con.execute(load_sql("reports/advice_teams.sql")).fetchall()]
        if args.team is not None and args.team not in teams:
            raise GpuledgerError(f"no team {printable(args.team)!r}; the teams: {', '.join(teams) or '(none)'}")
        found = advice_rows(con, BillingMonth.parse(args.month).first_day)
    if found is None:
        print(
            f"No estimates in {home / ANALYST_FILE}: it was published before the advice stage ran"
            f" ({_hint(home, 'run')} estimates and publishes them)."
        )
        return 0
    card, rows = found
    rows = [row for row in rows if args.team is None or row["team"] == args.team]
    priced = "the EXAMPLE rate card (list prices" if card["example"] else "the configured rate card (prices"
    dates = ", ".join(str(d) for d in card["as_of"]) or "none"
    example = ": verify, or set [advice] rate_card to your own prices, before acting" if card["example"] else ""
    header = (
        f"ESTIMATES for {args.month}, as last published: not billed, not in any total. Opportunities"
        f" overlap (a run may be right-sized and moved to spot), so they are never added up. Priced from {priced}"
        f" as of {dates}){example}."
    )
    print(_wrapped(header))
    if not rows:
        print(f"\nNo opportunities estimated for {args.month}{f' for team {args.team}' if args.team else ''}.")
        return 0

    def who(row: dict[str, object]) -> str:
        return printable(str(row["team"])) if row["team"] is not None else "company-wide"

    def runs(groups: list[str] | None, listed: int) -> str:
        names = [printable(g) for g in groups or []]
        more = f" +{len(names) - listed} more" if len(names) > listed else ""
        return ", ".join(names[:listed]) + more

    table = [
        (
            who(row),
            row["rank"],
            printable(row["opportunity"]),
            runs(row["run_groups"], RUNS_LISTED),
            f"{money(row['estimated_saving'])} {row['currency'] or '(none)'}",
        )
        for row in rows
    ]
    print()
    print(_table(["team", "rank", "opportunity", "runs", "estimated saving"], table))
    if args.verbose:
        width = min(100, shutil.get_terminal_size().columns - 2)
        for row, line in zip(rows, table, strict=True):
            print(f"\n{line[0]} #{line[1]} {line[2]}: {line[4]}")
            for label, text in (
                ("method", printable(row["method"], limit=2000)),
                ("evidence", printable(row["evidence"], limit=2000)),
                ("runs", runs(row["run_groups"], len(row["run_groups"] or []))),
            ):
                print(textwrap.fill(text, width, initial_indent=f"  {label + ':':10}", subsequent_indent=" " * 12))
    else:
        team = ["--team", args.team] if args.team else []
        print(
            f"\nEach estimate's method and evidence: {_hint(home, 'advise', '--month', args.month, *team, '--verbose')}"
        )
    return 0


def _sql(args: argparse.Namespace) -> int:
    from gpuledger.publish.snapshot import ANALYST_FILE

    analyst = _existing_home(args, ANALYST_FILE) / ANALYST_FILE
    if args.query is None and (duckdb_cli := shutil.which("duckdb")):
        return subprocess.run([duckdb_cli, "-readonly", str(analyst)], check=False).returncode
    # the pipeline swaps in a new file by renaming it: this connection keeps the snapshot it opened
    with closing(duckdb.connect(str(analyst), read_only=True)) as con:
        if args.query is None:
            code.interact(
                banner=f"con: {analyst}, opened read-only. Try: con.sql({EXAMPLE_QUERY!r}).show()\n"
                "(the DuckDB CLI gives a SQL prompt here instead: pip install duckdb-cli)",
                local={"con": con, "duckdb": duckdb},
                exitmsg="",
            )
            return 0
        try:
            result = con.sql(args.query)
        except duckdb.Error as exc:
            raise GpuledgerError(f"--query: {describe_error(exc)}") from None
        if result is not None:  # a statement without a result (SET) prints nothing
            result.show(max_rows=sys.maxsize, max_width=sys.maxsize)  # every row and column, as the DuckDB CLI draws
    return 0


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [list(map(str, header))] + [[str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "  ".join(v.rjust(w) if i >= 4 else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths, strict=True)))
        for r in cells
    ]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


if __name__ == "__main__":
    sys.exit(main())
