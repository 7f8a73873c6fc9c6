"""The cost model (issue 12): hardware presets, what a re-layout moves, estimated times.

Model layer: no widget code. :mod:`.hardware` (presets with sources), :mod:`.transfer` (the
byte plan of a re-layout, pure numpy), :mod:`.estimate` (the ring model), :mod:`.reshard`
(``view.transfer``: the plan plus what XLA compiles for it).
"""
