-- chargeback.adjustments becomes the current differences to the issued statements (temp table
-- current_adjustments, from sql/chargeback/adjustments.sql): a difference stands while month, statement version,
-- team, currency and amount are all the same; one that stands takes the month it now applies to and keeps when it
-- was first detected, one no longer current goes, a new one is detected now. Parameter: $now (the run's time).
MERGE INTO chargeback.adjustments AS a
USING current_adjustments AS n
ON a.billing_month = n.billing_month
    AND a.statement_version = n.statement_version
    AND a.team = n.team
    AND a.currency IS NOT DISTINCT FROM n.currency
    AND a.adjustment = n.adjustment
WHEN MATCHED THEN UPDATE SET applies_to_month = n.applies_to_month
WHEN NOT MATCHED BY TARGET THEN INSERT VALUES (
    n.billing_month, n.statement_version, n.team, n.currency, n.issued_total, n.restated_total, n.adjustment,
    n.applies_to_month, $now
)
WHEN NOT MATCHED BY SOURCE THEN DELETE
