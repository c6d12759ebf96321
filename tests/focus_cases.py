"""Hand-built FOCUS export files: rows as text, written as CSV or typed Parquet, and FOCUS versions told apart."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path

import duckdb

from gpuledger.normalize.focus_passthrough import ADDED_IN
from models.focus import FOCUS_COLUMNS, FocusType

Row = dict[str, str | None]

# Columns a FOCUS export of each version cannot have (1.1 and 1.2 only added columns).
NEWER_THAN = {
    "1.0": ADDED_IN["1.1"] + ADDED_IN["1.2"],
    "1.1": ADDED_IN["1.2"],
    "1.2": (),
}


def as_version(rows: Iterable[Row], version: str) -> list[Row]:
    """The same rows as a FOCUS ``version`` export writes them."""
    return [{k: v for k, v in row.items() if k not in NEWER_THAN[version]} for row in rows]


def columns_of(rows: Sequence[Row]) -> list[str]:
    """Every column of the rows, in first-seen order."""
    return list(dict.fromkeys(name for row in rows for name in row))


def write_csv(path: Path, rows: Sequence[Row], *, bom: bool = False, null: str = "") -> Path:
    """CSV as exports write it: None becomes ``null`` ('' unless told), optional UTF-8 byte order mark, CRLF."""
    header = columns_of(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8-sig" if bom else "utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(header)
        writer.writerows([null if row.get(name) is None else row[name] for name in header] for row in rows)
    return path


def parquet_type(name: str, *, naive: bool = False) -> str:
    """The Parquet type an export gives a column: costs as DOUBLE, times with (or without) a zone, the rest text."""
    column = next((c for c in FOCUS_COLUMNS if c.name == name), None)
    if column is None or column.type in (FocusType.STRING, FocusType.JSON):
        return "VARCHAR"
    if column.type is FocusType.DATETIME:
        return "TIMESTAMP" if naive else "TIMESTAMPTZ"
    return "DOUBLE"


def write_parquet(path: Path, rows: Sequence[Row], *, naive: bool = False) -> Path:
    """Parquet with typed columns (see :func:`parquet_type`), written by DuckDB in UTC."""
    header = columns_of(rows)
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("CREATE TABLE rows (" + ", ".join(f'"{name}" VARCHAR' for name in header) + ")")
        placeholders = ", ".join("?" for _ in header)
        con.executemany(f"INSERT INTO rows VALUES ({placeholders})", [[r.get(n) for n in header] for r in rows])
        casts = ", ".join(f'CAST("{name}" AS {parquet_type(name, naive=naive)}) AS "{name}"' for name in header)
        con.execute(f"COPY (SELECT {casts} FROM rows) TO '{path}' (FORMAT parquet)")
    finally:
        con.close()
    return path


def total(rows: Iterable[Row], column: str) -> Decimal:
    """Exact sum of a cost column of hand-built rows."""
    return sum((Decimal(row[column] or "0") for row in rows), Decimal(0))
