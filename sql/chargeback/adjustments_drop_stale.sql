-- chargeback.adjustments, step 1 of 3: the recorded differences that no longer stand (the current ones are in
-- temp table current_adjustments, from sql/chargeback/adjustments.sql) are removed. A difference stands while
-- month, statement version, team, currency and amount are all the same. No parameters.
DELETE FROM chargeback.adjustments AS a
WHERE NOT EXISTS (
    SELECT 1
    FROM current_adjustments AS n
    WHERE a.billing_month = n.billing_month
        AND a.statement_version = n.statement_version
        AND a.team = n.team
        AND a.currency IS NOT DISTINCT FROM n.currency
        AND a.adjustment = n.adjustment
)
