-- The billing months (YYYY-MM) with published FOCUS rows, oldest first: the months a run splits and each must
-- pass its audits before a publish. No parameters.
SELECT DISTINCT strftime(billing_month(BillingPeriodStart), '%Y-%m')
FROM focus.costs
ORDER BY 1
