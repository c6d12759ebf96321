-- focus.costs, what readers see: rows of the deliveries that own a slice. Staged rows stay invisible until
-- their delivery passed its checks and took its slices over (docs/decisions/0003). x_BillingMonth, the first
-- day of the row's billing month, is computed here by the one billing_month() rule rather than stored by every
-- normalizer (the analyst file and the Parquet exports carry it as a column). No parameters.
CREATE OR REPLACE VIEW focus.costs AS
SELECT *, billing_month(BillingPeriodStart) AS x_BillingMonth
FROM focus.cost_rows
WHERE x_DeliveryId IN (SELECT delivery_id FROM meta.slices)
