-- `gpuledger export-focus --focus-version 1.3 --dataset contract-commitment`: the FOCUS 1.3 ContractCommitment rows
-- (temp view focus_export_rows, gpuledger/publish/focus_1_3.py) of one provider and/or of the commitments charged in
-- one billing month (NULL: all), streamed to a file. Parameters as export_focus.sql: $provider (a ProviderName or a
-- provider key of models/formats.py PROVIDERS, in any case), $month (YYYY-MM or NULL), $out, $format, $compression.
-- Returns the number of rows written.
COPY (
    SELECT *
    FROM focus_export_rows
    WHERE (
        $provider IS NULL
        OR lower(x_ProviderName) = lower($provider)
        OR x_ProviderName IN (
            SELECT DISTINCT c.ProviderName
            FROM focus.costs AS c
            JOIN meta.deliveries AS d ON d.delivery_id = c.x_DeliveryId
            JOIN ref.source_formats AS f USING (source_format)
            WHERE f.provider = lower($provider)
        )
    )
        AND ($month IS NULL OR $month BETWEEN strftime(x_FirstBillingMonth, '%Y-%m') AND strftime(x_LastBillingMonth, '%Y-%m'))
    ORDER BY x_ProviderName, x_BillingAccountId, ContractId, ContractCommitmentId
) TO $out (FORMAT $format, COMPRESSION $compression)
