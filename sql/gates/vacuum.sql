-- The vacuum: rows no reader sees and nobody waits for. A delivery's rows of a billing account and period it owns
-- no slice of (a later delivery took the slices over, or it never published: a failed audit, a crash between write
-- and publish) go with its source totals of that account and period, once the rows are older than the lease
-- (getvariable 'gpuledger_vacuum_before'); rows of a held delivery stay until it is accepted or superseded. By
-- account and period, not by slice: source totals have no provider, and a FOCUS file of two providers may bill
-- both under one account, so rows of one provider's lost slice stay while the other's slice is still owned. The source totals
-- of a delivery with no row left and no slice go too, and the repairs of deliveries no longer recorded.
-- Leaves temp table vacuumed_slices: (delivery_id, ProviderName, BillingAccountId, BillingPeriodStart, rows).
CREATE OR REPLACE TEMP TABLE vacuumed_slices AS
WITH staged AS (
    SELECT x_DeliveryId AS delivery_id, ProviderName, BillingAccountId, BillingPeriodStart,
        count(*) AS rows, max(x_IngestedAt) AS ingested_at
    FROM focus.cost_rows
    GROUP BY ALL
)

SELECT s.delivery_id, s.ProviderName, s.BillingAccountId, s.BillingPeriodStart, s.rows
FROM staged AS s
LEFT JOIN meta.deliveries AS d USING (delivery_id)
WHERE d.state IS DISTINCT FROM 'held'
    AND greatest(s.ingested_at, d.ingested_at) < getvariable('gpuledger_vacuum_before')
    AND NOT EXISTS (
        SELECT 1 FROM meta.slices AS o
        WHERE o.delivery_id = s.delivery_id
            AND o.billing_account_id = s.BillingAccountId
            AND o.billing_period_start = s.BillingPeriodStart
    );

DELETE FROM focus.cost_rows AS c
USING vacuumed_slices AS v
WHERE c.x_DeliveryId = v.delivery_id
    AND c.ProviderName = v.ProviderName
    AND c.BillingAccountId = v.BillingAccountId
    AND c.BillingPeriodStart = v.BillingPeriodStart;

DELETE FROM meta.source_totals AS t
USING vacuumed_slices AS v
WHERE t.delivery_id = v.delivery_id
    AND t.billing_account_id = v.BillingAccountId
    AND t.billing_period_start = v.BillingPeriodStart;

DELETE FROM meta.source_totals
WHERE delivery_id NOT IN (SELECT x_DeliveryId FROM focus.cost_rows)
    AND delivery_id NOT IN (SELECT delivery_id FROM meta.slices)
    AND delivery_id NOT IN (SELECT delivery_id FROM meta.deliveries WHERE state = 'held');

DELETE FROM meta.delivery_repairs
WHERE delivery_id NOT IN (SELECT delivery_id FROM meta.deliveries);
