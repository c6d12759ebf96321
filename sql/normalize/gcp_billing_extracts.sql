-- How many extracts (export_time= folders) the records of temp table gcp_bq_records come from. No parameters.
SELECT count(DISTINCT extract) FROM gcp_bq_records
