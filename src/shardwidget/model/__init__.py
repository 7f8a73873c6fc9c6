"""The model: meshes, specs, layouts and per-shard statistics. Pure or JAX-only; no widget code."""
