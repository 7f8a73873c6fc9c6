"""Traced functions: tracing, compiled results, HLO collectives, pmap."""
