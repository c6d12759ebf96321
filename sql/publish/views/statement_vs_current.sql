-- Issued chargeback statements beside today's figures: a restatement of an issued month shows as an
-- adjustment here (and in chargeback.adjustments), never as an edit of the statement finance signed. Totals are
-- rounded to cents and the adjustment is the difference of the rounded totals, so each row foots as shown.
WITH latest AS (
    SELECT billing_month, max(version) AS version
    FROM chargeback.statements
    GROUP BY ALL
),

issued AS (
    SELECT l.*
    FROM chargeback.statement_lines AS l
    JOIN latest USING (billing_month, version)
),

current AS (
    SELECT t.billing_month, t.team, t.currency, t.total_cost
    FROM showback.team_month AS t
    WHERE t.billing_month IN (SELECT billing_month FROM latest)
),

compared AS (
    SELECT
        coalesce(i.billing_month, c.billing_month) AS billing_month,
        coalesce(i.team, c.team) AS team,
        coalesce(i.currency, c.currency) AS currency,
        i.version AS statement_version,
        cents(coalesce(i.total_cost, 0)) AS issued_total,
        cents(coalesce(c.total_cost, 0)) AS current_total
    FROM issued AS i
    FULL JOIN current AS c
        ON c.billing_month = i.billing_month AND c.team = i.team AND c.currency IS NOT DISTINCT FROM i.currency
)

SELECT *, CAST(current_total - issued_total AS DECIMAL(18, 2)) AS adjustment
FROM compared
ORDER BY ALL
