-- Staged rows of deliveries that neither own a slice nor wait held for `gpuledger accept`: a failed or
-- interrupted load's leftovers, and repairs of deliveries no longer recorded.
DELETE FROM focus.cost_rows
WHERE x_DeliveryId NOT IN (
    SELECT delivery_id FROM meta.slices
    UNION ALL
    SELECT delivery_id FROM meta.deliveries WHERE state = 'held'
);

DELETE FROM meta.source_totals
WHERE delivery_id NOT IN (
    SELECT delivery_id FROM meta.slices
    UNION ALL
    SELECT delivery_id FROM meta.deliveries WHERE state = 'held'
);

DELETE FROM meta.delivery_repairs
WHERE delivery_id NOT IN (SELECT delivery_id FROM meta.deliveries);
