-- ref.gpu_instances: the GPU catalog (ref.gpu_instance_types, all VARCHAR) with its numbers typed.
-- No parameters.
CREATE OR REPLACE VIEW ref.gpu_instances AS
SELECT
    provider,
    instance_type,
    gpu_model,
    CAST(gpu_count AS INTEGER) AS gpu_count,
    CAST(gpu_memory_gib AS DOUBLE) AS gpu_memory_gib,
    CAST(gpu_memory_bandwidth_tbps AS DOUBLE) AS gpu_memory_bandwidth_tbps
FROM ref.gpu_instance_types
