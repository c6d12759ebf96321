-- chargeback.adjustments (without detected_at): per issued month, team and currency, how far today's showback
-- total is from what was charged: the latest issued statement plus the differences later statements already
-- carried. A restatement never edits an issued statement: the difference is carried by the next statement still
-- to be issued (or the month after the last known one, when every later one is issued), and only once.
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

-- differences the latest version of a later month carried, measured against the restated month's latest version
carried AS (
    SELECT c.restated_month AS billing_month, c.statement_version, c.team, c.currency, c.adjustment AS total_cost
    FROM chargeback.statement_adjustments AS c
    JOIN latest AS carrier ON carrier.billing_month = c.billing_month AND carrier.statement_version = c.version
    JOIN latest AS restated
        ON restated.billing_month = c.restated_month AND restated.statement_version = c.statement_version
    WHERE c.kind = 'carried'
),

charged AS (
    SELECT billing_month, statement_version, team, currency, sum(total_cost) AS total_cost
    FROM (SELECT * FROM issued UNION ALL BY NAME SELECT * FROM carried)
    GROUP BY ALL
),

restated AS (
    SELECT t.billing_month, s.statement_version, t.team, t.currency, t.total_cost
    FROM showback.team_month AS t
    JOIN latest AS s USING (billing_month)
),

differences AS (
    SELECT
        coalesce(c.billing_month, r.billing_month) AS billing_month,
        coalesce(c.statement_version, r.statement_version) AS statement_version,
        coalesce(c.team, r.team) AS team,
        coalesce(c.currency, r.currency) AS currency,
        coalesce(c.total_cost, 0) AS charged_total,
        coalesce(r.total_cost, 0) AS restated_total
    FROM charged AS c
    FULL JOIN restated AS r
        ON r.billing_month = c.billing_month AND r.team = c.team AND r.currency IS NOT DISTINCT FROM c.currency
)

SELECT
    d.billing_month,
    d.statement_version,
    d.team,
    d.currency,
    CAST(d.charged_total AS DECIMAL(38, 10)) AS issued_total,
    CAST(d.restated_total AS DECIMAL(38, 10)) AS restated_total,
    CAST(d.restated_total - d.charged_total AS DECIMAL(38, 10)) AS adjustment,
    coalesce(
        (SELECT min(m.billing_month) FROM meta.months AS m WHERE m.billing_month > d.billing_month AND m.state <> 'issued'),
        (SELECT CAST(max(m.billing_month) + INTERVAL 1 MONTH AS DATE) FROM meta.months AS m)
    ) AS applies_to_month
FROM differences AS d
WHERE d.restated_total <> d.charged_total
