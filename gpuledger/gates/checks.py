"""FOCUS conformance checks: each returns offending rows (column_name, problem, x_SourceFile, x_SourceLineItemId).

Two kinds, both run over the temp view ``focus_rows`` (one delivery's rows, or the whole table):
the spec-derived checks built from ``models.focus`` (conditional nullability, placeholder strings),
and the hand-written cross-column checks in ``sql/gates/checks/*.sql``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from gpuledger.warehouse.sqlfiles import load_sql, sql_files
from models.focus import FOCUS_COLUMNS, ORIGIN_LINE_ITEM_SQL, FocusType

# One delivery's rows (published or staged), or everything readers see.
_DELIVERY_SCOPE = """
CREATE OR REPLACE TEMP VIEW focus_rows AS
SELECT * FROM focus.cost_rows WHERE x_DeliveryId = getvariable('gpuledger_checked_delivery')
"""
_PUBLISHED_SCOPE = "CREATE OR REPLACE TEMP VIEW focus_rows AS SELECT * FROM focus.costs"


@dataclass(frozen=True)
class Violation:
    check: str
    column_name: str
    problem: str
    source_file: str | None
    line_item_id: str | None


@dataclass(frozen=True)
class CheckResult:
    check: str
    violations: int
    """Offending FOCUS rows."""
    sample: tuple[Violation, ...]
    """Up to five offending rows, to name in errors."""
    source_rows: int = 0
    """Source line items the offending rows come from (a derived row shares its origin's)."""

    @property
    def passed(self) -> bool:
        return self.violations == 0


def nullability_sql() -> str:
    """One scan that names, per row, every column breaking its nullability rule or holding a placeholder."""
    tests: list[tuple[str, str]] = []
    for column in FOCUS_COLUMNS:
        if rule := column.null_violation_sql:
            tests.append((column.name, rule))
        if column.type in (FocusType.STRING, FocusType.JSON):
            # Blank, padded or a NULL spelled out; IN and prefix tests keep this one scan cheap.
            tests.append(
                (
                    column.name,
                    f"{column.name} IN ('', 'NULL', 'null', 'Null')"
                    f" OR starts_with({column.name}, ' ') OR ends_with({column.name}, ' ')",
                )
            )
    problems = ", ".join(f"CASE WHEN ({rule}) THEN '{name}' END" for name, rule in tests)
    any_problem = " OR ".join(f"({rule})" for _, rule in tests)
    # generated from the FOCUS column specs in models/focus.py: names and rules are the project's, never input
    return (
        "SELECT column_name, 'breaks the FOCUS 1.2 nullability rule or holds a placeholder string' AS problem,"  # noqa: S608
        " x_SourceFile, x_SourceLineItemId FROM ("
        f" SELECT unnest(list_filter([{problems}], c -> c IS NOT NULL)) AS column_name, x_SourceFile,"
        f" x_SourceLineItemId FROM focus_rows WHERE {any_problem})"
    )


def all_checks() -> dict[str, str]:
    """Check name -> SQL returning offending rows."""
    checks = {"focus_nullability": nullability_sql()}
    checks.update({path.stem: load_sql(f"gates/checks/{path.name}") for path in sql_files("gates/checks")})
    return checks


def run_checks(con: duckdb.DuckDBPyConnection, delivery_id: str | None = None) -> list[CheckResult]:
    """Run every check over one delivery's rows (or all published rows when ``delivery_id`` is None)."""
    con.execute("SET VARIABLE gpuledger_checked_delivery = $id", {"id": delivery_id})
    con.execute(_PUBLISHED_SCOPE if delivery_id is None else _DELIVERY_SCOPE)
    return [run_check(con, name, sql) for name, sql in all_checks().items()]


def run_check(con: duckdb.DuckDBPyConnection, name: str, sql: str) -> CheckResult:
    # ``sql`` is a check of the project's (a file of sql/gates/checks, or generated from models/focus.py)
    count_row = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()  # noqa: S608
    count = int(count_row[0]) if count_row else 0
    if not count:
        return CheckResult(name, 0, ())
    rows = con.execute(f"SELECT * FROM ({sql}) ORDER BY ALL LIMIT 5").fetchall()  # noqa: S608
    sample = tuple(Violation(name, str(r[0]), str(r[1]), r[2], r[3]) for r in rows)
    origins = con.execute(
        f"SELECT count(DISTINCT (x_SourceFile, {ORIGIN_LINE_ITEM_SQL})) FROM ({sql})"  # noqa: S608
    ).fetchone()
    return CheckResult(name, count, sample, int(origins[0]) if origins else count)
