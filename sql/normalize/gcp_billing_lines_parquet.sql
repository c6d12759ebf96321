-- One Parquet file of a GCP billing export into temp table gcp_bq_lines, each row as JSON text with its
-- 1-based row number. hive_partitioning off: the export_time= folder names would otherwise override the
-- records' own export_time. Parameters: $file (path), $index (its position in the delivery), $name (path as
-- text), $label (prefix of x_SourceLineItemId), $extract (its export_time= folder, '' for a loose file).
INSERT INTO gcp_bq_lines
SELECT $index, $name, $label, source_row, $extract, line
FROM (
    SELECT file_row_number + 1 AS source_row, to_json(p)::VARCHAR AS line
    FROM read_parquet($file, file_row_number = true, hive_partitioning = false) AS p
)
