# amaranth: UnusedElaboratable=no
"""innet.hw.ceng.tree in amaranth.sim: shape, per-size latency, results against the pairwise
fold of innet.gen.ops.combine in the tree's shape."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from innet.gen.ops import DType, Op, combine, is_supported
from innet.hw.alu import LATENCY
from innet.hw.ceng import ReductionTree, levels_for, tree_shape
from innet.sim.tb.tb_alu import FP32_SPECIALS

SUPPORTED = [(op, dtype) for op in Op for dtype in DType if is_supported(op, dtype)]


def shaped(op: Op, dtype: DType, operands: list[int]) -> int:
    """The operands combined pairwise in the shape of tree_shape."""
    def evaluate(node):
        if isinstance(node, int):
            return np.uint32(operands[node])
        return combine(op, dtype, evaluate(node[0]), evaluate(node[1]))

    return int(evaluate(tree_shape(len(operands))))


def random_operand(rng: random.Random, dtype: DType) -> int:
    if dtype == DType.FP32 and rng.random() < 0.3:
        return rng.choice(FP32_SPECIALS)
    if dtype == DType.FP32 and rng.random() < 0.5:
        # Close exponents: cancellation and rounding in the sums.
        return (rng.getrandbits(1) << 31) | (rng.randint(120, 135) << 23) | rng.getrandbits(23)
    return rng.getrandbits(32)


def test_shape_and_levels():
    assert [levels_for(k) for k in range(1, 10)] == [0, 1, 2, 2, 3, 3, 3, 3, 4]
    assert tree_shape(1) == 0
    assert tree_shape(2) == (0, 1)
    assert tree_shape(5) == (((0, 1), (2, 3)), 4)
    assert tree_shape(7) == (((0, 1), (2, 3)), ((4, 5), 6))
    assert tree_shape(9) == ((((0, 1), (2, 3)), ((4, 5), (6, 7))), 8)

    def depth(node):
        return 0 if isinstance(node, int) else 1 + max(depth(n) for n in node)

    for k in range(1, 40):
        assert depth(tree_shape(k)) == levels_for(k)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"leaves": 1}, ValueError, "Leaves must be at least 2, not 1"),
    ({"leaves": 2.0}, TypeError, "Leaves must be an integer, not 2.0"),
    ({"leaves": 4, "tag_width": -1}, ValueError, "Tag width must be at least 0, not -1"),
    ({"leaves": 4, "mul": 1}, TypeError, "Multiplier option must be a bool, not 1"),
])
def test_parameter_errors(kwargs, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        ReductionTree(**kwargs)


@pytest.mark.parametrize("count", [0, -3])
def test_level_errors(count):
    with pytest.raises(ValueError, match=rf"^Operand count must be at least 1, not {count}$"):
        levels_for(count)
    with pytest.raises(TypeError, match=r"^Operand count must be an integer, not '3'$"):
        tree_shape("3")


@pytest.mark.rtl
@pytest.mark.parametrize(("leaves", "mul", "seed"), [(5, False, 1), (4, True, 2)])
def test_random_reductions_exit_at_their_level(leaves, mul, seed):
    """Back-to-back reductions of every size and a random operation each: every one comes out
    once, after exactly LATENCY * levels_for(count) cycles, equal to the pairwise fold in the
    tree's shape."""
    rng = random.Random(seed)
    tree = ReductionTree(leaves, tag_width=12, mul=mul)
    issued = {}  # tag -> (cycle, count, op, dtype, operands)
    seen = []  # (cycle, level, tag, result, unsupported)
    cycles = 260

    async def bench(ctx):
        for cycle in range(cycles + LATENCY * tree.levels + 2):
            for lv in range(tree.levels):
                if ctx.get(tree.o[lv].valid):
                    seen.append((cycle, lv + 1, ctx.get(tree.o[lv].tag),
                                 ctx.get(tree.o[lv].result), ctx.get(tree.o[lv].unsupported)))
            go = cycle < cycles and rng.random() < 0.8
            ctx.set(tree.i_valid, go)
            count = rng.randint(2, leaves)
            if rng.random() < 0.1:
                op, dtype = rng.choice([(Op.AND, DType.FP32), (9, DType.INT32)])
            else:
                op, dtype = rng.choice(SUPPORTED)
            operands = [random_operand(rng, dtype) for _ in range(leaves)]
            ctx.set(tree.i_count, count)
            ctx.set(tree.i_op, op)
            ctx.set(tree.i_dtype, dtype)
            ctx.set(tree.i_tag, cycle)
            for j, x in enumerate(operands):
                ctx.set(tree.i_leaf[j], x)  # positions >= count hold junk
            if go:
                issued[cycle] = (count, op, dtype, operands[:count])
            await ctx.tick()

    sim = Simulator(tree)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert sorted(tag for _, _, tag, _, _ in seen) == sorted(issued)
    for cycle, level, tag, result, unsupported in seen:
        count, op, dtype, operands = issued[tag]
        assert level == levels_for(count)
        assert cycle - tag == LATENCY * level
        if op > max(Op) or not is_supported(Op(op), dtype) or (op == Op.MUL and not mul):
            assert (unsupported, result) == (1, 0)
            continue
        want = shaped(Op(op), DType(dtype), operands)
        assert (unsupported, result) == (0, want), (count, op, dtype, operands)
