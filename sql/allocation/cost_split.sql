-- allocation.cost_split for one billing month: every FOCUS charge split into run / idle /
-- checkpoint_storage / egress / other pieces, per team and job, summing exactly to the charge.
-- Parameters: $period_start (the month's UTC start, keying gpu.usage); $billing_month (its first day: charges
-- belong to it by billing_month(BillingPeriodStart)).
-- Reads focus.costs, gpu.usage (this month), gpu.jobs, gpu.checkpoint_bytes, gpu.egress_bytes,
-- ref.gpu_instance_types and the alloc.* configuration tables; needs sql/allocation/macros.sql.

WITH charges AS (
    SELECT
        x_DeliveryId || '/' || x_SourceLineItemId AS charge_key,
        x_DeliveryId,
        x_SourceLineItemId,
        ProviderName,
        BillingAccountId,
        SubAccountId,
        BillingPeriodStart,
        BillingCurrency,
        ChargeCategory,
        ChargeClass,
        ChargePeriodStart,
        ChargePeriodEnd,
        ServiceCategory,
        ServiceName,
        ResourceId,
        x_InstanceType,
        x_UsageType,
        Tags,
        CommitmentDiscountStatus,
        ConsumedQuantity,
        ConsumedUnit,
        SkuPriceDetails,
        BilledCost,
        EffectiveCost
    FROM focus.costs
    WHERE billing_month(BillingPeriodStart) = $billing_month
),

jobs AS (
    SELECT
        j.cluster, j.job_id, coalesce(m.team, j.account, 'unallocated') AS team, j.checkpoint_uri, j.start_time
    FROM gpu.jobs AS j
    LEFT JOIN alloc.job_account_teams AS m ON m.account = j.account
),

usage AS (
    SELECT * FROM gpu.usage WHERE billing_period_start = $period_start
),

-- the charge's own team: first configured tag key present, else its account's team
tagged AS (
    SELECT
        c.*,
        list_filter(list_transform(k.tag_keys, lambda key: c.Tags->>key), lambda v: v <> '')[1] AS tag_team
    FROM charges AS c
    CROSS JOIN (SELECT coalesce(list(tag_key ORDER BY priority), []) AS tag_keys FROM alloc.team_tag_keys) AS k
),

owned AS (
    SELECT
        t.* EXCLUDE (tag_team),
        coalesce(t.tag_team, a.team, 'unallocated') AS owner_team,
        CASE
            WHEN t.tag_team IS NOT NULL THEN 'owner-tag'
            WHEN a.team IS NOT NULL THEN 'owner-account'
            ELSE 'unallocated'
        END AS owner_basis
    FROM tagged AS t
    LEFT JOIN alloc.account_teams AS a ON a.account_id = t.SubAccountId
),

-- GPUs per instance: the catalog's, else the provider's own SkuPriceDetails GpuCount (a FOCUS-defined key)
sized AS (
    SELECT
        o.*,
        gpus_per_instance(c.gpu_count, o.SkuPriceDetails) AS gpu_count
    FROM owned AS o
    LEFT JOIN ref.gpu_instances AS c ON c.provider = o.ProviderName AND c.instance_type = o.x_InstanceType
),

kinds AS (
    SELECT
        o.*,
        CASE
            -- a commitment paid for and not used is idle the bill itself reports
            WHEN o.CommitmentDiscountStatus = 'Unused' THEN 'unused_commitment'
            -- egress first: GCP bills an instance's egress under the instance's own ResourceId
            WHEN o.x_UsageType IS NOT NULL AND EXISTS (
                SELECT 1 FROM alloc.egress_patterns AS p
                WHERE p.provider = o.ProviderName AND o.x_UsageType LIKE p.pattern
            ) THEN 'egress'
            WHEN o.gpu_count IS NOT NULL AND o.ResourceId IS NOT NULL THEN 'gpu'
            WHEN o.ServiceCategory = 'Storage' AND (
                storage_name(o.ResourceId) IN (SELECT storage_name(resource_id) FROM alloc.checkpoint_resources)
                OR EXISTS (SELECT 1 FROM alloc.checkpoint_tags AS t WHERE o.Tags->>t.tag_key = t.tag_value)
            ) THEN 'checkpoint_storage'
            ELSE 'other'
        END AS kind,
        -- GPU-hours are counted once per resource-hour: not on negations, credits or corrections
        o.ChargeCategory = 'Usage' AND o.ChargeClass IS NULL AND o.BilledCost >= 0 AS counts_gpu_hours
    FROM sized AS o
),

