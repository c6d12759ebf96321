-- Statement $month: the restatements it lists (chargeback.adjustments, converted at the restated month's rate).
-- Kind 'correction': what this version changes against $month's latest issued version, per team and currency
-- (its own pending adjustments: a new version is refused once a later statement carried one). Kind 'carried': an
-- earlier issued month restated since, whose difference this statement carries: those pending for $month and
-- those $month's latest version already carried (a new version keeps them).
WITH latest AS (
    SELECT max(version) AS version
    FROM chargeback.statements
    WHERE billing_month = $month
),

-- this month's own and the earlier months' differences not charged yet
pending AS (
    SELECT
        CASE WHEN billing_month = $month THEN 'correction' ELSE 'carried' END AS kind,
        billing_month AS restated_month,
        statement_version,
        team,
        currency,
        issued_total,
        restated_total
    FROM chargeback.adjustments
    WHERE billing_month = $month OR (applies_to_month = $month AND billing_month < $month)
),

carried_before AS (
    SELECT kind, restated_month, statement_version, team, currency, issued_total, restated_total
    FROM chargeback.statement_adjustments
    WHERE billing_month = $month AND version = (SELECT version FROM latest) AND kind = 'carried'
),

listed AS (
    SELECT * FROM pending
    UNION ALL
    SELECT * FROM carried_before
),

rates AS (
    SELECT DISTINCT billing_month, currency, exchange_rate
    FROM showback.team_month_reporting
)

SELECT
    a.kind,
    strftime(a.restated_month, '%Y-%m') AS restated_month,
    a.statement_version,
    a.team,
    a.currency,
    a.issued_total,
    a.restated_total,
    CAST(a.restated_total - a.issued_total AS DECIMAL(38, 10)) AS adjustment,
    r.exchange_rate,
    CAST(round((a.restated_total - a.issued_total) * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS adjustment_reporting
FROM listed AS a
LEFT JOIN rates AS r ON r.billing_month = a.restated_month AND r.currency IS NOT DISTINCT FROM a.currency
ORDER BY kind DESC, a.team, restated_month, a.currency NULLS FIRST, a.statement_version
