"""The gpuledger command line: import, export-focus, errors."""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from contextlib import closing
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path

import duckdb
import pytest

from gpuledger.warehouse.database import SCHEMA_VERSION, WAREHOUSE_FILE, schema_fingerprint
from gpuledger.warehouse.failpoints import FAILPOINT_ENV
from gpuledger.warehouse.home import RUN_LOCK_FILE, connect_warehouse
from pipelines.cli import EXIT_BROKEN_PIPE, main
from tests.fixtures.cur_cases import EXPECTED_BILLED, EXPECTED_EFFECTIVE, PAYER, every_line_item_type, write_cur1_csv
from tests.gpuledger.gates.test_contract import _one_line_error, _published, _run


def test_import_prints_slice_totals_and_export_writes_typed_parquet(home, tmp_path, capsys):
    cur = write_cur1_csv(tmp_path / "downloads" / "cur.csv.gz", every_line_item_type())
    assert main(["import", str(cur), "--home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "loaded" in out and PAYER in out
    assert str(EXPECTED_BILLED.quantize(Decimal("1E-10"))) in out
    assert str(EXPECTED_EFFECTIVE.quantize(Decimal("1E-10"))) in out

    assert main(["import", str(cur.parent), "--home", str(home), "--format", "aws-cur1"]) == 0
    assert "unchanged" in capsys.readouterr().out

    parquet = tmp_path / "focus.parquet"
    assert main(["export-focus", "--home", str(home), "--out", str(parquet), "--month", "2026-11"]) == 0
    types = dict(duckdb.sql(f"DESCRIBE SELECT * FROM '{parquet}'").fetchall()[i][:2] for i in range(3))
    exported = duckdb.sql(
        f"SELECT count(*), sum(BilledCost), sum(EffectiveCost), any_value(BillingAccountId) FROM '{parquet}'"
    ).fetchone()
    assert exported == (19, EXPECTED_BILLED, EXPECTED_EFFECTIVE, PAYER)
    assert types["BilledCost"] == "DECIMAL(38,10)" and types["BillingAccountId"] == "VARCHAR"

    assert main(["export-focus", "--home", str(home), "--out", str(parquet), "--month", "2026-10"]) == 0
    assert duckdb.sql(f"SELECT count(*) FROM '{parquet}'").fetchone() == (0,)


def test_bad_input_exits_1_with_a_one_line_error(home, tmp_path, capsys):
    rows = every_line_item_type()
    rows[1] = rows[1] | {"lineItem/UnblendedCost": "twelve"}
    bad = write_cur1_csv(tmp_path / "bad.csv", rows)
    assert main(["import", str(bad), "--home", str(home)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"gpuledger: error: {bad}, row 2, column 'lineItem/UnblendedCost': 'twelve' is not a valid DECIMAL(38,10)"
    )


def test_unrecognisable_file_asks_for_a_format(home, tmp_path, capsys):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    assert main(["import", str(other), "--home", str(home)]) == 1
    assert "pass --format" in capsys.readouterr().err


GPULEDGER = Path(sys.executable).parent / "gpuledger"
"""The console script of this environment, as `make install` makes it."""


def _printed_commands(output: str) -> list[str]:
    """Every command line the output offers to run: what follows a label's ": " when it starts with a gpuledger or
    python executable."""
    commands = []
    for line in output.splitlines():
        _, colon, rest = line.rpartition(": ")
        words = shlex.split(rest) if colon else []
        if words and (Path(words[0]).name == "gpuledger" or Path(words[0]).name.startswith("python")):
            commands.append(rest)
    return commands


@pytest.mark.slow
def test_every_command_the_demo_prints_runs_as_printed(demo_run):
    home, output = demo_run
    commands = _printed_commands(output)
    subcommands = {shlex.split(c)[1] for c in commands}
    assert {"sql", "status", "-c"} <= subcommands, commands
    for command in commands:
        # pasted into a shell in the folder the demo ran in; an interactive prompt ends at the end of its input
        done = subprocess.run(
            command, shell=True, cwd=Path.cwd(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (command, done.stderr)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        if "cost_by_team_month_category" in command:
            assert "llm-pretrain" in done.stdout, command
    assert str(home) in output


def test_hints_name_the_running_gpuledger_unless_the_shell_finds_it(tmp_path):
    empty = tmp_path / "nothing-here"
    env_without = os.environ | {"PATH": "/usr/bin:/bin"}
    env_with = os.environ | {"PATH": f"{GPULEDGER.parent}:/usr/bin:/bin"}
    for env, program in ((env_without, str(GPULEDGER)), (env_with, "gpuledger")):
        done = subprocess.run(
            [GPULEDGER, "status", "--home", str(empty)], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 1
        hint = done.stderr.strip().rpartition(": ")[2]
        assert hint == f"{program} demo --home nothing-here", done.stderr
        assert shutil.which(shlex.split(hint)[0], path=env["PATH"]) is not None  # the shell finds what it names
    assert not empty.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["report", "--month", "2026-10"],
        ["export-focus", "--out", "x.parquet"],
        ["sql", "--query", "SELECT 1"],
        ["accept", "some-delivery"],
        ["vacuum"],
        ["migrate"],
        ["run"],
        ["sync"],
    ],
)
def test_a_command_on_an_empty_home_names_it_and_creates_nothing(tmp_path, capsys, monkeypatch, command):
    monkeypatch.delenv("GPULEDGER_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "empty"
    assert main([*command, "--home", str(empty)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"gpuledger: error: {empty} (from --home) holds no ") and err.count("\n") == 1
    assert not empty.exists() and not (tmp_path / "x.parquet").exists()


def test_version_and_help_speak_to_users(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpuledger {version('gpuledger')}"
    with pytest.raises(SystemExit):
        main(["--help"])
    overview = capsys.readouterr().out
    assert "contract" not in overview and "FOCUS 1.2" in overview
    for command in (
        *("demo", "run", "import", "accept", "vacuum", "migrate", "sync", "status", "export-focus", "report"),
        *("advise", "sql"),
    ):
        assert f"    {command}" in overview
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert f"Example:\n  gpuledger {command} " in text, command


def test_a_closed_pipe_ends_quietly_with_141(demo_home):
    reader = subprocess.Popen(
        [GPULEDGER, "status", "--home", str(demo_home)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # before it writes: `| head -0`
    assert reader.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert reader.stderr.read() == b""


@pytest.mark.parametrize(
    ("provider", "names"),
    [
        ("aws", ["AWS"]),
        ("AWS", ["AWS"]),
        ("azure", ["Microsoft"]),
        ("microsoft", ["Microsoft"]),
        ("gcp", ["Google Cloud"]),
        ("Google Cloud", ["Google Cloud"]),
        ("focus", ["CoreWeave"]),  # the FOCUS files of other providers
        ("coreweave", ["CoreWeave"]),
    ],
)
def test_export_focus_takes_provider_keys_and_names(demo_home, tmp_path, capsys, provider, names):
    out = tmp_path / "rows.parquet"
    assert main(["export-focus", "--home", str(demo_home), "--out", str(out), "--provider", provider]) == 0
    exported = duckdb.sql(f"SELECT DISTINCT ProviderName, count(*) OVER () FROM '{out}'").fetchall()
    with duckdb.connect(str(demo_home / "analyst.duckdb"), read_only=True) as analyst:
        (stored,) = analyst.execute(
            "SELECT count(*) FROM focus.costs WHERE list_contains($names, ProviderName)", {"names": names}
        ).fetchone()
    assert [name for name, _ in exported] == names and exported[0][1] == stored
    assert capsys.readouterr().out == f"wrote {stored} FOCUS 1.2 rows to {out}\n"


def test_export_focus_refuses_an_unknown_provider_and_format_with_one_line(demo_home, tmp_path, capsys):
    out = tmp_path / "rows.parquet"
    assert main(["export-focus", "--home", str(demo_home), "--out", str(out), "--provider", "oracle"]) == 2
    assert capsys.readouterr().err == (
        "gpuledger: --provider 'oracle' is none of aws, azure, gcp, focus, AWS, Microsoft, Google Cloud, CoreWeave\n"
    )
    text = tmp_path / "rows.txt"
    assert main(["export-focus", "--home", str(demo_home), "--out", str(text)]) == 2
    assert capsys.readouterr().err == f"gpuledger: --out {text}: name a .parquet or a .csv file\n"
    assert not out.exists() and not text.exists()


def test_export_focus_writes_csv_by_the_extension(demo_home, tmp_path):
    out = tmp_path / "rows.csv"
    args = ["export-focus", "--home", str(demo_home), "--out", str(out), "--month", "2026-11", "--provider", "azure"]
    assert main(args) == 0
    with duckdb.connect(str(demo_home / "analyst.duckdb"), read_only=True) as analyst:
        expected = analyst.execute(
            "SELECT count(*), sum(BilledCost) FROM focus.costs"
            " WHERE ProviderName = 'Microsoft' AND BillingPeriodStart >= TIMESTAMPTZ '2026-11-01'"
        ).fetchone()
    assert out.read_text(encoding="utf-8").startswith("AvailabilityZone,BilledCost,")
    written = duckdb.sql(
        f"SELECT count(*), sum(CAST(BilledCost AS DECIMAL(38, 10))) FROM read_csv('{out}', all_varchar = true)"
    ).fetchone()
    assert written == expected


def test_sql_runs_one_query_on_the_analyst_file(demo_home, capsys):
    query = "SELECT team, count(*) AS months FROM showback.team_month WHERE team = 'vision' GROUP BY team"
    assert main(["sql", "--home", str(demo_home), "--query", query]) == 0
    out = capsys.readouterr().out
    assert "vision" in out and "months" in out
    assert main(["sql", "--home", str(demo_home), "--query", "CREATE TABLE x (a INT)"]) == 1
    assert "read-only" in capsys.readouterr().err


def test_sql_without_the_duckdb_cli_opens_python_with_con(demo_home):
    done = subprocess.run(
        [GPULEDGER, "sql", "--home", str(demo_home)],
        input="print(con.sql(\"SELECT count(*) FROM focus.costs WHERE ProviderName = 'AWS'\").fetchone())\n",
        env=os.environ | {"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    with duckdb.connect(str(demo_home / "analyst.duckdb"), read_only=True) as analyst:
        (aws,) = analyst.execute("SELECT count(*) FROM focus.costs WHERE ProviderName = 'AWS'").fetchone()
    assert done.returncode == 0, done.stderr
    assert f"({aws},)" in done.stdout and "opened read-only" in done.stderr


def test_gpu_instances_without_telemetry_are_warned_of_per_month_and_currency(home, tmp_path, capsys):
    cur = write_cur1_csv(tmp_path / "downloads" / "cur.csv.gz", every_line_item_type())
    assert main(["import", str(cur), "--home", str(home)]) == 0
    with closing(connect_warehouse(home, read_only=True)) as con:
        (instance_cost,) = con.execute(
            "SELECT sum(EffectiveCost) FROM focus.costs WHERE ResourceId = 'i-0abc'"
        ).fetchone()
    capsys.readouterr()
    assert main(["status", "--home", str(home)]) == 0
    warnings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: 2026-11 USD: 1 GPU instance billed {instance_cost:,.2f} (EffectiveCost) but no telemetry source is"
        " configured: their cost is idle (no job) until one is ([[telemetry]] in gpuledger.toml)"
    ]
    (home / "gpuledger.toml").write_text(
        '[[telemetry]]\nname = "jobs"\nkind = "files"\ncluster = "c1"\njobs = "jobs.csv"\n', encoding="utf-8"
    )
    assert main(["status", "--home", str(home)]) == 0
    assert "warning:" not in capsys.readouterr().out


def test_the_demo_again_still_says_where_the_reports_are_and_what_it_is_doing(demo_copy, capsys):
    assert main(["demo", "--home", str(demo_copy)]) == 0
    captured = capsys.readouterr()
    assert f"Chargeback 2026-10 version 1 (issued before): reports in {demo_copy}/reports/2026-10/v1/" in captured.out
    assert "warning:" not in captured.out  # the demo configures telemetry
    steps = ("Writing sample exports", "Running the pipeline", "Rendering the chargeback reports of 2026-10")
    assert [captured.out.index(step) for step in steps] == sorted(captured.out.index(step) for step in steps)


def test_sql_opens_the_duckdb_cli_read_only_when_the_shell_finds_one(demo_home, tmp_path):
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    fake = bin_folder / "duckdb"
    fake.write_text('#!/bin/sh\necho "duckdb $*"\n', encoding="utf-8")
    fake.chmod(0o755)
    done = subprocess.run(
        [GPULEDGER, "sql", "--home", str(demo_home)],
        env=os.environ | {"PATH": f"{bin_folder}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, f"duckdb -readonly {demo_home / 'analyst.duckdb'}\n"), done.stderr


def test_a_run_killed_with_sigkill_shows_in_status_as_interrupted_and_the_next_run_takes_over(demo_copy):
    (demo_copy / ".analyst-0123abcd.duckdb").write_bytes(b"")  # a publish's leftover: the run publishes again
    env = {**os.environ, FAILPOINT_ENV: "publish:before-swap"}  # SIGKILL there, as kill -9 would
    command = [sys.executable, "-m", "pipelines.cli", "run", "--home", str(demo_copy)]
    killed = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, stderr = killed.communicate(timeout=600)
    assert killed.returncode == -signal.SIGKILL, stderr
    lock = (demo_copy / RUN_LOCK_FILE).read_text(encoding="utf-8")
    holder = re.fullmatch(rf"pid {killed.pid}, started (\S+), gpuledger {re.escape(version('gpuledger'))}", lock)
    assert holder is not None
    status = _run(demo_copy, "status")
    assert status.returncode == 1
    assert f"last run: started {holder[1]} (pid {killed.pid}): interrupted" in status.stdout
    assert _run(demo_copy, "run").returncode == 0  # the dead holder's lock is taken over
    status = _run(demo_copy, "status")
    assert status.returncode == 0 and re.search(r"last run: \S+: ok", status.stdout), status.stdout
    assert (demo_copy / RUN_LOCK_FILE).read_text(encoding="utf-8") == ""  # ended: names no holder


def _set_writable(tree: Path, *, writable: bool) -> None:
    """``chmod -R a-w`` (or ``u+w`` again) on ``tree``; symbolic links have no modes of their own."""
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            os.chmod(path, mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _as_a_user_bound_by_file_modes() -> None:
    """In the child before it runs gpuledger: root loses the capabilities that ignore file modes (a container
    without CAP_DAC_OVERRIDE), so a read-only home is read-only to it, as to any other user."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER; gone once it execs
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_a_read_only_home_is_one_line_naming_what_cannot_be_written(demo_copy, demo_home):
    before = _published(demo_copy, demo_home)
    _set_writable(demo_copy, writable=False)
    try:
        for command in (["run"], ["report", "--month", "2026-10"], ["status"]):
            done = subprocess.run(
                [sys.executable, "-m", "pipelines.cli", *command, "--home", str(demo_copy)],
                preexec_fn=_as_a_user_bound_by_file_modes,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if command == ["status"]:  # reading needs no write
                assert done.returncode == 0, done.stderr
                continue
            assert (done.returncode, _one_line_error(done.stderr)) == (
                1,
                f"gpuledger: error: {demo_copy / RUN_LOCK_FILE}: Permission denied: gpuledger writes in its home"
                f" {demo_copy}: make it writable for the user running gpuledger, or choose another home with --home",
            ), command
    finally:
        _set_writable(demo_copy, writable=True)
    assert _published(demo_copy, demo_home) == before


def test_a_warehouse_a_newer_gpuledger_migrated_is_refused_in_one_line_and_left_as_it_is(demo_copy, demo_home):
    warehouse = demo_copy / WAREHOUSE_FILE
    with closing(duckdb.connect(str(warehouse))) as con:  # what a newer gpuledger's migration leaves
        con.execute("ALTER TABLE meta.schema_version ADD COLUMN IF NOT EXISTS version INTEGER")
        con.execute("UPDATE meta.schema_version SET fingerprint = 'newer', version = $v", {"v": SCHEMA_VERSION + 1})
        recorded = con.execute("SELECT * FROM meta.schema_version").fetchall()
    before = _published(demo_copy, demo_home)
    for command in (["run"], ["report", "--month", "2026-10"], ["migrate"]):
        done = _run(demo_copy, *command)
        assert (done.returncode, _one_line_error(done.stderr)) == (
            1,
            f"gpuledger: error: {warehouse}: this warehouse was written by a newer gpuledger (schema"
            f" {SCHEMA_VERSION + 1}; this gpuledger {version('gpuledger')} knows schema {SCHEMA_VERSION} and older);"
            " upgrade gpuledger",
        ), command
    with closing(duckdb.connect(str(warehouse), read_only=True)) as con:
        assert con.execute("SELECT * FROM meta.schema_version").fetchall() == recorded  # never migrated back
    assert _published(demo_copy, demo_home) == before


def test_migrate_brings_an_older_warehouse_to_this_schema_once(home, tmp_path, capsys):
    cur = write_cur1_csv(tmp_path / "downloads" / "cur.csv.gz", every_line_item_type())
    assert main(["import", str(cur), "--home", str(home)]) == 0
    capsys.readouterr()
    warehouse = home / "warehouse.duckdb"
    assert main(["migrate", "--home", str(home)]) == 0
    assert capsys.readouterr().out == f"{warehouse}: already at schema {schema_fingerprint()[:12]}\n"
    # a warehouse of an older version: its slice owners still in a table, no schema fingerprint
    with closing(duckdb.connect(str(warehouse))) as con:
        owner = con.execute("SELECT * FROM meta.slice_owners").fetchall()
        con.execute("DROP VIEW meta.slices")
        con.execute("CREATE TABLE meta.slices AS SELECT * EXCLUDE (source_name) FROM meta.slice_owners")
        con.execute("DELETE FROM meta.slice_owners")
        con.execute("DROP TABLE meta.schema_version")
    assert main(["migrate", "--home", str(home)]) == 0
    assert capsys.readouterr().out == f"{warehouse}: migrated to schema {schema_fingerprint()[:12]}\n"
    with closing(duckdb.connect(str(warehouse), read_only=True)) as con:
        owners = con.execute("SELECT * FROM meta.slice_owners").fetchall()
        billed = con.execute("SELECT sum(BilledCost) FROM focus.costs").fetchone()
    assert len(owner) == 1 and owners == owner and billed == (EXPECTED_BILLED,)