-- an instance-hour billed as several SKUs (GCP: core, RAM and GPU lines) counts its GPU-hours on one of them
classified AS (
    SELECT
        * EXCLUDE (counts_gpu_hours),
        counts_gpu_hours AND row_number() OVER (
            PARTITION BY ResourceId, ChargePeriodStart, ChargePeriodEnd, kind, counts_gpu_hours
            ORDER BY BilledCost DESC, charge_key
        ) = 1 AS counts_gpu_hours
    FROM kinds
),

-- GPU resources: capacity in units of 1/7 GPU-microsecond (exact for whole GPUs and
-- for MIG slices, which are sevenths of a GPU), and each hour of the charge to meet the telemetry
gpu_charges AS (
    SELECT
        charge_key,
        -- instance-hours: the quantity in Hours, but never more than the period (GCP counts core- and
        -- GPU-hours: an instance billed for 208 core-hours in an hour ran that hour)
        CAST(round(gpu_count * 25200000000 * CASE
            WHEN ConsumedUnit = 'Hours' AND ConsumedQuantity > 0 THEN least(ConsumedQuantity, period_hours)
            ELSE period_hours
        END) AS BIGINT) AS capacity_units
    FROM (
        SELECT *, CAST(epoch(ChargePeriodEnd - ChargePeriodStart) / 3600 AS DECIMAL(38, 10)) AS period_hours
        FROM classified
    )
    WHERE kind = 'gpu'
),

charge_hours AS (
    SELECT
        charge_key,
        ResourceId,
        unnest(charge_period_hours(ChargePeriodStart, ChargePeriodEnd)) AS hour
    FROM classified
    WHERE kind IN ('gpu', 'egress') AND ResourceId IS NOT NULL
),

job_usage AS (
    SELECT
        h.charge_key,
        u.cluster,
        u.job_id,
        sum(CAST(round(u.allocated_seconds * 7000000) AS BIGINT)) AS allocated_units,
        sum(CAST(round(u.run_seconds * 7000000) AS BIGINT)) AS run_units,
        sum(CAST(round(u.underutilized_seconds * 7000000) AS BIGINT)) AS underutilized_units,
        min(u.metric) AS metric,
        -- 'node-shared' sorts last: a charge priced node-shared in any hour says so
        max(u.attribution) AS attribution
    FROM charge_hours AS h
    JOIN usage AS u ON u.resource_id = h.ResourceId AND u.hour = h.hour
    GROUP BY ALL
),

gpu_totals AS (
    SELECT g.charge_key, g.capacity_units, coalesce(sum(u.allocated_units), 0) AS allocated_units
    FROM gpu_charges AS g
    LEFT JOIN job_usage AS u USING (charge_key)
    GROUP BY ALL
),

-- a job's held GPU-time: run, active below saturation, and held inactive (the rest, so the three add up)
job_time AS (
    SELECT u.charge_key, j.team, u.cluster, u.job_id, u.metric, u.attribution,
        least(u.run_units, u.allocated_units) AS run_units,
        least(u.underutilized_units, u.allocated_units - least(u.run_units, u.allocated_units)) AS underutilized_units,
        u.allocated_units
    FROM job_usage AS u
    JOIN gpu_charges USING (charge_key)
    JOIN jobs AS j USING (cluster, job_id)
),

gpu_pieces AS (
    SELECT charge_key, 'run' AS category, NULL AS idle_kind, team, cluster, job_id,
        run_units AS weight, run_units AS gpu_units, attribution AS basis, metric
    FROM job_time
    UNION ALL
    SELECT charge_key, 'idle', 'underutilized', team, cluster, job_id,
        underutilized_units, underutilized_units, attribution, metric
    FROM job_time
    UNION ALL
    SELECT charge_key, 'idle', 'allocated', team, cluster, job_id,
        allocated_units - run_units - underutilized_units, allocated_units - run_units - underutilized_units, attribution, metric
    FROM job_time
    UNION ALL
    -- capacity no job held; a charge without telemetry is all unallocated idle
    SELECT t.charge_key, 'idle', 'unallocated', c.owner_team, NULL, NULL,
        CASE WHEN t.allocated_units = 0 THEN greatest(t.capacity_units, 1) ELSE greatest(t.capacity_units - t.allocated_units, 0) END,
        greatest(t.capacity_units - t.allocated_units, 0),
        c.owner_basis,
        NULL
    FROM gpu_totals AS t
    JOIN classified AS c USING (charge_key)
),

