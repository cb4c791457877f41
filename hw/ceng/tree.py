"""A pipelined reduction tree of pairwise ALUs, and its shape as plain Python.

The collective engine multiplies with it when built with multipliers (it reduces everything
else with :class:`innet.hw.alu.multi.MultiOperandUnit`, whose results do not depend on the
order of the operands). PIUMA, "Collective Engine": "a pipelined tree of units to compute
high radix reductions at line rate with logarithmic latency", "reductions are computed in a
fixed port order". The tree reduces ``count`` operands that sit on its first ``count`` leaves
(an engine with multipliers compacts the contributing ports onto them, ascending port number,
local port last) and hands the result out at level ``levels_for(count)``, so a reduction of
``k`` operands costs ``ceil(log2 k)`` ALU latencies, not the depth of the whole tree.

Shape (:func:`tree_shape`): level ``l`` combines the results of level ``l - 1`` in adjacent
pairs ``(0, 1), (2, 3), ...``, the lower position as the ALU's ``a`` operand; an odd last
result moves up unchanged. Five operands ``x0..x4`` give ``((x0 x1) (x2 x3)) x4``.
:mod:`innet.sim.golden` folds ``mul`` with :func:`innet.gen.ops.combine` in exactly this
shape.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.ops import DType, Op
from innet.gen.regmap.switch import MAX_RADIX
from innet.hw.alu import ALU, LATENCY, MAX_TAG_WIDTH

__all__ = ["ReductionTree", "exit_signature", "levels_for", "tree_shape"]


def levels_for(count: int) -> int:
    """Tree levels a reduction of ``count`` operands passes: ``ceil(log2(count))`` (0 for 1).

    Raises
    ------
    TypeError, ValueError
        If ``count`` is not a positive integer.
    """
    return (check_int("Operand count", count, low=1) - 1).bit_length()


def tree_shape(count: int):
    """The reduction of operands ``0 .. count - 1`` as nested pairs.

    ``tree_shape(5) == (((0, 1), (2, 3)), 4)``: every pair is one ALU step with the first
    element as operand ``a``. A single operand is ``0`` (no ALU step).

    Raises
    ------
    TypeError, ValueError
        If ``count`` is not a positive integer.
    """
    nodes: list = list(range(check_int("Operand count", count, low=1)))
    while len(nodes) > 1:
        nodes = [(nodes[i], nodes[i + 1]) if i + 1 < len(nodes) else nodes[i]
                 for i in range(0, len(nodes), 2)]
    return nodes[0]


def exit_signature(tag_width: int) -> wiring.Signature:
    """One level's result output: ``valid``, ``result`` (32), ``unsupported`` (the operation is
    not defined on the data type; ``result`` is then 0) and the ``tag`` that came in."""
    members = {"valid": Out(1), "result": Out(32), "unsupported": Out(1)}
    if tag_width:
        members["tag"] = Out(tag_width)
    return wiring.Signature(members)


class ReductionTree(wiring.Component):
    """``leaves - 1`` pipelined ALUs (:class:`innet.hw.alu.ALU`) in a binary tree.

    Every cycle the tree takes one reduction: ``count`` operands on ``i_leaf[0 .. count-1]``
    (``count >= 2``), the operation and data type, and a side-band ``tag``. After exactly
    ``LATENCY * levels_for(count)`` cycles its result is on ``o[levels_for(count) - 1]`` for
    one cycle, together with the tag. The tree never stalls (the ALUs' ``en`` is tied high):
    the caller must take every result when it comes out. Reductions of different sizes issued
    in different cycles never meet inside the tree (each level is a fixed-latency pipeline), but
    two may come out of different levels in the same cycle.

    An ALU whose ``b`` operand lies beyond ``count`` passes ``a`` through unchanged (it computes
    ``a | 0`` on ``uint32``, whatever the operation), and a result without any partner at its
    level (an odd position that no ``count`` can pair) moves up through a delay line of
    :data:`~innet.hw.alu.LATENCY` registers, so operands take the shape of :func:`tree_shape`
    exactly.

    Parameters
    ----------
    leaves : int
        Operand positions, at least 2 (the engine uses ``radix + 1``).
    tag_width : int
        Bits of the side-band tag (0 for none).
    mul : bool
        Build the ALUs with their multiplier (see :class:`innet.hw.alu.ALU`).

    Members
    -------
    i_valid : In(1)
        A reduction enters this cycle.
    i_count : In(range(leaves + 1))
        Operands it has, 2 .. ``leaves``; the rest of the leaves are ignored.
    i_op, i_dtype : In(4), In(2)
        :class:`innet.gen.ops.Op` and :class:`innet.gen.ops.DType` codes.
    i_leaf : In(32).array(leaves)
        Operand bit patterns, compacted onto the first ``count`` leaves.
    i_tag : In(tag_width)
        Side-band data returned with the result (only when ``tag_width > 0``).
    o : Out(exit_signature(tag_width)).array(levels)
        ``o[l - 1]`` carries the results of reductions of ``levels_for(count) == l``
        operands. Data ports are meaningful only while ``valid`` is high; ``unsupported``
        is the ALU's ``o_unsupported`` (a bitwise operation on ``fp32``, an unknown code, or
        ``mul`` without the multiplier).

    Raises
    ------
    TypeError, ValueError
        If ``leaves`` or ``tag_width`` is not an integer in range, or ``mul`` not a bool.
    """

    def __init__(self, leaves: int, *, tag_width: int = 0, mul: bool = True) -> None:
        check_int("Leaves", leaves, low=2, high=MAX_RADIX + 1)
        check_int("Tag width", tag_width, low=0, high=MAX_TAG_WIDTH)
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        self._leaves = leaves
        self._tag_width = tag_width
        self._mul = mul
        self._levels = levels_for(leaves)
        members = {
            "i_valid": In(1), "i_count": In(range(leaves + 1)), "i_op": In(4), "i_dtype": In(2),
            "i_leaf": In(32).array(leaves),
            "o": Out(exit_signature(tag_width)).array(self._levels),
        }
        if tag_width:
            members["i_tag"] = In(tag_width)
        super().__init__(members)

    @property
    def leaves(self) -> int:
        return self._leaves

    @property
    def levels(self) -> int:
        """Levels of the whole tree: ``levels_for(leaves)``."""
        return self._levels

    @property
    def alus(self) -> int:
        """ALUs in the tree: ``leaves - 1``."""
        return self._leaves - 1

    @property
    def latency(self) -> int:
        """Cycles per level (:data:`innet.hw.alu.LATENCY`)."""
        return LATENCY

    def elaborate(self, platform):
        m = Module()
        leaves, levels = self._leaves, self._levels
        meta_layout = data.StructLayout({
            "valid": 1, "count": range(leaves + 1), "op": 4, "dtype": 2,
            "level": range(levels + 1), "tag": max(self._tag_width, 1),
        })
        # The reductions' side-band data travels beside the ALUs, one register per cycle:
        # meta[s] belongs to the reduction that entered s cycles ago.
        meta = [Signal(meta_layout, name="meta0")]
        level = sum((self.i_count > (1 << b)).as_unsigned() for b in range(levels))
        m.d.comb += [
            meta[0].valid.eq(self.i_valid),
            meta[0].count.eq(self.i_count),
            meta[0].op.eq(self.i_op),
            meta[0].dtype.eq(self.i_dtype),
            meta[0].level.eq(level),  # levels_for(count): how many 2**b are below it
        ]
        if self._tag_width:
            m.d.comb += meta[0].tag.eq(self.i_tag)
        for s in range(1, LATENCY * levels + 1):
            stage = Signal(meta_layout, name=f"meta{s}")
            m.d.sync += stage.eq(meta[-1])
            meta.append(stage)

        nodes = list(self.i_leaf)  # results of the previous level
        for lv in range(1, levels + 1):
            at = meta[LATENCY * (lv - 1)]  # the reduction entering this level now
            span = 1 << (lv - 1)  # operands under one node of the previous level
            results, first_alu = [], None
            for i in range(0, len(nodes), 2):
                if i + 1 == len(nodes):
                    # No partner at any count: move up through LATENCY registers.
                    value = nodes[i]
                    for s in range(LATENCY):
                        reg = Signal(32, name=f"l{lv}_n{i // 2}_delay{s}", reset_less=True)
                        m.d.sync += reg.eq(value)
                        value = reg
                    results.append(value)
                    continue
                alu = ALU(mul=self._mul)
                m.submodules[f"alu_l{lv}_n{i // 2}"] = alu
                has_b = Signal(name=f"l{lv}_n{i // 2}_has_b")
                m.d.comb += [
                    has_b.eq(at.count > (i + 1) * span),
                    alu.en.eq(1),
                    alu.i_valid.eq(at.valid & (at.count > i * span)),
                    alu.i_a.eq(nodes[i]),
                    alu.i_b.eq(nodes[i + 1] & has_b.replicate(32)),
                    # Without a b operand: a | 0 on uint32 is a, bit for bit.
                    alu.i_op.eq(Mux(has_b, at.op, Op.OR)),
                    alu.i_dtype.eq(Mux(has_b, at.dtype, DType.UINT32)),
                ]
                results.append(alu.o_result)
                first_alu = first_alu or alu
            # The reduction that entered this level LATENCY cycles ago leaves it now, from the
            # first node (always an ALU with both operands at a reduction's last level).
            out = meta[LATENCY * lv]
            exit_ = self.o[lv - 1]
            m.d.comb += [exit_.valid.eq(out.valid & (out.level == lv)),
                         exit_.result.eq(first_alu.o_result),
                         exit_.unsupported.eq(first_alu.o_unsupported)]
            if self._tag_width:
                m.d.comb += exit_.tag.eq(out.tag)
            nodes = results
        return m
