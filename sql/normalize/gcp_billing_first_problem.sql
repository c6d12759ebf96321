-- The first record of temp table gcp_bq_typed with a problem, in delivery order: file, row, field path and
-- message. No parameters.
SELECT source_file, source_row, problem.path, problem.message
FROM gcp_bq_typed
WHERE problem IS NOT NULL
ORDER BY file_index, source_row
LIMIT 1