-- checkpoint storage: byte-hours per job between the inventory snapshots that cover the charge period (the
-- newest snapshot at or before its start, and each one taken within it)
checkpoint_snapshots AS (
    SELECT DISTINCT c.charge_key, c.ChargePeriodStart, c.ChargePeriodEnd, storage_name(b.uri) AS store, b.as_of
    FROM classified AS c
    JOIN gpu.checkpoint_bytes AS b ON storage_name(b.uri) = storage_name(c.ResourceId) AND b.as_of < c.ChargePeriodEnd
    WHERE c.kind = 'checkpoint_storage'
),

checkpoint_windows AS (
    SELECT
        charge_key,
        store,
        as_of,
        epoch(coalesce(lead(as_of) OVER (PARTITION BY charge_key ORDER BY as_of), ChargePeriodEnd))
            - epoch(greatest(as_of, ChargePeriodStart)) AS seconds
    FROM checkpoint_snapshots
    QUALIFY seconds > 0
),

checkpoint_objects AS (
    SELECT w.charge_key, b.uri, b.as_of, CAST(b.bytes AS HUGEINT) * CAST(round(w.seconds) AS HUGEINT) // 3600 AS byte_hours
    FROM checkpoint_windows AS w
    JOIN gpu.checkpoint_bytes AS b ON storage_name(b.uri) = w.store AND b.as_of = w.as_of
    -- empty objects (folder markers) weigh nothing; a snapshot of only those leaves the charge to its owner
    WHERE b.bytes > 0
),

-- bytes under a job's checkpoint_uri belong to the job with the most specific matching prefix, the newest of
-- those when several write there (restarts resume in place)
checkpoint_owners AS (
    SELECT
        o.charge_key,
        o.uri,
        o.as_of,
        o.byte_hours,
        arg_max(j.job_id, (len(j.checkpoint_uri), j.start_time, j.cluster, j.job_id)) AS job_id,
        arg_max(j.cluster, (len(j.checkpoint_uri), j.start_time, j.cluster, j.job_id)) AS cluster,
        arg_max(j.team, (len(j.checkpoint_uri), j.start_time, j.cluster, j.job_id)) AS team
    FROM checkpoint_objects AS o
    LEFT JOIN jobs AS j ON starts_with(o.uri, j.checkpoint_uri) AND j.start_time <= o.as_of
    GROUP BY ALL
),

checkpoint_pieces AS (
    SELECT o.charge_key, 'checkpoint_storage' AS category, NULL AS idle_kind,
        coalesce(o.team, c.owner_team) AS team, o.cluster, o.job_id,
        sum(o.byte_hours) AS weight, 0 AS gpu_units,
        CASE WHEN o.job_id IS NULL THEN c.owner_basis ELSE 'stored-byte-hours' END AS basis, NULL AS metric
    FROM checkpoint_owners AS o
    JOIN classified AS c USING (charge_key)
    GROUP BY ALL
),

-- egress: bytes each job sent from the charge's resource, else the jobs' GPU-seconds on it
egress_bytes AS (
    SELECT h.charge_key, e.cluster, e.job_id, sum(e.bytes) AS bytes
    FROM charge_hours AS h
    JOIN classified AS c ON c.charge_key = h.charge_key AND c.kind = 'egress'
    JOIN (SELECT DISTINCT cluster, node, hour, resource_id FROM usage) AS n
        ON n.resource_id = h.ResourceId AND n.hour = h.hour
    JOIN gpu.egress_bytes AS e ON e.cluster = n.cluster AND e.node = n.node AND e.hour = n.hour
    -- bytes of jobs the schedulers do not know are no basis either (they were reported at ingestion)
    JOIN jobs AS j ON j.cluster = e.cluster AND j.job_id = e.job_id
    GROUP BY ALL
    -- zero counts are no basis to split by (a zero total would divide by zero): GPU-seconds decide instead
    HAVING sum(e.bytes) > 0
),

