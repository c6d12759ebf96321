-- Exact proportional splitting of DECIMAL(38,10) amounts (used by the allocation models).
-- A charge's pieces are ordered; piece i gets round(cost x cum_i / W) - round(cost x cum_(i-1) / W) in units
-- of 1e-10, with cum_i the running sum of the integer weights and W their total. The pieces therefore
-- sum to the cost exactly, and each has the cost's sign or is zero (rounding is monotone in cum).

CREATE OR REPLACE TEMP MACRO cost_units(cost) AS CAST(cost * 10000000000 AS HUGEINT);

CREATE OR REPLACE TEMP MACRO rounded_share(units, cum_weight, total_weight) AS
    sign(units) * ((abs(units) * CAST(cum_weight AS HUGEINT) * 2 + total_weight) // (2 * CAST(total_weight AS HUGEINT)));

CREATE OR REPLACE TEMP MACRO split_amount(cost, cum_weight, weight, total_weight) AS
    CAST(
        CAST(
            rounded_share(cost_units(cost), cum_weight, total_weight)
            - rounded_share(cost_units(cost), cum_weight - weight, total_weight)
            AS DECIMAL(38, 10)
        ) * 0.0000000001
        AS DECIMAL(38, 10)
    );

-- The bucket or storage account that a checkpoint URI or a storage ResourceId names, in lower case:
-- s3://b/..., gs://b/..., https://acct.blob.core.windows.net/c/..., abfss://c@acct.dfs.core.windows.net/...,
-- an S3 bucket's ResourceId (its name), a GCS bucket's (//storage.googleapis.com/projects/_/buckets/b) and a
-- storage account's ARM id (.../storageAccounts/acct).
CREATE OR REPLACE TEMP MACRO storage_name(ref) AS lower(CASE
    WHEN regexp_matches(ref, '^[a-z0-9+]+://[^/]*\.core\.windows\.net', 'i')
        THEN regexp_extract(ref, '^[^:]+://(?:[^@/]*@)?([^./]+)\.', 1)
    WHEN regexp_matches(ref, '^[a-z0-9+]+://', 'i') THEN split_part(ref, '/', 3)
    WHEN regexp_matches(ref, '/(storageaccounts|buckets)/[^/]+$', 'i') THEN regexp_extract(ref, '[^/]+$')
    ELSE ref
END);

-- GPUs per instance: the GPU catalog's count (ref.gpu_instances), else the provider's own SkuPriceDetails GpuCount
-- (a FOCUS-defined key); NULL when neither says the instance has a GPU. The split and its warnings size by it.
CREATE OR REPLACE TEMP MACRO gpus_per_instance(catalog_gpu_count, sku_price_details) AS
    nullif(greatest(coalesce(catalog_gpu_count, TRY_CAST(sku_price_details->>'GpuCount' AS INTEGER)), 0), 0);

-- The UTC hours a charge period touches, and how many (at least one): what spreads a charge evenly over its hours
-- (exact for hourly charges, an even spread for daily ones).
CREATE OR REPLACE TEMP MACRO charge_period_hours(period_start, period_end) AS
    range(date_trunc('hour', period_start), period_end, INTERVAL 1 HOUR);

CREATE OR REPLACE TEMP MACRO charge_period_hour_count(period_start, period_end) AS
    greatest(ceil(epoch(period_end - date_trunc('hour', period_start)) / 3600), 1);
