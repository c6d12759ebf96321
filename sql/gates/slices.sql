-- meta.slices, each slice's owner: the delivery of the newest row of meta.slice_owners for the slice (a later
-- publish takes it over; the delivery id breaks a tie of one transaction's time). No parameters.
CREATE OR REPLACE VIEW meta.slices AS
SELECT provider_name, billing_account_id, billing_period_start, delivery_id, replaced_at, source_name
FROM meta.slice_owners
QUALIFY row_number() OVER (
    PARTITION BY provider_name, billing_account_id, billing_period_start
    ORDER BY replaced_at DESC, delivery_id DESC
) = 1
