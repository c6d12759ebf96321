-- advice.checkpoint_retention: an ESTIMATE, per completed run group with a checkpoint_uri and currency, of the
-- monthly storage cost of checkpoints beyond the newest few that it is still charged.
-- * Objects: those under its jobs' checkpoint_uri(s) in the newest inventory of each source (latest as_of of
--   gpu.checkpoint_bytes); their write time is last_modified, else the first inventory listing them (as
--   showback.job_costs). Kept: the newest keep_checkpoints objects by write time.
-- * Cost: its retained checkpoint cost (showback.job_costs: charged after its final attempt ended) in the latest
--   billing month that has any; the saving per month = that cost x (1 - kept bytes / all bytes), i.e. the cost
--   is taken as proportional to bytes stored.
-- Parameters: advice.settings.keep_checkpoints.
WITH settings AS (
    SELECT keep_checkpoints FROM advice.settings
),

profiles AS (
    SELECT * FROM advice.run_profiles
),

-- the checkpoint prefixes of each completed run's jobs
run_uris AS (
    SELECT DISTINCT c.cluster, c.team, c.run_group, j.checkpoint_uri
    FROM showback.job_costs AS c
    JOIN gpu.jobs AS j USING (cluster, job_id)
    WHERE c.run_group_completed AND j.checkpoint_uri IS NOT NULL
),

-- an object's write time: its last_modified, else the first inventory that lists it
first_listed AS (
    SELECT uri, min(as_of) AS first_as_of
    FROM gpu.checkpoint_bytes
    GROUP BY ALL
),

-- each inventory source's newest listing (sources list on their own schedules)
newest AS (
    SELECT b.source, b.as_of, b.uri, b.bytes, coalesce(b.last_modified, f.first_as_of) AS written_at
    FROM gpu.checkpoint_bytes AS b
    JOIN first_listed AS f USING (uri)
    WHERE b.as_of = (SELECT max(n.as_of) FROM gpu.checkpoint_bytes AS n WHERE n.source = b.source)
),

-- objects under a run's prefixes (empty ones are folder markers), once each even when two of its prefixes nest
run_objects AS (
    SELECT DISTINCT u.cluster, u.team, u.run_group, n.uri, n.bytes, n.written_at, n.as_of
    FROM run_uris AS u
    JOIN newest AS n ON starts_with(n.uri, u.checkpoint_uri) AND n.bytes > 0
),

ranked AS (
    SELECT *, row_number() OVER (PARTITION BY cluster, team, run_group ORDER BY written_at DESC, uri DESC) AS age_rank
    FROM run_objects
),

inventory AS (
    SELECT
        r.cluster,
        r.team,
        r.run_group,
        max(r.as_of) AS inventory_as_of,
        count(*) AS objects,
        sum(r.bytes) AS bytes,
        coalesce(sum(r.bytes) FILTER (WHERE r.age_rank <= s.keep_checkpoints), 0) AS kept_bytes
    FROM ranked AS r
    CROSS JOIN settings AS s
    GROUP BY ALL
),

-- what it is still charged for keeping them: its latest billing month with retained cost
retained AS (
    SELECT
        cluster,
        team,
        run_group,
        currency,
        max(billing_month) AS billing_month,
        arg_max(cost, billing_month) AS retained_checkpoint_cost
    FROM (
        SELECT cluster, team, run_group, currency, billing_month, sum(retained_checkpoint_cost) AS cost
        FROM showback.job_costs
        WHERE run_group_completed
        GROUP BY ALL
        HAVING sum(retained_checkpoint_cost) > 0
    )
    GROUP BY ALL
),

runs AS (
    SELECT
        p.completed_month,
        p.team,
        p.cluster,
        p.run_group,
        p.currency,
        p.completed_at,
        (SELECT list(DISTINCT u.checkpoint_uri ORDER BY u.checkpoint_uri) FROM run_uris AS u
         WHERE u.cluster = p.cluster AND u.team = p.team AND u.run_group = p.run_group) AS checkpoint_uris,
        i.inventory_as_of,
        coalesce(i.objects, 0) AS objects,
        coalesce(i.bytes, 0) AS bytes,
        coalesce(i.kept_bytes, 0) AS kept_bytes,
        s.keep_checkpoints,
        r.billing_month,
        r.retained_checkpoint_cost
    FROM profiles AS p
    CROSS JOIN settings AS s
    LEFT JOIN inventory AS i USING (cluster, team, run_group)
    LEFT JOIN retained AS r USING (cluster, team, run_group, currency)
    WHERE EXISTS (
        SELECT 1 FROM run_uris AS u WHERE u.cluster = p.cluster AND u.team = p.team AND u.run_group = p.run_group
    )
)

SELECT
    coalesce(billing_month, completed_month) AS month,
    team,
    cluster,
    run_group,
    currency,
    completed_at,
    checkpoint_uris,
    inventory_as_of,
    objects,
    bytes,
    keep_checkpoints,
    kept_bytes,
    billing_month AS retained_cost_month,
    retained_checkpoint_cost,
    'checkpoint retention' AS opportunity,
    CASE
        WHEN retained_checkpoint_cost > 0 AND bytes > 0 THEN CAST(
            round(retained_checkpoint_cost * CAST(1 - kept_bytes / bytes AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10)
        )
    END AS estimated_saving,
    printf(
        'retained checkpoint cost of its latest billing month x share of bytes beyond the newest %d checkpoints'
        || ' (by write time) in the newest storage inventory; storage cost taken as proportional to bytes; per month',
        keep_checkpoints
    ) AS method,
    CASE
        WHEN objects = 0
            THEN 'no objects under ' || array_to_string(checkpoint_uris, ', ') || ' in the newest inventory'
        ELSE printf(
            '%d objects (%s) under %s in the inventory of %s; newest %d hold %s (%.1f%%)', objects,
            format_bytes(CAST(bytes AS BIGINT)), array_to_string(checkpoint_uris, ', '),
            strftime(inventory_as_of, '%Y-%m-%d'), least(objects, keep_checkpoints),
            format_bytes(CAST(kept_bytes AS BIGINT)), 100 * kept_bytes / bytes
        )
    END
    || CASE
        WHEN retained_checkpoint_cost > 0 THEN printf(
            '; retained checkpoint cost %.2f %s in %s', retained_checkpoint_cost, currency,
            strftime(billing_month, '%Y-%m')
        )
        ELSE '; no retained checkpoint cost charged to it since it completed'
    END AS evidence,
    [run_group] AS run_groups
FROM runs
ORDER BY month, team, cluster, run_group, currency
