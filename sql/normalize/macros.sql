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

-- gpuledger's own tag keys (gpuledger/team, ... in FOCUS 1.3 AllocatedTags, which must not repeat a key of Tags) are a
-- namespace no source tag keeps: a source key in it, or already carrying the rename's prefix, gets 'source:' in front
-- (so renamed keys never meet each other or a key left alone), flagged ReservedTagKey.
CREATE OR REPLACE TEMP MACRO renames_tag_key(tag_key) AS regexp_matches(tag_key, '^(source:)*gpuledger/');

CREATE OR REPLACE TEMP MACRO takes_own_tag_key(tags) AS
    -- the substring test first: json_keys runs only on the rare rows that may hold such a key
    CASE
        WHEN contains(tags, 'gpuledger') THEN list_bool_or(list_transform(json_keys(tags), k -> renames_tag_key(k)))
        ELSE false
    END;

CREATE OR REPLACE TEMP MACRO source_tags(tags) AS
    CASE
        WHEN takes_own_tag_key(tags) THEN '{' || array_to_string(list_transform(
            json_keys(tags),
            k -> to_json(CASE WHEN renames_tag_key(k) THEN 'source:' || k ELSE k END) || ':'
                || json_extract(tags, '$."' || replace(replace(k, '\', '\\'), '"', '\"') || '"')
        ), ',') || '}'
        ELSE tags
    END;

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
