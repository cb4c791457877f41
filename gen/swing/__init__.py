"""Host-style allreduce schedules: Swing, recursive doubling, ring and bucket.

Reference: De Sensi et al., "Swing: Short-cutting Rings for Higher Bandwidth Allreduce",
NSDI 2024.

- :class:`Schedule` and :class:`Entry`: the schedule type and the execution order of a rank's
  step table (:mod:`innet.gen.swing.schedule`);
- :func:`build_schedule`: every algorithm (:data:`ALGORITHMS`);
- :func:`rho`, :func:`delta`, :func:`pi`: Swing's Eq. 2; :func:`pattern_peers` on tori;
- :func:`execute`, :func:`verify`, :func:`golden`: the numpy executor, its exactness check and
  the bit-exact golden model.
"""

from innet.gen.swing.algorithms import ALGORITHMS, MAX_ENTRIES, MAX_RANKS, build_schedule
from innet.gen.swing.execute import Verdict, execute, golden, verify
from innet.gen.swing.peers import delta, dimension_sequence, pattern_peers, pi, rho
from innet.gen.swing.rings import snake_cycle
from innet.gen.swing.schedule import Entry, Schedule

__all__ = [
    "ALGORITHMS",
    "MAX_ENTRIES",
    "MAX_RANKS",
    "Entry",
    "Schedule",
    "Verdict",
    "build_schedule",
    "delta",
    "dimension_sequence",
    "execute",
    "golden",
    "pattern_peers",
    "pi",
    "rho",
    "snake_cycle",
    "verify",
]
