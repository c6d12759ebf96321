-- Report lines for telemetry of one source that the split cannot attribute. Parameters: $source.
-- Jobs on nodes mapped to no cloud resource (no [[nodes]] entry and no instance id label): their GPU time
-- is not priced; the instances stay idle (unallocated) in the split.
SELECT format('{} job(s) ran on node(s) mapped to no cloud resource ({}): add them to [[nodes]]',
    count(DISTINCT (j.cluster, j.job_id)), string_agg(DISTINCT n.node, ', ' ORDER BY n.node))
FROM gpu.jobs AS j, unnest(j.nodes) AS n(node)
WHERE j.source = $source
  AND NOT EXISTS (SELECT 1 FROM alloc.nodes AS m WHERE m.cluster = j.cluster AND m.node = n.node)
  AND NOT EXISTS (
      SELECT 1 FROM gpu.activity AS a WHERE a.cluster = j.cluster AND a.node = n.node AND a.instance_id IS NOT NULL
  )
HAVING count(*) > 0
UNION ALL
-- Samples labelled with a job the schedulers do not know: reported, and left out of run cost.
SELECT format('{} GPU-hour(s) of samples labelled with unknown job(s), e.g. {}', count(*), min(a.job_id))
FROM gpu.activity AS a
WHERE a.source = $source
  AND a.job_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM gpu.jobs AS j WHERE j.cluster = a.cluster AND j.job_id = a.job_id)
HAVING count(*) > 0
UNION ALL
-- Busy GPUs with no job at all: a workload outside the scheduler, priced as unallocated idle.
SELECT format('{} GPU-hour(s) active outside any job, e.g. node {} at {}', count(*), min(a.node), min(a.hour))
FROM gpu.activity AS a
WHERE a.source = $source
  AND a.job_id IS NULL
  AND a.active_seconds > 0
  AND NOT EXISTS (
      SELECT 1 FROM gpu.jobs AS j, unnest(j.nodes) AS n(node)
      WHERE j.cluster = a.cluster AND n.node = a.node
        AND j.start_time < a.hour + INTERVAL 1 HOUR AND coalesce(j.end_time, a.hour + INTERVAL 1 HOUR) > a.hour
  )
HAVING count(*) > 0
