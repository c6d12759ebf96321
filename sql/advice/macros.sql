-- Macros of the advice models. usage_once(): gpu.usage with each (cluster, node, hour, job) once. Two billing
-- months' usage can both cover an hour (a charge of one month may cover hours of another); the month whose UTC
-- month holds the hour keeps it, else the later one. Needs billing_month(). No parameters.
CREATE OR REPLACE TEMP MACRO usage_once() AS TABLE
SELECT u.*
FROM gpu.usage AS u
QUALIFY row_number() OVER (
    PARTITION BY u.cluster, u.node, u.hour, u.job_id
    ORDER BY
        billing_month(u.billing_period_start) = CAST(date_trunc('month', timezone('UTC', u.hour)) AS DATE) DESC,
        u.billing_period_start DESC
) = 1;

-- a DOUBLE measure as an exact DECIMAL: sums of it do not depend on row order, so reruns give identical tables
CREATE OR REPLACE TEMP MACRO exact(measure) AS CAST(measure AS DECIMAL(38, 10));

-- The right-sizing method, shared by advice.right_sizing and its backtest (one rule, one place):
-- the bound a run shows: memory-bound when DRAM activity reaches the threshold and exceeds tensor activity
CREATE OR REPLACE TEMP MACRO run_bound(dram_active, tensor_active, memory_bound_dram_activity) AS
    CASE
        WHEN dram_active IS NULL OR tensor_active IS NULL THEN 'compute-bound (assumed)'
        WHEN dram_active >= memory_bound_dram_activity AND dram_active > tensor_active THEN 'memory-bound'
        ELSE 'compute-bound'
    END;

-- busy GPU-hours never exceed the held ones (unknown activity: all of it busy)
CREATE OR REPLACE TEMP MACRO busy_gpu_hours(active_gpu_hours, gpu_hours) AS
    least(coalesce(active_gpu_hours, gpu_hours), gpu_hours);

-- target speed over the run's own: memory bandwidth for a memory-bound run, dense 16-bit TFLOPS otherwise
CREATE OR REPLACE TEMP MACRO speed_ratio(bound, target_tbps, source_tbps, target_tflops, source_tflops) AS
    CASE WHEN bound = 'memory-bound' THEN target_tbps / source_tbps ELSE target_tflops / source_tflops END;

-- GPUs of the target a run needs: its own count when its high-water mark fits one GPU; a run already sharded
-- over several GPUs spreads over more within one node; NULL when it does not fit
CREATE OR REPLACE TEMP MACRO gpus_needed(high_water_gib, usable_gib, gpu_count, max_gpus_per_node) AS
    CASE
        WHEN high_water_gib <= usable_gib THEN gpu_count
        WHEN gpu_count > 1 AND ceil(high_water_gib * gpu_count / usable_gib) <= max_gpus_per_node
            THEN CAST(ceil(high_water_gib * gpu_count / usable_gib) AS INTEGER)
    END;

CREATE OR REPLACE TEMP MACRO gpu_fit(high_water_gib, usable_gib, gpu_count, max_gpus_per_node) AS
    CASE
        WHEN high_water_gib IS NULL THEN NULL
        WHEN high_water_gib <= usable_gib THEN 'fits'
        WHEN gpus_needed(high_water_gib, usable_gib, gpu_count, max_gpus_per_node) IS NOT NULL THEN 'needs sharding'
        ELSE 'does not fit'
    END;

-- the busy part scales with the GPU's speed, held-but-idle time stays as it was
CREATE OR REPLACE TEMP MACRO scaled_gpu_hours(busy_gpu_hours, gpu_hours, speed_ratio) AS
    busy_gpu_hours / speed_ratio + (gpu_hours - busy_gpu_hours);
