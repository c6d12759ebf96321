-- meta.slices, each slice's owner: the delivery of the newest row of meta.slice_owners for the slice (a later
-- publish takes it over; the delivery id breaks a tie of one transaction's time), except that a source's older
-- version never takes a slice back from its newer one: two loads of one slice that ran at once, the older
-- publishing last, leave the newer one the owner (the contract refuses the older one when they run in turn).
-- No parameters.
CREATE OR REPLACE VIEW meta.slices AS
WITH owner_rows AS (
    SELECT o.*, d.version_time
    FROM meta.slice_owners AS o
    LEFT JOIN meta.deliveries AS d ON d.delivery_id = o.delivery_id
),

source_versions AS (
    SELECT
        *,
        max(version_time) OVER (
            PARTITION BY provider_name, billing_account_id, billing_period_start, source_name
        ) AS newest_version_time
    FROM owner_rows
)

SELECT provider_name, billing_account_id, billing_period_start, delivery_id, replaced_at, source_name
FROM source_versions
WHERE version_time IS NULL OR version_time = newest_version_time
QUALIFY row_number() OVER (
    PARTITION BY provider_name, billing_account_id, billing_period_start
    ORDER BY replaced_at DESC, delivery_id DESC
) = 1
