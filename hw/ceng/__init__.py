"""The collective engine (CENG) of a switch: :class:`CollectiveEngine` (it reduces with
:class:`innet.hw.alu.multi.MultiOperandUnit`), the tree of pairwise ALUs :class:`ReductionTree`
it multiplies with when built with multipliers, and the tree's shape and latency as plain
Python.

PIUMA, "Collective Engine": each switch reduces in-flight request packets of several input
ports in a pipelined unit, at line rate, with results that do not depend on the order in which
the packets arrive.
"""

from innet.hw.ceng.engine import FRONT_CYCLES, CollectiveEngine, engine_latency
from innet.hw.ceng.tree import ReductionTree, exit_signature, levels_for, tree_shape

__all__ = [
    "FRONT_CYCLES",
    "CollectiveEngine",
    "ReductionTree",
    "engine_latency",
    "exit_signature",
    "levels_for",
    "tree_shape",
]
