"""The warehouse schema is migrated once per schema fingerprint, not on every open."""

from __future__ import annotations

from pathlib import Path

from gpuledger.warehouse import database
from gpuledger.warehouse.database import connect, ensure_schema, schema_fingerprint
from models import currencies


def _iso_codes(path: Path) -> int:
    con = connect(path)
    ensure_schema(con)
    count = con.execute("SELECT count(*) FROM ref.iso_4217").fetchone()[0]
    con.close()
    return count


def test_an_unchanged_schema_is_not_rebuilt_and_a_changed_one_is(tmp_path, monkeypatch):
    path = tmp_path / database.WAREHOUSE_FILE
    codes = _iso_codes(path)
    with connect(path) as con:  # a marker a rebuild of the reference tables would drop
        con.execute("INSERT INTO ref.iso_4217 VALUES ('ZZZ')")
        assert con.execute("SELECT fingerprint FROM meta.schema_version").fetchall() == [(schema_fingerprint(),)]
    assert _iso_codes(path) == codes + 1

    monkeypatch.setattr(database, "ISO_4217_CODES", currencies.ISO_4217_CODES - {"USD"})
    assert _iso_codes(path) == codes - 1


def test_a_migration_drops_the_views_readers_once_stored(tmp_path):
    path = tmp_path / database.WAREHOUSE_FILE
    with connect(path) as con:  # a warehouse an earlier version migrated, its reader's view left in it
        ensure_schema(con)
        con.execute("CREATE VIEW main.samples_raw AS SELECT 1 AS node")
        con.execute("UPDATE meta.schema_version SET fingerprint = 'an earlier schema'")
    with connect(path) as con:
        assert ensure_schema(con)
        assert (
            con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'").fetchall()
            == []
        )
