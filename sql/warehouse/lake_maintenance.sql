-- A DuckLake warehouse after the vacuum deleted rows: small files merged and files mostly deleted rewritten, then
-- snapshots older than the lease (getvariable 'gpuledger_vacuum_before') expired, except the newest published one
-- and those after it (analysts attach it read-only: meta.publishes), and the data files only expired snapshots
-- referenced removed, with any file no snapshot ever committed (a writer killed mid-transaction). The catalog is
-- attached as warehouse (gpuledger/warehouse/lake.py). No parameters.
CALL ducklake_merge_adjacent_files('warehouse');
CALL ducklake_rewrite_data_files('warehouse');
SET VARIABLE gpuledger_expire_before = (
    SELECT least(
        getvariable('gpuledger_vacuum_before'), coalesce(min(snapshot_time), getvariable('gpuledger_vacuum_before'))
    )
    FROM ducklake_snapshots('warehouse')
    WHERE snapshot_id = (SELECT max(lake_snapshot) FROM meta.publishes)
);
CALL ducklake_expire_snapshots('warehouse', older_than => getvariable('gpuledger_expire_before'));
CALL ducklake_cleanup_old_files('warehouse', older_than => getvariable('gpuledger_vacuum_before'));
CALL ducklake_delete_orphaned_files('warehouse', older_than => getvariable('gpuledger_vacuum_before'));
