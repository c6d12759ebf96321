"""The ingestion contract (docs/decisions/0011), tried on copies of the demo home with its own exports changed
the way providers, sync mishaps and users change them. Each case either publishes nothing new with a one-line
error, or holds the delivery for ``gpuledger accept``, or loads with flags and exact totals; published data is
compared before and after."""

from __future__ import annotations

import csv
import errno
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from gpuledger.normalize.focus_passthrough import ADDED_IN
from gpuledger.publish.snapshot import ANALYST_FILE, PUBLISHED_TABLES
from gpuledger.warehouse.home import connect_warehouse, exclusive_run, open_warehouse
from gpuledger.warehouse.sqlfiles import quote_ident, quote_literal
from models.focus import FOCUS_COLUMN_NAMES
from pipelines.cli import EXIT_HELD, main
from tests.conftest import focus_snapshot, validate_warehouse

CUR2 = "exports/helios-billing-exports/cur2/helios-cur2"
CUR2_NOVEMBER_MANIFEST = f"{CUR2}/metadata/BILLING_PERIOD=2026-11/helios-cur2-Manifest.json"
CUR1 = "exports/helios-legacy-billing/cur1/helios-legacy-cur"
CUR1_NOVEMBER = f"{CUR1}/20261101-20261201"
AZURE = "exports/heliosfinops/cost-exports/helios-mca"
GCP_TABLE = "exports/helios-gcp-billing/parquet/gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9"
GCP_NOVEMBER = f"{GCP_TABLE}/invoice_month=202611"
CUR2_PAYER, CUR1_PAYER = "012345678901", "004455667788"


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``gpuledger`` in a process of its own, as cron would run it."""
    command = [sys.executable, "-m", "pipelines.cli", *args, "--home", str(home)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


RECORDS_OF_THE_ATTEMPT = ("meta.deliveries", "meta.delivery_holds")
"""What a run that holds a delivery publishes anew: the held delivery and why; every other table stays."""


def _published(home: Path, origin: Path, *, except_: tuple[str, ...] = ()) -> dict[str, tuple[object, ...]]:
    """Rows and a hash of their contents of every published table of the analyst file (as the crash-safety suite's
    fingerprints), with the paths of the home (and of ``origin``, the demo home it was copied from) spelled alike."""
    with duckdb.connect(str(home / ANALYST_FILE), read_only=True) as con:
        tables = [table for table in PUBLISHED_TABLES if table not in except_]
        return {table: _paths_alike_fingerprint(con, table, origin, home) for table in tables}


def _paths_alike_fingerprint(con: duckdb.DuckDBPyConnection, table: str, *homes: Path) -> tuple[object, ...]:
    """Rows of ``table`` and the sum of their hashes, every text (and list of texts) with ``homes`` as ``<home>``."""
    first, second = (quote_literal(str(home)) for home in homes)

    def alike(text: str) -> str:
        return f"replace(replace({text}, {first}, '<home>'), {second}, '<home>')"

    columns = []
    # table names are the publisher's constants, column names quoted
    for name, data_type in con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall():
        column = quote_ident(name)
        if data_type == "VARCHAR":
            columns.append(f"{alike(column)} AS {column}")
        elif data_type == "VARCHAR[]":
            columns.append(f"list_transform({column}, v -> {alike('v')}) AS {column}")
        else:
            columns.append(column)
    rows = f"SELECT {', '.join(columns)} FROM {table}"
    row = con.execute(f"SELECT count(*), sum(hash(t)::HUGEINT) FROM ({rows}) AS t").fetchone()
    assert row is not None
    return row


def _loaded(home: Path) -> tuple[pa.Table, list[tuple[object, ...]]]:
    """The warehouse's published FOCUS rows and slice owners."""
    with closing(open_warehouse(home)) as con:
        return focus_snapshot(con), con.execute(
            "SELECT * EXCLUDE (replaced_at) FROM meta.slices ORDER BY ALL"
        ).fetchall()


def _total(home: Path, account: str, month: str) -> tuple[int, Decimal, Decimal]:
    with closing(open_warehouse(home)) as con:
        row = con.execute(
            "SELECT count(*), coalesce(sum(BilledCost), 0), coalesce(sum(EffectiveCost), 0) FROM focus.costs"
            " WHERE BillingAccountId = $account AND strftime(BillingPeriodStart + INTERVAL 14 HOUR, '%Y-%m') = $month",
            {"account": account, "month": month},
        ).fetchone()
    assert row is not None
    return int(row[0]), row[1], row[2]


def _rewrite_csv_gz(path: Path, change: object) -> None:
    rows = list(csv.reader(io.StringIO(gzip.decompress(path.read_bytes()).decode("utf-8-sig"))))
    change(rows)  # type: ignore[operator]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_bytes(gzip.compress(out.getvalue().encode("utf-8"), mtime=0))  # the same rows, the same bytes


def _cur1_part(home: Path) -> Path:
    return next((home / CUR1_NOVEMBER).rglob("*.csv.gz"))


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("gpuledger: error: ")
    return lines[0]


# 1. An empty newer delivery would wipe a published month: it is held, and empties the month once accepted.


def test_an_empty_newer_data_export_is_held_until_accepted(demo_copy, demo_home):
    before = _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT)
    manifest = demo_copy / CUR2_NOVEMBER_MANIFEST
    data = json.loads(manifest.read_text()) | {"executionId": "5e2f1b8e-empty", "dataFiles": []}
    manifest.write_text(json.dumps(data))
    november = _total(demo_copy, CUR2_PAYER, "2026-11")

    held = _run(demo_copy, "run")
    assert held.returncode == EXIT_HELD, held.stderr
    assert "empty_slice AWS 012345678901 2026-11: would empty the slice" in held.stdout
    assert _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT) == before
    assert _total(demo_copy, CUR2_PAYER, "2026-11") == november
    status = _run(demo_copy, "status")
    assert status.returncode == EXIT_HELD and "5e2f1b8e-empty" in status.stdout

    delivery = next(line.strip() for line in held.stdout.splitlines() if "5e2f1b8e-empty" in line)
    accepted = _run(demo_copy, "accept", delivery)
    assert accepted.returncode == 0, accepted.stderr
    assert _total(demo_copy, CUR2_PAYER, "2026-11") == (0, 0, 0)
    assert _run(demo_copy, "status").returncode == 0


def test_an_empty_azure_month_is_held_until_accepted_not_refused_as_a_duplicate(demo_copy, demo_home):
    """Azure writes an empty month as a header-only actual and a header-only amortized file: the same bytes, yet no
    row that could count twice."""
    before = _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT)
    actual, amortized = _rewrite_azure_november(demo_copy, lambda rows: rows.__delitem__(slice(1, None)))
    assert actual.read_bytes() == amortized.read_bytes()

    held = _run(demo_copy, "run")
    assert held.returncode == EXIT_HELD, held.stderr
    assert "empty_slice Microsoft F7W4-NQLF-SZU-QNK 2026-11: would empty the slice" in held.stdout
    assert _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT) == before

    delivery = next(line.strip() for line in held.stdout.splitlines() if line.strip().startswith("azure-cost-details:"))
    accepted = _run(demo_copy, "accept", delivery)
    assert accepted.returncode == 0, accepted.stderr
    assert _total(demo_copy, "F7W4-NQLF-SZU-QNK", "2026-11") == (0, 0, 0)


