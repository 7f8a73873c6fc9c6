"""Readers of compiled HLO text (no JAX, no widget code): :mod:`.collectives` (the collectives of
a program, their device groups as mesh axes, source locations), :mod:`.flow` (the input and
output leaves each one touches, by dataflow), :mod:`.flops` (the FLOPs of its
dots and gemms where the backend's cost analysis leaves them out), :mod:`.tpu` (the TPU
compiler's layouts and fusions), :mod:`.peak` (the memory peak from the compiler's live-range
report and buffer assignment) and :mod:`.peak_text` (that peak in words)."""
