-- Macros the FOCUS models share (created before each delivery is normalized).

-- x_SourceChanges: the repairs a row's values needed, sorted, comma-separated; NULL when none.
CREATE OR REPLACE TEMP MACRO source_changes(changes) AS
    nullif(array_to_string(list_sort(list_distinct(list_filter(changes, c -> c IS NOT NULL))), ','), '');

-- x_SourceValues: the repaired values as the source wrote them, {source column: value}; NULL when none.
CREATE OR REPLACE TEMP MACRO source_values(entries) AS
    nullif(to_json(map_from_entries(list_filter(entries, e -> e.value IS NOT NULL)))::VARCHAR, '{}');
