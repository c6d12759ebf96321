"""The DuckLake backend on one machine (a DuckDB-file catalog, data files in a folder): the same loads as the file
warehouse, the extensions from their pinned packages (tests/end_to_end/test_lake.py: Postgres, S3, workers)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates.load import load_delivery
from gpuledger.warehouse import lake
from gpuledger.warehouse.home import connect_warehouse, open_warehouse, warehouse_location
from gpuledger.warehouse.lake import is_lake, load_extension, required_extensions
from models.config import CONFIG_FILE, WarehouseConfig
from models.delivery import Delivery
from tests.conftest import focus_rows_below
from tests.fixtures.focus_cases import write_csv
from tests.gpuledger.normalize.test_focus_passthrough import coreweave_rows


def local_lake(home: Path) -> Path:
    """``home`` configured with a DuckLake of its own: catalog file and data folder inside it."""
    home.mkdir(parents=True, exist_ok=True)
    (home / CONFIG_FILE).write_text(
        '[warehouse]\ncatalog = "ducklake:lake/catalog.ducklake"\ndata_path = "lake/data"\n', encoding="utf-8"
    )
    return home


@pytest.mark.slow
def test_a_delivery_loads_into_a_lake_as_into_the_file_warehouse(tmp_path):
    export = write_csv(tmp_path / "exports" / "coreweave.csv", coreweave_rows())
    loaded = {}
    for home in (tmp_path / "file", local_lake(tmp_path / "lake")):
        with closing(open_warehouse(home)) as con:
            load_delivery(con, Delivery("focus", (export,)))
            loaded[home.name] = (is_lake(con), focus_rows_below(con, tmp_path / "exports"))
    assert loaded["lake"][0] and not loaded["file"][0]
    assert loaded["lake"][1] == loaded["file"][1]
    assert list((tmp_path / "lake" / "lake" / "data").rglob("*.parquet"))  # the rows are Parquet files
    assert not (tmp_path / "lake" / "warehouse.duckdb").exists()
    assert warehouse_location(tmp_path / "lake").startswith(f"ducklake:{tmp_path}/lake/lake/catalog.ducklake")


def test_a_read_only_lake_session_refuses_writes(tmp_path):
    home = local_lake(tmp_path / "lake")
    open_warehouse(home).close()
    with closing(connect_warehouse(home, read_only=True)) as con:
        assert con.execute("SELECT count(*) FROM focus.costs").fetchone() == (0,)
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("DELETE FROM meta.slice_owners")


def test_the_lake_extensions_load_from_their_pinned_packages():
    lake = WarehouseConfig(catalog="ducklake:postgres:dbname=x", data_path="s3://bucket/lake/")
    assert required_extensions(lake) == ["ducklake", "postgres_scanner", "httpfs", "aws"]
    with closing(duckdb.connect(config={"autoinstall_known_extensions": "false"})) as con:
        for name in required_extensions(lake):
            load_extension(con, name)  # no network here: only the packages can provide them
        loaded = con.execute(
            "SELECT extension_name FROM duckdb_extensions() WHERE loaded AND extension_name IN"
            " ('ducklake', 'postgres_scanner', 'httpfs', 'aws') ORDER BY 1"
        ).fetchall()
    assert loaded == [("aws",), ("ducklake",), ("httpfs",), ("postgres_scanner",)]


def test_an_extension_file_is_checked_once_per_process_and_again_when_it_changed(tmp_path, monkeypatch):
    home = local_lake(tmp_path / "lake")
    packaged = lake._packaged_extension("ducklake")
    assert packaged is not None
    monkeypatch.setattr(lake, "_SIGNATURE_CHECKED", {})
    settings = "SELECT current_setting('allow_unsigned_extensions'), current_setting('autoload_known_extensions')"
    with closing(connect_warehouse(home)) as first:
        assert first.execute(settings).fetchone() == (False, False)  # DuckDB checks the file's signature
    with closing(connect_warehouse(home)) as second:
        assert second.execute(settings).fetchone() == (True, False)  # the file it checked, and nothing else
    lake._SIGNATURE_CHECKED[packaged] = (0, 0, 0, 0)  # the file changed since (another inode, size or time)
    with closing(connect_warehouse(home)) as third:
        assert third.execute(settings).fetchone() == (False, False)
    tampered = tmp_path / "ducklake.duckdb_extension"  # a file changed after it was hashed: DuckDB refuses it
    tampered.write_bytes(packaged.read_bytes()[:-1] + b"\0")
    monkeypatch.setattr(lake, "_packaged_extension", lambda name: tampered if name == "ducklake" else None)
    with pytest.raises(duckdb.Error, match="signature"):
        connect_warehouse(home)


def test_a_home_with_a_local_lake_can_be_moved(tmp_path):
    export = write_csv(tmp_path / "exports" / "coreweave.csv", coreweave_rows())
    with closing(open_warehouse(local_lake(tmp_path / "before"))) as con:
        load_delivery(con, Delivery("focus", (export,)))
        rows = focus_rows_below(con, tmp_path / "exports")
    (tmp_path / "before").rename(tmp_path / "after")
    with closing(connect_warehouse(tmp_path / "after", read_only=True)) as con:
        assert focus_rows_below(con, tmp_path / "exports") == rows
