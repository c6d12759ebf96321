"""Deterministic sample billing exports for the demo and the benchmarks."""
