-- One JSON-lines file of a GCP billing export into temp table gcp_bq_lines, one row per line with its 1-based
-- row number. No raw control character can appear in valid JSON, so \x01 as the delimiter keeps each line
-- whole; a single-threaded scan (splitting lines only; parsing runs in parallel later) numbers rows in file
-- order. Parameters: $file (path), $index (its position in the delivery), $name (path as text), $label
-- (prefix of x_SourceLineItemId), $extract (its export_time= folder, '' for a loose file).
INSERT INTO gcp_bq_lines
SELECT $index, $name, $label, source_row, $extract, line
FROM (
    SELECT row_number() OVER () AS source_row, line
    FROM read_csv($file, columns = {'line': 'VARCHAR'},
        delim = chr(1), quote = '', escape = '', header = false, auto_detect = false, parallel = false)
)
