-- Statement $month: the restatements it lists (chargeback.adjustments, converted at the restated month's rate):
-- kind 'correction' for $month's own earlier version (what this version changes), 'carried' for an earlier
-- issued month restated since, whose difference this month's statement carries.
WITH adjustments AS (
    SELECT *
    FROM chargeback.adjustments
    WHERE billing_month = $month OR (applies_to_month = $month AND billing_month < $month)
),

rates AS (
    SELECT DISTINCT billing_month, currency, exchange_rate
    FROM showback.team_month_reporting
)

SELECT
    CASE WHEN a.billing_month = $month THEN 'correction' ELSE 'carried' END AS kind,
    strftime(a.billing_month, '%Y-%m') AS restated_month,
    a.statement_version,
    a.team,
    a.currency,
    a.issued_total,
    a.restated_total,
    a.adjustment,
    r.exchange_rate,
    CAST(round(a.adjustment * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS adjustment_reporting
FROM adjustments AS a
LEFT JOIN rates AS r ON r.billing_month = a.billing_month AND r.currency IS NOT DISTINCT FROM a.currency
ORDER BY kind DESC, a.team, restated_month, a.currency NULLS FIRST
