-- ref.gpu_models in the analyst file: the GPU models of the catalog (models/gpu_catalog.py) with their memory,
-- bandwidth and architecture. Parameters: one list per column, an element per model, in the same order:
-- $gpu_models, $vendors, $architectures, $memory_gib, $bandwidth_tbps.
CREATE TABLE ref.gpu_models AS
SELECT
    unnest($gpu_models::VARCHAR[]) AS gpu_model,
    unnest($vendors::VARCHAR[]) AS vendor,
    unnest($architectures::VARCHAR[]) AS architecture,
    unnest($memory_gib::DECIMAL(10, 3)[]) AS gpu_memory_gib,
    unnest($bandwidth_tbps::DECIMAL(10, 3)[]) AS memory_bandwidth_tbps
ORDER BY gpu_model
