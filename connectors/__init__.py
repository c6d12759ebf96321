"""Connectors: provider and telemetry I/O. They find and pull complete deliveries into landing folders; they import
only ``models`` (docs/decisions/0012)."""
