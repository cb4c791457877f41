"""innet.sim.tb.tb_alu operand generators: they reach the hard cases they are meant for.

The classification is independent of the generators: exact results in float64 (exact for
binary32 products; for sums the share that is not exact cannot produce false ties), ties and
near ties measured against the neighbouring binary32 values.
"""

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


def classify(op: Op, a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    with np.errstate(all="ignore"):
        fa, fb = a.view(np.float32).astype(np.float64), b.view(np.float32).astype(np.float64)
        exact = fa + fb if op == Op.ADD else fa * fb
        nearest = exact.astype(np.float32)
        other = np.nextafter(nearest, np.where(exact > nearest, np.float32(np.inf),
                                               np.float32(-np.inf)).astype(np.float32))
        mid = (nearest.astype(np.float64) + other.astype(np.float64)) / 2
        ulp = np.abs(other.astype(np.float64) - nearest.astype(np.float64))
        distance = np.abs(exact - mid)
    finite = np.isfinite(fa) & np.isfinite(fb)
    result = combine(op, DType.FP32, a, b)
    magnitude = result & 0x7FFF_FFFF
    inexact = finite & (exact != nearest.astype(np.float64))
    ea, eb, er = ((v >> 23) & 0xFF for v in (a, b, result))
    return {
        "tie": np.mean(inexact & (exact == mid)),
        "near tie": np.mean(inexact & (exact != mid) & (distance < ulp * 2**-12)),
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
