-- `gpuledger export-focus`: the FOCUS rows of one provider and/or billing month (NULL: all) as Parquet, streamed.
-- Parameters: $provider (ProviderName or NULL), $month (YYYY-MM or NULL), $out (the file).
COPY (
    SELECT *
    FROM focus.costs
    WHERE ($provider IS NULL OR ProviderName = $provider)
        AND ($month IS NULL OR strftime(billing_month(BillingPeriodStart), '%Y-%m') = $month)
    ORDER BY BillingAccountId, BillingPeriodStart, x_DeliveryId, x_SourceFile, x_SourceLineItemId
) TO $out (FORMAT parquet, COMPRESSION zstd)
