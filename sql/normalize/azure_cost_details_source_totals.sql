-- Source-side totals of one Azure delivery, straight from its rows (docs/decisions/0006). The loader
-- compares them with sum(BilledCost) / sum(EffectiveCost) of the FOCUS rows it wrote.
--   combined (actual + amortized): billed = sum of the ACTUAL dataset's cost (the invoice), effective = sum
--     of the AMORTIZED dataset's cost. Both hold only if the two exports agree on every non-commitment
--     charge, which is what Microsoft's merge rule assumes: a mismatch means exports of different moments.
--   one dataset (actual, amortized, or 2019-10-01 usage details): both equal that dataset's cost under the
--     zeroing rules: billed leaves out commitment-covered and unused-commitment rows (x_AmortizationClass
--     'Amortized Charge', zero in actual cost anyway), effective leaves out commitment purchases and refunds
--     ('Principal'). With actual cost alone EffectiveCost therefore lacks the commitment's amortization;
--     with amortized cost alone BilledCost lacks the commitment purchases: load both for a full picture.
WITH line_items AS (
    SELECT
        billing_account_id,
        billing_period_start,
        billing_currency,
        dataset,
        combined,
        cost,
        pricing_model IN ('Reservation', 'SavingsPlan') AND charge_type IN ('Purchase', 'Refund') AS is_principal,
        pricing_model IN ('Reservation', 'SavingsPlan')
        AND charge_type IN ('Usage', 'UnusedReservation', 'UnusedSavingsPlan') AS is_amortized_charge
    FROM azure_cost_src
),

contributions AS (
    SELECT
        billing_account_id,
        billing_period_start,
        billing_currency,
        CASE
            WHEN combined THEN CASE WHEN dataset = 'actual' THEN cost ELSE 0 END
            WHEN is_amortized_charge THEN 0
            ELSE cost
        END AS billed,
        CASE
            WHEN combined THEN CASE WHEN dataset = 'amortized' THEN cost ELSE 0 END
            WHEN is_principal THEN 0
            ELSE cost
        END AS effective
    FROM line_items
)

SELECT
    billing_account_id,
    CAST(billing_period_start AS TIMESTAMP) AT TIME ZONE 'UTC' AS billing_period_start,
    billing_currency AS currency,
    count(*) AS source_rows,
    sum(billed) AS billed_cost,
    sum(effective) AS effective_cost
FROM contributions
GROUP BY ALL
