-- chargeback.adjustments as it now stands (temp table standing_adjustments), from the current differences to the
-- issued statements (temp table current_adjustments, sql/chargeback/adjustments.sql): a difference stands while
-- month, statement version, team, currency and amount are all the same, and keeps its recorded totals and when it
-- was first detected while taking the month it now applies to; a new one is detected now; one no longer current
-- goes. One SELECT instead of a MERGE with three actions, which a DuckLake warehouse does not take.
-- Parameter: $now (the run's time).
CREATE OR REPLACE TEMP TABLE standing_adjustments AS
WITH recorded AS (
    SELECT * FROM chargeback.adjustments
),

current AS (
    SELECT * FROM current_adjustments
)

SELECT
    c.billing_month,
    c.statement_version,
    c.team,
    c.currency,
    coalesce(r.issued_total, c.issued_total) AS issued_total,
    coalesce(r.restated_total, c.restated_total) AS restated_total,
    c.adjustment,
    c.applies_to_month,
    coalesce(r.detected_at, $now) AS detected_at
FROM current AS c
LEFT JOIN recorded AS r
    ON r.billing_month = c.billing_month
    AND r.statement_version = c.statement_version
    AND r.team = c.team
    AND r.currency IS NOT DISTINCT FROM c.currency
    AND r.adjustment = c.adjustment