def test_a_header_only_cur1_assembly_is_held(demo_copy, capsys):
    part = _cur1_part(demo_copy)
    _rewrite_csv_gz(part, lambda rows: rows.__delitem__(slice(1, None)))
    before = _loaded(demo_copy)
    code, out, _ = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == EXIT_HELD
    assert "empty_slice AWS 004455667788 2026-11" in out
    assert _loaded(demo_copy) == before


def _keep_one_line_item(line_item_type: str) -> object:
    """A change keeping only the first line item of ``line_item_type``."""

    def change(rows: list[list[str]]) -> None:
        column = rows[0].index("lineItem/LineItemType")
        rows[1:] = [next(row for row in rows[1:] if row[column] == line_item_type)]

    return change


@pytest.mark.parametrize("line_item_type", ["DiscountedUsage", "Tax"])
def test_an_open_month_delivery_shrinking_a_slice_s_money_is_held(demo_copy, demo_home, line_item_type):
    """One line billing $0 (reservation-covered usage) or one tax line would replace 1,606 charged rows of an open
    month: the row count is not the money."""
    before = _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT)
    november = _total(demo_copy, CUR1_PAYER, "2026-11")
    _rewrite_csv_gz(_cur1_part(demo_copy), _keep_one_line_item(line_item_type))
    held = _run(demo_copy, "run")
    assert held.returncode == EXIT_HELD, held.stderr
    assert f"open_month_change AWS {CUR1_PAYER} 2026-11: shrinks the open month's money" in held.stdout
    assert _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT) == before
    assert _total(demo_copy, CUR1_PAYER, "2026-11") == november


def test_an_open_month_delivery_doubling_a_slice_s_money_is_held(demo_copy, demo_home):
    """Every line item of a CUR 1 month listed again under new ids: the month-to-date export never multiplies the
    days it already delivered."""
    before = _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT)

    def twice(rows: list[list[str]]) -> None:
        column = rows[0].index("identity/LineItemId")
        rows.extend([*row[:column], row[column] + "x", *row[column + 1 :]] for row in rows[1:])

    _rewrite_csv_gz(_cur1_part(demo_copy), twice)
    held = _run(demo_copy, "run")
    assert held.returncode == EXIT_HELD, held.stderr
    assert f"open_month_change AWS {CUR1_PAYER} 2026-11: inflates the open month's money" in held.stdout
    assert _published(demo_copy, demo_home, except_=RECORDS_OF_THE_ATTEMPT) == before


def test_a_focus_file_listing_every_row_twice_is_held_even_as_a_slice_s_first_delivery(demo_home, home, capsys):
    """FOCUS has no line-item id: 390 rows listed twice loaded as 780 (73,838.90 -> 147,677.81), and a first
    delivery has no published money to compare with."""
    november = demo_home / "exports" / "coreweave" / "2026-11" / "coreweave-focus-2026-11.csv"
    lines = november.read_text(encoding="utf-8").splitlines(keepends=True)
    doubled = home / "incoming" / "2026-11" / november.name
    doubled.parent.mkdir(parents=True)
    doubled.write_text("".join([lines[0], *lines[1:], *lines[1:]]), encoding="utf-8")
    code, out, _ = _cli(capsys, "import", doubled.parent.parent, "--home", home, "--format", "focus")
    assert code == EXIT_HELD
    assert f"{len(lines) - 1} row(s) repeat another row of the delivery in every column" in out
    assert "listed 2 times" in out
    with closing(open_warehouse(home)) as con:
        assert focus_snapshot(con).num_rows == 0


# 2. A slice belongs to the source that delivered it.


def _focus_file(home: Path, path: Path, account: str, month: str) -> Path:
    """One FOCUS row of a slice, claiming it from a file that is no delivery of that slice's source."""
    with closing(open_warehouse(home)) as con:
        con.execute(
            f"COPY (SELECT {', '.join(FOCUS_COLUMN_NAMES)} FROM focus.costs WHERE BillingAccountId = $account"
            " AND ChargeCategory = 'Usage' AND strftime(BillingPeriodStart, '%Y-%m') = $month ORDER BY ALL LIMIT 1)"
            f" TO '{path}' (HEADER)",
            {"account": account, "month": month},
        )
    return path


def test_a_focus_file_cannot_replace_another_source_s_slice(demo_copy, capsys, tmp_path):
    claim = _focus_file(demo_copy, tmp_path / "claim-2026-11.csv", CUR2_PAYER, "2026-11")
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", claim, "--home", demo_copy, "--format", "focus")
    assert code == 1
    line = _one_line_error(err)
    assert "slice AWS 012345678901 2026-11 belongs to source 'helios-cur2'" in line and "--source helios-cur2" in line
    assert _loaded(demo_copy) == before


def test_a_configured_focus_source_cannot_take_a_slice_unless_it_supersedes_it(demo_copy, demo_home, tmp_path):
    folder = demo_copy / "exports" / "other-focus" / "2026-11"
    folder.mkdir(parents=True)
    _focus_file(demo_copy, folder / "claim.csv", CUR2_PAYER, "2026-11")
    config = demo_copy / "gpuledger.toml"
    source = '\n[[sources]]\nname = "gpu-cloud"\nformat = "focus"\npath = "exports/other-focus"\n'
    config.write_text(config.read_text() + source)
    before = _published(demo_copy, demo_home)
    refused = _run(demo_copy, "run")
    assert refused.returncode == 1
    assert "belongs to source 'helios-cur2'" in refused.stderr.strip().splitlines()[-1]
    assert _published(demo_copy, demo_home) == before
    # declared, the takeover is the user's decision; one row for a month of charges is held (open_month_change)
    config.write_text(
        config.read_text().replace(
            'path = "exports/other-focus"', 'path = "exports/other-focus"\nsupersedes = ["helios-cur2"]'
        )
    )
    taken = _run(demo_copy, "run")
    assert taken.returncode == EXIT_HELD, taken.stderr
    held = next(line for line in taken.stdout.splitlines() if line.strip().startswith("focus:"))
    assert _run(demo_copy, "accept", held.strip()).returncode == 0
    assert _total(demo_copy, CUR2_PAYER, "2026-11")[0] == 1


# 3. GCP extracts: a record delivered again counts once, an appended correction adds.


def _extract(folder: Path, select: str, files: list[Path]) -> None:
    """A new extract folder holding ``select`` over the records of ``files`` (``r``), written as BigQuery's are."""
    folder.mkdir()
    with duckdb.connect() as con:
        con.execute(
            f"COPY ({select}) TO '{folder / 'part-000.parquet'}' (FORMAT parquet)".replace(
                "{records}", f"read_parquet({[str(f) for f in files]}, hive_partitioning = false) AS r"
            )
        )


