-- chargeback.adjustments, step 3 of 3: the differences of temp table current_adjustments not recorded yet,
-- detected now. Parameter: $now (the run's time).
INSERT INTO chargeback.adjustments
SELECT n.*, $now
FROM current_adjustments AS n
WHERE NOT EXISTS (
    SELECT 1
    FROM chargeback.adjustments AS a
    WHERE a.billing_month = n.billing_month
        AND a.statement_version = n.statement_version
        AND a.team = n.team
        AND a.currency IS NOT DISTINCT FROM n.currency
        AND a.adjustment = n.adjustment
)
