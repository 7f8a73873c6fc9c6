"""``python -m shardwidget.compilers install tpu|gpu``: the TPU and GPU compilers' helper venvs.

The one documented command that makes the Python a compiler helper runs (a venv of its own, for
this kernel's jax, cached); ``... where tpu|gpu`` says which Python a helper would use, or why
there is none. See :mod:`shardwidget.plan.compilers`.
"""

from __future__ import annotations

import sys

from .plan.compilers import install, main, python_for, unavailable

__all__ = ["install", "main", "python_for", "unavailable"]

if __name__ == "__main__":
    sys.exit(main())
