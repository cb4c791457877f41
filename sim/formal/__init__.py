"""Formal proofs of the flow-control blocks, with SymbiYosys from PyPI.

Properties are written with Amaranth's ``Assert``/``Assume``/``Cover`` beside each block (see
:mod:`innet.sim.formal.properties`); :mod:`innet.sim.formal.sby` runs one with SymbiYosys
(k-induction, then its cover) and reads the verdict: proved, bounded to a depth, failed with a
counterexample trace (VCD), or vacuous. ``innet prove`` runs them from the command line.
"""

from innet.sim.formal.properties import PROPERTIES, Property, blocks, select
from innet.sim.formal.sby import (
    BMC_ENGINE,
    FormalToolsMissing,
    ProofResult,
    Toolchain,
    check,
)

__all__ = [
    "BMC_ENGINE",
    "PROPERTIES",
    "FormalToolsMissing",
    "ProofResult",
    "Property",
    "Toolchain",
    "blocks",
    "check",
    "select",
]