def test_repeated_and_re_extracted_gcp_records_count_once_and_corrections_add(demo_copy):
    before = _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11")
    extracts = sorted((demo_copy / GCP_NOVEMBER).glob("*/part-000.parquet"))
    records = pl.read_parquet(extracts, hive_partitioning=False).height
    # a full re-extract of the month: every record so far, in one new folder
    _extract(demo_copy / GCP_NOVEMBER / "export_time=2026-12-11T03:00:00Z", "SELECT * FROM {records}", extracts)
    shutil.copytree(extracts[0].parent, demo_copy / GCP_NOVEMBER / "export_time=2026-12-10T03:00:00Z")  # a repeat
    repeated = _run(demo_copy, "run")
    assert repeated.returncode == 0, repeated.stderr
    assert _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11") == before
    with closing(open_warehouse(demo_copy)) as con:
        counted_once = con.execute(
            "SELECT rows FROM meta.delivery_repairs JOIN meta.slices USING (delivery_id)"
            " WHERE change = 'RepeatedExtractRecord' AND billing_account_id = '01A2B3-C4D5E6-F7A8B9'"
        ).fetchall()
    # the repeated extract and the re-extract: each record counted once, from the oldest extract holding it
    assert counted_once == [(records - 2 + records,)]

    # a genuine correction appended later: a new record (its own export_time), without credits, adds
    correction = (
        "SELECT * REPLACE (TIMESTAMPTZ '2026-12-12 03:00:00+00' AS export_time, -cost AS cost)"
        " FROM (SELECT * FROM {records} WHERE len(credits) = 0 ORDER BY cost DESC LIMIT 1)"
    )
    _extract(demo_copy / GCP_NOVEMBER / "export_time=2026-12-12T03:00:00Z", correction, extracts[:1])
    with duckdb.connect() as con:
        delta = con.execute(
            f"SELECT -max(cost)::DECIMAL(38,10) FROM read_parquet('{extracts[0]}') WHERE len(credits) = 0"
        ).fetchone()[0]
    assert _run(demo_copy, "run").returncode == 0
    rows, billed, effective = _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11")
    assert (rows, billed, effective) == (before[0] + 1, before[1] + delta, before[2] + delta)


def test_gcp_records_appended_again_with_a_new_export_time_count_once(demo_copy):
    """Every November record so far, extracted again with later export times, doubled the month (+148,225.64)."""
    before = _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11")
    extracts = sorted((demo_copy / GCP_NOVEMBER).glob("*/part-000.parquet"))
    restamped = "SELECT * REPLACE (export_time + INTERVAL 30 DAY AS export_time) FROM {records}"
    _extract(demo_copy / GCP_NOVEMBER / "export_time=2026-12-11T03:00:00Z", restamped, extracts)
    rerun = _run(demo_copy, "run")
    assert rerun.returncode == 0, rerun.stderr
    assert _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11") == before


def test_a_gcp_record_twice_in_one_extract_is_held(demo_copy, demo_home):
    """A record listed twice in one extract added its cost again (+0.93): BigQuery rows carry no id to tell. (The
    held delivery's own records are published: it, why it is held, the records it counts once.)"""
    before = _published(demo_copy, demo_home, except_=(*RECORDS_OF_THE_ATTEMPT, "meta.delivery_repairs"))
    newest = sorted((demo_copy / GCP_NOVEMBER).glob("*/part-000.parquet"))[-1]
    _extract(
        demo_copy / GCP_NOVEMBER / "export_time=2026-12-11T03:00:00Z",
        "SELECT * FROM {records} UNION ALL (SELECT * FROM {records} ORDER BY cost LIMIT 1)",
        [newest],
    )
    held = _run(demo_copy, "run")
    assert held.returncode == EXIT_HELD, held.stderr
    twins = next(line for line in held.stdout.splitlines() if "twin_rows" in line)
    assert "01A2B3-C4D5E6-F7A8B9 2026-11: " in twins and "row(s) repeat another row of the delivery" in twins
    assert _published(demo_copy, demo_home, except_=(*RECORDS_OF_THE_ATTEMPT, "meta.delivery_repairs")) == before


# 4. Duplicates within a delivery are refused, naming file and row.


def _list_cur1_file_twice(home: Path) -> None:
    manifest = home / CUR1_NOVEMBER / "helios-legacy-cur-Manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(data | {"reportKeys": data["reportKeys"] * 2}))


def _copy_cur1_file_under_another_name(home: Path) -> None:
    manifest = home / CUR1_NOVEMBER / "helios-legacy-cur-Manifest.json"
    data = json.loads(manifest.read_text())
    part = _cur1_part(home)
    shutil.copy(part, part.with_name("helios-legacy-cur-2.csv.gz"))
    manifest.write_text(
        json.dumps(data | {"reportKeys": [*data["reportKeys"], data["reportKeys"][0].replace("-1.", "-2.")]})
    )


def _duplicate_every_row(home: Path) -> None:
    _rewrite_csv_gz(
        _cur1_part(home), lambda rows: rows.__setitem__(slice(1, None), [r for r in rows[1:] for _ in (1, 2)])
    )


def _copy_one_line_item_many_times(home: Path) -> None:
    _rewrite_csv_gz(_cur1_part(home), lambda rows: rows.extend([rows[5]] * 2000))


def _empty_one_line_item_id(home: Path) -> None:
    def change(rows: list[list[str]]) -> None:
        rows[5][rows[0].index("identity/LineItemId")] = ""
        rows.append(rows[5])

    _rewrite_csv_gz(_cur1_part(home), change)


def _repeat_one_line_item_in_capitals(home: Path) -> None:
    def change(rows: list[list[str]]) -> None:
        column = rows[0].index("identity/LineItemId")
        rows.append([*rows[5][:column], rows[5][column].upper(), *rows[5][column + 1 :]])

    _rewrite_csv_gz(_cur1_part(home), change)


@pytest.mark.parametrize(
    ("change", "message", "row"),
    [
        (_empty_one_line_item_id, "the line item has no id", 5),
        (_repeat_one_line_item_in_capitals, "repeats row 5: a delivery lists each line item once", None),
        (_list_cur1_file_twice, "the delivery lists this file twice", None),
        (_copy_cur1_file_under_another_name, "has the same bytes as", None),
        (_duplicate_every_row, "repeats row 1: a delivery lists each line item once", 2),
        (_copy_one_line_item_many_times, "repeats row 5: a delivery lists each line item once", None),
    ],
)
def test_a_delivery_counting_a_line_item_twice_is_refused(demo_copy, capsys, change, message, row):
    change(demo_copy)
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 1
    line = _one_line_error(err)
    assert message in line
    if row is not None:
        assert f"row {row}, column 'identity/LineItemId'" in line
    assert _loaded(demo_copy) == before


# 5. An older delivery never replaces a newer one.


