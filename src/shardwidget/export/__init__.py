"""Leaving the notebook: saved HTML pages and copy-as-code."""
