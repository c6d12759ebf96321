-- gcp_bq_src, what the GCP billing export model reads: the typed records of temp table gcp_bq_typed (every
-- one checked). No parameters.
CREATE OR REPLACE TEMP VIEW gcp_bq_src AS
SELECT * EXCLUDE (problem) FROM gcp_bq_typed
