-- chargeback.adjustments (without detected_at): per issued month, team and currency, how far today's showback
-- total is from the latest issued statement. A restatement never edits an issued statement: the difference
-- is carried by the next statement still to be issued (or the month after, when every later one is issued).
WITH latest AS (
    SELECT billing_month, max(version) AS statement_version
    FROM chargeback.statements
    GROUP BY ALL
),

issued AS (
    SELECT l.billing_month, l.version AS statement_version, l.team, l.currency, l.total_cost
    FROM chargeback.statement_lines AS l
    JOIN latest AS s ON s.billing_month = l.billing_month AND s.statement_version = l.version
),

restated AS (
    SELECT t.billing_month, s.statement_version, t.team, t.currency, t.total_cost
    FROM showback.team_month AS t
    JOIN latest AS s USING (billing_month)
),

differences AS (
    SELECT
        coalesce(i.billing_month, r.billing_month) AS billing_month,
        coalesce(i.statement_version, r.statement_version) AS statement_version,
        coalesce(i.team, r.team) AS team,
        coalesce(i.currency, r.currency) AS currency,
        coalesce(i.total_cost, 0) AS issued_total,
        coalesce(r.total_cost, 0) AS restated_total
    FROM issued AS i
    FULL JOIN restated AS r
        ON r.billing_month = i.billing_month AND r.team = i.team AND r.currency IS NOT DISTINCT FROM i.currency
)

SELECT
    d.billing_month,
    d.statement_version,
    d.team,
    d.currency,
    CAST(d.issued_total AS DECIMAL(38, 10)) AS issued_total,
    CAST(d.restated_total AS DECIMAL(38, 10)) AS restated_total,
    CAST(d.restated_total - d.issued_total AS DECIMAL(38, 10)) AS adjustment,
    coalesce(
        (SELECT min(m.billing_month) FROM meta.months AS m WHERE m.billing_month > d.billing_month AND m.state <> 'issued'),
        CAST(d.billing_month + INTERVAL 1 MONTH AS DATE)
    ) AS applies_to_month
FROM differences AS d
WHERE d.restated_total <> d.issued_total
