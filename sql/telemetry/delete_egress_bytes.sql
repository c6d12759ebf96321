-- A source's egress byte counts, removed before its new file is inserted (a load replaces them whole).
-- Parameter: $source (telemetry source name).
DELETE FROM gpu.egress_bytes WHERE source = $source
