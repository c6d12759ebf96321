-- Statement $month: the restatements it lists, converted at the restated month's rate. Kind 'correction': what
-- this version changes against $month's latest issued version, per team and currency. Kind 'carried': an earlier
-- issued month restated since, whose difference this statement carries: those pending for $month
-- (chargeback.adjustments) and those $month's latest version already carried (a new version keeps them).
WITH latest AS (
    SELECT max(version) AS version
    FROM chargeback.statements
    WHERE billing_month = $month
),

issued AS (
    SELECT l.version, l.team, l.currency, l.total_cost
    FROM chargeback.statement_lines AS l
    JOIN latest USING (version)
    WHERE l.billing_month = $month
),

today AS (
    SELECT team, currency, total_cost
    FROM showback.team_month
    WHERE billing_month = $month
),

corrections AS (
    SELECT
        'correction' AS kind,
        CAST($month AS DATE) AS restated_month,
        (SELECT version FROM latest) AS statement_version,
        coalesce(i.team, t.team) AS team,
        coalesce(i.currency, t.currency) AS currency,
        CAST(coalesce(i.total_cost, 0) AS DECIMAL(38, 10)) AS issued_total,
        CAST(coalesce(t.total_cost, 0) AS DECIMAL(38, 10)) AS restated_total
    FROM issued AS i
    FULL JOIN today AS t ON t.team = i.team AND t.currency IS NOT DISTINCT FROM i.currency
    WHERE (SELECT version FROM latest) IS NOT NULL AND coalesce(i.total_cost, 0) <> coalesce(t.total_cost, 0)
),

pending AS (
    SELECT
        'carried' AS kind,
        billing_month AS restated_month,
        statement_version,
        team,
        currency,
        issued_total,
        restated_total
    FROM chargeback.adjustments
    WHERE applies_to_month = $month AND billing_month < $month
),

carried_before AS (
    SELECT kind, restated_month, statement_version, team, currency, issued_total, restated_total
    FROM chargeback.statement_adjustments
    WHERE billing_month = $month AND version = (SELECT version FROM latest) AND kind = 'carried'
),

listed AS (
    SELECT * FROM corrections
    UNION ALL
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
