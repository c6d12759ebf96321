-- Charges of the month whose split pieces do not sum exactly to the charge's BilledCost and EffectiveCost
-- (including charges with no pieces, and pieces with no charge). Parameter: $billing_month (the month's first day).
WITH charges AS (
    SELECT x_DeliveryId || '/' || x_SourceLineItemId AS charge_key, BilledCost, EffectiveCost
    FROM focus.costs
    WHERE billing_month(BillingPeriodStart) = $billing_month
),

pieces AS (
    SELECT charge_key, sum(BilledCost) AS billed, sum(EffectiveCost) AS effective
    FROM allocation.cost_split
    WHERE billing_month(BillingPeriodStart) = $billing_month
    GROUP BY charge_key
)

SELECT coalesce(c.charge_key, p.charge_key) AS charge_key, c.BilledCost, p.billed, c.EffectiveCost, p.effective
FROM charges AS c
FULL JOIN pieces AS p USING (charge_key)
WHERE c.BilledCost IS DISTINCT FROM p.billed OR c.EffectiveCost IS DISTINCT FROM p.effective
