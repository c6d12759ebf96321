"""Strict conformance checks: clean data passes, and one bad row among good ones fails the right check."""

from __future__ import annotations

import pytest

from gpuledger.gates.checks import run_checks
from gpuledger.gates.load import load_delivery
from gpuledger.warehouse.sqlfiles import load_sql
from models.delivery import Delivery
from tests.fixtures.cur_cases import every_line_item_type, write_cur1_csv


@pytest.fixture
def loaded(con, tmp_path):
    load_delivery(con, Delivery("aws-cur1", (write_cur1_csv(tmp_path / "cur.csv", every_line_item_type()),)))
    return con


def _failed(con) -> dict[str, set[str]]:
    return {r.check: {v.column_name for v in r.sample} for r in run_checks(con) if not r.passed}


def test_clean_delivery_passes_every_check(loaded):
    assert _failed(loaded) == {}


ONE_USAGE_ROW = "x_SourceLineItemId = 'u1'"


@pytest.mark.parametrize(
    ("mutation", "check", "column"),
    [
        (
            f"UPDATE focus.cost_rows SET ChargeCategory = 'usage' WHERE {ONE_USAGE_ROW}",
            "focus_allowed_values",
            "ChargeCategory",
        ),
        (
            f"UPDATE focus.cost_rows SET ChargeClass = 'correction' WHERE {ONE_USAGE_ROW}",
            "focus_allowed_values",
            "ChargeClass",
        ),
        (
            f"UPDATE focus.cost_rows SET PricingCategory = 'OnDemand' WHERE {ONE_USAGE_ROW}",
            "focus_allowed_values",
            "PricingCategory",
        ),
        (
            f"UPDATE focus.cost_rows SET ServiceSubcategory = 'Object Storage' WHERE {ONE_USAGE_ROW}",
            "focus_service_subcategory",
            "ServiceSubcategory",
        ),
        (
            f"UPDATE focus.cost_rows SET ChargePeriodEnd = ChargePeriodStart WHERE {ONE_USAGE_ROW}",
            "focus_period_order",
            "ChargePeriodEnd",
        ),
        (
            f"""UPDATE focus.cost_rows SET Tags = '{{"team": {{"a": 1}}}}' WHERE {ONE_USAGE_ROW}""",
            "focus_json_objects",
            "Tags",
        ),
        (f"UPDATE focus.cost_rows SET Tags = '[1, 2]' WHERE {ONE_USAGE_ROW}", "focus_json_objects", "Tags"),
        (
            f"UPDATE focus.cost_rows SET BillingCurrency = 'XYZ' WHERE {ONE_USAGE_ROW}",
            "focus_currency_codes",
            "BillingCurrency",
        ),
        (
            f"UPDATE focus.cost_rows SET BillingCurrency = 'EUR' WHERE {ONE_USAGE_ROW}",
            "focus_single_currency",
            "BillingCurrency",
        ),
        (
            f"UPDATE focus.cost_rows SET SkuPriceId = NULL WHERE {ONE_USAGE_ROW}",
            "focus_nullability",
            "SkuPriceId",
        ),
        (
            f"UPDATE focus.cost_rows SET PricingQuantity = NULL, PricingUnit = NULL WHERE {ONE_USAGE_ROW}",
            "focus_nullability",
            "PricingQuantity",
        ),
        (
            f"UPDATE focus.cost_rows SET PricingUnit = '' WHERE {ONE_USAGE_ROW}",
            "focus_nullability",
            "PricingUnit",
        ),
        ("UPDATE focus.cost_rows SET SkuId = 'x' WHERE ChargeCategory = 'Tax'", "focus_nullability", "SkuId"),
        (
            f"UPDATE focus.cost_rows SET RegionName = NULL WHERE {ONE_USAGE_ROW}",
            "focus_nullability",
            "RegionName",
        ),
        (
            "UPDATE focus.cost_rows SET ConsumedQuantity = 1, ConsumedUnit = 'Hours' WHERE ChargeCategory = 'Tax'",
            "focus_nullability",
            "ConsumedQuantity",
        ),
        (
            f"UPDATE focus.cost_rows SET ListCost = ListCost + 1 WHERE {ONE_USAGE_ROW}",
            "focus_unit_price_products",
            "ListCost",
        ),
        (
            "UPDATE focus.cost_rows SET EffectiveCost = 0 WHERE x_SourceLineItemId = 'cr'",
            "focus_cost_rules",
            "EffectiveCost",
        ),
        (
            "UPDATE focus.cost_rows SET ServiceCategory = 'Storage', ServiceSubcategory = 'Object Storage'"
            " WHERE x_SourceLineItemId = 'u2'",
            "focus_service_name_category",
            "ServiceCategory",
        ),
        ("ALTER TABLE focus.cost_rows ADD COLUMN TeamName VARCHAR", "focus_column_names", "TeamName"),
        ("ALTER TABLE focus.cost_rows ALTER BilledCost TYPE DOUBLE", "focus_column_names", "BilledCost"),
    ],
)
def test_one_bad_row_fails_its_check(loaded, mutation, check, column):
    loaded.execute(mutation)
    loaded.execute(load_sql("gates/published_costs.sql"))  # re-binds the published view after a column change
    failed = _failed(loaded)
    assert check in failed, failed
    assert column in failed[check]
