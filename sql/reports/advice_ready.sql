-- Whether this database holds the advice tables the statement and `gpuledger advise` read: a warehouse the
-- advice stage never ran on (or an older one) has none, and then shows no advice. No parameters.
SELECT count(*) = 3 AS ready
FROM duckdb_tables()
WHERE
    database_name = current_database()
    AND schema_name = 'advice'
    AND table_name IN ('opportunities', 'rate_card', 'settings')
