-- Deliveries of an open month that shrink or inflate the money a published slice holds for the days it already
-- covers: to (1 - $share) of it or less, or to 1 / (1 - $share) of it or more (0.5: halved or doubled), in billed
-- or effective cost of any currency. A month-to-date export grows by new days, never by multiplying the old ones;
-- a single $0 or tax line replacing a month of charges, or every row listed twice, is a broken export. Rows from
-- the published slice's last charge day on are new days and are not compared. Closed months have their own rule
-- (closed_month_change); a slice the delivery empties is empty_slice's, and one whose published money is zero has
-- nothing to compare with. Input: temp table delivery_slices. Parameters: $id (staged delivery), $share (e.g. 0.5).
WITH replaced AS (
    SELECT d.ProviderName, d.BillingAccountId, d.BillingPeriodStart, d.billing_month
    FROM delivery_slices AS d
    ANTI JOIN meta.months AS m ON m.billing_month = d.billing_month AND m.state IN ('closed', 'issued')
),

published AS (
    SELECT
        c.ProviderName, c.BillingAccountId, c.BillingPeriodStart, c.BillingCurrency,
        sum(c.BilledCost) AS billed_cost,
        sum(c.EffectiveCost) AS effective_cost,
        max(c.ChargePeriodEnd) AS charge_end
    FROM focus.costs AS c
    SEMI JOIN replaced AS r USING (ProviderName, BillingAccountId, BillingPeriodStart)
    GROUP BY ALL
),

covered_until AS (
    SELECT ProviderName, BillingAccountId, BillingPeriodStart, max(charge_end) AS charge_end
    FROM published
    GROUP BY ALL
),

staged_rows AS (
    SELECT ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency, BilledCost, EffectiveCost,
        ChargePeriodStart
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id
),

staged_slices AS (
    SELECT DISTINCT ProviderName, BillingAccountId, BillingPeriodStart FROM staged_rows
),

staged_on_covered_days AS (
    SELECT
        s.ProviderName, s.BillingAccountId, s.BillingPeriodStart, s.BillingCurrency,
        sum(s.BilledCost) AS billed_cost,
        sum(s.EffectiveCost) AS effective_cost
    FROM staged_rows AS s
    JOIN covered_until AS u USING (ProviderName, BillingAccountId, BillingPeriodStart)
    WHERE s.ChargePeriodStart < u.charge_end
    GROUP BY ALL
),

compared AS (
    SELECT
        r.ProviderName,
        r.BillingAccountId,
        r.billing_month,
        p.BillingCurrency AS currency,
        p.billed_cost AS billed_before,
        coalesce(s.billed_cost, 0) AS billed_after,
        p.effective_cost AS effective_before,
        coalesce(s.effective_cost, 0) AS effective_after
    FROM replaced AS r
    SEMI JOIN staged_slices AS t USING (ProviderName, BillingAccountId, BillingPeriodStart)
    JOIN published AS p USING (ProviderName, BillingAccountId, BillingPeriodStart)
    LEFT JOIN staged_on_covered_days AS s USING (ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency)
),

implausible AS (
    SELECT * FROM compared
    WHERE (billed_before <> 0 AND (
        abs(billed_after) <= (1 - $share) * abs(billed_before) OR (1 - $share) * abs(billed_after) >= abs(billed_before)
    ))
    OR (effective_before <> 0 AND (
        abs(effective_after) <= (1 - $share) * abs(effective_before)
        OR (1 - $share) * abs(effective_after) >= abs(effective_before)
    ))
)

SELECT
    ProviderName,
    BillingAccountId,
    strftime(billing_month, '%Y-%m') AS billing_period,
    CASE
        WHEN abs(billed_after) + abs(effective_after) < abs(billed_before) + abs(effective_before) THEN 'shrinks'
        ELSE 'inflates'
    END
        || ' the open month''s money on the days already published (limit: a factor of '
        || CAST(round(1 / (1 - $share), 2) AS VARCHAR) || '): ' || currency
        || ' billed ' || billed_before || ' -> ' || billed_after
        || ', effective ' || effective_before || ' -> ' || effective_after AS detail
FROM implausible
ORDER BY ALL
