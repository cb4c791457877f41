"""Host-style allreduce schedules: Swing, recursive doubling, ring and bucket.

Reference: De Sensi et al., "Swing: Short-cutting Rings for Higher Bandwidth Allreduce",
NSDI 2024 (``shared/papers/swing-nsdi24.txt``).

The public type is :class:`Schedule` (see :mod:`innet.gen.swing.schedule` for the contract and
the execution order of a rank's step table).
"""

from innet.gen.swing.schedule import Entry, Schedule

__all__ = ["Entry", "Schedule"]
