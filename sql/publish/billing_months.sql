-- The billing months (YYYY-MM) with published FOCUS rows, ordered: each must pass its allocation audits before
-- a publish. No parameters.
SELECT DISTINCT strftime(billing_month(BillingPeriodStart), '%Y-%m')
FROM focus.costs
ORDER BY 1
