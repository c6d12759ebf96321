-- The published FOCUS rows as Parquet for other engines, partitioned by provider and billing month (YYYY-MM),
-- in a fixed row order. Parameter: $dir (the new version's folder).
COPY (
    SELECT *, strftime(x_BillingMonth, '%Y-%m') AS billing_month
    FROM focus.costs
    ORDER BY ALL
) TO $dir (FORMAT parquet, PARTITION_BY (ProviderName, billing_month), COMPRESSION zstd)
