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

-- A NUL character in a tag (a broken export, any format) breaks what reads Tags next (text tools, Postgres JSON):
-- Tags is JSON text, where NUL can only stand escaped (\u0000, not the text \\u0000); the character is removed.
CREATE OR REPLACE TEMP MACRO tags_hold_nul(tags) AS
    CASE WHEN contains(tags, '\u0000') THEN regexp_matches(tags, '(^|[^\\])(\\\\)*\\u0000') ELSE false END;

CREATE OR REPLACE TEMP MACRO tags_without_nul(tags) AS
    CASE
        WHEN tags_hold_nul(tags) THEN '{' || array_to_string(list_transform(
            map_entries(CAST(CAST(tags AS JSON) AS MAP(VARCHAR, JSON))),
            e -> to_json(replace(e.key, chr(0), '')) || ':' || CASE
                WHEN json_type(e.value) = 'VARCHAR' THEN to_json(replace(e.value ->> '$', chr(0), ''))
                ELSE CAST(e.value AS VARCHAR)
            END
        ), ',') || '}'
        ELSE tags
    END;

-- x_SourceChanges of a row whose tags held a NUL character (tags_without_nul), flagged NulInTags.
CREATE OR REPLACE TEMP MACRO nul_in_tags_flagged(changes, tags) AS
    CASE
        WHEN tags_hold_nul(tags) THEN source_changes(list_append(string_split(changes, ','), 'NulInTags'))
        ELSE changes
    END;
