"""Normalization: read one delivery's files and turn them into FOCUS 1.2 rows (one module per format)."""
