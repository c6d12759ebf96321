-- Tables the advice stage writes (gpuledger/advice): its configuration as typed tables (the GPU levers, the
-- rate card, owned-hardware costs, the method settings). The estimate tables themselves are rebuilt whole by
-- each advice run (CREATE OR REPLACE TABLE advice.<model> AS sql/advice/<model>.sql). No parameters.
-- Nothing here is billed money: no billed, showback or chargeback table ever reads the advice schema.

CREATE SCHEMA IF NOT EXISTS advice;

CREATE OR REPLACE TABLE advice.gpu_levers (
    gpu_model VARCHAR NOT NULL,
    vendor VARCHAR NOT NULL,
    architecture VARCHAR NOT NULL,
    gpu_memory_gib DOUBLE NOT NULL,
    memory_bandwidth_tbps DOUBLE NOT NULL,
    dense_tflops DOUBLE NOT NULL,
    fp8 BOOLEAN NOT NULL,
    fp4 BOOLEAN NOT NULL,
    interconnect VARCHAR NOT NULL,
    -- the most GPUs of this model one catalog instance type carries (a run sharded past it spans nodes)
    max_gpus_per_node INTEGER NOT NULL
);

CREATE OR REPLACE TABLE advice.rate_card (
    provider VARCHAR NOT NULL,
    gpu_model VARCHAR NOT NULL,
    pricing_category VARCHAR NOT NULL,
    price_per_gpu_hour DECIMAL(38, 10) NOT NULL,
    currency VARCHAR NOT NULL,
    as_of DATE NOT NULL,
    source VARCHAR NOT NULL,
    example BOOLEAN NOT NULL
);

CREATE OR REPLACE TABLE advice.owned_hardware (
    gpu_model VARCHAR NOT NULL,
    capex_per_gpu DECIMAL(38, 10) NOT NULL,
    depreciation_years DOUBLE NOT NULL,
    watts_per_gpu DOUBLE NOT NULL,
    price_per_kwh DECIMAL(38, 10) NOT NULL,
    pue DOUBLE NOT NULL,
    colocation_per_gpu_month DECIMAL(38, 10) NOT NULL,
    currency VARCHAR NOT NULL,
    example BOOLEAN NOT NULL
);

CREATE OR REPLACE TABLE advice.settings (
    memory_headroom DOUBLE NOT NULL,
    memory_bound_dram_activity DOUBLE NOT NULL,
    fp8_tensor_activity DOUBLE NOT NULL,
    checkpoint_write_minutes DOUBLE NOT NULL,
    restart_minutes DOUBLE NOT NULL,
    keep_checkpoints INTEGER NOT NULL,
    autostop_idle_minutes INTEGER NOT NULL,
    top INTEGER NOT NULL
);
