"""gpuledger package."""
