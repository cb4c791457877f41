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
    sum_fp32,
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
    assert not is_supported("and", "fp32")  # by name as well
    assert is_supported("and", "uint32")
    with pytest.raises(ValueError, match=r"^Operation and is not defined on fp32$"):
        check_supported("and", "fp32")
    with pytest.raises(ValueError, match=r"^Operation must be one of add, min, max, and, or, "
                                         r"xor, nor, mul, not 3$"):
        check_supported(3, 2)
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
    for operands in ({1: 1}, None, "ab"):
        with pytest.raises(TypeError, match=r"^Operands must be a sequence of bit-pattern "
                                            r"vectors, not "):
            fold(Op.ADD, DType.INT32, operands)
    ones = np.ones(2, dtype=np.uint32)
    assert fold(Op.ADD, DType.INT32, iter([ones] * 3)).tolist() == [3, 3]


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
    with pytest.raises(ValueError, match=r"^Operation must be one of add, min, max, and, or, xor, "
                       r"nor, mul, not a 16610-bit integer$"):
        Op.parse(10**5000)
    with pytest.raises(ValueError, match=r"^Data type must be one of int32, uint32, fp32, "
                       r"not 'f64'$"):
        DType.parse("f64")


# The one-rounding sum ---------------------------------------------------------------------------


def _fields(rng, n, exponents):
    """``n`` fp32 patterns: random signs and significands, biased exponents from ``exponents``."""
    sign = rng.integers(0, 2, n).astype(np.uint32)
    fraction = rng.integers(0, 1 << 23, n).astype(np.uint32)
    return (sign << 31) | (exponents.astype(np.uint32) << 23) | fraction


def test_sum_of_two_is_the_ieee_sum():
    """Two operands at every distance, the smaller's low bits set to patterns that put the sum
    on, or just beside, a rounding tie: every sum is float32's own addition (and the exactly
    rounded sum of innet.sim.bench.numerics), so the sticky bit of the bits cut off decides
    each tie. One such pair, by hand: 1 + 4 ulp minus 2**-24 - 2**-47."""
    from innet.sim.bench.numerics import exact_sum

    rng = np.random.default_rng(3)
    n = 100_000
    big = rng.integers(1, 255, n)
    a = _fields(rng, n, big)
    b = _fields(rng, n, np.clip(big - rng.integers(0, 60, n), 0, 254))
    near_tie = rng.random(n) < 0.5
    b = np.where(near_tie, (b & ~np.uint32(0xFFFF))
                 | rng.choice(np.array([0, 1, 0x7FFF, 0x8000, 0xFFFF], np.uint32), n), b)
    got = sum_fp32([a, b])
    np.testing.assert_array_equal(got, combine("add", "fp32", a, b))
    np.testing.assert_array_equal(got, exact_sum(np.stack([a, b], axis=1)))
    assert sum_fp32([np.uint32(0x3F80_0004), np.uint32(0xB380_0001)]) == 0x3F80_0003


@pytest.mark.parametrize("count", [3, 5, 9, 17])
def test_sum_within_the_guard_bits_is_exactly_rounded_in_any_order(count):
    """When no operand lies more than 16 places below the largest one's last place nothing is
    cut: the sum is the exactly rounded one (innet.sim.bench.numerics' nine-limb sum), with
    subnormal and overflowing results, and a permutation changes nothing."""
    from innet.sim.bench.numerics import exact_sum

    rng = np.random.default_rng(count)
    n = 20_000
    top = rng.choice(np.array([1, 2, 3, 100, 127, 200, 253, 254]), n)
    bits = np.stack([_fields(rng, n, np.clip(top - rng.integers(0, 16, n), 0, 254))
                     for _ in range(count)], axis=1)
    got = sum_fp32(list(bits.T))
    np.testing.assert_array_equal(got, exact_sum(bits))
    shuffled = bits[:, rng.permutation(count)]
    np.testing.assert_array_equal(sum_fp32(list(shuffled.T)), got)


def test_sum_specials_and_signed_zeros():
    nan, inf = np.uint32(CANONICAL_NAN), np.uint32(0x7F80_0000)
    minus_inf, one = np.uint32(0xFF80_0000), np.uint32(0x3F80_0000)
    minus_zero, zero = np.uint32(0x8000_0000), np.uint32(0)
    assert sum_fp32([one, np.uint32(0x7F80_0001)]) == nan  # any NaN
    assert sum_fp32([inf, minus_inf, one]) == nan
    assert sum_fp32([one, minus_inf, one]) == minus_inf
    assert sum_fp32([minus_zero, minus_zero, minus_zero]) == minus_zero
    assert sum_fp32([minus_zero, zero]) == zero
    assert sum_fp32([one, one ^ np.uint32(1 << 31)]) == zero  # x - x is +0
    big = np.uint32(0x7F7F_FFFF)  # no intermediate overflow: max + max - max is max
    assert sum_fp32([big, big, big ^ np.uint32(1 << 31)]) == big


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: sum_fp32([]), ValueError, r"^A sum needs at least one operand$"),
    (lambda: sum_fp32([1, 2], guard=2), ValueError, r"^Guard bits must be at least 3, not 2$"),
    (lambda: sum_fp32([1, 2], guard=34), ValueError, r"^Guard bits must be at most 33, not 34$"),
    (lambda: sum_fp32([1, 2], guard=2.5), TypeError,
     r"^Guard bits must be an integer, not 2.5$"),
])
def test_sum_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: combine(Op.ADD, DType.INT32, -1, 2), ValueError,
     r"^Operands must be uint32 bit patterns \(0\.\.0xFFFFFFFF\), not -1$"),
    (lambda: combine(Op.ADD, DType.INT32, 1 << 32, 2), ValueError,
     r"^Operands must be uint32 bit patterns \(0\.\.0xFFFFFFFF\), not 4294967296$"),
    (lambda: combine(Op.ADD, DType.INT32, [1, 10**20], 2), ValueError,
     r"^Operands must be uint32 bit patterns \(0\.\.0xFFFFFFFF\), not 10{20}$"),
    (lambda: combine(Op.ADD, DType.INT32, 1.5, 2), TypeError,
     r"^Operands must be integers, not float64 values$"),
    (lambda: from_bits([True], DType.FP32), TypeError,
     r"^Bit patterns must be integers, not bool values$"),
    (lambda: sum_fp32([1, "a"]), TypeError, r"^Operands must be integers, not"),
])
def test_operands_are_bit_patterns(call, error, message):
    # They overflowed inside numpy, or a float was truncated to an integer.
    with pytest.raises(error, match=message):
        call()
    assert int(combine(Op.ADD, DType.INT32, np.int64(0xFFFF_FFFF), 1)) == 0
