"""The warehouse as a DuckLake (Postgres catalog, data files on an S3-compatible server) holding two providers over
three months (AWS CUR 1 in two files a month, CoreWeave FOCUS), loaded by two worker processes at once, each
staging a delivery's files a part per file in processes of its own: one provider's loads killed after staging and
run again, an AWS restatement loaded beside them; then allocation and publish. What analysts get must equal a
sequential run on the file warehouse of the same exports (deliveries staged whole), the money must reconcile
exactly, and the killed workers' rows must never have been visible (docs/decisions/0020, 0021)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from dagster import DagsterRunStatus, RunsFilter

from gpuledger.gates.vacuum import vacuum
from gpuledger.publish.snapshot import ANALYST_FILE, STATUS_FILE
from gpuledger.warehouse.failpoints import FAILPOINT_ENV
from gpuledger.warehouse.home import connect_warehouse, open_warehouse
from gpuledger_demo.coreweave_exports import SOURCE_NAME as COREWEAVE_SOURCE
from gpuledger_demo.setup import EXPORTS_FOLDER, restate_last_aws_month, write_two_provider_home
from models.config import CONFIG_FILE
from pipelines.batches import ingestion_partition_key
from pipelines.runner import RunFailed, dagster_instance, run_pipeline
from tests.end_to_end.test_crash_safety import assert_published_equal
from tests.fixtures.lake_servers import postgres, s3_keys, s3_server

pytestmark = [pytest.mark.serial, pytest.mark.slow]

BUCKET = "gpuledger-lake"
MONTHS = ("2026-09", "2026-10", "2026-11")
AWS_SOURCE = "helios-legacy-cur"
"""The AWS payer: its last month is restated while the killed loads run again."""
KILLED_SOURCE = COREWEAVE_SOURCE
"""The source whose loads die at the failpoint after staging (all of its months, in their workers)."""
DUCKDB_1_4 = Path(__file__).parents[2] / ".venv-duckdb-1.4" / "bin" / "python"


@dataclass(frozen=True)
class LakeRun:
    home: Path
    reference: Path
    """The analyst file of a sequential run on the file warehouse, same exports, same home path."""
    s3_url: str
    killed: str
    """What the first lake run raised."""
    owners_after_kill: list[tuple[object, ...]]
    """(source, month, owning delivery) of every slice visible after the killed run, read by a new process."""
    staged_after_kill: int
    """FOCUS rows the killed loads staged (committed, never owned)."""
    ingestion_runs: list[tuple[str, DagsterRunStatus, float, float]]
    """(partition, status, start, end) of every finished ingestion run on the lake."""


@pytest.fixture(scope="module")
def lake_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LakeRun]:
    base = tmp_path_factory.mktemp("lake")
    home = base / "home"
    with pytest.MonkeyPatch.context() as env, postgres() as server, s3_server(BUCKET) as s3_url:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
            env.delenv(name, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "AKIAGPULEDGERLAKE")
        env.setenv("AWS_SECRET_ACCESS_KEY", "gpuledger-lake-test-secret")
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        env.setenv("AWS_CONFIG_FILE", str(base / "no-aws-config"))
        env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(base / "no-aws-credentials"))
        env.setenv("DAGSTER_HOME", str(base / "dagster-file"))
        # the reference: the same deliveries in the same order (a run, a restatement, a run), one writer, the file
        # (one generation of the exports and one of the restatement, copied: file times are the assemblies' versions)
        write_two_provider_home(pristine := base / "pristine", MONTHS)
        shutil.copytree(pristine, restated := base / "restated", symlinks=True)
        restate_last_aws_month(restated, MONTHS)
        shutil.copytree(pristine, home, symlinks=True)
        run_pipeline(home)
        shutil.copytree(restated / EXPORTS_FOLDER, home / EXPORTS_FOLDER, symlinks=True, dirs_exist_ok=True)
        run_pipeline(home)
        reference = base / "reference-analyst.duckdb"
        (home / ANALYST_FILE).rename(reference)
        shutil.rmtree(home)
        # the lake: the same exports before the restatement, two workers, one source's loads killed
        server.create_database("gpuledger")
        shutil.copytree(pristine, home, symlinks=True)
        with (home / CONFIG_FILE).open("a", encoding="utf-8") as config:
            config.write(
                f'\n[warehouse]\ncatalog = "{server.catalog("gpuledger")}"\ndata_path = "s3://{BUCKET}/warehouse/"\n'
                f's3_endpoint_url = "{s3_url}"\ns3_region = "us-east-1"\nworkers = 2\npart_size_mb = 0\n'
            )
        env.setenv("DAGSTER_HOME", str(base / "dagster-lake"))
        env.setenv(FAILPOINT_ENV, f"load:before-commit@{KILLED_SOURCE}")
        with pytest.raises(RunFailed) as killed:
            run_pipeline(home)
        env.delenv(FAILPOINT_ENV)
        owners = _read_in_new_process(home, _OWNERS)
        with closing(connect_warehouse(home, read_only=True)) as con:
            # rows committed by the killed loads' write step, owned by nobody
            staged = con.execute(
                "SELECT count(*) FROM focus.cost_rows WHERE x_DeliveryId NOT IN (SELECT delivery_id FROM meta.slices)"
            ).fetchone()
        # the killed loads again, and a restatement of another slice, loaded at the same time
        shutil.copytree(restated / EXPORTS_FOLDER, home / EXPORTS_FOLDER, symlinks=True, dirs_exist_ok=True)
        run_pipeline(home)
        with dagster_instance(home) as instance:
            finished = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE]
            records = instance.get_run_records(RunsFilter(job_name="focus_ingestion", statuses=finished))
            runs = [
                (r.dagster_run.tags["dagster/partition"], r.dagster_run.status, r.start_time, r.end_time)
                for r in records
            ]
        yield LakeRun(home, reference, s3_url, str(killed.value), owners, int(staged[0]), runs)  # type: ignore[index,arg-type]


_OWNERS = (
    "SELECT s.source_name, strftime(s.billing_period_start, '%Y-%m'), s.delivery_id FROM meta.slices AS s ORDER BY ALL"
)


def _read_in_new_process(home: Path, query: str) -> list[tuple[object, ...]]:
    """``query`` on the lake, read-only, by a fresh Python process (nothing of this one's session shared)."""
    script = (
        "import json, sys; from pathlib import Path; from gpuledger.warehouse.home import connect_warehouse;"
        " con = connect_warehouse(Path(sys.argv[1]), read_only=True);"
        " print(json.dumps(con.execute(sys.argv[2]).fetchall(), default=str))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(home), query], check=True, capture_output=True,
        text=True,
    )  # fmt: skip
    return [tuple(row) for row in json.loads(done.stdout)]


def test_killed_workers_fail_their_partitions_alone_and_none_of_their_rows_are_visible(lake_run: LakeRun) -> None:
    assert "worker process died (exit code -9)" in lake_run.killed
    with duckdb.connect(str(lake_run.reference), read_only=True) as reference:
        killed_rows = reference.execute(
            "SELECT count(*) FROM focus.costs WHERE ProviderName = 'CoreWeave'"  # the killed source's provider alone
        ).fetchone()
    assert killed_rows is not None and lake_run.staged_after_kill == killed_rows[0] > 0  # all staged ...
    # ... none seen by a reader; the other worker's slices are in
    assert [(source, month) for source, month, _ in lake_run.owners_after_kill] == [(AWS_SOURCE, m) for m in MONTHS]
    going = [DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]
    with dagster_instance(lake_run.home) as instance:  # the dead workers' runs were marked failed, none waits on them
        assert instance.get_run_records(RunsFilter(job_name="focus_ingestion", statuses=going)) == []
    assert sorted(p for p, status, *_ in lake_run.ingestion_runs if status == DagsterRunStatus.FAILURE) == [
        str(ingestion_partition_key(month, "focus")) for month in MONTHS
    ]


def test_two_ingestion_workers_loaded_at_the_same_time(lake_run: LakeRun) -> None:
    runs = sorted(lake_run.ingestion_runs, key=lambda r: r[2])
    assert len(runs) == 10  # 6 partitions (3 killed), then the 3 killed ones again and the restated one
    overlapping = [(a[0], b[0]) for a, b in itertools.pairwise(runs) if b[2] < a[3]]
    assert len(overlapping) >= 3, runs
    # the restatement was loaded while a killed load ran again
    restated = str(ingestion_partition_key(MONTHS[-1], "aws"))
    *_, (_, _, start, end) = (run for run in runs if run[0] == restated)
    retried = [run for run in runs[len(MONTHS) * 2 :] if run[0] != restated]
    assert any(other_start < end and start < other_end for *_, other_start, other_end in retried), runs


def test_every_slice_is_owned_by_its_newest_delivery_and_reconciles_exactly(lake_run: LakeRun) -> None:
    owners = _read_in_new_process(
        lake_run.home,
        "SELECT s.source_name, strftime(s.billing_period_start, '%Y-%m'), s.delivery_id, (SELECT count(*) FROM"
        " meta.deliveries AS n WHERE n.source_name = s.source_name AND n.billing_period = strftime("
        " s.billing_period_start, '%Y-%m') AND n.version_time > d.version_time) FROM meta.slices AS s"
        " JOIN meta.deliveries AS d USING (delivery_id) ORDER BY ALL",
    )
    assert [(source, month) for source, month, *_ in owners] == sorted(
        (source, month) for source in (AWS_SOURCE, KILLED_SOURCE) for month in MONTHS
    )
    assert all(newer == 0 for *_, newer in owners), owners
    # the restated month changed hands; the other AWS months kept the owner they had before it
    before = {(source, month): delivery for source, month, delivery in lake_run.owners_after_kill}
    changed = [(s, m) for s, m, delivery, _ in owners if (s, m) in before and before[s, m] != delivery]
    assert changed == [(AWS_SOURCE, MONTHS[-1])]
    # what analysts see per account, period and currency, against what the owners' sources hold: equal exactly
    sums = _read_in_new_process(
        lake_run.home,
        "WITH seen AS (SELECT BillingAccountId, BillingPeriodStart, BillingCurrency, sum(BilledCost) AS billed,"
        " sum(EffectiveCost) AS effective FROM focus.costs GROUP BY ALL), source AS (SELECT billing_account_id,"
        " billing_period_start, currency, sum(billed_cost) AS billed, sum(effective_cost) AS effective FROM"
        " meta.source_totals WHERE delivery_id IN (SELECT delivery_id FROM meta.slices) GROUP BY ALL)"
        " SELECT s.billing_account_id, strftime(s.billing_period_start, '%Y-%m'), s.currency, s.billed::VARCHAR,"
        " seen.billed::VARCHAR, s.effective::VARCHAR, seen.effective::VARCHAR FROM source AS s FULL JOIN seen"
        " ON seen.BillingAccountId = s.billing_account_id AND seen.BillingPeriodStart = s.billing_period_start"
        " AND seen.BillingCurrency = s.currency ORDER BY ALL",
    )
    assert len(sums) == 2 * len(MONTHS), sums  # one account per provider, one currency
    assert all(
        Decimal(str(billed)) == Decimal(str(seen_billed)) and Decimal(str(effective)) == Decimal(str(seen_effective))
        for *_, billed, seen_billed, effective, seen_effective in sums
    ), sums


def test_deliveries_of_several_files_were_staged_a_part_per_file(lake_run: LakeRun) -> None:
    staged = _read_in_new_process(
        lake_run.home,
        "SELECT d.source_format, len(d.files), count(DISTINCT t.part) FROM meta.slices AS s"
        " JOIN meta.deliveries AS d USING (delivery_id) JOIN meta.source_totals AS t USING (delivery_id)"
        " GROUP BY d.delivery_id, d.source_format, len(d.files) ORDER BY ALL",
    )
    # the file warehouse's reference staged every delivery whole
    assert staged == [("aws-cur1", 2, 2)] * len(MONTHS) + [("focus", 1, 1)] * len(MONTHS)


def test_analysts_get_what_a_sequential_run_on_the_file_warehouse_published(lake_run: LakeRun) -> None:
    assert_published_equal(lake_run.home / ANALYST_FILE, lake_run.reference)


def test_the_analyst_file_of_a_lake_opens_with_duckdb_1_4(lake_run: LakeRun) -> None:
    opened = subprocess.run(
        [str(DUCKDB_1_4), "-c", "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True);"
         " print(duckdb.__version__, con.execute('SELECT count(*) FROM focus.costs').fetchone()[0])",
         str(lake_run.home / ANALYST_FILE)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    version, rows = opened.stdout.split()
    with duckdb.connect(str(lake_run.reference), read_only=True) as reference:
        published = reference.execute("SELECT count(*) FROM focus.costs").fetchone()
    assert version.startswith("1.4.") and published is not None and int(rows) == published[0] > 0


def test_the_vacuum_leaves_no_unowned_rows_nor_orphaned_files(lake_run: LakeRun) -> None:
    with closing(open_warehouse(lake_run.home)) as con:
        before = con.execute("SELECT count(*) FROM focus.cost_rows").fetchone()[0]  # type: ignore[index]
        removed = vacuum(con, lease=dt.timedelta(0))
        vacuum(con, lease=dt.timedelta(0))  # the files its compaction replaced are older than the lease now
        unowned = con.execute(
            "SELECT count(*) FROM focus.cost_rows AS c WHERE NOT EXISTS (SELECT 1 FROM meta.slices AS s"
            " WHERE s.delivery_id = c.x_DeliveryId AND s.billing_account_id = c.BillingAccountId"
            " AND s.billing_period_start = c.BillingPeriodStart)"
        ).fetchone()[0]  # type: ignore[index]
        after = con.execute("SELECT count(*) FROM focus.cost_rows").fetchone()[0]  # type: ignore[index]
        visible = con.execute("SELECT count(*) FROM focus.costs").fetchone()[0]  # type: ignore[index]
        referenced = {
            str(path).removeprefix(f"s3://{BUCKET}/")
            for files in con.execute(
                "SELECT data_file, delete_file FROM ducklake_list_files('warehouse', 'cost_rows', schema => 'focus')"
            ).fetchall()
            for path in files
            if path
        }
    assert removed.rows == before - after > 0 and unowned == 0 and after == visible
    stored = {key for key in s3_keys(lake_run.s3_url, BUCKET) if "/focus/cost_rows/" in key}
    assert stored == referenced


def test_analysts_attach_the_published_lake_snapshot_read_only_after_the_vacuum(lake_run: LakeRun) -> None:
    with closing(open_warehouse(lake_run.home)) as con:
        vacuum(con, lease=dt.timedelta(0))  # expires every snapshot older than now but the published one
        published = con.execute(
            "SELECT lake_snapshot FROM meta.publishes ORDER BY published_at DESC LIMIT 1"
        ).fetchone()
        newest = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('warehouse')").fetchone()
    snapshot = json.loads((lake_run.home / STATUS_FILE).read_text(encoding="utf-8"))["lake_snapshot"]
    assert published == (snapshot,) and newest is not None and newest[0] > snapshot  # the lake moved on since
    status = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "status", "--home", str(lake_run.home)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    statements = [
        line.strip().rstrip(";") for line in status.stdout.splitlines() if line.startswith(("  ATTACH", "  CREATE"))
    ]
    assert len(statements) == 2 and statements[0].startswith("CREATE SECRET")  # the bucket's credentials: the chain's
    assert statements[1].endswith(f"(READ_ONLY, SNAPSHOT_VERSION {snapshot})")
    # an analyst's own DuckDB session (extensions from the packages: no network here): the printed statements
    script = (
        "import json, sys, duckdb; from gpuledger.warehouse.lake import load_extension;"
        " con = duckdb.connect(); [load_extension(con, e) for e in ('ducklake', 'postgres_scanner', 'httpfs', 'aws')];"
        " [con.execute(sql) for sql in json.loads(sys.argv[1])];"
        " rows = {t: con.execute(f'SELECT * FROM gpuledger.{t} ORDER BY ALL').fetchall() for t in sys.argv[2:]};"
        " print(json.dumps(rows, default=str))"
    )
    tables = ["showback.team_month", "chargeback.statements", "meta.slices"]
    read = subprocess.run(
        [sys.executable, "-c", script, json.dumps(statements), *tables], check=True, capture_output=True, text=True
    )  # fmt: skip
    on_lake = json.loads(read.stdout)
    with duckdb.connect(str(lake_run.home / ANALYST_FILE), read_only=True) as analyst:
        in_file = {t: analyst.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables[:2]}
    assert on_lake["showback.team_month"] and all(
        on_lake[t] == json.loads(json.dumps(rows, default=str)) for t, rows in in_file.items()
    )
    assert len(on_lake["meta.slices"]) == 2 * len(MONTHS)