def _older_azure_november_run(home: Path, tmp_path: Path) -> Path:
    """The Azure exports with only the older of November's two runs left."""
    older = tmp_path / "helios-mca"
    shutil.copytree(home / AZURE, older)
    for export in ("helios-actual-cost", "helios-amortized-cost"):
        runs = sorted(
            (older / export / "20261101-20261130").iterdir(),
            key=lambda run: json.loads((run / "manifest.json").read_text())["runInfo"]["submittedTime"],
        )
        shutil.rmtree(runs[-1])  # only the older run of November is left
        shutil.rmtree(older / export / "20261001-20261031")
    return older


def test_an_older_azure_run_imported_by_hand_is_refused(demo_copy, capsys, tmp_path):
    older = _older_azure_november_run(demo_copy, tmp_path)
    before = _loaded(demo_copy)
    code, _, err = _cli(
        capsys, "import", older, "--home", demo_copy, "--format", "azure-cost-details", "--source", "helios-azure-mca"
    )
    assert code == 1
    assert "is older than the loaded delivery" in _one_line_error(err)
    assert _loaded(demo_copy) == before


def test_an_older_run_whose_check_passed_before_the_newer_one_published_never_takes_the_slice(
    demo_copy, capsys, tmp_path, monkeypatch
):
    """Two loads of one slice at once (workers on a lake): each checked the owner before the other published, and
    the older one publishes last. The newer version stays the owner."""
    older = _older_azure_november_run(demo_copy, tmp_path)
    before = _loaded(demo_copy)
    monkeypatch.setattr("gpuledger.gates.load.refuse_foreign_slices", lambda *args: None)  # its check ran earlier
    code, _, err = _cli(
        capsys, "import", older, "--home", demo_copy, "--format", "azure-cost-details", "--source", "helios-azure-mca"
    )
    assert code == 0, err
    assert _loaded(demo_copy) == before


def test_an_older_gcp_extract_alone_is_refused(demo_copy, capsys, tmp_path):
    table = tmp_path / GCP_TABLE.rsplit("/", 1)[1]
    shutil.copytree(demo_copy / GCP_TABLE, table)
    shutil.rmtree(table / "invoice_month=202610")
    shutil.rmtree(table / "invoice_month=202611" / "export_time=2026-12-09T03:00:00Z")
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", table, "--home", demo_copy, "--source", "helios-gcp-billing")
    assert code == 1
    assert "is older than the loaded delivery" in _one_line_error(err)
    assert _loaded(demo_copy) == before


def test_a_held_delivery_imported_from_outside_the_source_is_published_by_accept(demo_copy, tmp_path):
    """accept said "accepted" and published nothing: a run finds only the configured folders' deliveries. And the
    configured folder's older delivery of the month then failed every nightly run."""
    outside = tmp_path / "helios-legacy-cur"
    shutil.copytree(demo_copy / CUR1, outside)
    manifest = outside / "20261101-20261201" / "helios-legacy-cur-Manifest.json"
    part = outside.joinpath(*json.loads(manifest.read_text())["reportKeys"][0].split("/")[-3:])
    _rewrite_csv_gz(part, _keep_one_line_item("Tax"))
    manifest.touch()  # delivered after the configured folder's
    imported = _run(demo_copy, "import", str(outside), "--source", "helios-legacy-cur")
    assert imported.returncode == EXIT_HELD, imported.stderr
    held = next(line for line in imported.stdout.splitlines() if ": held for review" in line)
    delivery = held.split(": held for review")[0]

    accepted = _run(demo_copy, "accept", delivery)
    assert accepted.returncode == 0, accepted.stderr
    rows, billed, _ = _total(demo_copy, CUR1_PAYER, "2026-11")
    assert rows == 1 and billed > 0  # the tax line alone, as accepted
    status = _run(demo_copy, "status")
    assert status.returncode == 0, status.stdout
    again = _run(demo_copy, "run")  # the configured folder's older delivery is passed over, not refused
    assert again.returncode == 0, again.stderr
    assert _total(demo_copy, CUR1_PAYER, "2026-11")[0] == 1


def test_a_refused_delivery_fails_itself_not_the_night(demo_copy, demo_home):
    """One bad CUR 1 cost stopped every partition after it: the GCP correction beside it waited too."""
    before = _total(demo_copy, CUR1_PAYER, "2026-11")
    gcp_before = _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11")
    original = _cur1_part(demo_copy).read_bytes()

    def bad_cost(rows: list[list[str]]) -> None:
        rows[6][rows[0].index("lineItem/UnblendedCost")] = "n/a"

    _rewrite_csv_gz(_cur1_part(demo_copy), bad_cost)
    extracts = sorted((demo_copy / GCP_NOVEMBER).glob("*/part-000.parquet"))
    correction = (
        "SELECT * REPLACE (TIMESTAMPTZ '2026-12-12 03:00:00+00' AS export_time, -cost AS cost)"
        " FROM (SELECT * FROM {records} WHERE len(credits) = 0 ORDER BY cost DESC LIMIT 1)"
    )
    _extract(demo_copy / GCP_NOVEMBER / "export_time=2026-12-12T03:00:00Z", correction, extracts[:1])
    refused = _run(demo_copy, "run")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1].startswith(f"gpuledger: error: {_cur1_part(demo_copy)}, row 6")
    assert _total(demo_copy, CUR1_PAYER, "2026-11") == before
    assert _total(demo_copy, "01A2B3-C4D5E6-F7A8B9", "2026-11")[0] == gcp_before[0] + 1  # loaded all the same
    with duckdb.connect(str(demo_copy / ANALYST_FILE), read_only=True) as con:  # and published
        assert con.execute("SELECT count(*) FROM focus.costs WHERE x_SourceFormat = 'gcp-bq'").fetchone()[0] == (
            _published_gcp_rows(demo_home) + 1
        )
    status = _run(demo_copy, "status")
    assert status.returncode == 1 and "refused, not loaded: " in status.stdout

    again = _run(demo_copy, "run")  # the same refusal is no new work: skipped, and still standing
    assert again.returncode == 1
    assert "loading aws 2026-11: inputs unchanged" in again.stdout
    _cur1_part(demo_copy).write_bytes(original)
    fixed = _run(demo_copy, "run")
    assert fixed.returncode == 0, fixed.stderr
    assert _run(demo_copy, "status").returncode == 0


