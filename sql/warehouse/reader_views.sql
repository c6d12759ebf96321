-- Views the readers of earlier versions stored in the warehouse; they are their sessions' own (temporary) now.
DROP VIEW IF EXISTS main.aws_cur_raw;
DROP VIEW IF EXISTS main.azure_cost_raw;
DROP VIEW IF EXISTS main.focus_passthrough_input;
DROP VIEW IF EXISTS main.rates_raw;
DROP VIEW IF EXISTS main.samples_raw;
DROP VIEW IF EXISTS main.gpu_samples;
