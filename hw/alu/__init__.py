"""Reduction operators: :class:`ALU`, bit-exact to :mod:`innet.gen.ops`, and the engine's
multi-operand unit.

Modules: :mod:`~innet.hw.alu.unit` (the pipelined two-operand unit), :mod:`~innet.hw.alu.multi`
(the multi-operand unit the engine reduces with: one alignment and one rounding for an fp32
sum), :mod:`~innet.hw.alu.fp32` (binary32 fields), :mod:`~innet.hw.alu.logic` (leading-zero
count, masks, carry-save add).
"""

from innet.hw.alu.unit import ALU, LATENCY, MAX_TAG_WIDTH

__all__ = ["ALU", "LATENCY", "MAX_TAG_WIDTH"]
