-- ref.gpu_models in the analyst file: the GPU models of the catalog (models/gpu_catalog.py) with their memory,
-- bandwidth, architecture and the levers the advice stage weighs (16-bit throughput, FP8/FP4, interconnect).
-- Parameters: one list per column, an element per model, in the same order: $gpu_models, $vendors,
-- $architectures, $memory_gib, $bandwidth_tbps, $dense_tflops, $fp8, $fp4, $interconnects.
CREATE TABLE ref.gpu_models AS
SELECT
    unnest($gpu_models::VARCHAR[]) AS gpu_model,
    unnest($vendors::VARCHAR[]) AS vendor,
    unnest($architectures::VARCHAR[]) AS architecture,
    unnest($memory_gib::DECIMAL(10, 3)[]) AS gpu_memory_gib,
    unnest($bandwidth_tbps::DECIMAL(10, 3)[]) AS memory_bandwidth_tbps,
    unnest($dense_tflops::DECIMAL(10, 1)[]) AS dense_tflops,
    unnest($fp8::BOOLEAN[]) AS fp8,
    unnest($fp4::BOOLEAN[]) AS fp4,
    unnest($interconnects::VARCHAR[]) AS interconnect
ORDER BY gpu_model
