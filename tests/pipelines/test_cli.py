"""The gpuledger command line: import, export-focus, errors."""

from __future__ import annotations

from decimal import Decimal

import duckdb

from pipelines.cli import main
from tests.fixtures.cur_cases import EXPECTED_BILLED, EXPECTED_EFFECTIVE, PAYER, every_line_item_type, write_cur1_csv


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
