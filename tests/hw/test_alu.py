# amaranth: UnusedElaboratable=no
"""innet.hw.alu: the pipeline contract under amaranth.sim, against innet.gen.ops.combine.

The bulk of the arithmetic is checked under Verilator (tests/sim/test_alu_rtl.py); these tests pin
the interface: latency, back-to-back throughput, stalls through ``en``, reset, the side-band tag,
unsupported operations, and the combinational helpers.
"""

import random
from collections import deque

import numpy as np
import pytest
from amaranth import ClockDomain, Module, Shape, Signal
from amaranth.sim import Simulator

from innet.gen.ops import DType, Op, combine, is_supported
from innet.hw.alu import ALU, LATENCY
from innet.hw.alu.logic import carry_save_add, leading_zeros, low_mask, trailing_zeros
from innet.sim.tb.tb_alu import FP32_SPECIALS, fp32_pairs, int_pairs

SUPPORTED = [(op, dtype) for op in Op for dtype in DType if is_supported(op, dtype)]


def expected(op: int, dtype: int, a: int, b: int, mul: bool = True) -> tuple[int, int]:
    """(result, unsupported) of the unit for one pair: the golden model, or the flag."""
    if op > max(Op) or dtype > max(DType) or not is_supported(Op(op), DType(dtype)) or (
            op == Op.MUL and not mul):
        return 0, 1
    return int(combine(Op(op), DType(dtype), a, b)), 0


def mixed_stream(count: int, seed: int) -> list[tuple[int, int, int, int]]:
    """``count`` (op, dtype, a, b) of every supported pair, hard fp32 cases, and some
    unsupported codes, shuffled."""
    rng = np.random.default_rng(seed)
    stream = []
    for op, dtype in SUPPORTED:
        per = max(1, count // (len(SUPPORTED) + 1))
        pairs = fp32_pairs(op, per, rng) if dtype == DType.FP32 else int_pairs(per, rng)
        stream += [(int(op), int(dtype), int(a), int(b)) for a, b in zip(*pairs, strict=True)]
    for _ in range(count - len(stream)):
        op, dtype = int(rng.integers(0, 16)), int(rng.integers(0, 4))
        stream.append((op, dtype, int(rng.integers(0, 1 << 32)), int(rng.integers(0, 1 << 32))))
    order = rng.permutation(len(stream))
    return [stream[i] for i in order]


def simulate(alu: ALU, stream, *, stall: float = 0.0, idle: float = 0.0, seed: int = 0,
             first_cycle_en: bool = True):
    """Drive ``stream`` through ``alu`` one pair per enabled, non-idle cycle.

    While ``en`` is low the inputs carry random junk marked valid. Returns the outputs seen,
    as ``(index, result, unsupported, enabled_cycles_since_accepted)`` in order, and the list
    of cycles at which the outputs changed although ``en`` was low.
    """
    rng = random.Random(seed)
    seen, unstable = [], []

    tag_mask = (1 << alu.tag_width) - 1

    async def testbench(ctx):
        accepted = deque()  # (index, enabled-cycle count at acceptance)
        enabled = 0
        sent = 0
        held = None
        cycle = 0
        while sent < len(stream) or len(seen) < len(stream):
            outputs = (ctx.get(alu.o_valid), ctx.get(alu.o_result),
                       ctx.get(alu.o_unsupported), ctx.get(alu.o_tag))
            if held is not None and outputs != held:
                unstable.append(cycle)
            en = rng.random() >= stall and (cycle > 0 or first_cycle_en)
            ctx.set(alu.en, en)
            held = None if en else outputs
            if en:
                enabled += 1  # the next edge; it consumes the result shown now
                if outputs[0]:
                    index, at = accepted.popleft() if accepted else (None, enabled)
                    assert outputs[3] == index & tag_mask, f"tag {outputs[3]} for #{index}"
                    seen.append((index, outputs[1], outputs[2], enabled - at))
                if sent < len(stream) and rng.random() >= idle:
                    op, dtype, a, b = stream[sent]
                    ctx.set(alu.i_valid, 1)
                    ctx.set(alu.i_op, op)
                    ctx.set(alu.i_dtype, dtype)
                    ctx.set(alu.i_a, a)
                    ctx.set(alu.i_b, b)
                    ctx.set(alu.i_tag, sent & tag_mask)
                    accepted.append((sent, enabled))
                    sent += 1
                else:
                    ctx.set(alu.i_valid, 0)
            else:
                ctx.set(alu.i_valid, 1)
                ctx.set(alu.i_op, rng.getrandbits(4))
                ctx.set(alu.i_dtype, rng.getrandbits(2))
                ctx.set(alu.i_a, rng.getrandbits(32))
                ctx.set(alu.i_b, rng.getrandbits(32))
                ctx.set(alu.i_tag, rng.getrandbits(alu.tag_width))
            await ctx.tick()
            cycle += 1
            assert cycle < 20 * len(stream) + 100, "the pipeline stopped producing results"
        # A full pipeline of enabled idle cycles brings out nothing more.
        ctx.set(alu.en, 1)
        ctx.set(alu.i_valid, 0)
        for _ in range(LATENCY + 1):
            await ctx.tick()
            assert not ctx.get(alu.o_valid), "a result came out that nothing was sent for"

    sim = Simulator(alu)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return seen, unstable


def check(seen, stream, mul: bool = True) -> None:
    assert [tag for tag, *_ in seen] == list(range(len(stream)))  # in order, none lost
    for tag, result, unsupported, latency in seen:
        op, dtype, a, b = stream[tag]
        want = expected(op, dtype, a, b, mul)
        assert (result, unsupported) == want, (
            f"#{tag} op={op} dtype={dtype} a={a:#010x} b={b:#010x}: {result:#010x}/"
            f"{unsupported}, expected {want[0]:#010x}/{want[1]}")
        assert latency == LATENCY


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"mul": 1}, TypeError, r"^Multiplier option must be a bool, not 1$"),
    ({"tag_width": 2.0}, TypeError, r"^Tag width must be an integer, not 2\.0$"),
    ({"tag_width": True}, TypeError, r"^Tag width must be an integer, not True$"),
    ({"tag_width": -1}, ValueError, r"^Tag width must be at least 0, not -1$"),
    ({"tag_width": 10**12}, ValueError, r"^Tag width must be at most 64, not 1000000000000$"),
])
def test_constructor_rejects_bad_parameters(kwargs, error, message):
    with pytest.raises(error, match=message):
        ALU(**kwargs)