egress_pieces AS (
    SELECT b.charge_key, 'egress' AS category, NULL AS idle_kind, j.team, b.cluster, b.job_id,
        b.bytes AS weight, 0 AS gpu_units, 'egress-bytes' AS basis, NULL AS metric
    FROM egress_bytes AS b
    JOIN jobs AS j USING (cluster, job_id)
    UNION ALL
    SELECT u.charge_key, 'egress', NULL, j.team, u.cluster, u.job_id,
        u.allocated_units, 0, 'gpu-seconds-fallback', NULL
    FROM job_usage AS u
    JOIN classified AS c USING (charge_key)
    JOIN jobs AS j USING (cluster, job_id)
    WHERE c.kind = 'egress' AND u.charge_key NOT IN (SELECT charge_key FROM egress_bytes) AND u.allocated_units > 0
),

-- zero-weight pieces would only add zero rows (a GPU charge always keeps one: its unallocated piece
-- weighs at least 1 when nothing was allocated)
measured_pieces AS (
    SELECT * FROM (
        SELECT * FROM gpu_pieces
        UNION ALL SELECT * FROM checkpoint_pieces
        UNION ALL SELECT * FROM egress_pieces
    )
    WHERE weight > 0
),

-- everything else, and checkpoint or egress charges without telemetry: whole, to the owner (an unused
-- commitment as its owner's idle)
owner_pieces AS (
    SELECT c.charge_key,
        CASE c.kind WHEN 'unused_commitment' THEN 'idle' ELSE c.kind END AS category,
        CASE c.kind WHEN 'unused_commitment' THEN 'unused_commitment' END AS idle_kind,
        c.owner_team AS team, NULL AS cluster,
        NULL AS job_id, 1 AS weight, 0 AS gpu_units, c.owner_basis AS basis, NULL AS metric
    FROM classified AS c
    WHERE c.charge_key NOT IN (SELECT charge_key FROM measured_pieces)
),

pieces AS (
    SELECT * FROM measured_pieces
    UNION ALL SELECT * FROM owner_pieces
),

weighted AS (
    SELECT
        p.*,
        sum(p.weight) OVER (
            PARTITION BY p.charge_key
            ORDER BY p.category, coalesce(p.idle_kind, ''), p.team, coalesce(p.cluster, ''), coalesce(p.job_id, '')
            ROWS UNBOUNDED PRECEDING
        ) AS cum_weight,
        sum(p.weight) OVER (PARTITION BY p.charge_key) AS total_weight
    FROM pieces AS p
),

split AS (
    SELECT
        c.BillingPeriodStart,
        c.BillingCurrency,
        c.ProviderName,
        c.BillingAccountId,
        c.SubAccountId,
        c.charge_key,
        c.x_DeliveryId,
        c.x_SourceLineItemId,
        c.ChargeCategory,
        c.ChargePeriodStart,
        c.ChargePeriodEnd,
        c.ServiceName,
        c.ResourceId,
        w.category,
        w.idle_kind,
        w.team,
        w.cluster,
        w.job_id,
        split_amount(c.BilledCost, w.cum_weight, w.weight, w.total_weight) AS BilledCost,
        split_amount(c.EffectiveCost, w.cum_weight, w.weight, w.total_weight) AS EffectiveCost,
        CASE WHEN c.counts_gpu_hours THEN w.gpu_units / 25200000000.0 ELSE 0 END AS gpu_hours,
        w.gpu_units,
        w.weight,
        w.total_weight,
        w.basis,
        w.metric,
        c.owner_team
    FROM weighted AS w
    JOIN classified AS c USING (charge_key)
),

-- idle_policy = 'share': unallocated GPU idle goes to the teams by their GPU-hours this month in the pool that
-- idled (its nodes' configured pool, else their cluster); a resource no job ever ran on stays with its owner
node_pools AS (
    SELECT DISTINCT u.cluster, u.node, u.resource_id, coalesce(n.pool, u.cluster) AS pool
    FROM usage AS u
    LEFT JOIN alloc.nodes AS n USING (cluster, node)
),

resource_pools AS (
    SELECT resource_id, min(pool) AS pool FROM node_pools WHERE resource_id IS NOT NULL GROUP BY ALL
),

team_gpu AS (
    SELECT p.pool, j.team, CAST(round(sum(u.allocated_seconds) * 7000000) AS BIGINT) AS weight
    FROM usage AS u
    JOIN node_pools AS p USING (cluster, node)
    JOIN jobs AS j USING (cluster, job_id)
    GROUP BY ALL
    HAVING sum(u.allocated_seconds) > 0
),

to_share AS (
    SELECT s.*, r.pool
    FROM split AS s
    JOIN resource_pools AS r ON r.resource_id = s.ResourceId
    WHERE s.category = 'idle' AND s.idle_kind = 'unallocated'
      AND (SELECT idle_policy FROM alloc.settings) = 'share'
      AND EXISTS (SELECT 1 FROM team_gpu AS t WHERE t.pool = r.pool)
),

shared AS (
    SELECT
        s.* EXCLUDE (team, basis, BilledCost, EffectiveCost, gpu_hours, gpu_units, weight, total_weight, pool),
        t.team,
        'shared-gpu-hours' AS basis,
        split_amount(
            s.BilledCost,
            sum(t.weight) OVER (PARTITION BY s.charge_key ORDER BY t.team ROWS UNBOUNDED PRECEDING),
            t.weight,
            sum(t.weight) OVER (PARTITION BY s.charge_key)
        ) AS BilledCost,
        split_amount(
            s.EffectiveCost,
            sum(t.weight) OVER (PARTITION BY s.charge_key ORDER BY t.team ROWS UNBOUNDED PRECEDING),
            t.weight,
            sum(t.weight) OVER (PARTITION BY s.charge_key)
        ) AS EffectiveCost,
        s.gpu_hours * t.weight / sum(t.weight) OVER (PARTITION BY s.charge_key) AS gpu_hours,
        s.gpu_units * t.weight / sum(t.weight) OVER (PARTITION BY s.charge_key) AS gpu_units,
        -- the shared piece's ratio of the charge: its unallocated share times the team's share of the pool
        CAST(s.weight AS DOUBLE) * t.weight AS weight,
        CAST(s.total_weight AS DOUBLE) * sum(t.weight) OVER (PARTITION BY s.charge_key) AS total_weight
    FROM to_share AS s
    JOIN team_gpu AS t USING (pool)
),

final AS (
    SELECT * FROM split WHERE charge_key NOT IN (SELECT charge_key FROM to_share) OR category <> 'idle'
        OR idle_kind <> 'unallocated'
    UNION ALL BY NAME
    SELECT * FROM shared
)

SELECT
    BillingPeriodStart,
    BillingCurrency,
    ProviderName,
    BillingAccountId,
    SubAccountId,
    charge_key,
    x_DeliveryId,
    x_SourceLineItemId,
    ChargeCategory,
    ChargePeriodStart,
    ChargePeriodEnd,
    ServiceName,
    ResourceId,
    category,
    idle_kind,
    team,
    cluster,
    job_id,
    BilledCost,
    EffectiveCost,
    gpu_hours,
    CAST(weight AS DOUBLE) / total_weight AS allocated_ratio,
    basis AS allocation_basis,
    metric,
    $method_id AS AllocatedMethodId,
    -- FOCUS 1.3: the ratio the split applied and the usage it was taken from, as one element of "Elements"
    json_object('Elements', [CASE WHEN usage_unit IS NULL
        THEN json_object('AllocatedRatio', CAST(weight AS DOUBLE) / total_weight)
        ELSE json_object(
            'AllocatedRatio', CAST(weight AS DOUBLE) / total_weight,
            'UsageUnit', usage_unit,
            'UsageQuantity', usage_quantity
        )
    END]) AS AllocatedMethodDetails,
    job_id AS AllocatedResourceId,
    billing_month(BillingPeriodStart) AS billing_month
FROM (
    SELECT
        *,
        CASE
            WHEN basis = 'stored-byte-hours' THEN 'Byte-Hours'
            WHEN basis = 'egress-bytes' THEN 'Bytes'
            WHEN basis = 'gpu-seconds-fallback' OR gpu_units > 0 THEN 'GPU-Seconds'
        END AS usage_unit,
        CASE
            WHEN basis IN ('stored-byte-hours', 'egress-bytes') THEN CAST(weight AS DOUBLE)
            WHEN basis = 'gpu-seconds-fallback' THEN CAST(weight AS DOUBLE) / 7000000
            WHEN gpu_units > 0 THEN gpu_units / 7000000
        END AS usage_quantity
    FROM final
)
