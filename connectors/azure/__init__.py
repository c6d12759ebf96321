"""Azure Cost Management exports: discovering complete export runs in a local mirror of the storage container."""