def test_interface_and_properties():
    alu = ALU(tag_width=5)
    assert alu.latency == LATENCY == 9
    assert alu.mul
    assert alu.tag_width == 5
    members = alu.signature.members
    widths = {name: Shape.cast(members[name].shape).width for name in members}
    assert widths == {"en": 1, "i_valid": 1, "i_op": 4, "i_dtype": 2, "i_a": 32, "i_b": 32,
                      "i_tag": 5, "o_valid": 1, "o_result": 32, "o_unsupported": 1, "o_tag": 5}
    plain = ALU(mul=False)
    assert not plain.mul
    assert plain.tag_width == 0
    assert "i_tag" not in plain.signature.members
    assert "o_tag" not in plain.signature.members


@pytest.mark.rtl
def test_latency_and_back_to_back_throughput():
    """With en always high: every result exactly LATENCY cycles after its operands, a result
    on every cycle for back-to-back operands, mixed operations in flight."""
    stream = mixed_stream(60, seed=1)
    seen, unstable = simulate(ALU(tag_width=8), stream)
    check(seen, stream)
    assert not unstable


def test_result_appears_after_latency_cycles_and_only_once():
    alu = ALU(tag_width=1)
    a, b = 0x3F80_0000, 0x4000_0000  # 1.0 + 2.0

    async def testbench(ctx):
        ctx.set(alu.en, 1)
        ctx.set(alu.i_valid, 1)
        ctx.set(alu.i_op, Op.ADD)
        ctx.set(alu.i_dtype, DType.FP32)
        ctx.set(alu.i_a, a)
        ctx.set(alu.i_b, b)
        valid = []
        for _ in range(3 * LATENCY):
            await ctx.tick()
            ctx.set(alu.i_valid, 0)
            valid.append(ctx.get(alu.o_valid))
            if valid[-1]:
                assert ctx.get(alu.o_result) == 0x4040_0000  # 3.0
        assert valid.index(1) == LATENCY - 1  # visible after the LATENCY-th edge
        assert sum(valid) == 1

    sim = Simulator(alu)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()


@pytest.mark.rtl
def test_random_stalls_hold_every_stage():
    """Seeded random en stalls and idle cycles, junk on the inputs while stalled: nothing is
    lost, duplicated or reordered, outputs hold while en is low, and every result takes
    exactly LATENCY enabled cycles."""
    stream = mixed_stream(120, seed=2)
    seen, unstable = simulate(ALU(tag_width=8), stream, stall=0.35, idle=0.2, seed=3)
    check(seen, stream)
    assert not unstable


