"""cocotb testbench for :class:`innet.hw.alu.ALU`, checked against :func:`innet.gen.ops.combine`.

The operand streams come from :func:`vectors`: every special-value pair, random operand pairs
drawn from distributions aimed at the hard cases of binary32 arithmetic, random integers, and
unsupported operation/type pairs. The pairs of all groups are shuffled together (operations of
different types in flight at once). The design is the unit in its bench
(:class:`innet.sim.tb.alubench.ALUBench`): the testbench writes the pairs and their expected
results into the bench's memories, and the bench feeds one pair per enabled cycle with random
``en`` stalls (junk marked valid on the inputs, which the unit must ignore) and random idle
cycles, and checks every result, its tag (the stream index), that it appears exactly
``latency`` enabled cycles after its operands, and that outputs hold while ``en`` is low; every
pair's result must have come out at the end. The testbench names the first error by its pair.

Parameters (:func:`innet.sim.tb.kit.params`): ``groups`` (list of ``[op, dtype, count]``;
``op``/``dtype`` are names), ``specials`` (add the special-value pairs of every operation and data
type in ``groups``), ``unsupported`` (add this many unsupported pairs), ``stall`` (probability of
``en`` low in a cycle), ``idle`` (probability of no operands in an enabled cycle), ``seed``,
``corrupt`` (flip bit 0 of this pair's expected result: a run that must fail, to show that the
checks bite).
"""
from __future__ import annotations

from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge, with_timeout

from innet.gen.ops import DType, Op, check_supported, combine, is_supported
from innet.sim.tb import kit
from innet.sim.tb.alubench import ERRORS, PAIRS_FILE, WANT_FILE, pair_row, want_row

__all__ = [
    "FP32_SPECIALS",
    "INT_SPECIALS",
    "TB",
    "fp32_pairs",
    "int_pairs",
    "special_pairs",
    "test_stream",
    "unsupported_pairs",
    "vectors",
]

#: binary32 values every floating-point operator is tried on, each against each.
FP32_SPECIALS = (
    0x0000_0000, 0x8000_0000,  # +-0
    0x0000_0001, 0x8000_0001,  # +-min subnormal
    0x0000_0002, 0x0040_0000,  # small and mid subnormals
    0x007F_FFFF, 0x807F_FFFF,  # +-max subnormal
    0x0080_0000, 0x8080_0000,  # +-min normal
    0x0080_0001, 0x0100_0000,  # just above the subnormal range
    0x7F7F_FFFF, 0xFF7F_FFFF,  # +-max normal
    0x7F00_0000, 0x7EFF_FFFF,  # 2**127 and just below
    0x7F80_0000, 0xFF80_0000,  # +-inf
    0x7FC0_0000, 0xFFC0_0000, 0x7FC0_0001,  # quiet NaNs (signs, payload)
    0x7F80_0001, 0xFFBF_FFFF,  # signalling NaNs
    0x3F80_0000, 0xBF80_0000,  # +-1.0
    0x3F80_0001, 0x3F7F_FFFF,  # 1 + ulp, 1 - ulp/2
    0x3FC0_0000, 0x4000_0000, 0x3F00_0000,  # 1.5, 2.0, 0.5
    0x3380_0000, 0x3400_0000, 0xB3C0_0000,  # 2**-24, 2**-23, -1.5 * 2**-24 (ties with 1.0)
    0x4B80_0000, 0x1F80_0000, 0x2000_0000,  # 2**24; 2**-64 and 2**-63 (products underflow)
)

#: Integer operands every integer operator is tried on, each against each.
INT_SPECIALS = (
    0x0000_0000, 0x0000_0001, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001,
    0x0000_FFFF, 0x0001_0000, 0x5555_5555, 0xAAAA_AAAA, 0xFFFF_0000, 0x1234_5678,
)

_U32 = np.uint32


def _pack(sign, exponent, fraction) -> np.ndarray:
    sign, exponent, fraction = (np.asarray(v, dtype=np.int64) for v in (sign, exponent, fraction))
    return ((sign & 1) << 31 | (exponent & 0xFF) << 23 | (fraction & 0x7F_FFFF)).astype(_U32)


