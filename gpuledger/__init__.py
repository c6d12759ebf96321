"""gpuledger engine: warehouse, normalization, loading, checks and the command line."""
