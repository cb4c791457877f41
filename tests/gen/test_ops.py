"""innet.gen.ops: register codes and the reference semantics of every operation."""

import numpy as np
import pytest

from innet.gen.ops import (
    CANONICAL_NAN,
    DType,
    Op,
    check_supported,
    combine,
    fold,
    from_bits,
    is_supported,
    to_bits,
)

rng = np.random.default_rng(20261121)
A = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)
B = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)


def python_int(op, dtype, a, b):
    """Arbitrary-precision model, independent of numpy's integer arithmetic."""
    def signed(x):
        return x - (1 << 32) if dtype == DType.INT32 and x >> 31 else x
    result = {
        Op.ADD: lambda: a + b, Op.MUL: lambda: a * b, Op.AND: lambda: a & b,
        Op.OR: lambda: a | b, Op.XOR: lambda: a ^ b, Op.NOR: lambda: ~(a | b),
        Op.MIN: lambda: a if signed(a) <= signed(b) else b,
        Op.MAX: lambda: a if signed(a) >= signed(b) else b,
    }[op]()
    return result % (1 << 32)


@pytest.mark.parametrize("dtype", [DType.INT32, DType.UINT32])
@pytest.mark.parametrize("op", list(Op))
def test_integer_ops_match_python_ints(op, dtype):
    got = combine(op, dtype, A[:500], B[:500])
    want = [python_int(op, dtype, int(a), int(b)) for a, b in zip(A[:500], B[:500], strict=True)]
    assert got.dtype == np.uint32
    assert got.tolist() == want


@pytest.mark.parametrize("op", [Op.ADD, Op.MUL])
def test_float_arithmetic_is_numpy_float32(op):
    fa, fb = A.view(np.float32), B.view(np.float32)
    with np.errstate(all="ignore"):
        want = (fa + fb) if op == Op.ADD else (fa * fb)
    want_bits = want.view(np.uint32)
    got = combine(op, DType.FP32, A, B)
    nan = np.isnan(want)
    assert np.array_equal(got[~nan], want_bits[~nan])
    assert np.all(got[nan] == CANONICAL_NAN)


def bits(x):
    return int(np.float32(x).view(np.uint32))


@pytest.mark.parametrize(("op", "a", "b", "want"), [
    (Op.MIN, -0.0, 0.0, -0.0), (Op.MIN, 0.0, -0.0, -0.0),
    (Op.MAX, -0.0, 0.0, 0.0), (Op.MAX, 0.0, -0.0, 0.0),
    (Op.MIN, 1.0, np.inf, 1.0), (Op.MAX, -np.inf, -1.0, -1.0),
    (Op.MIN, 1e-45, -1e-45, -1e-45), (Op.MAX, 2.0, 3.0, 3.0),
])
def test_float_minmax_orders_signed_zeros_and_subnormals(op, a, b, want):
    assert int(combine(op, DType.FP32, bits(a), bits(b))) == bits(want)


@pytest.mark.parametrize("op", [Op.ADD, Op.MUL, Op.MIN, Op.MAX])
def test_float_nan_results_are_canonical(op):
    snan, qnan = 0x7F80_0001, 0xFFC1_2345
    for a, b in [(snan, bits(1.0)), (bits(1.0), qnan), (snan, qnan)]:
        assert int(combine(op, DType.FP32, a, b)) == CANONICAL_NAN
    if op == Op.ADD:
        assert int(combine(op, DType.FP32, bits(np.inf), bits(-np.inf))) == CANONICAL_NAN


def test_float_subnormals_are_kept():
    tiny = 0x0000_0001  # smallest subnormal
    assert int(combine(Op.ADD, DType.FP32, tiny, tiny)) == 2
    assert int(combine(Op.MUL, DType.FP32, bits(0.5), 2)) == 1


def test_bitwise_ops_are_not_defined_on_fp32():
    assert not is_supported(Op.XOR, DType.FP32)
    assert is_supported(Op.XOR, DType.UINT32)
    with pytest.raises(ValueError, match=r"^Operation nor is not defined on fp32$"):
        check_supported(Op.NOR, DType.FP32)
    with pytest.raises(ValueError, match=r"^Operation and is not defined on fp32$"):
        combine(Op.AND, DType.FP32, 1, 2)


def test_fold_is_left_to_right():
    values = [to_bits([x], DType.FP32) for x in (1e8, 1.0, -1e8)]
    assert from_bits(fold(Op.ADD, DType.FP32, values), DType.FP32)[0] == np.float32(0.0)
    values = [to_bits([x], DType.FP32) for x in (1e8, -1e8, 1.0)]
    assert from_bits(fold(Op.ADD, DType.FP32, values), DType.FP32)[0] == np.float32(1.0)
    with pytest.raises(ValueError, match=r"^Fold needs at least one operand$"):
        fold(Op.ADD, DType.INT32, [])


def test_bits_round_trip():
    values = np.array([-1, 0, 2**31 - 1, -(2**31)], dtype=np.int32)
    assert to_bits(values, DType.INT32).tolist() == [0xFFFF_FFFF, 0, 0x7FFF_FFFF, 0x8000_0000]
    assert from_bits(to_bits(values, "int32"), "int32").tolist() == values.tolist()


def test_parse_names():
    assert Op.parse("max") is Op.MAX
    assert DType.parse("FP32") is DType.FP32
    with pytest.raises(ValueError, match=r"^Operation must be one of add, min, max, and, or, xor, "
                       r"nor, mul, not 'sum'$"):
        Op.parse("sum")
    with pytest.raises(ValueError, match=r"^Data type must be one of int32, uint32, fp32, "
                       r"not 'f64'$"):
        DType.parse("f64")
