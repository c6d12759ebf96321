"""The analysts' side of a publish: docs/analysts.md's example queries run on the published demo and agree with
the base tables, every published table, view and column is described, the views' rounded figures foot, and the
Parquet export matches the file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from gpuledger.chargeback.months import issue_month
from gpuledger.chargeback.statement import CATEGORIES
from gpuledger.publish.snapshot import ANALYST_FILE, PUBLISHED_TABLES, REFERENCE_TABLES, publish
from gpuledger.warehouse.home import open_warehouse
from gpuledger.warehouse.sqlfiles import quote_ident
from tests.fixtures.paths import REPO

pytestmark = pytest.mark.both_warehouses

DOC = REPO / "docs" / "analysts.md"
NOW = datetime(2026, 12, 2, 3, tzinfo=UTC)  # tests/conftest.py pins the pipeline's clock to the same time
ANALYST_TABLES = (*PUBLISHED_TABLES, *REFERENCE_TABLES)
PUBLISHED_SCHEMAS = sorted({table.split(".")[0] for table in ANALYST_TABLES} | {"views"})
CENT = Decimal("0.01")

_EXAMPLE = re.compile(r"^### (\d+)\. (.+?)\n\n```sql\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def _section(text: str, heading: str) -> str:
    """The text of the ``## heading`` section of the document, up to the next ``## ``."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/analysts.md has no '## {heading}' section"
    return match.group(1)


def example_queries() -> list[tuple[int, str, str]]:
    """(number, question, SQL) of every example in docs/analysts.md, in document order."""
    text = DOC.read_text(encoding="utf-8")
    examples = [(int(n), question, sql) for n, question, sql in _EXAMPLE.findall(_section(text, "Example queries"))]
    # every ```sql block of the whole document is one of the examples, each under its own numbered heading
    assert len(re.findall(r"^```sql\n", text, re.MULTILINE)) == len(examples)
    return examples


EXAMPLES = {number: sql for number, _, sql in example_queries()}


