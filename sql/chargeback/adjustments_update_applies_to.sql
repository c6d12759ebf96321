-- chargeback.adjustments, step 2 of 3: a difference that still stands takes the month it now applies to
-- (temp table current_adjustments), keeping when it was first detected. No parameters.
UPDATE chargeback.adjustments AS a
SET applies_to_month = n.applies_to_month
FROM current_adjustments AS n
WHERE a.billing_month = n.billing_month
    AND a.statement_version = n.statement_version
    AND a.team = n.team
    AND a.currency IS NOT DISTINCT FROM n.currency
    AND a.adjustment = n.adjustment
