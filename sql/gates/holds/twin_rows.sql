-- Rows of the staged delivery equal to another of its rows in every column but their place in the files: a format
-- without line-item ids cannot say whether a repeated line is a second charge or the same one listed twice (a
-- FOCUS file with every row doubled, a GCP record twice in one extract), so a person decides. Run only for formats
-- without ids (FormatModel.twins_held: repeated ids are refused before); rows of $providers, which list identical
-- charges as rows of their own (Azure, docs/decisions/0006), are not compared. Parameters: $id (staged delivery),
-- $providers (their ProviderNames).
WITH staged AS (
    SELECT
        ProviderName,
        BillingAccountId,
        BillingPeriodStart,
        x_SourceFile,
        x_SourceLineItemId,
        hash(*COLUMNS(* EXCLUDE (x_SourceFile, x_SourceLineItemId))) AS content
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id AND NOT list_contains($providers, ProviderName)
),

twins AS (
    SELECT
        *,
        count(*) OVER (PARTITION BY ProviderName, BillingAccountId, BillingPeriodStart, content) AS copies
    FROM staged
    QUALIFY copies > 1
)

SELECT
    ProviderName,
    BillingAccountId,
    strftime(billing_month(BillingPeriodStart), '%Y-%m') AS billing_period,
    count(*) - count(DISTINCT content) || ' row(s) repeat another row of the delivery in every column (e.g. line item '
        || arg_min(x_SourceLineItemId, (x_SourceFile, x_SourceLineItemId)) || ' of '
        || min(x_SourceFile) || ', listed ' || max(copies) || ' times): a line listed twice would count twice'
        AS detail
FROM twins
GROUP BY ALL
ORDER BY ALL
