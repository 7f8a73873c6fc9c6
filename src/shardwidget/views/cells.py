"""Notebook cells named as a reader knows them: the kernel gives each cell's code a file of its
own (ipykernel's ``/tmp/ipykernel_123/3194285871.py``), and the running IPython shell maps that
file to the cell's execution count, as its tracebacks do. Registered with the HLO readers at
import, so a collective's source reads "cell [3], line 2"."""

from __future__ import annotations

import re
import sys

from ..hlo import collectives as hlo


def cell_label(path: str) -> str | None:
    """ "cell [N]" for the file of a notebook cell's code; None outside IPython or for a file."""
    ipython = sys.modules.get("IPython")  # only a running IPython can know; never imported here
    shell = ipython.get_ipython() if ipython is not None else None
    name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if name is None:
        return None
    label = name(path)  # (raises on another shell's compiler: where() keeps the file name)
    if label and label[0] == "Cell":
        m = re.fullmatch(r"In\[(\d+)\]", str(label[1]))
        if m:
            return f"cell [{m.group(1)}]"
    return None


hlo.label_cells_with(cell_label)
