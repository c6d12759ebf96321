"""Telemetry sources: schedulers' job accounting and GPU utilization metrics, as ``models.telemetry`` contracts."""
