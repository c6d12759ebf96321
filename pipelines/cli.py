"""``gpuledger``: the command line. Commands and flags are a contract relied on outside the code."""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from gpuledger.gates.load import LoadResult, SliceTotal, accept_delivery, held_deliveries, load_delivery
from gpuledger.warehouse.database import WAREHOUSE_FILE, connect
from gpuledger.warehouse.home import exclusive_run, open_warehouse, resolve_home
from gpuledger.warehouse.sqlfiles import load_sql
from models.billing_month import BillingMonth
from models.config import Config, load_config
from models.delivery import Delivery
from models.errors import GpuledgerError, InputError, describe_error, environment_failure, printable
from models.formats import FORMATS
from pipelines.deliveries import deliveries_from_paths

HOME_HELP = "gpuledger home (default: $GPULEDGER_HOME, else ~/.local/share/gpuledger)"
EXIT_HELD = 3
"""Exit status of ``run``, ``import`` and ``status`` when a delivery is held for ``gpuledger accept``."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args))
    except GpuledgerError as exc:
        if context := getattr(exc, "context", None):
            print(f"gpuledger: {context}", file=sys.stderr)
        print(f"gpuledger: error: {environment_failure(exc, _home_of(args)) or exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        # the machine ran out of something: one line; anything else is a bug and keeps its traceback
        if failure := environment_failure(exc, _home_of(args)):
            print(f"gpuledger: error: {failure}", file=sys.stderr)
            return 1
        raise


def _home_of(args: argparse.Namespace) -> Path | None:
    return resolve_home(args.home) if hasattr(args, "home") else None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuledger", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="generate sample exports and run the whole pipeline on them")
    demo.add_argument("--home", help=HOME_HELP)
    demo.set_defaults(handler=_demo)

    run = commands.add_parser("run", help="run the pipeline (through Dagster) on the configured sources")
    run.add_argument("--home", help=HOME_HELP)
    run.set_defaults(handler=_run)

    imp = commands.add_parser("import", help="ingest export files or folders, replacing their slices")
    imp.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    imp.add_argument("--home", help=HOME_HELP)
    imp.add_argument("--format", default="auto", choices=("auto", *FORMATS))
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

    accept = commands.add_parser(
        "accept", help="publish deliveries held for review (see `gpuledger status`), then run the pipeline"
    )
    accept.add_argument("deliveries", nargs="+", metavar="DELIVERY_ID")
    accept.add_argument("--home", help=HOME_HELP)
    accept.set_defaults(handler=_accept)

    sync = commands.add_parser("sync", help="pull new deliveries of the remote sources ([sources.s3], ...)")
    sync.add_argument("--home", help=HOME_HELP)
    sync.add_argument("--source", help="only this source")
    sync.add_argument("--month", help="only this billing month YYYY-MM")
    sync.add_argument(
        "--backfill",
        action="store_true",
        help="Azure sources with a scope: have Azure generate --month first (runs the export), then pull it",
    )
    sync.set_defaults(handler=_sync)

    status = commands.add_parser("status", help="the sources: what was pulled and loaded, and when")
    status.add_argument("--home", help=HOME_HELP)
    status.set_defaults(handler=_status)

    export = commands.add_parser("export-focus", help="write FOCUS rows to a Parquet file")
    export.add_argument("--home", help=HOME_HELP)
    export.add_argument("--out", required=True, type=Path, metavar="FILE.parquet")
    export.add_argument("--provider", help="ProviderName to export (e.g. AWS)")
    export.add_argument("--month", help="billing month YYYY-MM")
    export.set_defaults(handler=_export_focus)

    report = commands.add_parser("report", help="issue a closed month's chargeback and write its reports")
    report.add_argument("--home", help=HOME_HELP)
    report.add_argument("--month", required=True, help="billing month YYYY-MM (closed)")
    report.add_argument("--team", help="only this team (with the company summary)")
    report.add_argument(
        "--issue", action="store_true", help="issue a new version if the figures changed since the latest one"
    )
    report.set_defaults(handler=_report)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from gpuledger.chargeback.months import CLOSED, month_states
    from gpuledger_demo.setup import write_demo_home

    home = resolve_home(args.home)
    write_demo_home(home)
    status = _run(args, home)
    with closing(open_warehouse(home)) as con:
        closed = [m.month for m in month_states(con) if m.state == CLOSED]
    for month in closed:  # the demo issues its closed months and writes their reports
        print()
        _print_report(home, month, None, issue=False)
    return status


def _report(args: argparse.Namespace) -> int:
    if not _MONTH.fullmatch(args.month):
        print(f"gpuledger: --month {args.month!r} is not YYYY-MM", file=sys.stderr)
        return 2
    _print_report(resolve_home(args.home), args.month, args.team, issue=args.issue)
    return 0


_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def _print_report(home: Path, month: str, team: str | None, *, issue: bool) -> None:
    from gpuledger.reports.report import report_month

    report = report_month(home, month, team=team, issue=issue)
    done = "issued now" if report.issued_now else "issued before"
    print(f"Chargeback {report.month} version {report.version} ({done}): reports in {report.folder}/")
    for path in report.files:
        print(f"  {path}")
    if report.issued_now and report.publish_refused is None:
        print(f"  analysts see version {report.version}: the analyst file was published again")
    if report.publish_refused:
        print(f"  warning: issued, but the analyst file was not published again: {report.publish_refused}")
    if report.pending_adjustments:
        print(
            f"  note: {report.pending_adjustments} adjustment(s): figures changed since version {report.version}"
            f" (a restatement); `gpuledger report --home {home} --month {month} --issue` issues the next version"
        )


def _run(args: argparse.Namespace, home: Path | None = None) -> int:
    from connectors.progress import show_progress
    from gpuledger.publish.snapshot import ANALYST_FILE, PUBLISHED_FOLDER
    from pipelines.runner import run_pipeline

    home = home or resolve_home(args.home)
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
    print(f"Ran {len(partitions)} partition(s) through Dagster: {', '.join(f'{p} {m}' for m, p in partitions)}")
    print(_table(["provider", "billing account", "month", "currency", "rows", "billed", "effective"], slices))
    print("\nShowback per team (EffectiveCost; idle share of the team's cost):")
    print(_table(["month", "team", "currency", "total", "idle", "GPU-hours", "runs done", "per run"], teams))
    analyst = home / ANALYST_FILE
    print(f"\nResults in {analyst} (published for analysts; open it read-only):")
    print("  focus.costs (FOCUS 1.2), allocation.cost_split, showback.team_month, showback.job_costs,")
    print("  showback.idle_by_hour_of_week, showback.team_month_reporting, meta.months, chargeback.*, views.*")
    print(  # a command line to copy, not SQL run here
        f"  query:  {sys.executable} -c \"import duckdb; duckdb.connect('{analyst}', read_only=True)"  # noqa: S608
        f".sql('SELECT * FROM views.cost_by_team_month_category').show()\""
    )
    print(f"  Parquet: {home / PUBLISHED_FOLDER / 'focus'}/ProviderName=*/billing_month=*/*.parquet")
    print(f"  pipeline warehouse: {home / WAREHOUSE_FILE}; status: gpuledger status --home {home}")
    print(f"  Dagster run history: {os.environ.get('DAGSTER_HOME') or home / 'dagster'}")
    _print_held(outcome.held)
    return EXIT_HELD if outcome.held else 0


def _print_held(held: dict[str, list[str]]) -> None:
    if not held:
        return
    print("\nHeld for review (loaded and checked, not published; `gpuledger accept DELIVERY_ID` publishes one):")
    for delivery_id, reasons in held.items():
        print(f"  {delivery_id}")
        print("\n".join(f"    {reason}" for reason in reasons))


def _sync(args: argparse.Namespace) -> int:
    from connectors.progress import show_progress
    from connectors.sync import remote_sources, sync_source

    home = resolve_home(args.home)
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
        print("no remote sources configured ([sources.s3], [sources.azure_blob], [sources.azure_cost_details] or"
              " [sources.bigquery] in gpuledger.toml)")  # fmt: skip
    return 0


def _status(args: argparse.Namespace) -> int:
    from gpuledger.gates.freshness import STALE_AFTER_HOURS
    from gpuledger.publish.snapshot import ANALYST_FILE, last_attempt
    from models.landing import read_ledger
    from pipelines.runner import last_run

    home = resolve_home(args.home)
    loaded: dict[str, tuple[int, object, datetime | None]] = {}
    repairs: dict[str, str] = {}
    held: dict[str, list[str]] | None = None
    warehouse = home / WAREHOUSE_FILE
    if warehouse.exists():
        try:
            # read-only, so a running pipeline is never blocked (its write lock makes this fail instead)
            with closing(connect(warehouse, read_only=True)) as con:
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
            loaded = {str(name): (count, period, at) for name, count, period, at in rows}
            for name, change, count in repaired:
                repairs[str(name)] = ", ".join(filter(None, [repairs.get(str(name)), f"{change} {count:,}"]))
        except duckdb.Error as exc:
            print(f"warehouse not readable now ({describe_error(exc)}): showing pulled deliveries only")
    stale_before = datetime.now(UTC) - timedelta(hours=STALE_AFTER_HOURS)
    table = []
    for source in load_config(home).sources:
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
    print(_table(header, table) if table else f"no sources configured in {home}")
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
    if run is not None:
        print(f"\nlast run: {run['finished_at']}: {run['outcome']}")
        if run["outcome"] == "failed":
            print(f"  error: {run['error']}")
            if run.get("log"):
                print(f"  Dagster's log of the run: {run['log']}")
            status = 1
        if held is None:  # the warehouse is busy: what the last run held
            held = run.get("held") or {}
    if held:
        _print_held(held)
        status = status or EXIT_HELD
    attempt = last_attempt(home)
    if attempt is None:
        print("\nnot published yet")
        return status
    print(f"\nlast published: {attempt['published_at'] or 'never'} -> {analyst} ({attempt['published_rows']} rows)")
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
        for delivery in deliveries:
            result = load_delivery(con, _as_source(delivery, config, args.source), rules)
            _print_load(result)
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


def _accept(args: argparse.Namespace) -> int:
    home = resolve_home(args.home)
    with exclusive_run(home), closing(open_warehouse(home)) as con:
        for delivery_id in args.deliveries:
            for hold in accept_delivery(con, delivery_id):
                print(f"accepted {delivery_id}: {hold.describe()}")
    return _run(args, home)


def _print_load(result: LoadResult) -> None:
    if result.held:
        print(f"{result.delivery_id}: held for review, not published (`gpuledger accept {result.delivery_id}`)")
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
    home = resolve_home(args.home)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    params = {"provider": args.provider, "month": args.month, "out": str(args.out)}
    with closing(open_warehouse(home)) as con:
        # COPY streams to the file (a relation with bound parameters would be held in memory whole)
        con.execute(load_sql("publish/export_focus.sql"), params)
        count = con.execute("SELECT count(*) FROM read_parquet($out)", {"out": str(args.out)}).fetchone()
    print(f"wrote {count[0] if count else 0} FOCUS rows to {args.out}")
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
