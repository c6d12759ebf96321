-- GPU instances billed per billing month and currency, and their EffectiveCost: without a telemetry source
-- the split finds no job on them, so all of it is idle (unallocated). A GPU instance is what the split
-- (allocation/cost_split.sql) takes for one: gpus_per_instance() (allocation/macros.sql) says it has GPUs;
-- commitments paid for and not used are idle of their own kind. No parameters.
SELECT
    strftime(billing_month(c.BillingPeriodStart), '%Y-%m') AS billing_month,
    c.BillingCurrency AS currency,
    count(DISTINCT c.ResourceId) AS gpu_instances,
    sum(c.EffectiveCost) AS effective_cost
FROM focus.costs AS c
LEFT JOIN ref.gpu_instances AS g ON g.provider = c.ProviderName AND g.instance_type = c.x_InstanceType
WHERE c.ResourceId IS NOT NULL
    AND c.CommitmentDiscountStatus IS DISTINCT FROM 'Unused'
    AND gpus_per_instance(g.gpu_count, c.SkuPriceDetails) IS NOT NULL
GROUP BY ALL
ORDER BY ALL
