-- How many records of temp table gcp_bq_lines repeat an earlier extract's: the non-blank lines less the
-- records kept in gcp_bq_typed. No parameters.
SELECT (SELECT count(*) FROM gcp_bq_lines WHERE nullif(trim(line), '') IS NOT NULL) - count(*)
FROM gcp_bq_typed
