"""AWS CUR 1 / CUR 2.0 -> FOCUS 1.2: every line item type priced, every cent reconciled, bad input named."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates.load import load_delivery
from models.aws_cur import LINE_ITEM_TYPES, cur1_to_snake
from models.delivery import Delivery
from models.errors import InputError
from tests.conftest import focus_snapshot, validate_warehouse
from tests.fixtures.cur_cases import (
    CUR1_HEADER,
    EXPECTED_BILLED,
    EXPECTED_EFFECTIVE,
    LINKED,
    PAYER,
    RI_ARN,
    RI_TERM,
    SP_ARN,
    SP_TERM,
    every_line_item_type,
    write_cur1_csv,
)


def _load(con: duckdb.DuckDBPyConnection, path: Path, fmt: str = "aws-cur1"):
    return load_delivery(con, Delivery(fmt, (path,)))


def _totals(con: duckdb.DuckDBPyConnection) -> tuple[Decimal, Decimal]:
    row = con.execute("SELECT sum(BilledCost), sum(EffectiveCost) FROM focus.costs").fetchone()
    assert row is not None
    return row[0], row[1]


def test_every_line_item_type_reconciles_to_the_cent(con, tmp_path):
    result = _load(con, write_cur1_csv(tmp_path / "cur.csv.gz", every_line_item_type()))
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    (only_slice,) = result.slices
    assert (only_slice.billing_account_id, only_slice.currency) == (PAYER, "USD")
    assert (only_slice.billed_cost, only_slice.effective_cost) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)


def test_line_item_types_map_to_focus_categories(con, tmp_path):
    _load(con, write_cur1_csv(tmp_path / "cur.csv", every_line_item_type()))
    rows = con.execute(
        "SELECT x_SourceLineItemType, ChargeCategory, ChargeClass, CommitmentDiscountStatus, PricingCategory,"
        " ChargeFrequency FROM focus.costs ORDER BY x_SourceLineItemId"
    ).fetchall()
    seen = {row[0] for row in rows}
    assert seen >= set(LINE_ITEM_TYPES) - {
        "PrivateRateDiscount",
        "DistributorDiscount",
        "FlatRateSubscription",
    }
    by_type = {(r[0], r[3]): r[1:] for r in rows}
    assert by_type[("Usage", None)][0] == "Usage"
    assert by_type[("DiscountedUsage", "Used")] == ("Usage", None, "Used", "Committed", "Usage-Based")
    assert by_type[("SavingsPlanNegation", "Used")][0] == "Usage"
    assert by_type[("RIFee", None)] == ("Purchase", None, None, "Standard", "Recurring")
    assert by_type[("RIFee", "Unused")] == ("Usage", None, "Unused", "Committed", "Recurring")
    assert by_type[("SavingsPlanRecurringFee", "Unused")][0] == "Usage"
    assert by_type[("SavingsPlanUpfrontFee", None)][:1] == ("Purchase",)
    assert by_type[("Tax", None)][:1] == ("Tax",)
    assert by_type[("Credit", None)][:1] == ("Credit",)
    assert by_type[("EdpDiscount", None)][:1] == ("Credit",)
    assert ("Purchase", "Correction") in {(r[1], r[2]) for r in rows if r[0] == "Refund"}
    spot = con.execute("SELECT PricingCategory FROM focus.costs WHERE x_SourceLineItemId = 'u2'").fetchone()
    assert spot == ("Dynamic",)


def test_unused_commitment_rows_carry_the_unused_amortized_cost(con, tmp_path):
    _load(con, write_cur1_csv(tmp_path / "cur.csv", every_line_item_type()))
    unused = dict(
        con.execute(
            "SELECT x_SourceLineItemType, EffectiveCost FROM focus.costs WHERE CommitmentDiscountStatus = 'Unused'"
        ).fetchall()
    )
    assert unused == {"RIFee": Decimal(25), "SavingsPlanRecurringFee": Decimal(12)}
    purchases = con.execute(
        "SELECT count(*) FROM focus.costs WHERE ChargeCategory = 'Purchase' AND CommitmentDiscountId IS NOT NULL"
        " AND EffectiveCost <> 0"
    ).fetchone()
    assert purchases == (0,)


def test_ids_stay_strings_with_leading_zeros_and_tags_become_flat_json(con, tmp_path):
    _load(con, write_cur1_csv(tmp_path / "cur.csv", every_line_item_type()))
    accounts = con.execute("SELECT DISTINCT BillingAccountId, SubAccountId FROM focus.costs").fetchall()
    assert accounts == [(PAYER, LINKED)]
    tags = con.execute("SELECT Tags FROM focus.costs WHERE x_SourceLineItemId = 'u1'").fetchone()
    assert tags is not None and json.loads(tags[0]) == {"team": "llm", "aws:createdBy": "x"}


def test_cost_column_integers_first_then_decimals_is_exact(con, tmp_path):
    rows = []
    for i in range(10_050):
        cost = "3" if i < 10_000 else "0.0000000123"
        row = every_line_item_type()[0] | {
            "identity/LineItemId": f"r{i}",
            "lineItem/UnblendedCost": cost,
            "lineItem/UnblendedRate": cost,
            "lineItem/UsageAmount": "1",
            "pricing/publicOnDemandRate": cost,
            "pricing/publicOnDemandCost": cost,
        }
        rows.append(row)
    _load(con, write_cur1_csv(tmp_path / "cur.csv", rows))
    expected = Decimal(3) * 10_000 + Decimal("0.0000000123") * 50
    assert _totals(con) == (expected, expected)


def test_reimport_is_a_no_op_with_identical_rows(con, tmp_path):
    path = write_cur1_csv(tmp_path / "cur.csv.gz", every_line_item_type())
    first = _load(con, path)
    before = focus_snapshot(con)
    second = _load(con, path)
    assert second.unchanged and second.delivery_id == first.delivery_id
    assert focus_snapshot(con) == before


def test_cur2_parquet_gives_the_same_focus_totals_as_cur1(con, tmp_path):
    csv_path = write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type())
    parquet_path = tmp_path / "cur2.snappy.parquet"
    _write_cur2_parquet(con, csv_path, parquet_path)
    _load(con, parquet_path, "aws-cur2")
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    tags = con.execute("SELECT Tags FROM focus.costs WHERE x_SourceLineItemId = 'u1'").fetchone()
    assert tags is not None and json.loads(tags[0]) == {"team": "llm", "aws:created_by": "x"}
    names = con.execute("SELECT DISTINCT ServiceName FROM focus.costs ORDER BY 1").fetchall()
    assert ("Amazon Elastic Compute Cloud",) in names


def _write_cur2_parquet(con: duckdb.DuckDBPyConnection, csv_path: Path, out: Path) -> None:
    """The same line items in CUR 2.0 shape: snake_case columns, doubles, product/tags as maps."""
    renamed = ", ".join(
        f'"{h}" AS {cur1_to_snake(h)}'
        for h in CUR1_HEADER
        if not h.startswith(("resourceTags/", "costCategory/", "product/ProductName"))
    )
    con.execute(
        f"CREATE TEMP TABLE cur2_src AS SELECT {renamed},"
        " MAP {'product_name': \"product/ProductName\"} AS product,"
        " map_from_entries(list_filter([{'key': 'user_team', 'value': \"resourceTags/user:team\"},"
        " {'key': 'aws_created_by', 'value': \"resourceTags/aws:createdBy\"}], e -> e.value IS NOT NULL))"
        " AS resource_tags"
        " FROM read_csv($path, all_varchar = true)",
        {"path": str(csv_path)},
    )
    doubles = [
        cur1_to_snake(h)
        for h in CUR1_HEADER
        if h.endswith(
            (
                "Cost",
                "Rate",
                "Amount",
                "Quantity",
                "Fee",
                "FeeForBillingPeriod",
                "CommitmentToDate",
                "UsedCommitment",
            )
        )
    ]
    for column in doubles:
        con.execute(f"ALTER TABLE cur2_src ALTER {column} TYPE DOUBLE USING CAST(nullif({column}, '') AS DOUBLE)")
    con.table("cur2_src").write_parquet(str(out))


@pytest.mark.parametrize(
    ("mutate", "column", "row", "message"),
    [
        ({"lineItem/UnblendedCost": "12.3x"}, "lineItem/UnblendedCost", 3, "'12.3x' is not a valid DECIMAL"),
        ({"lineItem/UsageStartDate": "yesterday"}, "lineItem/UsageStartDate", 3, "not a valid TIMESTAMPTZ"),
        ({"lineItem/LineItemType": "MysteryFee"}, "lineItem/LineItemType", 3, "unknown value 'MysteryFee'"),
    ],
)
def test_bad_values_name_file_row_and_column_and_change_nothing(con, tmp_path, mutate, column, row, message):
    _load(con, write_cur1_csv(tmp_path / "good.csv", every_line_item_type()))
    before = focus_snapshot(con)
    rows = every_line_item_type()
    rows[row - 1] = rows[row - 1] | mutate
    bad = write_cur1_csv(tmp_path / "bad.csv.gz", rows)
    with pytest.raises(InputError) as caught:
        _load(con, bad)
    error = caught.value
    assert (error.file, error.row, error.column) == (str(bad), row, column)
    assert message in str(error)
    assert focus_snapshot(con) == before


def test_missing_required_column_is_named(con, tmp_path):
    header = [h for h in CUR1_HEADER if h != "lineItem/UnblendedCost"]
    bad = write_cur1_csv(tmp_path / "bad.csv", every_line_item_type(), header)
    with pytest.raises(InputError, match="required column is missing") as caught:
        _load(con, bad)
    assert (caught.value.file, caught.value.column) == (str(bad), "lineItem/UnblendedCost")


def test_truncated_gzip_is_refused_and_changes_nothing(con, tmp_path):
    _load(con, write_cur1_csv(tmp_path / "good.csv", every_line_item_type()))
    before = focus_snapshot(con)
    full = write_cur1_csv(tmp_path / "full.csv.gz", every_line_item_type() * 50)
    truncated = tmp_path / "truncated.csv.gz"
    truncated.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    with pytest.raises(InputError, match="truncated gzip") as caught:
        _load(con, truncated)
    assert caught.value.file == str(truncated)
    assert focus_snapshot(con) == before


def test_header_only_export_is_valid_and_loads_zero_rows(con, tmp_path):
    empty = write_cur1_csv(tmp_path / "empty.csv.gz", [])
    result = _load(con, empty)
    assert result.slices == ()
    assert con.execute("SELECT count(*) FROM focus.costs").fetchone() == (0,)
    with gzip.open(empty, "rt") as handle:
        assert handle.read().startswith("identity/LineItemId,")


def test_cur2_csv_with_json_map_columns_gives_the_same_totals(con, tmp_path):
    parquet_path = tmp_path / "cur2.snappy.parquet"
    _write_cur2_parquet(con, write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type()), parquet_path)
    csv_path = tmp_path / "cur2-00001.csv.gz"
    con.sql(
        "SELECT * REPLACE (to_json(product) AS product, to_json(resource_tags) AS resource_tags) FROM read_parquet($p)",
        params={"p": str(parquet_path)},
    ).write_csv(str(csv_path), compression="gzip")
    _load(con, csv_path, "aws-cur2")
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    tags = con.execute("SELECT Tags FROM focus.costs WHERE x_SourceLineItemId = 'u1'").fetchone()
    assert tags is not None and json.loads(tags[0]) == {"team": "llm", "aws:created_by": "x"}


def test_cur2_csv_tags_written_as_a_list_are_read_as_no_tags_and_flagged(con, tmp_path):
    parquet_path = tmp_path / "cur2.snappy.parquet"
    _write_cur2_parquet(con, write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type()), parquet_path)
    csv_path = tmp_path / "cur2-00001.csv.gz"
    listed = "CASE WHEN identity_line_item_id = 'u1' THEN '[\"team\", \"llm\"]' ELSE to_json(resource_tags) END"
    con.sql(
        f"SELECT * REPLACE (to_json(product) AS product, {listed} AS resource_tags) FROM read_parquet($p)",
        params={"p": str(parquet_path)},
    ).write_csv(str(csv_path), compression="gzip")
    result = _load(con, csv_path, "aws-cur2")
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    assert result.repairs == (("InvalidTags", 1), ("NegativeUnitPrice", 1))  # the refund of rf-sp, below
    row = con.execute("SELECT Tags, x_SourceChanges, x_SourceValues FROM focus.costs WHERE x_SourceLineItemId = 'u1'")
    assert row.fetchone() == (None, "InvalidTags", '{"resource_tags":"[\\"team\\", \\"llm\\"]"}')


def test_cur1_parquet_with_athena_column_names(con, tmp_path):
    csv_path = write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type())
    parquet_path = tmp_path / "cur1.snappy.parquet"
    renamed = ", ".join(f'"{h}" AS {cur1_to_snake(h)}' for h in CUR1_HEADER)
    con.sql(f"SELECT {renamed} FROM read_csv($path, all_varchar = true)", params={"path": str(csv_path)}).write_parquet(
        str(parquet_path)
    )
    _load(con, parquet_path, "aws-cur1")
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    tags = con.execute("SELECT Tags, x_CostCategories FROM focus.costs WHERE x_SourceLineItemId = 'u1'").fetchone()
    assert tags is not None and json.loads(tags[0]) == {"team": "llm", "aws:created_by": "x"}


def _terms(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[object, ...]]:
    """x_SourceLineItemId -> (CommitmentDiscountId, term start, term end) as ISO text, for every stored row."""
    rows = con.execute(
        "SELECT x_SourceLineItemId, CommitmentDiscountId, strftime(x_CommitmentTermStart, '%Y-%m-%dT%H:%M:%S.000Z'),"
        " strftime(x_CommitmentTermEnd, '%Y-%m-%dT%H:%M:%S.000Z') FROM focus.costs"
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


@pytest.mark.parametrize("generation", ["aws-cur1", "aws-cur2"])
def test_every_row_of_a_commitment_carries_its_stated_term(con, tmp_path, generation):
    path = write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type())
    if generation == "aws-cur2":
        path, parquet = tmp_path / "cur2.snappy.parquet", path
        _write_cur2_parquet(con, parquet, path)
    _load(con, path, generation)
    terms = _terms(con)
    ri_rows = {line_item for line_item, (arn, *_) in terms.items() if arn == RI_ARN}
    sp_rows = {line_item for line_item, (arn, *_) in terms.items() if arn == SP_ARN}
    assert ri_rows == {"ri1", "rif", "rif/unused", "fee1"}
    assert sp_rows == {"sp1", "sp2", "sp3", "sp4", "sp4/unused", "rf-sp"}
    assert {terms[line_item][1:] for line_item in ri_rows} == {RI_TERM}
    assert {terms[line_item][1:] for line_item in sp_rows} == {SP_TERM}
    assert {terms[line_item] for line_item in terms.keys() - ri_rows - sp_rows} == {(None, None, None)}


def test_a_commitment_time_that_is_no_timestamp_is_nulled_and_flagged(con, tmp_path):
    rows = every_line_item_type()
    rows[2] = rows[2] | {"reservation/StartTime": "soon"}
    result = _load(con, write_cur1_csv(tmp_path / "cur.csv", rows))
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    assert result.repairs == (("InvalidCommitmentTerm", 1), ("NegativeUnitPrice", 1))
    row = con.execute(
        "SELECT x_SourceLineItemId, x_CommitmentTermStart, x_CommitmentTermEnd IS NOT NULL, x_SourceChanges,"
        " x_SourceValues FROM focus.costs WHERE x_SourceChanges = 'InvalidCommitmentTerm'"
    ).fetchall()
    assert row == [("ri1", None, True, "InvalidCommitmentTerm", '{"reservation/StartTime":"soon"}')]
    assert _terms(con)["rif"][1:] == RI_TERM


def test_an_export_without_term_columns_loads_with_unknown_terms(con, tmp_path):
    header = [h for h in CUR1_HEADER if not h.endswith(("/StartTime", "/EndTime"))]
    result = _load(con, write_cur1_csv(tmp_path / "cur.csv", every_line_item_type(), header))
    assert _totals(con) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    assert result.repairs == (("NegativeUnitPrice", 1),)
    assert {term[1:] for term in _terms(con).values()} == {(None, None)}


@pytest.mark.parametrize("fmt", ["aws-cur1", "aws-cur2"])
def test_output_passes_the_official_validator(con, tmp_path, validator_ready, fmt):
    csv_path = write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type())
    if fmt == "aws-cur2":
        _write_cur2_parquet(con, csv_path, path := tmp_path / "cur2.snappy.parquet")
    _load(con, csv_path if fmt == "aws-cur1" else path, fmt)
    assert validate_warehouse(con, tmp_path) == []


def test_a_refund_keeps_its_money_and_loses_its_negative_rate(con, tmp_path):
    result = _load(con, write_cur1_csv(tmp_path / "cur1.csv", every_line_item_type()))
    assert ("NegativeUnitPrice", 1) in result.repairs
    refund = con.execute(
        "SELECT ChargeClass, BilledCost, ListCost, ListUnitPrice, ContractedUnitPrice, PricingCurrencyListUnitPrice,"
        " x_SourceChanges, x_SourceValues FROM focus.costs WHERE x_SourceLineItemId = 'rf-sp'"
    ).fetchone()
    assert refund == (
        "Correction",
        Decimal("-100"),
        Decimal("-100"),
        None,
        None,
        None,
        "NegativeUnitPrice",
        '{"lineItem/UnblendedRate":"-100.0000000000"}',
    )
