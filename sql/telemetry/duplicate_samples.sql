-- Report line for copies of samples one telemetry source handed over (the same GPU, job label, metric and time
-- twice: two exporters, a double scrape), each counted once. Parameters: $source.
SELECT format('{} duplicate sample(s) of {} GPU(s) counted once (two exporters or a double scrape?), e.g. node {} GPU {}',
    sum(duplicate_samples), count(DISTINCT (cluster, node, gpu)), min(node), min(gpu))
FROM gpu.activity
WHERE source = $source AND duplicate_samples > 0
HAVING count(*) > 0
