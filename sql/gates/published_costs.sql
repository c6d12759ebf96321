-- focus.costs, what readers see: the rows each slice's owner delivered for it. Staged rows stay invisible until
-- their delivery passed its checks and took its slices over, and the rows of a slice's earlier owners until the
-- vacuum removes them (docs/decisions/0003, 0019). x_BillingMonth, the first day of the row's billing month, is
-- computed here by the one billing_month() rule rather than stored by every normalizer (the analyst file and the
-- Parquet exports carry it as a column). No parameters.
CREATE OR REPLACE VIEW focus.costs AS
SELECT c.*, billing_month(c.BillingPeriodStart) AS x_BillingMonth
FROM focus.cost_rows AS c
SEMI JOIN meta.slices AS s
    ON c.x_DeliveryId = s.delivery_id
    AND c.ProviderName = s.provider_name
    AND c.BillingAccountId = s.billing_account_id
    AND c.BillingPeriodStart = s.billing_period_start