def _published_gcp_rows(home: Path) -> int:
    with duckdb.connect(str(home / ANALYST_FILE), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM focus.costs WHERE x_SourceFormat = 'gcp-bq'").fetchone()[0])


# 6. import takes the home's run lock.


def test_import_during_a_run_is_refused_at_once(demo_copy, capsys):
    before = _loaded(demo_copy)
    with exclusive_run(demo_copy):  # a run in progress
        code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 1
    assert "another gpuledger run is in progress" in _one_line_error(err)
    assert _loaded(demo_copy) == before


# 7. import never exits silently on a folder without a complete delivery.


def test_import_of_a_folder_without_a_complete_delivery_says_why(demo_copy, capsys, tmp_path):
    lone = tmp_path / "helios-mca"
    shutil.copytree(demo_copy / AZURE, lone)
    shutil.rmtree(lone / "helios-amortized-cost")
    code, _, err = _cli(capsys, "import", lone, "--home", demo_copy, "--format", "azure-cost-details")
    assert code == 1 and "no complete delivery to import here" in _one_line_error(err)
    assert "no actual or amortized export to pair with" in err

    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = _cli(capsys, "import", empty, "--home", demo_copy)
    assert code == 1 and "no complete delivery to import here" in _one_line_error(err)

    run = next((demo_copy / AZURE / "helios-actual-cost" / "20261101-20261130").iterdir())
    pending = run.with_name("ffffffff-0000-4000-8000-000000000000")
    shutil.copytree(run, pending)
    (pending / "manifest.json").unlink()
    code, out, _ = _cli(capsys, "import", demo_copy / AZURE, "--home", demo_copy, "--format", "azure-cost-details")
    assert code == 0
    assert f"note: {pending}: a run without its manifest (still being written?), not a delivery yet" in out


# 8. A failed run ends in one line naming file, row, column and reason; status says so and exits non-zero.


def test_a_failed_run_prints_one_error_line_and_status_reports_it(demo_copy, demo_home):
    def bad_cost(rows: list[list[str]]) -> None:
        rows[6][rows[0].index("lineItem/UnblendedCost")] = "n/a"

    _rewrite_csv_gz(_cur1_part(demo_copy), bad_cost)
    before = _published(demo_copy, demo_home)
    failed = _run(demo_copy, "run")
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert len(lines) <= 3, failed.stderr
    assert lines[-1] == (
        f"gpuledger: error: {_cur1_part(demo_copy)}, row 6, column 'lineItem/UnblendedCost':"
        " 'n/a' is not a valid DECIMAL(38,10)"
    )
    log = Path(lines[0].rsplit("Dagster's log of the run: ", 1)[1])
    assert 'File "' in log.read_text() and "lineItem/UnblendedCost" in log.read_text()  # the traceback is there
    assert _published(demo_copy, demo_home) == before
    status = _run(demo_copy, "status")
    assert status.returncode == 1
    assert "last run:" in status.stdout and "'n/a' is not a valid DECIMAL(38,10)" in status.stdout


def test_a_disk_full_is_one_line_naming_what_ran_out(demo_copy_cold, demo_home, capsys, monkeypatch):
    # no run history: the run publishes, and so reaches the full disk
    import gpuledger.publish.snapshot as publishing

    def full(path: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(publishing, "_fsync", full)  # the publish's flush before its rename
    before = _published(demo_copy_cold, demo_home)
    code, _, err = _cli(capsys, "run", "--home", demo_copy_cold)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) <= 2 and lines[-1].startswith("gpuledger: error: no space left on the disk"), err
    assert _published(demo_copy_cold, demo_home) == before


# 9. Each refusal names the bad row and the source's own column, with the whole reason.


def _set(row: int, column: str, value: str) -> object:
    def change(rows: list[list[str]]) -> None:
        rows[row][rows[0].index(column)] = value

    return change


def _replace_line(path: Path, index: int, raw: bytes) -> None:
    """Line ``index`` of a gzipped CSV (the header is line 0) replaced by raw bytes, as a broken writer leaves it."""
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    lines[index] = raw + b"\n"
    path.write_bytes(gzip.compress(b"".join(lines)))


@pytest.mark.parametrize(
    ("change", "row", "column", "reason"),
    [
        (_set(101, "lineItem/CurrencyCode", "EUR"), 101, "lineItem/CurrencyCode", "several currencies (EUR, USD)"),
        (_set(7, "lineItem/UnblendedCost", ""), 7, "lineItem/UnblendedCost", "is empty, but FOCUS BilledCost"),
        (_set(9, "bill/PayerAccountId", "999999999999"), 9, "bill/PayerAccountId", "is for account 999999999999"),
        (
            _set(11, "lineItem/UsageStartDate", "2026-11-05T\x1b[31m00:00:00Z"),
            11,
            "lineItem/UsageStartDate",
            "\\x1b[31m",
        ),
    ],
)
def test_refusals_name_the_row_and_the_source_column(demo_copy, capsys, change, row, column, reason):
    _rewrite_csv_gz(_cur1_part(demo_copy), change)
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 1
    line = _one_line_error(err)
    assert f"row {row}" in line and reason in line
    if column:
        assert f"column '{column}'" in line
    assert "\x1b" not in line  # control characters never reach the terminal raw
    assert _loaded(demo_copy) == before


@pytest.mark.parametrize(
    ("row", "breakage", "reason"),
    [
        (12, lambda line: b'a,"unterminated', "unterminated quote"),
        (13, lambda line: b"short,row", "Expected Number of Columns"),
        (40, lambda line: line.replace(b",", b",x\ry,", 1), "a carriage return outside quotes"),
        (30, lambda line: line.rstrip(b"\n") + b"x" * 10_000_000, "Maximum line size"),
    ],
)
def test_a_malformed_csv_row_is_named_with_its_reason(demo_copy, capsys, row, breakage, reason):
    part = _cur1_part(demo_copy)
    line = gzip.decompress(part.read_bytes()).splitlines()[row]
    _replace_line(part, row, breakage(line))
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 1
    error = _one_line_error(err)
    assert f"{part}, row {row}: not a well-formed CSV row: " in error and reason in error and len(error) < 1000
    assert _loaded(demo_copy) == before


@pytest.mark.parametrize(
    ("row", "column", "breakage"),
    [
        (20, "identity/TimeInterval", lambda line: line.replace(b",", b",\xe9", 1)),
        # a tag column: DuckDB's CSV reader failed internally on it and invalidated the warehouse's session
        (200, "resourceTags/user:team", lambda line: line.replace(b",platform,", b",caf\xe9,", 1)),
    ],
)
def test_text_that_is_not_utf8_is_refused_naming_row_and_column(demo_copy, capsys, row, column, breakage):
    part = _cur1_part(demo_copy)
    lines = gzip.decompress(part.read_bytes()).splitlines()
    row = next(n for n in range(row, len(lines)) if breakage(lines[n]) != lines[n])
    _replace_line(part, row, breakage(lines[row]))
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 1
    assert f"{part}, row {row}, column '{column}': is not UTF-8 text: b'" in _one_line_error(err)
    assert _loaded(demo_copy) == before


def test_mixed_currency_in_gcp_json_lines_names_the_record(demo_copy, capsys):
    table = demo_copy / GCP_TABLE.replace("/parquet/", "/jsonl/")
    part = next((table / "invoice_month=202611" / "export_time=2026-12-03T03:00:00Z").glob("*.jsonl.gz"))
    lines = gzip.decompress(part.read_bytes()).decode().splitlines(keepends=True)
    lines[103] = json.dumps(json.loads(lines[103]) | {"currency": "EUR"}) + "\n"
    part.write_bytes(gzip.compress("".join(lines).encode()))
    code, _, err = _cli(capsys, "import", table, "--home", demo_copy, "--source", "helios-gcp-billing")
    assert code == 1
    line = _one_line_error(err)
    assert f"{part}, row 104, column 'currency': 'EUR'" in line


def _rewrite_azure_november(home: Path, change: object) -> list[Path]:
    """November's newest actual and amortized runs changed alike (their manifests' sizes kept true); their files."""
    parts = []
    for export in ("helios-actual-cost", "helios-amortized-cost"):
        folder = home / AZURE / export / "20261101-20261130"
        newest = max(
            folder.iterdir(),
            key=lambda run: json.loads((run / "manifest.json").read_text())["runInfo"]["submittedTime"],
        )
        part = newest / "part_0_0001.csv.gz"
        _rewrite_csv_gz(part, change)
        manifest = json.loads((newest / "manifest.json").read_text())
        manifest["blobs"][0]["byteCount"] = part.stat().st_size
        (newest / "manifest.json").write_text(json.dumps(manifest))
        parts.append(part)
    return parts


def _azure_currency(home: Path) -> tuple[list[object], Path, int | None, str]:
    amortized = _rewrite_azure_november(home, _set(3, "pricingCurrency", "ZZZ"))[-1]
    return [home / AZURE, "--format", "azure-cost-details"], amortized, 3, "pricingCurrency"


def _focus_charge_ending_as_it_starts(home: Path) -> tuple[list[object], Path, int | None, str]:
    file = home / "exports" / "coreweave" / "2026-11" / "coreweave-focus-2026-11.csv"
    rows = list(csv.reader(io.StringIO(file.read_text())))
    rows[5][rows[0].index("ChargePeriodEnd")] = rows[5][rows[0].index("ChargePeriodStart")]
    with file.open("w", newline="") as out:
        csv.writer(out, lineterminator="\n").writerows(rows)
    return [file, "--format", "focus", "--source", "helios-coreweave-focus"], file, 5, "ChargePeriodEnd"


def _cur2_without_line_item_type(home: Path) -> tuple[list[object], Path, int | None, str]:
    part = _cur2_part(home)
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT * EXCLUDE (line_item_line_item_type) FROM read_parquet('{part}'))"
            f" TO '{part.with_name('new.parquet')}' (FORMAT parquet)"
        )
    part.with_name("new.parquet").replace(part)
    return [home / CUR2], part, None, "line_item_line_item_type"


