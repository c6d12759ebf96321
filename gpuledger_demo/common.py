"""Helpers every sample generator shares: seeded identifiers, SQL literals for fast inserts, the billing month
of a sample delivery, and the in-memory DuckDB they write with."""

from __future__ import annotations

import base64
import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import duckdb

from models.billing_month import BillingMonth


@dataclass(frozen=True)
class Period:
    label: str
    """``YYYY-MM``."""

    @property
    def start(self) -> datetime:
        return BillingMonth.parse(self.label).start

    @property
    def end(self) -> datetime:
        return BillingMonth.parse(self.label).end

    @property
    def hours(self) -> int:
        return int((self.end - self.start).total_seconds()) // 3600

    @property
    def cur1_range(self) -> str:
        return f"{self.start:%Y%m%d}-{self.end:%Y%m%d}"


def digest(seed: int, *parts: object) -> bytes:
    return hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()


def seeded_uuid(seed: int, *parts: object) -> str:
    return str(uuid.UUID(bytes=digest(seed, *parts)[:16], version=4))


def seeded_code(seed: int, *parts: object, length: int = 16) -> str:
    """AWS-style uppercase code (SKU, offer term) drawn from the seed."""
    return base64.b32encode(digest(seed, *parts)).decode()[:length]


def seeded_number(seed: int, *parts: object, digits: int = 10) -> str:
    return str(int.from_bytes(digest(seed, *parts)[:8], "big") % 10**digits).zfill(digits)


def quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, Decimal):
        return quote(format(value, "f"))
    return quote(value.isoformat() if isinstance(value, datetime) else str(value))


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence[object]]) -> None:
    """Insert Python rows as SQL literals (the column types cast them).

    DuckDB's parameter binding tries to import pandas once per value, which costs seconds here.
    """
    if rows:
        values = ",\n".join("(" + ", ".join(map(literal, row)) + ")" for row in rows)
        con.execute(f"INSERT INTO {table} VALUES {values}")  # noqa: S608  (values through literal(), the table ours)


def connect() -> duckdb.DuckDBPyConnection:
    # COPY without order-preserving buffers keeps memory flat (the demo sorts its rows with ORDER BY itself)
    con = duckdb.connect(config={"preserve_insertion_order": False, "memory_limit": "1GB"})
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # long benchmark COPYs would draw a bar on stdout
    return con
