-- A source's checkpoint byte counts, removed before its new listing is inserted (a load replaces them whole).
-- Parameter: $source (telemetry source name).
DELETE FROM gpu.checkpoint_bytes WHERE source = $source