@pytest.mark.parametrize("change", [_azure_currency, _focus_charge_ending_as_it_starts, _cur2_without_line_item_type])
def test_conformance_and_missing_column_refusals_name_file_row_and_the_file_s_own_column(demo_copy, capsys, change):
    """Formats whose rows have no id (Azure, FOCUS: a content hash) name the source row too, not the hash; a CUR 2.0
    file is told of its column as CUR 2.0 spells it."""
    args, file, row, column = change(demo_copy)
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", *args, "--home", demo_copy)
    assert code == 1
    line = _one_line_error(err)
    where = f"{file}, row {row}" if row is not None else str(file)
    assert line.startswith(f"gpuledger: error: {where}, column '{column}': "), line
    assert "line item" not in line
    assert _loaded(demo_copy) == before


def test_a_billing_period_starting_at_no_month_s_midnight_is_refused(demo_copy, capsys):
    """A November row whose period starts 15 hours before November in UTC (midnight in no time zone: UTC+14 is the
    earliest) is no October row: refused."""
    file = demo_copy / "exports" / "coreweave" / "2026-11" / "coreweave-focus-2026-11.csv"
    rows = list(csv.reader(io.StringIO(file.read_text())))
    rows[5][rows[0].index("BillingPeriodStart")] = "2026-10-31T09:00:00Z"
    with file.open("w", newline="") as out:
        csv.writer(out, lineterminator="\n").writerows(rows)
    before = _loaded(demo_copy)
    code, _, err = _cli(
        capsys, "import", file, "--home", demo_copy, "--format", "focus", "--source", "helios-coreweave-focus"
    )
    assert code == 1
    line = _one_line_error(err)
    assert line.startswith(f"gpuledger: error: {file}, row 5, column 'BillingPeriodStart': "), line
    assert "is not midnight of a month's 1st in any time zone" in line
    assert _loaded(demo_copy) == before


def test_a_focus_month_folder_holding_another_month_s_rows_is_refused(demo_copy, demo_home):
    """A month folder names its delivery's month as a manifest does: November's file moved into 2026-12 is refused,
    not taken for the November delivery it was loaded as."""
    coreweave = demo_copy / "exports" / "coreweave"
    moved = coreweave / "2026-12" / "coreweave-focus-2026-11.csv"
    moved.parent.mkdir()
    shutil.move(coreweave / "2026-11" / moved.name, moved)
    before = _published(demo_copy, demo_home)
    refused = _run(demo_copy, "run")
    assert refused.returncode == 1
    line = refused.stderr.strip().splitlines()[-1]
    assert line.startswith(f"gpuledger: error: {moved}, row "), line
    assert "column 'BillingPeriodStart': the row is for account helios-labs, period 2026-11" in line
    assert "but its month folder (or file name) delivers period 2026-12" in line
    assert _published(demo_copy, demo_home) == before


# 10. Lossy money, malformed keys and manifests, and files outside the export are refused; far-off usage is held.


def _cur2_part(home: Path) -> Path:
    manifest = json.loads((home / CUR2_NOVEMBER_MANIFEST).read_text())
    return home / CUR2 / "data" / manifest["dataFiles"][0].split("/data/", 1)[1]


def _rewrite_parquet(path: Path, replace: str) -> None:
    """A Parquet file with some columns replaced (DuckDB SQL over the row's columns and ``rn``, its 0-based row)."""
    rewritten = path.with_name(f"new-{path.name}")
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT * EXCLUDE (rn, file_row_number) REPLACE ({replace}) FROM (SELECT *, file_row_number AS rn"
            f" FROM read_parquet('{path}', file_row_number = true, hive_partitioning = false)) ORDER BY rn)"
            f" TO '{rewritten}' (FORMAT parquet)"
        )
    rewritten.replace(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("CAST(line_item_unblended_cost AS FLOAT) AS line_item_unblended_cost", "32-bit float"),
        ("line_item_unblended_cost + 0.0000000000123 AS line_item_unblended_cost", "is not exact to 10 decimal places"),
        (
            "bill_billing_period_end_date + INTERVAL 1 MONTH AS bill_billing_period_end_date",
            "the billing period is not one month long",
        ),
    ],
)
def test_lossy_money_and_a_two_month_billing_period_are_refused(demo_copy, capsys, change, message):
    _rewrite_parquet(_cur2_part(demo_copy), change)
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR2, "--home", demo_copy)
    assert code == 1 and message in _one_line_error(err)
    assert _loaded(demo_copy) == before