@pytest.fixture(scope="module")
def analyst(demo_home: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with closing(duckdb.connect(str(demo_home / ANALYST_FILE), read_only=True)) as con:
        yield con


def run(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    result = con.execute(sql)
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def totals(rows: list[dict[str, Any]], key: str, value: str) -> dict[Any, Any]:
    sums: dict[Any, Any] = defaultdict(Decimal)
    for row in rows:
        sums[row[key]] += row[value]
    return dict(sums)


def base(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> dict[Any, Any]:
    """A ``key, value`` query of the base tables as a dict."""
    return dict(con.execute(sql, params or {}).fetchall())


def cents(amount: Decimal) -> Decimal:
    """An exact amount as the views show it: rounded to cents, half away from zero."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def literal(sql: str, column: str) -> str:
    """The value an example compares ``column`` with (``column = 'x'`` or ``column = DATE 'x'``)."""
    match = re.search(rf"\b{column} = (?:DATE )?'([^']+)'", sql)
    assert match, f"no {column} = '...' in {sql}"
    return match.group(1)


def test_the_document_has_exactly_thirteen_numbered_examples():
    examples = example_queries()
    assert [number for number, _, _ in examples] == list(range(1, 17))
    assert all(question.endswith("?") and sql.strip() for _, question, sql in examples)


@pytest.mark.parametrize("number", range(1, 17))
def test_every_example_runs_read_only_and_returns_rows(analyst, number):
    rows = run(analyst, EXAMPLES[number])
    if number != 10:  # statement vs current is empty until a month is issued (test below)
        assert rows, f"example {number} returned nothing on the demo"


def test_cost_by_team_month_category_adds_up_to_showback_per_currency(analyst):
    rows = run(analyst, EXAMPLES[1])
    assert {row["category"] for row in rows} <= set(CATEGORIES)
    assert all(row["cost"] == row["cost"].quantize(CENT) for row in rows)
    # every category of the view, zeros included: a team-month's cents add up to its total in cents
    shown = totals(
        run(analyst, "SELECT team || billing_month || currency AS key, cost FROM views.cost_by_team_month_category"),
        "key",
        "cost",
    )
    exact = base(analyst, "SELECT team || billing_month || currency, total_cost FROM showback.team_month")
    assert shown == {key: cents(total) for key, total in exact.items()}
    assert any(total != cents(total) for total in exact.values())  # the rounding had something to do
    expected = base(analyst, "SELECT currency, sum(total_cost) FROM showback.team_month GROUP BY ALL")
    assert expected == base(analyst, "SELECT BillingCurrency, sum(EffectiveCost) FROM focus.costs GROUP BY ALL")
    for currency, total in totals(rows, "currency", "cost").items():
        assert abs(total - expected[currency]) <= CENT * len(exact) / 2


def test_idle_share_is_idle_over_total_of_team_month(analyst):
    rows = run(analyst, EXAMPLES[2])
    team_month = {
        (r["billing_month"], r["team"], r["currency"]): r
        for r in run(analyst, "SELECT * FROM showback.team_month WHERE total_cost > 0")
    }
    assert len(rows) == len(team_month)
    kinds = [f"{key}_cost" for key in CATEGORIES if key.startswith("idle_")]
    for row in rows:
        source = team_month[(row["billing_month"], row["team"], row["currency"])]
        assert row["idle_cost"] == sum(row[kind] for kind in kinds)  # foots as shown
        assert row["total_cost"] == cents(source["total_cost"])
        assert all(abs(row[kind] - source[kind]) < CENT for kind in kinds)
        assert abs(row["idle_cost"] - source["idle_cost"]) < len(kinds) * CENT  # the kinds' cents added up
        assert row["idle_percent"] == pytest.approx(float(100 * source["idle_cost"] / source["total_cost"]), abs=0.006)
        assert 0 <= row["idle_percent"] <= 100
        assert float(row["idle_gpu_hours"]) == pytest.approx(source["gpu_hours"] - source["active_gpu_hours"], abs=0.05)
    months = [row["billing_month"] for row in rows]
    assert months == sorted(months)


def test_cost_per_completed_run_matches_team_month(analyst):
    rows = run(analyst, EXAMPLES[3])
    assert all(row["completed_runs"] > 0 for row in rows)
    expected = base(
        analyst, "SELECT currency, sum(completed_runs) FROM showback.team_month WHERE completed_runs > 0 GROUP BY ALL"
    )
    assert totals(rows, "currency", "completed_runs") == expected
    per_run = {
        (m, t, c): v
        for m, t, c, v in analyst.execute(
            "SELECT billing_month, team, currency, cost_per_completed_run FROM showback.team_month"
        ).fetchall()
    }
    for row in rows:
        assert row["cost_per_completed_run"] == cents(per_run[(row["billing_month"], row["team"], row["currency"])])
        assert row["cost_per_completed_run"] > 0


def test_top_ten_jobs_are_at_most_ten_ordered_by_cost(analyst):
    sql = EXAMPLES[4]
    rows = run(analyst, sql)
    assert 0 < len(rows) <= 10
    costs = [row["total_cost"] for row in rows]
    assert costs == sorted(costs, reverse=True)
    assert [row["cost_rank"] for row in rows] == list(range(1, len(rows) + 1))
    month, currency = literal(sql, "billing_month"), literal(sql, "currency")
    top = analyst.execute(
        "SELECT total_cost FROM showback.job_costs WHERE billing_month = CAST($month AS DATE) AND currency = $currency"
        " ORDER BY total_cost DESC LIMIT 10",
        {"month": month, "currency": currency},
    ).fetchall()
    assert costs == [cents(cost) for (cost,) in top]
    for row in run(analyst, "SELECT * FROM views.top_jobs"):
        assert (
            row["total_cost"]
            == row["run_cost"] + row["idle_cost"] + row["checkpoint_storage_cost"] + row["egress_cost"]
        )


def test_failed_run_cost_matches_team_month_and_the_failed_attempts(analyst):
    rows = run(analyst, EXAMPLES[5])
    expected = base(
        analyst,
        "SELECT currency, sum(failed_run_cost) FROM showback.team_month WHERE failed_run_cost <> 0 GROUP BY ALL",
    )
    assert expected
    assert totals(rows, "currency", "failed_run_cost") == expected
    assert expected == base(
        analyst,
        "SELECT currency, sum(attempt_cost) FROM showback.job_costs WHERE failed AND NOT session GROUP BY ALL",
    )
    assert (
        sum(row["failed_jobs"] for row in rows)
        == analyst.execute("SELECT count(*) FROM showback.job_costs WHERE failed").fetchone()[0]
    )
    assert all(row["states"] and "COMPLETED" not in row["states"] for row in rows)


def test_focus_by_provider_and_service_adds_up_to_focus(analyst):
    rows = run(analyst, EXAMPLES[6])
    exact = {
        (r["ProviderName"], r["BillingAccountId"], r["billing_month"], r["ServiceName"], r["BillingCurrency"]): r
        for r in run(
            analyst,
            "SELECT ProviderName, BillingAccountId, strftime(x_BillingMonth, '%Y-%m') AS billing_month, ServiceName,"
            " BillingCurrency, sum(EffectiveCost) AS effective_cost, sum(BilledCost) AS billed_cost"
            " FROM focus.costs GROUP BY ALL",
        )
    }
    for row in rows:
        group = exact[(row["ProviderName"], row["BillingAccountId"], row["billing_month"], row["ServiceName"],
                       row["BillingCurrency"])]  # fmt: skip
        assert row["effective_cost"] == cents(group["effective_cost"])
        assert row["billed_cost"] == cents(group["billed_cost"])
    assert len(rows) == len(exact)
    providers = {row["ProviderName"] for row in rows}
    assert providers == {p for (p,) in analyst.execute("SELECT DISTINCT ProviderName FROM focus.costs").fetchall()}


def test_one_team_month_in_the_reporting_currency(analyst):
    sql = EXAMPLES[7]
    rows = run(analyst, sql)
    team, month = literal(sql, "team"), literal(sql, "billing_month")
    expected = base(
        analyst,
        "SELECT currency, total_cost FROM showback.team_month"
        " WHERE team = $team AND billing_month = CAST($month AS DATE)",
        {"team": team, "month": month},
    )
    assert {row["currency"]: row["total_cost"] for row in rows} == expected
    assert len(expected) > 1  # the demo team pays in two currencies: the point of converting
    assert len({row["reporting_currency"] for row in rows}) == 1
    for row in rows:
        assert row["total_cost_reporting"] == round(row["total_cost"] * row["exchange_rate"], 10)
        if row["currency"] == row["reporting_currency"]:
            assert row["exchange_rate"] == 1 and row["rate_date"] is None
        parts = ("run", "idle", "checkpoint_storage", "egress", "other")
        assert abs(sum(row[f"{p}_cost_reporting"] for p in parts) - row["total_cost_reporting"]) <= Decimal("1e-9")
    assert {row["team_total_reporting"] for row in rows} == {sum(row["total_cost_reporting"] for row in rows)}
    assert {row["month_state"] for row in rows} == {"issued"}  # the demo's October: closed (rates locked), issued


def test_idle_by_hour_of_week_adds_up_to_the_team_month(analyst):
    sql = EXAMPLES[8]
    rows = run(analyst, sql)
    team, month = literal(sql, "team"), literal(sql, "billing_month")
    params = {"team": team, "month": month}
    where = "WHERE team = $team AND billing_month = CAST($month AS DATE)"
    assert all(1 <= row["iso_weekday"] <= 7 and 0 <= row["hour_of_day"] <= 23 for row in rows)
    assert len({(row["iso_weekday"], row["hour_of_day"], row["currency"]) for row in rows}) == len(rows)
    idle_hours = analyst.execute(f"SELECT sum(gpu_hours - active_gpu_hours) FROM showback.team_month {where}", params)
    assert sum(row["idle_gpu_hours"] for row in rows) == pytest.approx(idle_hours.fetchone()[0], rel=1e-6)
    idle_cost = base(analyst, f"SELECT currency, idle_cost FROM showback.team_month {where}", params)
    for currency, cost in totals(rows, "currency", "idle_cost").items():
        assert abs(cost - idle_cost[currency]) < Decimal("0.0001")  # apportioned per hour, rounded per piece
    hours = [row["idle_gpu_hours"] for row in rows]
    assert hours == sorted(hours, reverse=True)


def test_gpu_hours_and_utilization_by_team(analyst):
    rows = run(analyst, EXAMPLES[9])
    assert len({(row["billing_month"], row["team"]) for row in rows}) == len(rows)
    total = analyst.execute("SELECT sum(gpu_hours), sum(active_gpu_hours) FROM showback.team_month").fetchone()
    assert sum(row["gpu_hours"] for row in rows) == pytest.approx(total[0], rel=1e-9)
    assert sum(row["active_gpu_hours"] for row in rows) == pytest.approx(total[1], rel=1e-9)
    for row in rows:
        assert row["active_gpu_hours"] <= row["gpu_hours"] + 1e-6
        if row["active_percent"] is not None:
            assert row["active_percent"] == pytest.approx(100 * row["active_gpu_hours"] / row["gpu_hours"], abs=0.051)
        utilization = row["mean_gpu_utilization"]
        assert utilization is None or 0 <= utilization <= 1
    assert any(row["mean_gpu_utilization"] is not None for row in rows)


def test_statement_vs_current_shows_an_issued_month(demo_copy):
    """Example 10 on a published copy whose October was issued: one line per issued team and currency, equal."""
    with closing(open_warehouse(demo_copy)) as con:
        issue_month(con, "2026-10", NOW)
        publish(con, demo_copy)
    with closing(duckdb.connect(str(demo_copy / ANALYST_FILE), read_only=True)) as con:
        rows = run(con, EXAMPLES[10])
        lines = base(con, "SELECT team || '/' || coalesce(currency, ''), total_cost FROM chargeback.statement_lines")
    assert rows and lines
    assert {f"{row['team']}/{row['currency'] or ''}": row["issued_total"] for row in rows} == {
        key: cents(total) for key, total in lines.items()
    }
    assert all(row["statement_version"] == 1 and row["adjustment"] == 0 for row in rows)
    assert all(row["issued_total"] == row["current_total"] and row["applies_to_month"] is None for row in rows)


def test_the_most_expensive_completed_runs_of_a_month(analyst):
    sql = EXAMPLES[11]
    rows = run(analyst, sql)
    month, currency = literal(sql, "completed_month"), literal(sql, "currency")
    assert 0 < len(rows) <= 10
    assert all(str(row["completed_month"]) == month and row["currency"] == currency for row in rows)
    costs = [row["cost_to_finish"] for row in rows]
    assert costs == sorted(costs, reverse=True)
    exact = analyst.execute(
        "SELECT DISTINCT cluster, team, run_group, run_group_cost_to_finish FROM showback.job_costs"
        " WHERE run_group_completed AND currency = $currency"
        " AND date_trunc('month', run_group_completed_at) = CAST($month AS DATE)"
        " ORDER BY run_group_cost_to_finish DESC LIMIT 10",
        {"month": month, "currency": currency},
    ).fetchall()
    assert costs == [cents(cost) for *_, cost in exact]


def test_the_instances_with_the_most_idle_money_in_a_month(analyst):
    sql = EXAMPLES[12]
    rows = run(analyst, sql)
    month, currency = literal(sql, "billing_month"), literal(sql, "currency")
    assert 0 < len(rows) <= 10
    costs = [row["idle_cost"] for row in rows]
    assert costs == sorted(costs, reverse=True)
    top = analyst.execute(
        "SELECT ResourceId, sum(EffectiveCost) FROM allocation.cost_split WHERE category = 'idle'"
        " AND billing_month = CAST($month AS DATE) AND BillingCurrency = $currency"
        " GROUP BY ALL ORDER BY 2 DESC LIMIT 1",
        {"month": month, "currency": currency},
    ).fetchone()
    assert (rows[0]["ResourceId"], rows[0]["idle_cost"]) == (top[0], cents(top[1]))
    assert all(row["gpu_model"] and row["owner_team"] for row in rows if row["idle_unallocated_cost"] > 0)


def test_the_savings_opportunities_are_the_estimates_rounded_and_ranked(analyst):
    rows = run(analyst, EXAMPLES[13])
    assert rows and all(row["rank"] <= 3 for row in rows)
    exact = {
        (team, currency, rank): saving
        for team, currency, rank, saving in analyst.execute(
            "SELECT team, currency, rank, estimated_saving FROM advice.opportunities WHERE month = DATE '2026-10-01'"
        ).fetchall()
    }
    for row in rows:
        assert row["estimated_saving"] == cents(exact[(row["team"], row["currency"], row["rank"])]) > 0
    for (team, currency, rank), saving in exact.items():
        if rank > 1:
            assert saving <= exact[(team, currency, rank - 1)]
    assert {row["opportunity"] for row in rows} >= {"owned GPUs", "spot"}


def test_every_published_table_column_and_view_is_described(analyst):
    schemas = {"schemas": PUBLISHED_SCHEMAS}
    tables = analyst.execute(
        "SELECT schema_name || '.' || table_name, comment FROM duckdb_tables()"
        " WHERE database_name = current_database() AND schema_name IN (SELECT unnest($schemas))",
        schemas,
    ).fetchall()
    assert sorted(name for name, _ in tables) == sorted(ANALYST_TABLES)
    assert [name for name, comment in tables if not (comment or "").strip()] == []

    views = analyst.execute(
        "SELECT view_name, comment FROM duckdb_views() WHERE database_name = current_database()"
        " AND schema_name = 'views'"
    ).fetchall()
    view_files = REPO / "sql" / "publish" / "views"
    assert sorted(name for name, _ in views) == sorted(path.stem for path in view_files.glob("*.sql"))
    assert [name for name, comment in views if not (comment or "").strip()] == []

    # the columns of tables and views alike
    columns = analyst.execute(
        "SELECT schema_name || '.' || table_name || '.' || column_name, comment FROM duckdb_columns()"
        " WHERE database_name = current_database() AND schema_name IN (SELECT unnest($schemas))",
        schemas,
    ).fetchall()
    assert len(columns) > 200  # the 71 FOCUS columns and everything else
    view_columns = [name for name, _ in columns if name.startswith("views.")]
    assert {name.split(".")[1] for name in view_columns} == {name for name, _ in views}
    assert [name for name, comment in columns if not (comment or "").strip()] == []
    assert "meta.deliveries.ingested_at" not in {name for name, _ in columns}  # published without it


def test_parquet_export_matches_the_analyst_file(analyst, demo_home):
    parquet = str(demo_home / "published" / "focus" / "**" / "*.parquet")
    query = (
        "SELECT ProviderName, BillingCurrency, count(*), sum(EffectiveCost), sum(BilledCost) FROM {}"
        " GROUP BY ALL ORDER BY ALL"
    )
    with closing(duckdb.connect()) as con:
        exported = con.execute(query.format("read_parquet($files, hive_partitioning = true)"), {"files": parquet})
        exported_rows = exported.fetchall()
        months = con.execute(
            "SELECT DISTINCT billing_month FROM read_parquet($files, hive_partitioning = true) ORDER BY 1",
            {"files": parquet},
        ).fetchall()
        # the document's own example, with the demo's home in it
        block = re.search(
            r"```\n(SELECT .*?read_parquet.*?)```", _section(DOC.read_text(), "Parquet for other engines"), re.S
        )
        assert block, "no read_parquet example in the Parquet section"
        documented = run(con, block.group(1).replace("<home>", str(demo_home)))
    published = analyst.execute(query.format("focus.costs")).fetchall()
    assert exported_rows == published
    assert {(p, c) for p, c, *_ in published} >= {("Google Cloud", "USD")}  # '%20' in the folder name decoded
    assert (
        months
        == analyst.execute(
            "SELECT DISTINCT strftime(BillingPeriodStart + INTERVAL 14 HOUR, '%Y-%m') FROM focus.costs ORDER BY 1"
        ).fetchall()
    )
    assert sum(row["charges"] for row in documented) == sum(row[2] for row in published)
    assert totals(documented, "BillingCurrency", "effective_cost") == base(
        analyst, "SELECT BillingCurrency, sum(EffectiveCost) FROM focus.costs GROUP BY ALL"
    )


def test_example_15_names_every_charge_once(analyst):
    rows = run(analyst, EXAMPLES[15])
    assert totals(rows, "BillingCurrency", "effective_cost") == base(
        analyst, "SELECT BillingCurrency, sum(EffectiveCost) FROM focus.costs GROUP BY 1"
    )
    assert {row["ServiceProviderName"] for row in rows} >= {
        "AWS",
        "Microsoft",
        "Google Cloud",
        "Weights & Biases, Inc.",
    }


DUCKDB_1_4_PYTHON = REPO / ".venv-duckdb-1.4" / "bin" / "python"
# Run by each client: stdin's named queries -> each one's rows as the engine spells them in text, sorted.
_READ_AS_TEXT = """
import json, sys, duckdb
path, queries = json.load(sys.stdin)
con = duckdb.connect(path, read_only=True)
con.execute("SET TimeZone = 'UTC'")
con.execute("SET enable_progress_bar = false")  # a query slower than 2 s (a busy machine) drew it on stdout
text = "SELECT CAST(COLUMNS(*) AS VARCHAR) FROM ({})"
rows = {
    name: sorted(map(repr, con.execute(text.format(sql.rstrip().rstrip(";"))).fetchall()))
    for name, sql in queries.items()
}
print(json.dumps({"version": duckdb.__version__, "rows": rows}))
"""


def read_as_text(python: Path, path: Path, queries: dict[str, str]) -> dict[str, object]:
    """What the DuckDB client of ``python`` reads from the file ``path``: its version and each query's rows."""
    read = subprocess.run(
        [str(python), "-c", _READ_AS_TEXT],
        input=json.dumps([str(path), queries]),
        capture_output=True,
        text=True,
        check=False,
    )
    assert read.returncode == 0, read.stderr
    return json.loads(read.stdout)


@pytest.mark.slow
def test_a_duckdb_1_4_client_reads_every_table_view_and_example_as_the_pipeline_wrote_them(analyst, demo_home):
    # analysts' BI tools and notebooks bundle older clients than the pipeline's DuckDB 1.5 (docs/decisions/0018)
    assert DUCKDB_1_4_PYTHON.exists(), "no DuckDB 1.4 client: `make install-duckdb-1.4` (make test runs it)"
    relations = analyst.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()"
        " UNION ALL SELECT schema_name, view_name FROM duckdb_views()"
        " WHERE database_name = current_database() AND NOT internal"
    ).fetchall()
    queries = {f"{s}.{r}": f"SELECT * FROM {quote_ident(s)}.{quote_ident(r)}" for s, r in relations}
    queries |= {f"example {number}": sql for number, sql in EXAMPLES.items()}
    assert len(relations) > 40
    old = read_as_text(DUCKDB_1_4_PYTHON, demo_home / ANALYST_FILE, queries)
    new = read_as_text(Path(sys.executable), demo_home / ANALYST_FILE, queries)
    assert str(old["version"]).startswith("1.4.")
    assert str(new["version"]).startswith("1.5.")
    assert old["rows"] == new["rows"]
    assert sum(map(len, new["rows"].values())) > 100_000  # type: ignore[union-attr]
