"""The SQL of every stage, one file per model or check: package data, read through ``gpuledger.warehouse.sqlfiles``."""
