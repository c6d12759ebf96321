-- `gpuledger export-focus`: the FOCUS rows of one provider and/or billing month (NULL: all), streamed to a file.
-- Reads the temp view focus_export_rows: focus.costs (FOCUS 1.2), or a FOCUS 1.3 CostAndUsage dataset
-- (gpuledger/publish/focus_1_3.py).
-- Parameters: $provider (NULL, or in any case a ProviderName or a provider key of models/formats.py PROVIDERS:
-- the rows of deliveries in its source formats), $month (YYYY-MM or NULL), $out (the file), $format ('parquet' or
-- 'csv') and $compression (COPY's, for that format). Returns the number of rows written.
COPY (
    SELECT *
    FROM focus_export_rows
    WHERE (
        $provider IS NULL
        OR lower(ProviderName) = lower($provider)
        OR x_DeliveryId IN (
            SELECT d.delivery_id
            FROM meta.deliveries AS d
            JOIN ref.source_formats AS f USING (source_format)
            WHERE f.provider = lower($provider)
        )
    )
        AND ($month IS NULL OR strftime(x_BillingMonth, '%Y-%m') = $month)
    ORDER BY BillingAccountId, BillingPeriodStart, x_DeliveryId, x_SourceFile, x_SourceLineItemId
) TO $out (FORMAT $format, COMPRESSION $compression)
