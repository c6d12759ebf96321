"""FOCUS conformance checks: each returns offending rows (column_name, problem, x_SourceFile, x_SourceLineItemId).

Two kinds, both run over the temp view ``focus_rows`` (one delivery's rows, or the whole table):
the spec-derived checks built from ``models.focus`` (conditional nullability, placeholder strings),
and the hand-written cross-column checks in ``sql/gates/checks/*.sql``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from gpuledger.warehouse.sqlfiles import load_sql, quote_ident, quote_literal, sql_files
from models.focus import FOCUS_COLUMNS, FOCUS_VERSION, ORIGIN_LINE_ITEM_SQL, FocusColumn, FocusType
from models.focus_1_3 import CONTRACT_COMMITMENT_1_3, COST_AND_USAGE_1_3, FOCUS_1_3_VERSION

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


def nullability_sql(
    columns: tuple[FocusColumn, ...] = FOCUS_COLUMNS,
    rows: str = "focus_rows",
    version: str = FOCUS_VERSION,
    row_ids: tuple[str, str] = ("x_SourceFile", "x_SourceLineItemId"),
) -> str:
    """One scan of the view ``rows`` that names, per row, every column breaking its nullability rule or holding a
    placeholder; ``row_ids`` are the two columns that name a row (returned as x_SourceFile, x_SourceLineItemId)."""
    tests: list[tuple[str, str]] = []
    for column in columns:
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
    file, line_item = row_ids
    return (
        f"SELECT column_name, 'breaks the FOCUS {version} nullability rule or holds a placeholder string' AS problem,"  # noqa: S608
        " x_SourceFile, x_SourceLineItemId FROM ("
        f" SELECT unnest(list_filter([{problems}], c -> c IS NOT NULL)) AS column_name, {file} AS x_SourceFile,"
        f" {line_item} AS x_SourceLineItemId FROM {rows} WHERE {any_problem})"
    )


def all_checks() -> dict[str, str]:
    """Check name -> SQL returning offending rows."""
    checks = {"focus_nullability": nullability_sql()}
    checks.update({path.stem: load_sql(f"gates/checks/{path.name}") for path in sql_files("gates/checks")})
    return checks


def allowed_values_sql(columns: tuple[FocusColumn, ...], rows: str, row_ids: tuple[str, str]) -> str:
    """Rows of ``rows`` holding a value outside a column's closed enumeration, one row per offending value."""
    file, line_item = row_ids
    # generated from the FOCUS column specs: names and values are the project's, quoted
    return " UNION ALL ".join(
        f"SELECT {quote_literal(c.name)} AS column_name,"  # noqa: S608
        f" {quote_ident(c.name)} || ' is not an allowed value' AS problem,"
        f" {file} AS x_SourceFile, {line_item} AS x_SourceLineItemId FROM {rows}"
        f" WHERE {quote_ident(c.name)} NOT IN ({', '.join(map(quote_literal, c.allowed_values))})"
        for c in columns
        if c.allowed_values
    )


def column_names_sql(columns: tuple[FocusColumn, ...], rows: str) -> str:
    """The columns of the view ``rows`` against a dataset's spec: each present with its type, every other ``x_``."""
    expected = ", ".join(f"({quote_literal(c.name)}, {quote_literal(c.type.catalog_name)})" for c in columns)
    return (
        "WITH actual AS (SELECT column_name, data_type FROM duckdb_columns()"  # noqa: S608
        f" WHERE table_name = {quote_literal(rows)}),"
        f" expected(column_name, data_type) AS (VALUES {expected})"
        " SELECT a.column_name, 'custom column without the x_ prefix' AS problem, NULL AS x_SourceFile,"
        " NULL AS x_SourceLineItemId FROM actual AS a"
        " WHERE NOT starts_with(a.column_name, 'x_') AND a.column_name NOT IN (SELECT column_name FROM expected)"
        " UNION ALL SELECT e.column_name, 'FOCUS column missing or not of type ' || e.data_type, NULL, NULL"
        " FROM expected AS e WHERE NOT EXISTS"
        " (SELECT 1 FROM actual AS a WHERE a.column_name = e.column_name AND a.data_type = e.data_type)"
    )


FOCUS_1_3_ROWS = "focus_1_3_rows"
FOCUS_1_3_COMMITMENTS = "focus_1_3_commitments"
_COMMITMENT_IDS = ("x_ProviderName", "ContractCommitmentId")
# The stored table's own column check; 1.3 rows are checked against the 1.3 spec instead.
_STORED_TABLE_ONLY = {"focus_column_names"}


def focus_1_3_checks() -> dict[str, str]:
    """Check name -> SQL returning offending rows, over the temp views ``focus_1_3_rows`` (1.3 CostAndUsage, plain
    or allocated) and ``focus_1_3_commitments`` (ContractCommitment): the 1.3 spec as data, every 1.2 check that
    applies to 1.3 rows unchanged (over ``focus_rows``, pointed at the 1.3 rows), and the 1.3 cross-row checks."""
    rows_ids = ("x_SourceFile", "x_SourceLineItemId")
    checks = {
        "focus_1_3_nullability": nullability_sql(COST_AND_USAGE_1_3, FOCUS_1_3_ROWS, FOCUS_1_3_VERSION, rows_ids),
        "focus_1_3_column_names": column_names_sql(COST_AND_USAGE_1_3, FOCUS_1_3_ROWS),
        "contract_commitment_nullability": nullability_sql(
            CONTRACT_COMMITMENT_1_3, FOCUS_1_3_COMMITMENTS, FOCUS_1_3_VERSION, _COMMITMENT_IDS
        ),
        "contract_commitment_allowed_values": allowed_values_sql(
            CONTRACT_COMMITMENT_1_3, FOCUS_1_3_COMMITMENTS, _COMMITMENT_IDS
        ),
        "contract_commitment_column_names": column_names_sql(CONTRACT_COMMITMENT_1_3, FOCUS_1_3_COMMITMENTS),
    }
    checks.update(
        {name: sql for name, sql in all_checks().items() if name not in _STORED_TABLE_ONLY | {"focus_nullability"}}
    )
    checks.update({path.stem: load_sql(f"gates/checks_1_3/{path.name}") for path in sql_files("gates/checks_1_3")})
    return checks


def run_focus_1_3_checks(con: duckdb.DuckDBPyConnection) -> list[CheckResult]:
    """Every FOCUS 1.3 check over the temp views ``focus_1_3_rows`` and ``focus_1_3_commitments`` the caller made."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW focus_rows AS SELECT * FROM {FOCUS_1_3_ROWS}")  # noqa: S608
    return [run_check(con, name, sql) for name, sql in focus_1_3_checks().items()]


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
