"""Publish: the analyst file and FOCUS Parquet, built beside the old ones and swapped in atomically."""
