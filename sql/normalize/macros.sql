-- Macros the FOCUS models share (created before each delivery is normalized).

-- x_SourceChanges: the repairs a row's values needed, sorted, comma-separated; NULL when none.
CREATE OR REPLACE TEMP MACRO source_changes(changes) AS
    nullif(array_to_string(list_sort(list_distinct(list_filter(changes, c -> c IS NOT NULL))), ','), '');

-- x_SourceValues: the repaired values as the source wrote them, {source column: value}; NULL when none.
CREATE OR REPLACE TEMP MACRO source_values(entries) AS
    nullif(to_json(map_from_entries(list_filter(entries, e -> e.value IS NOT NULL)))::VARCHAR, '{}');

-- x_SourceValues with more repaired values added (entries as for source_values).
CREATE OR REPLACE TEMP MACRO merge_source_values(existing, entries) AS
    nullif(CAST(json_merge_patch(coalesce(existing, '{}'), coalesce(source_values(entries), '{}')) AS VARCHAR), '{}');

-- A cost contradicting its unit price x quantity: relative tolerance 1e-6 for sources that round costs (the
-- check sql/gates/checks/focus_unit_price_products.sql and the FOCUS import's repair use the same rule). Compared in
-- DOUBLE because DECIMAL(38,10) x DECIMAL(38,10) needs 128-bit products per row.
CREATE OR REPLACE TEMP MACRO price_contradicts_cost(unit_price, quantity, cost) AS
    abs(unit_price::DOUBLE * quantity::DOUBLE - cost::DOUBLE) > greatest(0.000001, abs(cost::DOUBLE) * 0.000001);