@pytest.mark.rtl
def test_stall_in_the_first_cycle_after_reset():
    stream = mixed_stream(20, seed=4)
    seen, unstable = simulate(ALU(tag_width=8), stream, stall=0.5, seed=5,
                              first_cycle_en=False)
    check(seen, stream)
    assert not unstable


def test_reset_clears_valid():
    """Reset empties the pipeline even while it is stalled; data needs no reset."""
    m = Module()
    m.domains.sync = domain = ClockDomain("sync")
    m.submodules.alu = alu = ALU()

    async def testbench(ctx):
        assert not ctx.get(alu.o_valid)
        ctx.set(alu.en, 1)
        ctx.set(alu.i_valid, 1)
        for _ in range(LATENCY):
            await ctx.tick()
        assert ctx.get(alu.o_valid)
        ctx.set(alu.en, 0)
        ctx.set(domain.rst, 1)
        await ctx.tick()
        ctx.set(domain.rst, 0)
        assert not ctx.get(alu.o_valid)
        ctx.set(alu.en, 1)
        ctx.set(alu.i_valid, 0)
        for _ in range(LATENCY + 1):
            await ctx.tick()
            assert not ctx.get(alu.o_valid)

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()


@pytest.mark.rtl
def test_without_multiplier_mul_is_unsupported():
    rng = np.random.default_rng(6)
    stream = [(int(Op.MUL), int(dtype), int(a), int(b)) for dtype in DType
              for a, b in zip(*int_pairs(5, rng), strict=True)]
    stream += [(op, dtype, a, b) for op, dtype, a, b in mixed_stream(40, seed=7)
               if op != Op.MUL]
    seen, _ = simulate(ALU(mul=False, tag_width=8), stream, stall=0.2, seed=8)
    check(seen, stream, mul=False)
    assert all(unsupported for tag, _, unsupported, _ in seen if stream[tag][0] == Op.MUL)


@pytest.mark.rtl
def test_special_values_sample():
    """A slice of the special-value table through the unit (the whole table runs under
    Verilator): fp32 add, mul, min, max of every special against +-0, +-inf and a NaN."""
    partners = (0x0000_0000, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7F80_0001)
    stream = [(int(op), int(DType.FP32), a, b) for op in (Op.ADD, Op.MUL, Op.MIN, Op.MAX)
              for a in FP32_SPECIALS for b in partners]
    seen, _ = simulate(ALU(tag_width=10), stream)
    check(seen, stream)


def _comb(width: int, build):
    """A function that simulates the combinational helper ``build`` on a list of inputs."""
    m = Module()
    value = Signal(width)
    out = build(m, value)

    def run(values):
        results = []

        async def testbench(ctx):
            for v in values:
                ctx.set(value, v)
                await ctx.delay(1e-9)
                results.append(ctx.get(out))

        sim = Simulator(m)
        sim.add_testbench(testbench)
        sim.run()
        return results

    return run


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8, 9])
def test_leading_and_trailing_zeros_exhaustive(width):
    values = list(range(1 << width))
    leading = _comb(width, lambda m, v: leading_zeros(m, v))(values)
    trailing = _comb(width, lambda m, v: trailing_zeros(m, v))(values)
    for v, lz, tz in zip(values, leading, trailing, strict=True):
        assert lz == width - v.bit_length()
        assert tz == (width if v == 0 else (v & -v).bit_length() - 1)


def test_leading_zeros_48_bits():
    rng = random.Random(9)
    values = [0, 1, (1 << 48) - 1] + [rng.getrandbits(48) >> rng.randrange(48)
                                      for _ in range(300)]
    counts = _comb(48, lambda m, v: leading_zeros(m, v))(values)
    assert counts == [48 - v.bit_length() for v in values]


def test_low_mask_and_carry_save_add():
    masks = _comb(6, lambda m, v: low_mask(v, 48))(list(range(64)))
    assert masks == [(1 << min(k, 48)) - 1 for k in range(64)]
    rng = random.Random(10)
    triples = [(rng.getrandbits(20), rng.getrandbits(20), rng.getrandbits(20))
               for _ in range(200)]
    packed = [x | y << 20 | z << 40 for x, y, z in triples]
    sums = _comb(60, lambda m, v: carry_save_add(v[:20], v[20:40], v[40:], 21))(packed)
    assert sums == [(x + y + z) % (1 << 21) for x, y, z in triples]
