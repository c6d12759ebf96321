-- A DuckLake warehouse after the vacuum deleted rows: small files merged and files mostly deleted rewritten, then
-- snapshots older than the lease expired (getvariable 'gpuledger_vacuum_before') and the data files only they
-- referenced removed, with any file no snapshot ever committed (a writer killed mid-transaction). The catalog is
-- attached as warehouse (gpuledger/warehouse/lake.py). No parameters.
CALL ducklake_merge_adjacent_files('warehouse');
CALL ducklake_rewrite_data_files('warehouse');
CALL ducklake_expire_snapshots('warehouse', older_than => getvariable('gpuledger_vacuum_before'));
CALL ducklake_cleanup_old_files('warehouse', older_than => getvariable('gpuledger_vacuum_before'));
CALL ducklake_delete_orphaned_files('warehouse', older_than => getvariable('gpuledger_vacuum_before'));
