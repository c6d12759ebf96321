-- PLACEHOLDER (being written): the opportunity contract columns, no rows.
SELECT
    CAST(NULL AS DATE) AS month,
    CAST(NULL AS VARCHAR) AS team,
    CAST(NULL AS VARCHAR) AS currency,
    CAST(NULL AS VARCHAR) AS opportunity,
    CAST(NULL AS DECIMAL(38, 10)) AS estimated_saving,
    CAST(NULL AS VARCHAR) AS method,
    CAST(NULL AS VARCHAR) AS evidence,
    CAST(NULL AS VARCHAR[]) AS run_groups,
    CAST(NULL AS BOOLEAN) AS best
WHERE false