def test_a_cur2_line_item_without_an_id_is_refused(demo_copy, capsys):
    """Two CUR 2.0 line items with a NULL id loaded twice (+63.30): an id is identity, never repaired."""
    _rewrite_parquet(_cur2_part(demo_copy), "CASE WHEN rn >= 3 THEN identity_line_item_id END AS identity_line_item_id")
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR2, "--home", demo_copy)
    assert code == 1
    assert "row 1, column 'identity_line_item_id': the line item has no id" in _one_line_error(err)
    assert _loaded(demo_copy) == before


def test_usage_dated_months_outside_its_billing_period_is_held(demo_copy, capsys):
    later = ", ".join(
        f"CASE WHEN rn < 3 THEN {c} + INTERVAL 3 MONTH ELSE {c} END AS {c}"
        for c in ("line_item_usage_start_date", "line_item_usage_end_date")
    )
    _rewrite_parquet(_cur2_part(demo_copy), later)
    before = _loaded(demo_copy)
    code, out, _ = _cli(capsys, "import", demo_copy / CUR2, "--home", demo_copy)
    assert code == EXIT_HELD
    assert "usage_outside_period AWS 012345678901 2026-11: 3 row(s) charge usage" in out
    assert _loaded(demo_copy) == before


@pytest.mark.parametrize(
    ("cost", "reason"),
    [
        ("0.12345678901", "is not exact to 10 decimal places: money would be lost or invented"),  # DuckDB rounded it
        ("1_329.216", "is not a valid DECIMAL(38,10)"),  # DuckDB read it as 1329.216
    ],
)
def test_csv_money_is_exact_to_10_decimal_places_like_parquet_money_or_refused(demo_copy, capsys, cost, reason):
    part = _cur1_part(demo_copy)
    _rewrite_csv_gz(part, _set(8, "lineItem/UnblendedCost", cost))
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 1
    assert _one_line_error(err).endswith(f"{part}, row 8, column 'lineItem/UnblendedCost': '{cost}' {reason}")
    assert _loaded(demo_copy) == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m | {"billingPeriod": "2026-10"}, "the manifest states billing period '2026-10'"),
        (
            lambda m: (
                m | {"dataFiles": [f.replace("helios-billing-exports", "someone-elses-bucket") for f in m["dataFiles"]]}
            ),
            "from s3://someone-elses-bucket, but its deliveries came from s3://helios-billing-exports",
        ),
    ],
)
def test_a_manifest_naming_another_period_or_bucket_is_refused(demo_copy, capsys, change, message):
    manifest = demo_copy / CUR2_NOVEMBER_MANIFEST
    manifest.write_text(json.dumps(change(json.loads(manifest.read_text())) | {"executionId": "other"}))
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR2, "--home", demo_copy)
    assert code == 1 and message in _one_line_error(err)
    assert _loaded(demo_copy) == before


def test_a_file_linked_from_outside_the_export_folder_is_refused(demo_copy, capsys, tmp_path):
    part = _cur2_part(demo_copy)
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(part, outside)
    part.symlink_to(outside)
    before = _loaded(demo_copy)
    code, _, err = _cli(capsys, "import", demo_copy / CUR2, "--home", demo_copy)
    assert code == 1 and "a link leads outside the export folder" in _one_line_error(err)
    assert _loaded(demo_copy) == before


# 11. Real files' quirks load, repaired and flagged, with exact totals.


