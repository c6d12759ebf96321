-- FOCUS 1.3 allocated CostAndUsage rows: every charge as allocation.cost_split cut it, one row per charge and
-- allocated resource (a job; the row without one carries the charge's remainder: unallocated idle, or a charge
-- owned whole by a team). Reads the CTE cost_and_usage (cost_and_usage.sql, put in front by
-- gpuledger/publish/focus_1_3.py), allocation.cost_split and gpu.jobs. No parameters.
--
-- Split cost allocation (FOCUS 1.3): dimensions and unit prices are the origin charge's; BilledCost and EffectiveCost
-- are the split's exact pieces; the other summable metrics are cut by the cumulative allocated ratio, each row taking
-- round(origin x share through it) - round(origin x share before it), so that the rows of a charge sum to the origin
-- exactly. AllocatedMethodDetails has one element per piece (run, idle underutilized, idle allocated, ...).
WITH origins AS (
    SELECT * FROM cost_and_usage
),

pieces AS (
    SELECT * FROM allocation.cost_split
),

jobs AS (
    SELECT cluster, job_id, name, "user", run_group FROM gpu.jobs
),

allocated AS (
    -- a job's pieces of one charge are one allocated row; the piece's kind stays in its element
    SELECT
        x_DeliveryId,
        x_SourceLineItemId,
        AllocatedResourceId,
        team,
        any_value(cluster) AS cluster,
        any_value(job_id) AS job_id,
        any_value(AllocatedMethodId) AS AllocatedMethodId,
        sum(BilledCost) AS piece_billed_cost,
        sum(EffectiveCost) AS piece_effective_cost,
        sum(allocated_ratio) AS ratio,
        list(
            json_merge_patch(
                coalesce(AllocatedMethodDetails -> '$.Elements[0]', json_object('AllocatedRatio', allocated_ratio)),
                json_object(
                    'x_Category', category,
                    'x_IdleKind', idle_kind,
                    'x_AllocationBasis', allocation_basis,
                    'x_Metric', metric
                )
            )
            ORDER BY category, idle_kind NULLS FIRST
        ) AS elements
    FROM pieces
    GROUP BY x_DeliveryId, x_SourceLineItemId, AllocatedResourceId, team
),

cumulative AS (
    -- the share of the charge through each of its rows, in a fixed order; the last row closes it at exactly 1
    SELECT
        *,
        CASE
            WHEN row_number() OVER charge = count(*) OVER (PARTITION BY x_DeliveryId, x_SourceLineItemId) THEN 1
            ELSE least(sum(ratio) OVER charge, 1)
        END AS share_through
    FROM allocated
    WINDOW charge AS (
        PARTITION BY x_DeliveryId, x_SourceLineItemId ORDER BY AllocatedResourceId NULLS LAST, team
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    )
),

shares AS (
    SELECT
        *,
        coalesce(
            lag(share_through) OVER (
                PARTITION BY x_DeliveryId, x_SourceLineItemId ORDER BY AllocatedResourceId NULLS LAST, team
            ),
            0
        ) AS share_before
    FROM cumulative
),

scaled AS (
    -- the origin charge with this row's share of it
    SELECT
        o.* EXCLUDE (
            ListCost, ContractedCost, PricingCurrencyEffectiveCost, PricingQuantity, ConsumedQuantity,
            CommitmentDiscountQuantity
        ),
        a.* EXCLUDE (x_DeliveryId, x_SourceLineItemId, AllocatedResourceId, AllocatedMethodId),
        a.AllocatedResourceId AS allocated_resource_id,
        a.AllocatedMethodId AS allocated_method_id,
        o.ListCost AS x_OriginListCost,
        o.ContractedCost AS x_OriginContractedCost,
        -- the share through this row minus the share before it, each amount rounded the same way in both rows;
        -- a share of 1 is the origin itself and 0 is nothing, so the rows of a charge add up to it exactly
        CASE
            WHEN a.share_through >= 1 THEN COLUMNS('^(ListCost|ContractedCost|PricingCurrencyEffectiveCost|PricingQuantity|ConsumedQuantity|CommitmentDiscountQuantity)$')
            ELSE CAST(round(COLUMNS('^(ListCost|ContractedCost|PricingCurrencyEffectiveCost|PricingQuantity|ConsumedQuantity|CommitmentDiscountQuantity)$') * a.share_through, 10) AS DECIMAL(38, 10))
        END
        - CASE
            WHEN a.share_before >= 1 THEN COLUMNS('^(ListCost|ContractedCost|PricingCurrencyEffectiveCost|PricingQuantity|ConsumedQuantity|CommitmentDiscountQuantity)$')
            WHEN a.share_before <= 0 THEN 0
            ELSE CAST(round(COLUMNS('^(ListCost|ContractedCost|PricingCurrencyEffectiveCost|PricingQuantity|ConsumedQuantity|CommitmentDiscountQuantity)$') * a.share_before, 10) AS DECIMAL(38, 10))
        END
    FROM shares AS a
    JOIN origins AS o USING (x_DeliveryId, x_SourceLineItemId)
)

SELECT
    s.* EXCLUDE (
        allocated_resource_id, allocated_method_id, team, cluster, job_id, piece_billed_cost, piece_effective_cost,
        ratio, elements, share_through, share_before
    ) REPLACE (
        s.piece_billed_cost AS BilledCost,
        s.piece_effective_cost AS EffectiveCost,
        CAST(json_object('Elements', s.elements) AS VARCHAR) AS AllocatedMethodDetails,
        s.allocated_method_id AS AllocatedMethodId,
        s.allocated_resource_id AS AllocatedResourceId,
        CASE WHEN s.allocated_resource_id IS NOT NULL THEN coalesce(j.name, s.allocated_resource_id) END
            AS AllocatedResourceName,
        -- gpuledger/ keys never collide with a source's tags, which stay in Tags (ingestion renames any in gpuledger/)
        CAST(to_json(map_from_entries(list_filter(
            [
                ('gpuledger/team', s.team),
                ('gpuledger/user', j."user"),
                ('gpuledger/job', s.job_id),
                ('gpuledger/run_group', j.run_group)
            ],
            tag -> tag[2] IS NOT NULL
        ))) AS VARCHAR) AS AllocatedTags,
        -- this row's part of what the charge applied to its commitment (the rule of cost_and_usage.sql)
        CASE
            WHEN s.ContractApplied IS NOT NULL THEN CAST(json_object('Elements', json_array(json_merge_patch(
                s.ContractApplied -> '$.Elements[0]',
                json_object(
                    'ContractCommitmentAppliedCost',
                    CASE WHEN s.ChargeCategory = 'Purchase' THEN s.piece_billed_cost ELSE s.piece_effective_cost END
                )
            ))) AS VARCHAR)
        END AS ContractApplied
    ),
    s.BilledCost AS x_OriginBilledCost,
    s.EffectiveCost AS x_OriginEffectiveCost
FROM scaled AS s
LEFT JOIN jobs AS j ON j.cluster = s.cluster AND j.job_id = s.job_id
