-- ref.gpu_instances in the analyst file: the catalog's cloud instance / VM types with a fixed number of whole GPUs
-- (models/gpu_catalog.py), the table allocation and showback.job_costs look instance types up in. Parameters: one
-- list per column, an element per instance type, in the same order: $providers, $instance_types, $gpu_models,
-- $gpu_counts, $vcpus, $memory_gib.
CREATE TABLE ref.gpu_instances AS
SELECT
    unnest($providers::VARCHAR[]) AS provider,
    unnest($instance_types::VARCHAR[]) AS instance_type,
    unnest($gpu_models::VARCHAR[]) AS gpu_model,
    unnest($gpu_counts::INTEGER[]) AS gpu_count,
    unnest($vcpus::INTEGER[]) AS vcpus,
    unnest($memory_gib::DECIMAL(10, 3)[]) AS host_memory_gib
ORDER BY provider, instance_type