def test_a_multi_provider_focus_1_0_export_with_oracle_s_gaps_loads_flagged_and_exact(
    demo_copy, home, capsys, tmp_path, validator_ready
):
    """The demo's FOCUS rows as one FOCUS 1.0 file of three providers, written the way the anonymized FOCUS
    sample data is (1.0 columns, ``NULL`` for empty, naive timestamps): Google's rows become Oracle's, whose
    ContractedCost, ContractedUnitPrice and ChargeClass are NULL."""
    columns_1_0 = [c for c in FOCUS_COLUMN_NAMES if c not in _ADDED_AFTER_1_0]
    with closing(open_warehouse(demo_copy)) as con:
        source = con.execute(
            f"SELECT {', '.join(columns_1_0)} FROM focus.costs WHERE strftime(BillingPeriodStart, '%Y-%m') = '2026-10'"
            " AND ChargeClass IS NULL ORDER BY ALL"
        ).pl()
    oracle = pl.col("ProviderName") == "Google Cloud"
    rows = source.with_columns(
        *(pl.when(oracle).then(None).otherwise(pl.col(c)).alias(c) for c in ("ContractedCost", "ContractedUnitPrice")),
        *(
            pl.when(oracle).then(pl.lit("Oracle")).otherwise(pl.col(c)).alias(c)
            for c in ("ProviderName", "PublisherName", "InvoiceIssuerName")
        ),
    )
    sample = tmp_path / "focus_sample-2026-10.csv"
    rows.write_csv(sample, null_value="NULL", datetime_format="%Y-%m-%d %H:%M:%S")
    code, out, err = _cli(capsys, "import", sample, "--home", home, "--format", "focus")
    assert code == 0, err
    oracle_rows = rows.filter(pl.col("ProviderName") == "Oracle").height
    assert f"MissingContractedCost {oracle_rows:,}" in out
    with closing(open_warehouse(home)) as con:
        loaded = con.execute(
            "SELECT ProviderName, sum(BilledCost), sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        assert validate_warehouse(con, tmp_path) == []
    expected = rows.group_by("ProviderName").agg(pl.col("BilledCost").sum(), pl.col("EffectiveCost").sum())
    assert loaded == sorted(expected.iter_rows())


_ADDED_AFTER_1_0 = {name for names in ADDED_IN.values() for name in names}


def test_an_azure_tags_cell_holding_an_empty_json_string_is_repaired(demo_copy, capsys):
    november = _total(demo_copy, "F7W4-NQLF-SZU-QNK", "2026-11")
    _rewrite_azure_november(demo_copy, _set(3, "tags", '""'))
    code, out, err = _cli(capsys, "import", demo_copy / AZURE, "--home", demo_copy, "--format", "azure-cost-details")
    assert code == 0, err
    with closing(open_warehouse(demo_copy)) as con:
        flagged = con.execute(
            "SELECT Tags, x_SourceValues FROM focus.costs WHERE x_SourceChanges = 'InvalidTags'"
        ).fetchall()
    assert flagged and all(row == (None, '{"tags":"\\"\\""}') for row in flagged)
    assert f"InvalidTags {len(flagged)}" in out
    assert _total(demo_copy, "F7W4-NQLF-SZU-QNK", "2026-11") == november


def test_a_provider_tag_in_gpuledger_s_own_namespace_is_renamed_flagged_and_the_1_3_export_works(
    demo_copy, capsys, tmp_path
):
    """A user tag named gpuledger/team would repeat the key AllocatedTags gives each allocated row's team (FOCUS 1.3
    forbids it): ingestion renames it source:gpuledger/team and says so."""

    def tag(rows: list[list[str]]) -> None:
        rows[0].append("resourceTags/user:gpuledger/team")
        for row in rows[1:]:
            row.append("finance")

    november = _total(demo_copy, CUR1_PAYER, "2026-11")
    _rewrite_csv_gz(_cur1_part(demo_copy), tag)
    ran = _run(demo_copy, "run")
    assert ran.returncode == 0, ran.stderr
    assert _total(demo_copy, CUR1_PAYER, "2026-11") == november
    with closing(open_warehouse(demo_copy)) as con:
        flagged = con.execute(
            "SELECT count(*), count(*) FILTER (Tags ->> '$.\"source:gpuledger/team\"' = 'finance'"
            " AND NOT json_exists(Tags, '$.\"gpuledger/team\"')) FROM focus.costs"
            " WHERE x_SourceChanges = 'ReservedTagKey'"
        ).fetchone()
        counted = con.execute(
            "SELECT rows FROM meta.delivery_repairs JOIN (SELECT DISTINCT delivery_id FROM meta.slices)"
            " USING (delivery_id) WHERE change = 'ReservedTagKey'"
        ).fetchall()
    assert flagged == (november[0], november[0]) and counted == [(november[0],)]
    allocated = tmp_path / "allocated.parquet"
    code, _, err = _cli(
        capsys, "export-focus", "--home", demo_copy, "--focus-version", "1.3", "--allocated", "--out", allocated
    )
    assert code == 0, err
    assert allocated.exists()


def test_cur2_tags_written_as_a_parquet_list_are_repaired(demo_copy, capsys):
    november = _total(demo_copy, CUR2_PAYER, "2026-11")
    part = _cur2_part(demo_copy)
    listed = "list_transform(map_entries(resource_tags), e -> e.key || '=' || e.value)"
    _rewrite_parquet(part, f"CASE WHEN rn < 5 THEN {listed} ELSE [] END AS resource_tags")
    with duckdb.connect() as con:
        tagged = con.execute(f"SELECT count(*) FROM read_parquet('{part}') WHERE len(resource_tags) > 0").fetchone()[0]
    code, out, err = _cli(capsys, "import", demo_copy / CUR2, "--home", demo_copy)
    assert code == 0, err
    assert tagged > 0 and f"InvalidTags {tagged}" in out
    with closing(open_warehouse(demo_copy)) as con:
        flagged = con.execute(
            "SELECT count(*), count(Tags), min(x_SourceValues) FROM focus.costs WHERE x_SourceChanges = 'InvalidTags'"
        ).fetchone()
    assert flagged[:2] == (tagged, 0) and json.loads(flagged[2])["resource_tags"].startswith("[")
    assert _total(demo_copy, CUR2_PAYER, "2026-11") == november


def test_a_nul_character_in_a_tag_value_is_removed_and_flagged(demo_copy, capsys):
    november = _total(demo_copy, CUR1_PAYER, "2026-11")
    teams: list[str] = []

    def nul(rows: list[list[str]]) -> None:
        team = rows[0].index("resourceTags/user:team")
        for row in [r for r in rows[1:] if r[team]][:3]:
            teams.append(row[team])
            row[team] = row[team][:2] + "\x00" + row[team][2:]

    _rewrite_csv_gz(_cur1_part(demo_copy), nul)
    code, out, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 0, err
    with closing(open_warehouse(demo_copy)) as con:
        flagged = con.execute("SELECT Tags FROM focus.costs WHERE x_SourceChanges = 'NulInTags'").fetchall()
        escaped = con.execute("SELECT count(*) FROM focus.costs WHERE contains(Tags, '\\u0000')").fetchone()
    assert sorted(json.loads(tags)["team"] for (tags,) in flagged) == sorted(teams)
    assert escaped == (0,) and f"NulInTags {len(flagged)}" in out
    assert _total(demo_copy, CUR1_PAYER, "2026-11") == november


def test_aws_units_and_a_marketplace_product_under_two_codes_are_normalized(demo_copy, capsys):
    def quirks(rows: list[list[str]]) -> None:
        header = rows[0]
        unit, product, code = (header.index(c) for c in ("pricing/unit", "product/ProductName", "lineItem/ProductCode"))
        rows[1][unit] = "Obj-Month"
        rows[2][product] = rows[3][product] = "Red Hat Enterprise Linux 7"
        rows[2][code], rows[3][code] = "AmazonEC2", "5bctyqvmoe4a8c3f7gbrd8tsk"  # a Marketplace product code

    november = _total(demo_copy, CUR1_PAYER, "2026-11")
    _rewrite_csv_gz(_cur1_part(demo_copy), quirks)
    code, out, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy)
    assert code == 0, err
    assert _total(demo_copy, CUR1_PAYER, "2026-11") == november
    with closing(open_warehouse(demo_copy)) as con:
        unified = con.execute(
            "SELECT count(*), min(x_SourceValues) FROM focus.costs WHERE x_SourceChanges = 'ServiceCategoryUnified'"
        ).fetchone()
        units = con.execute(
            "SELECT DISTINCT PricingUnit FROM focus.costs WHERE x_PricingUnitDescription = 'Obj-Month'"
        ).fetchall()
        categories = con.execute(
            "SELECT DISTINCT ServiceCategory FROM focus.costs WHERE ServiceName = 'Red Hat Enterprise Linux 7'"
        ).fetchall()
    assert units == [("Object-Months",)] and categories == [("Compute",)]
    # the Marketplace code's rows were Other: they take the service's other category, and say so
    assert unified[0] > 0 and f"ServiceCategoryUnified {unified[0]}" in out
    assert json.loads(unified[1]) == {"ServiceCategory": "Other", "ServiceSubcategory": "Other (Other)"}


@pytest.mark.parametrize("how", ["config", "flag"])
def test_strict_ingestion_refuses_what_it_would_repair(demo_copy, capsys, how):
    config = demo_copy / "gpuledger.toml"
    if how == "config":
        config.write_text(config.read_text() + "\n[ingest]\nstrict = true\n")
    _rewrite_csv_gz(_cur1_part(demo_copy), _set(1, "pricing/unit", "Obj Month/Per Object"))
    before = _loaded(demo_copy)
    strict = ["--strict"] if how == "flag" else []
    code, _, err = _cli(capsys, "import", demo_copy / CUR1, "--home", demo_copy, *strict)
    assert code == 1
    line = _one_line_error(err)
    assert "UnmappedUnit" in line and "column 'pricing/unit'" in line and "row 1" in line
    assert _loaded(demo_copy) == before


def test_the_demo_reruns_without_holds_and_its_real_quirks_stay_exact(demo_home):
    """The demo itself (a restated CUR 2.0 month, Azure run twice, a GCP correction appended later) loads without
    a hold or a repair: the contract never gets in the way of clean data."""
    with closing(connect_warehouse(demo_home, read_only=True)) as con:
        assert con.execute("SELECT count(*) FROM meta.delivery_holds").fetchone() == (0,)
        assert con.execute("SELECT DISTINCT state FROM meta.deliveries").fetchall() == [("published",)]
        assert con.execute("SELECT count(*) FROM focus.cost_rows WHERE x_SourceChanges IS NOT NULL").fetchone() == (0,)
    assert os.path.exists(demo_home / "run-status.json")
