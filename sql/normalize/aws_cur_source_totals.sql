-- Source-side totals of one AWS CUR delivery, straight from its line items: billed = sum of
-- lineItem/UnblendedCost (the invoice), amortized = the CID summary-view formula per line item type.
-- The loader compares them with sum(BilledCost) / sum(EffectiveCost) of the FOCUS rows it wrote, and refuses a
-- delivery listing a line item twice: identity/LineItemId (in any letter case) + identity/TimeInterval is unique
-- within a delivery.
WITH line_items AS (
    SELECT *, lower(identity_line_item_id) || '@' || coalesce(identity_time_interval, '') AS line_item_identity
    FROM aws_cur_src
)

SELECT
    bill_payer_account_id AS billing_account_id,
    bill_billing_period_start_date AS billing_period_start,
    line_item_currency_code AS currency,
    count(*) AS source_rows,
    count(line_item_identity) - count(DISTINCT line_item_identity) AS duplicate_line_items,
    sum(line_item_unblended_cost) AS billed_cost,
    sum(
        CASE line_item_line_item_type
            WHEN 'DiscountedUsage' THEN coalesce(reservation_effective_cost, 0)
            WHEN 'SavingsPlanCoveredUsage' THEN coalesce(savings_plan_savings_plan_effective_cost, 0)
            WHEN 'SavingsPlanNegation' THEN 0
            WHEN 'SavingsPlanUpfrontFee' THEN 0
            WHEN 'SavingsPlanRecurringFee'
                THEN coalesce(savings_plan_total_commitment_to_date, 0) - coalesce(savings_plan_used_commitment, 0)
            WHEN 'RIFee' THEN coalesce(reservation_unused_amortized_upfront_fee_for_billing_period, 0)
                + coalesce(reservation_unused_recurring_fee, 0)
            WHEN 'Fee' THEN CASE WHEN reservation_reservation_a_r_n IS NULL THEN line_item_unblended_cost ELSE 0 END
            WHEN 'Refund' THEN CASE
                WHEN coalesce(reservation_reservation_a_r_n, savings_plan_savings_plan_a_r_n) IS NULL
                    THEN line_item_unblended_cost
                ELSE 0
            END
            ELSE line_item_unblended_cost
        END
    ) AS effective_cost
FROM line_items
GROUP BY ALL
