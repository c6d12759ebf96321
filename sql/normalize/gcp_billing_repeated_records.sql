-- How many records of temp view gcp_bq_records repeat an earlier extract's: the records less those kept in
-- gcp_bq_typed. No parameters.
SELECT (SELECT count(*) FROM gcp_bq_records) - count(*)
FROM gcp_bq_typed
