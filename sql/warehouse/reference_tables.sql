-- The ref schema. Its tables are generated from models/*.py (replace_ref_table in
-- gpuledger/warehouse/database.py), rebuilt when the schema fingerprint changes (ensure_schema). No parameters.

CREATE SCHEMA IF NOT EXISTS ref;