def _fractions(rng: np.random.Generator, n: int) -> np.ndarray:
    """23-bit fractions: uniform, sparse (few bits set), dense (few clear), or all zero."""
    uniform = rng.integers(0, 1 << 23, n)
    few = np.zeros(n, dtype=np.int64)
    for _ in range(3):
        few |= np.where(rng.random(n) < 0.7, 1 << rng.integers(0, 23, n), 0)
    kind = rng.integers(0, 8, n)
    return np.select([kind < 4, kind < 6, kind < 7], [uniform, few, few ^ 0x7F_FFFF], 0)


def _signs(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2, n)


def _near_ties(op: Op, a: np.ndarray, b: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` pairs from the candidates ``a``, ``b`` whose exact sum or product lies on a
    rounding tie or within 2**-12 of a last place of one (repeated if too few qualify).

    These are the pairs whose rounding depends on every sticky bit. The exact value is computed
    in float64: exact for products, and for sums whose exponents differ by less than 29
    (otherwise the filter may misjudge a pair, which only changes the mixture)."""
    with np.errstate(all="ignore"):
        fa, fb = a.view(np.float32).astype(np.float64), b.view(np.float32).astype(np.float64)
        exact = fa + fb if op == Op.ADD else fa * fb
        nearest = exact.astype(np.float32)
        other = np.nextafter(nearest, np.where(exact > nearest, np.float32(np.inf),
                                               np.float32(-np.inf)).astype(np.float32))
        mid = (nearest.astype(np.float64) + other.astype(np.float64)) / 2
        ulp = np.abs(other.astype(np.float64) - nearest.astype(np.float64))
        near = np.isfinite(exact) & np.isfinite(nearest) & (np.abs(exact - mid) <= ulp * 2**-12)
    chosen = np.flatnonzero(near)
    if len(chosen) == 0:
        return a[:n], b[:n]
    chosen = np.resize(chosen, n)
    return a[chosen], b[chosen]


def fp32_pairs(op: Op, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` binary32 operand pairs for ``op`` from a mixture aimed at the hard cases.

    ``add``: close and distant exponents (alignment up to past the sticky range), cancellation
    (``b`` near ``-a``), operands whose sum lands on or next to a rounding tie, subnormal sums,
    sums that overflow. ``mul``: exponent sums at the subnormal and underflow boundary and at
    overflow, subnormal inputs, sparse fractions (exact ties). ``min``/``max``: equal values,
    opposite zeros and equal magnitudes, neighbours one ulp apart, NaNs. Every operator also gets
    uniform bit patterns and pairs with one special operand.
    """
    op = Op.parse(op)
    a = np.empty(n, dtype=_U32)
    b = np.empty(n, dtype=_U32)
    kind = rng.integers(0, 100, n)
    ea = rng.integers(0, 255, n)  # finite exponents
    a_fin = _pack(_signs(rng, n), ea, _fractions(rng, n))
    b_fin = _pack(_signs(rng, n), rng.integers(0, 255, n), _fractions(rng, n))
    uniform = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64).astype(_U32)
    specials = np.asarray(FP32_SPECIALS, dtype=_U32)[rng.integers(0, len(FP32_SPECIALS), n)]
    cases: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (mask, a, b)
    if op == Op.ADD:
        near = _pack(_signs(rng, n), np.clip(ea + rng.integers(-3, 4, n), 0, 254),
                     _fractions(rng, n))
        far = _pack(_signs(rng, n), np.clip(ea - rng.integers(0, 34, n), 0, 254),
                    _fractions(rng, n))
        # b = -(a + delta): exact cancellation of most leading bits.
        delta = rng.integers(-(1 << 12), 1 << 12, n) >> rng.integers(0, 13, n)
        cancel = (a_fin.astype(np.int64) + delta).clip(0, 0xFFFF_FFFF).astype(_U32) ^ 0x8000_0000
        # b a few bits below a's last place with a sparse or dense fraction: ties and neighbours.
        tie = _pack(_signs(rng, n), np.clip(ea - 24 + rng.integers(-2, 3, n), 0, 254),
                    _fractions(rng, n))
        tiny_a = _pack(_signs(rng, n), rng.integers(0, 3, n), _fractions(rng, n))
        tiny_b = _pack(_signs(rng, n), rng.integers(0, 3, n), _fractions(rng, n))
        huge_sign = _signs(rng, n)
        huge_a = _pack(huge_sign, rng.integers(250, 255, n), _fractions(rng, n) | 0x70_0000)
        huge_b = _pack(huge_sign, rng.integers(250, 255, n), _fractions(rng, n) | 0x70_0000)
        pool = (np.concatenate([a_fin, a_fin, tiny_a]), np.concatenate([near, tie, tiny_b]))
        cases = [(kind < 8, uniform[0], uniform[1]), (kind < 30, a_fin, near),
                 (kind < 42, a_fin, far), (kind < 55, a_fin, cancel), (kind < 68, a_fin, tie),
                 (kind < 76, tiny_a, tiny_b), (kind < 83, huge_a, huge_b),
                 (kind < 93, *_near_ties(op, *pool, n))]
    elif op == Op.MUL:
        # Exponent sums around the subnormal/underflow boundary (sum near 127 - 24 .. 127).
        low_sum = rng.integers(95, 132, n)
        low_ea = rng.integers(np.maximum(0, low_sum - 254), np.minimum(254, low_sum) + 1)
        low_a = _pack(_signs(rng, n), low_ea, _fractions(rng, n))
        low_b = _pack(_signs(rng, n), low_sum - low_ea, _fractions(rng, n))
        high_sum = rng.integers(375, 509, n)
        high_ea = rng.integers(high_sum - 254, 255)
        high_a = _pack(_signs(rng, n), high_ea, _fractions(rng, n))
        high_b = _pack(_signs(rng, n), high_sum - high_ea, _fractions(rng, n))
        sub_a = _pack(_signs(rng, n), 0, _fractions(rng, n))
        # (1 + A + 2**-i) * (1 + B + 2**-j) with i + j = 24 (or 23) and A, B above 2**-i,
        # 2**-j: the product's only bit below the last place is the round bit, an exact tie
        # (when the product is below 2, or above 2 for i + j = 23).
        i = rng.integers(1, 24, n)
        j = np.clip(24 - rng.integers(0, 2, n) - i, 1, 23)
        top = rng.integers(0, 1 << 23, (2, n))
        tie_frac_a = (top[0] >> (24 - i) << (24 - i)) | (1 << (23 - i))
        tie_frac_b = (top[1] >> (24 - j) << (24 - j)) | (1 << (23 - j))
        near_boundary = rng.random(n) < 0.3  # ties of results near or below the normal range
        tie_ea = np.where(near_boundary, low_ea, rng.integers(64, 191, n))
        tie_eb = np.where(near_boundary, low_sum - low_ea, rng.integers(64, 191, n))
        tie_a = _pack(_signs(rng, n), tie_ea, tie_frac_a)
        tie_b = _pack(_signs(rng, n), tie_eb, tie_frac_b)
        # (1 + 2**-23) * (1 + (2**t - 1) * 2**-23) * 2**(ea + eb - 254) with ea + eb = 127 - t:
        # a subnormal result whose rounding is decided only by bits the denormalising right
        # shift moves out (the round bit is set, the bits between are zero, the last place is
        # even).
        t = rng.integers(1, 22, n)
        lost_ea = rng.integers(1, 127 - t)
        lost_a = _pack(_signs(rng, n), lost_ea, 1)
        lost_b = _pack(_signs(rng, n), 127 - t - lost_ea, (1 << t) - 1)
        pool = (np.concatenate([tie_a, low_a, sub_a]), np.concatenate([tie_b, low_b, b_fin]))
        cases = [(kind < 5, uniform[0], uniform[1]), (kind < 8, lost_a, lost_b),
                 (kind < 28, low_a, low_b),
                 (kind < 40, high_a, high_b), (kind < 52, sub_a, b_fin),
                 (kind < 68, tie_a, tie_b), (kind < 88, *_near_ties(op, *pool, n))]
    elif op in (Op.MIN, Op.MAX):
        neighbour = (a_fin.astype(np.int64) + rng.integers(-1, 2, n)).clip(0, 0xFFFF_FFFF)
        flip = a_fin ^ 0x8000_0000
        zeros = rng.integers(0, 2, (2, n)).astype(_U32) << 31
        same_exp = _pack(_signs(rng, n), ea, _fractions(rng, n))
        cases = [(kind < 20, uniform[0], uniform[1]), (kind < 35, a_fin, a_fin),
                 (kind < 50, a_fin, flip), (kind < 65, a_fin, neighbour.astype(_U32)),
                 (kind < 72, zeros[0], zeros[1]), (kind < 90, a_fin, same_exp)]
    else:
        raise ValueError(f"Operation {op.name.lower()} is not defined on fp32")
    cases.append((kind < 95, a_fin, b_fin))
    cases.append((kind < 100, specials, uniform[1]))
    done = np.zeros(n, dtype=bool)
    for mask, first, second in cases:
        pick = mask & ~done
        a[pick], b[pick] = first[pick], second[pick]
        done |= pick
    swap = rng.random(n) < 0.5
    return np.where(swap, b, a), np.where(swap, a, b)


def int_pairs(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` integer operand pairs: uniform words, small values of either sign, equal values,
    neighbours, and values around the signed and unsigned limits."""
    uniform = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64)
    small = rng.integers(-300, 300, (2, n)).astype(np.int64) & 0xFFFF_FFFF
    edges = np.asarray([0, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF], dtype=np.int64)
    near_edge = (edges[rng.integers(0, 4, (2, n))] + rng.integers(-3, 4, (2, n))) & 0xFFFF_FFFF
    kind = rng.integers(0, 10, n)
    a = np.select([kind < 4, kind < 6, kind < 8], [uniform[0], small[0], near_edge[0]],
                  uniform[0]).astype(_U32)
    b = np.select([kind < 4, kind < 6, kind < 8, kind < 9],
                  [uniform[1], small[1], near_edge[1], a + rng.integers(-1, 2, n).astype(_U32)],
                  a).astype(_U32)
    return a, b


