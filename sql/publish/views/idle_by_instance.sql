-- Idle GPU money per instance (resource), billing month and currency, by idle kind, with the instance type, its
-- GPU model from the catalog (ref.gpu_instances) and the team paying for the capacity no job held: where most idle
-- money sits, since it belongs to no job. The kinds are rounded to cents that add up to idle_cost (largest
-- remainder); the exact pieces are in allocation.cost_split.
WITH idle AS (
    SELECT
        s.billing_month,
        s.BillingCurrency AS currency,
        s.ProviderName,
        s.ResourceId,
        c.x_InstanceType AS instance_type,
        s.idle_kind,
        s.team,
        s.EffectiveCost,
        CAST(s.gpu_hours AS DECIMAL(38, 10)) AS gpu_hours
    FROM allocation.cost_split AS s
    LEFT JOIN focus.costs AS c ON c.x_DeliveryId = s.x_DeliveryId AND c.x_SourceLineItemId = s.x_SourceLineItemId
    WHERE s.category = 'idle'
),

instances AS (
    SELECT
        billing_month,
        currency,
        ProviderName,
        ResourceId,
        instance_type,
        string_agg(DISTINCT team, '+' ORDER BY team) FILTER (WHERE idle_kind IN ('unallocated', 'unused_commitment'))
            AS owner_team,
        coalesce(sum(EffectiveCost) FILTER (WHERE idle_kind = 'allocated'), 0) AS idle_allocated_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE idle_kind = 'underutilized'), 0) AS idle_underutilized_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE idle_kind = 'unallocated'), 0) AS idle_unallocated_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE idle_kind = 'unused_commitment'), 0) AS idle_unused_commitment_cost,
        sum(EffectiveCost) AS exact_idle_cost,
        sum(gpu_hours) AS idle_gpu_hours
    FROM idle
    GROUP BY ALL
),

rounded AS (
    SELECT
        *,
        cents_that_foot([
            idle_allocated_cost, idle_underutilized_cost, idle_unallocated_cost, idle_unused_commitment_cost
        ]) AS parts
    FROM instances
)

SELECT
    r.billing_month,
    r.currency,
    r.ProviderName,
    r.ResourceId,
    r.instance_type,
    g.gpu_model,
    r.owner_team,
    CAST(list_sum(r.parts) AS DECIMAL(18, 2)) AS idle_cost,
    r.parts[1] AS idle_allocated_cost,
    r.parts[2] AS idle_underutilized_cost,
    r.parts[3] AS idle_unallocated_cost,
    r.parts[4] AS idle_unused_commitment_cost,
    tenths(r.idle_gpu_hours) AS idle_gpu_hours
FROM rounded AS r
LEFT JOIN ref.gpu_instances AS g ON g.provider = r.ProviderName AND g.instance_type = r.instance_type
ORDER BY r.billing_month, r.currency, r.exact_idle_cost DESC, r.ProviderName, r.ResourceId
