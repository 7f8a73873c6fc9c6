"""Find a layout: the candidate layouts a practitioner would try for a step on a pod, compiled
by the pod's compiler in parallel helpers, ranked by fit and estimated step time
(:func:`search`)."""

from .candidate import Candidate
from .run import Search, search

__all__ = ["Candidate", "Search", "search"]
