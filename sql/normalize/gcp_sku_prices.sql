-- Temp table gcp_sku_prices: one Cloud Billing Catalog price per (SKU, currency), the newest, from the price
-- lists connectors/gcp/billing.py landed. Parameter: $files (the sku_prices.parquet files).
INSERT INTO gcp_sku_prices
SELECT sku_id, currency, usage_unit_description, unit_price, tier_start_amount, tier_count
FROM read_parquet($files)
QUALIFY row_number() OVER (PARTITION BY sku_id, currency ORDER BY effective_time DESC) = 1
