"""Traced functions: tracing, compiled results, pmap."""
