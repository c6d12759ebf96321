"""Reading a delivery's files: columns matched by name, never by position; every file has every column."""

from __future__ import annotations

import random
from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from gpuledger.normalize.files import decimal_from_text, first_bad_row, read_error, read_raw
from gpuledger.warehouse.database import connect
from models.errors import InputError


def _csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _parquet(con: duckdb.DuckDBPyConnection, path: Path, select: str) -> Path:
    con.execute(f"COPY ({select}) TO '{path}' (FORMAT parquet)")
    return path


def _rows(raw: duckdb.DuckDBPyRelation) -> list[tuple[object, ...]]:
    return raw.project("cost, day, account, parse_filename(filename)").order("ALL").fetchall()


def test_csv_files_with_reordered_columns_are_matched_by_name(tmp_path):
    first = _csv(tmp_path / "a.csv", "cost,day,account\n1.5,2026-01-01,111\n")
    second = _csv(tmp_path / "b.csv", "account,cost,day\n222,2.5,2026-01-02\n")
    with duckdb.connect() as con:
        raw = read_raw(con, [first, second])
        assert [str(t) for t in raw.types] == ["VARCHAR"] * 4
        assert _rows(raw) == [("1.5", "2026-01-01", "111", "a.csv"), ("2.5", "2026-01-02", "222", "b.csv")]


def test_header_spelling_may_differ_in_case_and_byte_order_mark(tmp_path):
    first = tmp_path / "a.csv"
    first.write_bytes("\ufeffCost,Day,Account\n1.5,2026-01-01,111\n".encode())
    second = _csv(tmp_path / "b.csv", "account,day,cost\n222,2026-01-02,2.5\n")
    with duckdb.connect() as con:
        raw = read_raw(con, [first, second])
        assert raw.columns == ["Cost", "Day", "Account", "filename"]
        assert _rows(raw) == [("1.5", "2026-01-01", "111", "a.csv"), ("2.5", "2026-01-02", "222", "b.csv")]


@pytest.mark.parametrize("order", ["lacking second", "lacking first"])
def test_a_csv_file_lacking_a_column_of_the_delivery_is_named(tmp_path, order):
    full = _csv(tmp_path / "full.csv", "cost,day,account\n1.5,2026-01-01,111\n")
    short = _csv(tmp_path / "short.csv", "day,cost\n2026-01-02,2.5\n")
    files = [full, short] if order == "lacking second" else [short, full]
    with duckdb.connect() as con, pytest.raises(InputError, match=r"column missing, but full\.csv") as caught:
        read_raw(con, files)
    assert (caught.value.file, caught.value.column) == (str(short), "account")


def test_a_file_with_an_extra_column_names_the_files_lacking_it(tmp_path):
    first = _csv(tmp_path / "a.csv", "cost,day\n1.5,2026-01-01\n")
    wider = _csv(tmp_path / "b.csv", "cost,day,tags\n2.5,2026-01-02,x\n")
    with duckdb.connect() as con, pytest.raises(InputError, match=r"b\.csv of the same delivery has it") as caught:
        read_raw(con, [first, wider])
    assert (caught.value.file, caught.value.column) == (str(first), "tags")


def test_a_parquet_file_lacking_a_column_is_named_too(tmp_path):
    with duckdb.connect() as con:
        full = _parquet(con, tmp_path / "full.parquet", "SELECT 1.5 AS cost, 'x' AS account")
        short = _parquet(con, tmp_path / "short.parquet", "SELECT 2.5 AS cost")
        with pytest.raises(InputError, match="column missing") as caught:
            read_raw(con, [full, short])
        assert (caught.value.file, caught.value.column) == (str(short), "account")
        reordered = _parquet(con, tmp_path / "reordered.parquet", "SELECT 'y' AS account, 2.5 AS cost")
        assert read_raw(con, [full, reordered]).project("account, cost").order("ALL").fetchall() == [
            ("x", 1.5),
            ("y", 2.5),
        ]


def test_text_that_is_not_utf8_is_named_and_the_session_survives_duckdb_failing_on_it(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"cost,day,account,tag\n1.5,2026-01-01,111,ok\n2.5,2026-01-02,111,caf\xe9\n")
    with closing(connect(tmp_path / "warehouse.duckdb")) as con:
        raw = read_raw(con, [bad])
        # a query reading fewer columns than the bad one's position: DuckDB's CSV reader fails internally
        with pytest.raises(duckdb.InternalException) as failed:
            raw.project("tag").fetchall()
        assert con.execute("SELECT 42").fetchone() == (42,)  # the database was not invalidated
    error = read_error([bad], failed.value)
    assert error is not None
    assert (error.row, error.column, error.reason) == (2, "tag", "is not UTF-8 text: b'caf\\xe9'")


def test_line_breaks_load_quoted_and_are_refused_naming_the_row_unquoted(tmp_path):
    rows = b'cost,tag\r\n1,"a\rb"\r\n2,"c\nd"\r\n3,"e\r\nf"\r\n'
    quoted = tmp_path / "quoted.csv"
    quoted.write_bytes(rows)
    bare = tmp_path / "bare.csv"
    bare.write_bytes(rows + b"4,g\rh\r\n")
    with duckdb.connect() as con:
        assert read_raw(con, [quoted]).project("tag").fetchall() == [("a\rb",), ("c\nd",), ("e\r\nf",)]
        with pytest.raises(duckdb.Error) as failed:
            read_raw(con, [bare]).project("tag").fetchall()
    error = read_error([bare], failed.value)
    assert error is not None and error.row == 4 and "a carriage return outside quotes" in error.reason


def test_bad_values_of_reordered_files_are_found_by_name(tmp_path):
    first = _csv(tmp_path / "a.csv", "cost,day\n1.5,2026-01-01\n")
    second = _csv(tmp_path / "b.csv", "day,cost\n2026-01-02,2.5\n2026-01-03,abc\n")
    with duckdb.connect() as con:
        read_raw(con, [first, second])
        assert first_bad_row(con, second, "cost", "TRY_CAST(v AS DECIMAL(10, 2)) IS NULL") == (2, "abc")


COMMA_DECIMAL = "'1,5'"


@pytest.mark.slow
def test_decimal_from_text_rounds_every_spelling_as_the_wide_cast_does():
    generator = random.Random(20)
    texts = [
        generator.choice(["", "-", "+"])
        + "".join(generator.choices("0123456789", k=generator.randint(1, 18)))
        + (
            "." + "".join(generator.choices("0123456789", k=generator.randint(0, 14)))
            if generator.random() < 0.8
            else ""
        )
        for _ in range(20_000)
    ]
    edges = ["0.", "5.", "-0.00000000005", "99999999.99999999995", "-999999999999999999.99999999995", "1e3", "-2.5E-3"]
    edges += ["1234567890123456789.5", ".5", "-.5"]  # more than 18 digits, no digit before the point: the wide cast
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t AS SELECT unnest($texts::VARCHAR[]) AS v", {"texts": texts + edges})
        differing = con.execute(
            f"SELECT v FROM t WHERE {decimal_from_text('v')} IS DISTINCT FROM CAST(v AS DECIMAL(38,10))"
        ).fetchall()
        assert differing == []
        assert con.execute(f"SELECT {decimal_from_text(COMMA_DECIMAL, strict=False)}").fetchone() == (None,)
        with pytest.raises(duckdb.ConversionException):
            con.execute(f"SELECT {decimal_from_text(COMMA_DECIMAL)}")
