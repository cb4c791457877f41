"""innet.sim.tb.tb_alu operand generators: they reach the hard cases they are meant for.

The classification is independent of the generators: the exact sum or product of each pair
is a rational number (fractions.Fraction), placed between its two neighbouring binary32 values
to find ties (exactly half-way) and near ties (within 2**-12 of a last place of half-way).
"""

from fractions import Fraction

import numpy as np
import pytest

from innet.gen.ops import DType, Op, combine, is_supported
from innet.sim.tb.tb_alu import (
    FP32_SPECIALS,
    INT_SPECIALS,
    fp32_pairs,
    int_pairs,
    special_pairs,
    unsupported_pairs,
    vectors,
)

N = 20_000


_LARGEST = Fraction(float(np.finfo(np.float32).max))


def _tie_distance(op: Op, x: float, y: float) -> Fraction | None:
    """How far the exact ``x op y`` lies from half-way between its two neighbouring binary32
    values, in units of their spacing (0: a tie; ``None``: exact, or beyond the finite range)."""
    exact = Fraction(x) + Fraction(y) if op == Op.ADD else Fraction(x) * Fraction(y)
    if abs(exact) > _LARGEST:
        return None
    low = np.float32(float(exact))  # within one place of the exact value
    while Fraction(float(low)) > exact:
        low = np.nextafter(low, np.float32(-np.inf))
    while Fraction(float(np.nextafter(low, np.float32(np.inf)))) <= exact:
        low = np.nextafter(low, np.float32(np.inf))
    if Fraction(float(low)) == exact:
        return None
    high = Fraction(float(np.nextafter(low, np.float32(np.inf))))
    spacing = high - Fraction(float(low))
    return abs(exact - (Fraction(float(low)) + high) / 2) / spacing