def special_pairs(dtype: DType) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of the special operands of ``dtype``."""
    values = np.asarray(FP32_SPECIALS if DType.parse(dtype) == DType.FP32 else INT_SPECIALS,
                        dtype=_U32)
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.ravel(), b.ravel()


def unsupported_pairs(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (op code, dtype code) pairs the unit must flag as unsupported."""
    codes = [(o, t) for o in range(16) for t in range(4)
             if o > max(Op) or t > max(DType) or not is_supported(Op(o), DType(t))]
    pick = rng.integers(0, len(codes), n)
    table = np.asarray(codes, dtype=np.int64)
    return table[pick, 0], table[pick, 1]


def vectors(params: dict) -> dict[str, np.ndarray]:
    """The shuffled operand stream with expected results, as arrays of equal length:
    ``op``, ``dtype``, ``a``, ``b``, ``result``, ``unsupported``."""
    rng = np.random.default_rng(int(params.get("seed", 1)))
    parts = []

    def add(op_code, dtype_code, a, b, result, unsupported: bool) -> None:
        count = len(a)
        parts.append((np.broadcast_to(op_code, count), np.broadcast_to(dtype_code, count), a, b,
                      result, np.full(count, int(unsupported))))

    for op_name, dtype_name, count in params.get("groups", []):
        op, dtype = Op.parse(op_name), DType.parse(dtype_name)
        check_supported(op, dtype)
        if params.get("specials"):
            a, b = special_pairs(dtype)
            add(op, dtype, a, b, combine(op, dtype, a, b), False)
        if dtype == DType.FP32:
            a, b = fp32_pairs(op, int(count), rng)
        else:
            a, b = int_pairs(int(count), rng)
        add(op, dtype, a, b, combine(op, dtype, a, b), False)
    extra = int(params.get("unsupported", 0))
    if extra:
        ops, dtypes = unsupported_pairs(extra, rng)
        a = rng.integers(0, 1 << 32, extra, dtype=np.uint64).astype(_U32)
        b = rng.integers(0, 1 << 32, extra, dtype=np.uint64).astype(_U32)
        add(ops, dtypes, a, b, np.zeros(extra, dtype=_U32), True)
    names = ("op", "dtype", "a", "b", "result", "unsupported")
    stream = {name: np.concatenate([part[i] for part in parts]) for i, name in enumerate(names)}
    order = rng.permutation(len(stream["a"]))
    return {name: values[order] for name, values in stream.items()}


