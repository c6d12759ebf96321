-- focus.costs, what readers see: rows of the deliveries that own a slice. Staged rows stay invisible until
-- their delivery passed its checks and took its slices over (docs/decisions/0003). No parameters.
CREATE OR REPLACE VIEW focus.costs AS
SELECT * FROM focus.cost_rows WHERE x_DeliveryId IN (SELECT delivery_id FROM meta.slices)