def classify(op: Op, a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    with np.errstate(all="ignore"):
        fa, fb = a.view(np.float32).astype(np.float64), b.view(np.float32).astype(np.float64)
        distance = [None if not (np.isfinite(x) and np.isfinite(y)) else _tie_distance(op, x, y)
                    for x, y in zip(fa.tolist(), fb.tolist(), strict=True)]
    tie = np.array([d == 0 for d in distance])
    near = np.array([d is not None and 0 < d < Fraction(1, 2**12) for d in distance])
    finite = np.isfinite(fa) & np.isfinite(fb)
    result = combine(op, DType.FP32, a, b)
    magnitude = result & 0x7FFF_FFFF
    ea, eb, er = ((v >> 23) & 0xFF for v in (a, b, result))
    return {
        "tie": np.mean(tie),
        "near tie": np.mean(near),
        "subnormal result": np.mean((er == 0) & (magnitude != 0)),
        "zero from non-zero operands": np.mean(finite & (magnitude == 0) & (fa != 0) & (fb != 0)),
        "overflow": np.mean(finite & (magnitude == 0x7F80_0000)),
        "subnormal operand": np.mean(((ea == 0) & (a & 0x7F_FFFF != 0))
                                     | ((eb == 0) & (b & 0x7F_FFFF != 0))),
        "cancellation": np.mean(finite & (magnitude != 0) & (op == Op.ADD)
                                & (er.astype(int) + 8 <= np.maximum(ea, eb).astype(int))),
        "nan": np.mean(result == 0x7FC0_0000),
    }


@pytest.mark.parametrize(("op", "floors"), [
    (Op.ADD, {"tie": 0.05, "near tie": 0.005, "subnormal result": 0.02,
              "zero from non-zero operands": 0.005, "overflow": 0.01, "subnormal operand": 0.03,
              "cancellation": 0.05, "nan": 0.002}),
    (Op.MUL, {"tie": 0.05, "near tie": 0.02, "subnormal result": 0.1,
              "zero from non-zero operands": 0.05, "overflow": 0.05, "subnormal operand": 0.05,
              "nan": 0.002}),
], ids=["add", "mul"])
def test_fp32_mixture_reaches_the_hard_cases(op, floors):
    a, b = fp32_pairs(op, N, np.random.default_rng(1))
    assert len(a) == len(b) == N
    shares = classify(op, a, b)
    low = {name: round(float(shares[name]), 4) for name, floor in floors.items()
           if shares[name] < floor}
    assert not low, f"too few of {low}"


def test_fp32_mul_mixture_has_ties_decided_by_shifted_out_bits():
    """Subnormal products whose round bit is set, with zeros up to the sticky region, so that
    only the bits the denormalising shift drops make them round up."""
    a, b = fp32_pairs(Op.MUL, N, np.random.default_rng(2))
    with np.errstate(all="ignore"):
        fa, fb = a.view(np.float32).astype(np.float64), b.view(np.float32).astype(np.float64)
        exact = fa * fb
        units = np.abs(exact / 2.0**-149)  # in the subnormal spacing
        fraction = units - np.floor(units)
    tiny = np.isfinite(units) & (units < 2**23)
    cases = tiny & (fraction > 0.5) & (fraction < 0.5 + 2**-20)
    assert cases.mean() > 0.005


def test_min_max_mixture_has_equal_opposite_and_neighbouring_values():
    a, b = fp32_pairs(Op.MIN, N, np.random.default_rng(3))
    assert np.mean(a == b) > 0.05
    assert np.mean(a == (b ^ 0x8000_0000)) > 0.05
    assert np.mean(np.abs(a.astype(np.int64) - b.astype(np.int64)) == 1) > 0.03
    assert np.mean(((a | b) & 0x7FFF_FFFF) == 0) > 0.03  # both zeros, either sign


def test_int_pairs_reach_the_limits():
    a, b = int_pairs(N, np.random.default_rng(4))
    signed_a = a.view(np.int32)
    assert np.mean(a == b) > 0.05
    assert np.mean((signed_a > -300) & (signed_a < 300)) > 0.1
    for edge in (0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0):
        assert np.any(a == edge)


def test_special_pairs_are_every_ordered_pair():
    a, b = special_pairs(DType.FP32)
    assert len(set(zip(a.tolist(), b.tolist(), strict=True))) == len(FP32_SPECIALS) ** 2
    a, b = special_pairs(DType.INT32)
    assert len(a) == len(INT_SPECIALS) ** 2


def test_unsupported_pairs_are_unsupported():
    ops, dtypes = unsupported_pairs(500, np.random.default_rng(5))
    for op, dtype in zip(ops.tolist(), dtypes.tolist(), strict=True):
        assert op > max(Op) or dtype > max(DType) or not is_supported(Op(op), DType(dtype))
    assert {(3, 2), (6, 2), (0, 3), (8, 0)} <= set(zip(ops.tolist(), dtypes.tolist(),
                                                       strict=True))


def test_vectors_shuffle_groups_and_expect_combine():
    params = {"groups": [["add", "fp32", 300], ["xor", "uint32", 200]], "specials": True,
              "unsupported": 50, "seed": 6}
    vec = vectors(params)
    total = 300 + 200 + len(FP32_SPECIALS) ** 2 + len(INT_SPECIALS) ** 2 + 50
    assert all(len(values) == total for values in vec.values())
    supported = vec["unsupported"] == 0
    for op, dtype in ((Op.ADD, DType.FP32), (Op.XOR, DType.UINT32)):
        pick = supported & (vec["op"] == op) & (vec["dtype"] == dtype)
        assert np.array_equal(vec["result"][pick], combine(op, dtype, vec["a"][pick],
                                                           vec["b"][pick]))
    assert np.all(vec["result"][~supported] == 0)
    assert 0 < np.flatnonzero(vec["op"] == Op.XOR)[0] < total - 250  # interleaved
    assert np.array_equal(vectors(params)["a"], vec["a"])  # seeded


@pytest.mark.parametrize(("call", "message"), [
    (lambda: fp32_pairs(Op.AND, 10, np.random.default_rng(0)),
     r"^Operation and is not defined on fp32$"),
    (lambda: vectors({"groups": [["nor", "fp32", 10]]}),
     r"^Operation nor is not defined on fp32$"),
])
def test_bitwise_fp32_vectors_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_classifier_tells_ties_near_ties_and_exact_results_apart():
    one = 0x3F80_0000
    half_place = 0x3380_0000  # 2**-24: 1 + 2**-24 is half-way between 1 and 1 + 2**-23
    near = half_place | 1 << 7  # 2**-24 * (1 + 2**-16): 2**-17 of a place from half-way
    quarter_place = 0x3300_0000  # 2**-25: a quarter of a place from 1, inexact
    for x, kind in ((half_place, "tie"), (near, "near tie"), (one, None), (quarter_place, None)):
        shares = classify(Op.ADD, np.array([one], dtype=np.uint32), np.array([x], dtype=np.uint32))
        assert [k for k in ("tie", "near tie") if shares[k] == 1] == ([kind] if kind else [])