class TB:
    """The stream in the bench's memories, run there, and its first error named (the design is
    :class:`innet.sim.tb.alubench.ALUBench`)."""

    def __init__(self, dut, vec: dict[str, np.ndarray]) -> None:
        self.dut = dut
        self.vec = {name: values.tolist() for name, values in vec.items()}
        self.total = len(self.vec["a"])

    async def start(self, seed: int) -> None:
        dut = self.dut
        for name in ("load", "start", "rng_load"):
            getattr(dut, name).value = 0
        await kit.reset(dut)
        v = self.vec
        Path(PAIRS_FILE).write_text("".join(
            f"{pair_row(*row):x}\n" for row in zip(v["op"], v["dtype"], v["a"], v["b"],
                                                  strict=True)))
        Path(WANT_FILE).write_text("".join(
            f"{want_row(*row):x}\n" for row in zip(v["result"], v["unsupported"],
                                                  strict=True)))
        dut.load.value = 1
        dut.rng_seed.value = seed & 0xFFFF_FFFF
        dut.rng_load.value = 1
        await RisingEdge(dut.clk)
        dut.load.value = 0
        dut.rng_load.value = 0

    async def stream(self, stall: float, idle: float) -> None:
        """Run the whole stream: ``en`` low in a cycle with probability ``stall``, no pair in
        an enabled cycle with probability ``idle`` (each rounded to 256ths)."""
        dut = self.dut
        bits = len(dut.total.value)
        if self.total >= 1 << bits:
            raise ValueError(f"{self.total} pairs do not fit the bench's {bits}-bit index")
        dut.total.value = self.total
        dut.stall_rate.value = round(stall * 256)
        dut.idle_rate.value = round(idle * 256)
        dut.start.value = 1
        await RisingEdge(dut.clk)
        dut.start.value = 0
        # At most a stall and an idle cycle per pair on average, many times over; in ns, which
        # are cycles of kit.reset's 1 ns clock.
        limit = int(self.total / max(1e-3, (1 - stall) * (1 - idle)) * 4) + 1000
        await with_timeout(RisingEdge(dut.done), limit, "ns")

    def first_error(self) -> str | None:
        """The first error the bench latched, named by its pair, or None."""
        dut = self.dut
        kind = int(dut.first_kind.value)
        if kind == 0:
            return None
        index, v = int(dut.first_index.value), self.vec
        if index >= self.total:
            return f"{ERRORS[kind]} after the last pair"
        name = (f"#{index} {_describe(v['op'][index], v['dtype'][index])}"
                f"({v['a'][index]:#010x}, {v['b'][index]:#010x})")
        result, unsupported = int(dut.first_result.value), int(dut.first_unsupported.value)
        if kind == 1:
            return (f"{name} = {result:#010x} (unsupported={unsupported}), expected "
                    f"{v['result'][index]:#010x} (unsupported={v['unsupported'][index]})")
        if kind == 2:
            tag = dut.first_tag.value
            return f"{name}: tag {int(tag)}, expected {index % (1 << len(tag))}"
        return f"{name}: {ERRORS[kind]}"


def _describe(op: int, dtype: int) -> str:
    op_name = Op(op).name.lower() if op <= max(Op) else f"op{op}"
    dtype_name = DType(dtype).name.lower() if dtype <= max(DType) else f"dtype{dtype}"
    return f"{op_name}.{dtype_name}"


@cocotb.test()
async def test_stream(dut):
    """Every pair of the parameters' stream, with random stalls and idles, bit-exact."""
    params = kit.params()
    vec = vectors(params)
    if "corrupt" in params:
        vec["result"][int(params["corrupt"])] ^= 1
    tb = TB(dut, vec)
    await tb.start(int(params.get("seed", 1)) + 1)
    await tb.stream(float(params.get("stall", 0.1)), float(params.get("idle", 0.05)))
    errors, checked = int(dut.error_count.value), int(dut.checked.value)
    assert errors == 0, f"{errors} errors, first: {tb.first_error()}"
    assert checked == tb.total, f"{checked} results for {tb.total} pairs"
    kit.report(checked=checked, enabled_cycles=int(dut.enabled.value))
