# amaranth: UnusedElaboratable=no
"""innet.hw.alu.multi in amaranth.sim: fixed latency, results against innet.gen.ops.sum_fp32
(fp32 add) and innet.sim.golden.reduce_switch (every other operation)."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from innet.gen.ops import DType, Op, is_supported, sum_fp32
from innet.hw.alu.multi import MultiOperandUnit, multi_latency
from innet.sim.bench.numerics import CLASSES, vectors
from innet.sim.golden import reduce_switch
from innet.sim.tb.tb_alu import FP32_SPECIALS

SUPPORTED = [(op, dtype) for op in Op for dtype in DType
             if is_supported(op, dtype) and op != Op.MUL]


def expected(op: int, dtype: int, operands: list[int]) -> tuple[int, int]:
    """(unsupported, result) of the unit for a reduction of ``operands``."""
    if op > max(Op) or dtype > max(DType) or op == Op.MUL or not is_supported(Op(op), dtype):
        return 1, 0
    bits = [np.uint32(x) for x in operands]
    if op == Op.ADD and dtype == DType.FP32:
        return 0, int(sum_fp32(bits))
    if op == Op.ADD:
        return 0, sum(operands) % (1 << 32)
    return 0, int(reduce_switch(op, dtype, bits))


def operands_for(rng: random.Random, op: int, dtype: DType, count: int, leaves: int) -> list[int]:
    draw = rng.random()
    if op == Op.ADD and dtype == DType.FP32 and draw < 0.5:
        # A vector of the numerics study's classes: cancellation, wide exponents, specials.
        kind = rng.choice(list(CLASSES))
        row = vectors(kind, count, 1, seed=rng.getrandbits(16))[0]
        chosen = [int(x) for x in row]
    elif op == Op.ADD and dtype == DType.FP32 and draw < 0.65:
        # Operands far below the largest, their low bits on or beside a rounding tie: the
        # sticky bit of the bits the alignment cuts off decides.
        top = rng.randint(30, 254)
        chosen = [(rng.getrandbits(1) << 31) | (top << 23) | rng.getrandbits(23)]
        chosen += [(rng.getrandbits(1) << 31) | (max(top - rng.randint(1, 45), 0) << 23)
                   | (rng.getrandbits(7) << 16) | rng.choice([0, 1, 0x7FFF, 0x8000, 0xFFFF])
                   for _ in range(count - 1)]
    elif op == Op.ADD and dtype == DType.FP32 and draw < 0.8:
        # One end of the range: sums that are subnormal or cross into the normal range, or
        # that overflow (or nearly) after the largest exponent.
        low = rng.random() < 0.5
        exponents = (0, 2) if low else (252, 254)
        chosen = [(rng.getrandbits(1) << 31) | (rng.randint(*exponents) << 23)
                  | rng.getrandbits(23) for _ in range(count)]
    elif dtype == DType.FP32:
        chosen = [rng.choice(FP32_SPECIALS) if rng.random() < 0.3
                  else (rng.getrandbits(1) << 31) | (rng.randint(0, 254) << 23)
                  | rng.getrandbits(23) for _ in range(count)]
    else:
        chosen = [rng.choice([0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF])
                  if rng.random() < 0.2 else rng.getrandbits(32) for _ in range(count)]
    # The leaves without an operand hold junk: for fp32 often a NaN, an infinity or a zero,
    # which must not count.
    junk = [rng.choice(FP32_SPECIALS) if dtype == DType.FP32 and rng.random() < 0.3
            else rng.getrandbits(32) for _ in range(leaves - count)]
    return chosen + junk


def test_latency():
    assert [multi_latency(n) for n in (2, 3, 4, 5, 8, 9, 16, 17)] == [
        9 + (n - 1).bit_length() + n.bit_length() for n in (2, 3, 4, 5, 8, 9, 16, 17)]
    assert multi_latency(9) == 17
    assert MultiOperandUnit(5).latency == multi_latency(5) == 15


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"leaves": 1}, ValueError, "Leaves must be at least 2, not 1"),
    ({"leaves": 10**20}, ValueError, "Leaves must be at most 1025, not 100000000000000000000"),
    ({"leaves": 2.0}, TypeError, "Leaves must be an integer, not 2.0"),
    ({"leaves": 4, "tag_width": -1}, ValueError, "Tag width must be at least 0, not -1"),
])
def test_parameter_errors(kwargs, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        MultiOperandUnit(**kwargs)


def run_unit(leaves: int, seed: int, cycles: int, ops=None):
    """Random back-to-back reductions; returns (issued, seen) keyed by tag."""
    rng = random.Random(seed)
    unit = MultiOperandUnit(leaves, tag_width=12)
    latency = unit.latency
    issued, seen = {}, []

    async def bench(ctx):
        for cycle in range(cycles + latency + 2):
            if ctx.get(unit.o_valid):
                seen.append((cycle, ctx.get(unit.o_tag), ctx.get(unit.o_result),
                             ctx.get(unit.o_unsupported)))
            go = cycle < cycles and rng.random() < 0.8
            count = rng.randint(2, leaves)
            if ops is not None:
                op, dtype = rng.choice(ops)
            elif rng.random() < 0.1:
                op, dtype = rng.choice([(Op.AND, DType.FP32), (9, DType.INT32),
                                        (Op.MUL, DType.FP32), (Op.ADD, 3)])
            else:
                op, dtype = rng.choice(SUPPORTED)
            operands = operands_for(rng, op, dtype, count, leaves)
            # The operands on random leaves, in order; junk on the others.
            places = sorted(rng.sample(range(leaves), count))
            junk = iter(operands[count:])
            leaf = [operands[places.index(j)] if j in places else next(junk)
                    for j in range(leaves)]
            ctx.set(unit.i_valid, go)
            ctx.set(unit.i_mask, sum(1 << j for j in places))
            ctx.set(unit.i_op, op)
            ctx.set(unit.i_dtype, dtype)
            ctx.set(unit.i_tag, cycle % 4096)
            for j, x in enumerate(leaf):
                ctx.set(unit.i_leaf[j], x)
            if go:
                issued[cycle % 4096] = (cycle, count, op, dtype, operands[:count])
            await ctx.tick()

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return latency, issued, seen


@pytest.mark.rtl
@pytest.mark.parametrize(("leaves", "seed", "ops"), [
    (5, 1, None), (9, 2, None), (2, 3, None),
    (17, 4, [(Op.ADD, DType.FP32)]),
])
def test_random_reductions_match_the_model(leaves, seed, ops):
    """Back-to-back reductions of every size on any leaves, each out once after exactly the
    unit's latency, equal to the model."""
    latency, issued, seen = run_unit(leaves, seed, 300, ops)
    assert sorted(tag for _, tag, _, _ in seen) == sorted(issued)
    for cycle, tag, result, unsupported in seen:
        start, count, op, dtype, operands = issued[tag]
        assert cycle - start == latency
        want = expected(op, dtype, operands)
        assert (unsupported, result) == want, (count, op, dtype, [hex(x) for x in operands],
                                               hex(result), hex(want[1]))
