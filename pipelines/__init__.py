"""Orchestration: which deliveries to import, the Dagster definitions, the runner and the command line."""
