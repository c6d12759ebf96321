"""Rounding that foots: largest remainder within a table, and tables that add up both ways rounded as one grid."""

from __future__ import annotations

import random
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import pytest

from gpuledger.reports.footing import CENT, allocate, allocate_total, foot_grid, rounded

pytestmark = pytest.mark.both_warehouses

D = Decimal


def test_a_total_is_its_exact_value_rounded_half_away_from_zero():
    assert rounded(D("1.005")) == D("1.01") and rounded(D("-1.005")) == D("-1.01") and rounded(D("2.0049")) == D("2.00")


def test_largest_remainder_gives_the_missing_cents_to_the_largest_remainders():
    # each rounded on its own: 0.33 + 0.33 + 0.33 = 0.99 against a total of 1.00
    assert allocate([D("0.333"), D("0.333"), D("0.334")], D("1.00")) == [D("0.33"), D("0.33"), D("0.34")]
    # the defect: two halves rounded up each print 0.02 more than the total
    parts, total = allocate_total([D("0.005"), D("0.005"), D("1.000")], D("1.010"))
    assert total == D("1.01") and parts == [D("0.01"), D("0.00"), D("1.00")]  # tie: the one listed first
    assert allocate([D("-0.004"), D("0.014")], D("0.01")) == [D("0.00"), D("0.01")]  # a credit: rounded down, -0.01


def test_shares_of_a_hundred_percent_in_tenths():
    shares = allocate([D(1) / D(3)] * 3, D(1), unit=D("0.001"))
    assert shares == [D("0.334"), D("0.333"), D("0.333")] and sum(shares) == 1


def test_a_table_rounded_both_ways_adds_up_across_and_down():
    # two currencies converted, three categories: rounded alone, row 1 and column 1 would each miss a cent
    cells = [[D("0.005"), D("0.005")], [D("10.004"), D("20.004")], [D("0.001"), D("0.001")]]
    grid = foot_grid(cells, rounded(sum(sum(row) for row in cells)))
    assert grid.total == D("30.02")
    assert [sum(row) for row in grid.cells] == grid.row_totals and sum(grid.row_totals) == grid.total
    assert sum(grid.column_totals) == grid.total
    assert grid.row_totals == [D("0.01"), D("30.01"), D("0.00")]


@pytest.mark.parametrize("seed", range(40))
def test_any_grid_foots_with_every_figure_within_a_cent(seed):
    generator = random.Random(seed)
    rows, columns = generator.randint(1, 8), generator.randint(1, 4)
    cells = [
        [
            D(generator.choice([0, generator.randint(-(10**6), 10**9)])) / D(10 ** generator.randint(2, 10))
            for _ in range(columns)
        ]
        for _ in range(rows)
    ]
    exact = sum((sum(row) for row in cells), D(0))
    for total in {
        rounded(exact),
        (exact / CENT).to_integral_value(ROUND_FLOOR) * CENT,
        (exact / CENT).to_integral_value(ROUND_CEILING) * CENT,
    }:
        grid = foot_grid(cells, total)
        assert sum(grid.row_totals) == sum(grid.column_totals) == total
        for i in range(rows):
            assert sum(grid.cells[i]) == grid.row_totals[i] and abs(grid.row_totals[i] - sum(cells[i])) < CENT
            for j in range(columns):
                assert abs(grid.cells[i][j] - cells[i][j]) < CENT and grid.cells[i][j] == grid.cells[i][j].quantize(
                    CENT
                )
        for j in range(columns):
            column = [row[j] for row in grid.cells]
            assert sum(column) == grid.column_totals[j] and abs(grid.column_totals[j] - sum(r[j] for r in cells)) < CENT


def test_a_single_column_grid_is_largest_remainder():
    parts = [D("0.333"), D("0.333"), D("0.334")]
    grid = foot_grid([[p] for p in parts], D("1.00"))
    assert [row[0] for row in grid.cells] == allocate(parts, D("1.00"))
