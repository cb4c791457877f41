"""The fp32 error study: exact rounding against fractions, ulp distances against nextafter, the
tree against the engine's shape, and the bench case."""

import math
from fractions import Fraction

import numpy as np
import pytest

from innet.gen.ops import CANONICAL_NAN
from innet.hw.ceng.tree import tree_shape
from innet.sim import bench
from innet.sim.bench import numerics as nm
from innet.sim.golden import reduce_switch

FLT_MAX = float(np.finfo(np.float32).max)


def _bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def _value(bits: int) -> Fraction:
    """The exact value of a finite fp32 bit pattern, from its fields."""
    sign = -1 if bits >> 31 else 1
    exponent, fraction = (bits >> 23) & 0xFF, bits & 0x7F_FFFF
    if exponent == 0:
        return sign * Fraction(fraction, 2**149)
    return sign * Fraction(fraction | 1 << 23) * Fraction(2) ** (exponent - 150)


def _round_fraction(x: Fraction, all_negative_zero: bool) -> int:
    """``x`` rounded to fp32 (nearest, ties to even, subnormals, overflow to inf) with
    fractions only: the independent oracle."""
    if x == 0:
        return 0x8000_0000 if all_negative_zero else 0
    sign = 1 << 31 if x < 0 else 0
    a = abs(x)
    exponent = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** exponent > a:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= a:
        exponent += 1
    ulp = Fraction(2) ** (max(exponent, -126) - 23)
    rounded = round(a / ulp) * ulp  # round() of a Fraction: ties to even
    if rounded >= 2**128:
        return sign | 0x7F80_0000
    return sign | int(_bits([float(rounded)])[0])  # exact: rounded is an fp32 value


def _oracle(row) -> int:
    values = [float(v) for v in np.asarray(row, np.uint32).view(np.float32)]
    if any(math.isnan(v) for v in values) or (math.inf in values and -math.inf in values):
        return CANONICAL_NAN
    if math.inf in values or -math.inf in values:
        return 0x7F80_0000 if math.inf in values else 0xFF80_0000
    return _round_fraction(sum((_value(int(b)) for b in row), Fraction(0)),
                           all(int(b) == 0x8000_0000 for b in row))


def _check_against_oracle(bits: np.ndarray) -> None:
    got = nm.exact_sum(bits)
    for row, value in zip(bits, got, strict=True):
        assert int(value) == _oracle(row), [hex(int(b)) for b in row]


@pytest.mark.parametrize("kind", list(nm.CLASSES))
@pytest.mark.parametrize("fanin", [1, 2, 3, 8, 17])
def test_exact_sum_is_the_rounded_fraction_sum(kind, fanin):
    _check_against_oracle(nm.vectors(kind, fanin, 150, seed=7))


def _halfway_vectors(rng: np.random.Generator, count: int, fanin: int) -> np.ndarray:
    """Vectors whose exact sum is an fp32 midpoint ``x + ulp(x)/2`` plus 0 or a tiny
    ``t``: a sum rounded to float64 first lands on the midpoint and then rounds to even,
    which is wrong whenever ``t`` is not 0."""
    rows = []
    for _ in range(count):
        exponent = int(rng.integers(2, 255))  # ulp(x)/2 must be an fp32 value itself
        x = int(rng.integers(0, 2)) << 31 | exponent << 23 | int(rng.integers(0, 1 << 23))
        x_value = _value(x)
        half = Fraction(2) ** (exponent - 151) * (1 if x_value > 0 else -1)
        tiny_exponent = int(rng.integers(-149, max(-148, exponent - 180)))
        tiny = float(Fraction(2) ** tiny_exponent) * float(rng.choice([-1, 0, 1]))
        row = [x, int(_bits([float(half)])[0]), int(_bits([tiny])[0])]
        while len(row) < fanin:
            y = int(_bits([rng.uniform(-1e3, 1e3)])[0])
            row += [y, y ^ 0x8000_0000] if len(row) + 2 <= fanin else [0]
        rows.append(rng.permutation(row[:fanin]))
    return np.asarray(rows, dtype=np.uint32)


@pytest.mark.parametrize("fanin", [3, 4, 9, 17])
def test_exact_sum_at_rounding_midpoints(fanin):
    rng = np.random.default_rng(fanin)
    bits = _halfway_vectors(rng, 600, fanin)
    _check_against_oracle(bits)
    # The set holds real double-rounding traps: fsum rounded to float64, then to fp32.
    naive = np.array([math.fsum(map(float, row.view(np.float32))) for row in bits])
    with np.errstate(over="ignore"):
        naive_bits = naive.astype(np.float32).view(np.uint32)
    assert (naive_bits != nm.exact_sum(bits)).sum() > 10


def test_exact_sum_at_the_overflow_threshold():
    top = 2.0**103  # half an ulp of the largest finite value
    tiny = 2.0**-149
    for sign in (1, -1):
        rows = [[FLT_MAX, top], [FLT_MAX, top, -tiny], [FLT_MAX, top, tiny],
                [FLT_MAX, top / 2], [FLT_MAX, FLT_MAX, -FLT_MAX]]
        _check_against_oracle(_bits([[sign * v for v in r] + [0.0] * (3 - len(r))
                                     for r in rows]))


def test_exact_sum_of_one_operand_is_the_operand():
    bits = nm.vectors("special", 1, 2000, seed=3)
    nan = np.isnan(bits.view(np.float32))[:, 0]
    assert np.array_equal(nm.exact_sum(bits)[~nan], bits[~nan, 0])
    assert np.all(nm.exact_sum(bits)[nan] == CANONICAL_NAN)


# ulp distance -----------------------------------------------------------------------------------


def test_ulp_distance_counts_nextafter_steps():
    rng = np.random.default_rng(5)
    start = np.concatenate([rng.integers(0, 0x7F80_0000 - 8, 300, dtype=np.uint32),
                            rng.integers(0x8000_0000, 0xFF80_0000 - 8, 300, dtype=np.uint32),
                            _bits([0.0, -0.0, 2.0**-149, -(2.0**-149)])])
    for direction in (np.inf, -np.inf):
        here = start.view(np.float32).copy()
        for steps in range(1, 6):
            here = np.nextafter(here, np.float32(direction))
            assert np.all(nm.ulp_distance(start, here.view(np.uint32)) == steps)
            assert np.all(nm.ulp_distance(here.view(np.uint32), start) == steps)
    largest, infinity = _bits([FLT_MAX, np.inf])
    assert nm.ulp_distance(largest, infinity) == 1
    assert nm.ulp_distance(largest | np.uint32(1 << 31), infinity | np.uint32(1 << 31)) == 1


def test_ulp_distance_across_zero():
    zero, negative_zero, tiny = _bits([0.0, -0.0, 2.0**-149])
    assert nm.ulp_distance(zero, negative_zero) == 0
    assert nm.ulp_distance(tiny, tiny ^ np.uint32(1 << 31)) == 2
    assert nm.ulp_distance(negative_zero, tiny) == 1


def test_ulp_distance_within_a_binade_is_the_difference_over_the_ulp():
    rng = np.random.default_rng(9)
    exponent = rng.integers(1, 254, 500)
    a = (exponent << 23 | rng.integers(0, 1 << 23, 500)).astype(np.uint32)
    b = (exponent << 23 | rng.integers(0, 1 << 23, 500)).astype(np.uint32)
    ulp = [Fraction(2) ** (int(e) - 150) for e in exponent]
    expected = [abs(_value(int(x)) - _value(int(y))) / u for x, y, u in zip(a, b, ulp,
                                                                          strict=True)]
    assert nm.ulp_distance(a, b).tolist() == expected


def test_ulp_distance_of_a_nan():
    with pytest.raises(ValueError, match=r"^A NaN has no ulp distance, not 0x7fc00001$"):
        nm.ulp_distance(np.uint32(0x7FC0_0001), np.uint32(0))


# The orders -------------------------------------------------------------------------------------


def _shape_sum(row: np.ndarray, shape) -> np.float32:
    if isinstance(shape, int):
        return row[shape]
    return np.float32(_shape_sum(row, shape[0]) + _shape_sum(row, shape[1]))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit patterns, any NaN equal to any NaN."""
    fa, fb = a.view(np.float32), b.view(np.float32)
    return bool(np.all((a == b) | (np.isnan(fa) & np.isnan(fb))))


@pytest.mark.parametrize("fanin", [2, 3, 5, 8, 13, 17])
def test_orders_are_the_golden_model_the_tree_shape_and_the_loop(fanin):
    bits = nm.vectors("special", fanin, 300, seed=11)
    assert np.array_equal(nm.engine_sum(bits), reduce_switch("add", "fp32", list(bits.T)))
    tree = nm.tree_sum(bits)
    with np.errstate(all="ignore"):
        shaped = np.array([_shape_sum(row, tree_shape(fanin)) for row in bits.view(np.float32)],
                          dtype=np.float32).view(np.uint32)
        loop = []
        for row in bits.view(np.float32):
            total = row[0]
            for value in row[1:]:
                total = np.float32(total + value)
            loop.append(total)
    assert _same(tree, shaped)
    assert _same(nm.sequential_sum(bits), np.array(loop, dtype=np.float32).view(np.uint32))


def test_vectors_are_reproducible_and_of_their_class():
    assert np.array_equal(nm.vectors("wide", 5, 100, seed=1), nm.vectors("wide", 5, 100, seed=1))
    assert not np.array_equal(nm.vectors("wide", 5, 100, seed=1),
                              nm.vectors("wide", 5, 100, seed=2))
    same = nm.vectors("same sign", 9, 500).view(np.float32)
    assert np.all(np.signbit(same) == np.signbit(same[:, :1]))
    cancelling = nm.vectors("cancelling", 7, 500)
    total = nm.exact_sum(cancelling).view(np.float32)
    largest = np.abs(cancelling.view(np.float32)).max(axis=1)
    assert np.all(np.abs(total) <= largest * 2.0**-20)


def test_study_statistics():
    rows = nm.study([2, 3, 6], count=400, seed=4)
    assert [(r["class"], r["fanin"]) for r in rows] == [(c, k) for c in nm.CLASSES
                                                        for k in (2, 3, 6)]
    for r in rows:
        bits = nm.vectors(r["class"], r["fanin"], 400, seed=4)
        exact = nm.exact_sum(bits).view(np.float32)
        if r["fanin"] <= 3:  # tree_shape(3) is ((0, 1), 2): the sequential order
            assert r["tree"] == r["sequential"]
        for name, reduce in nm.ORDERS.items():
            got = reduce(bits).view(np.float32)
            stats = r[name]
            finite = np.isfinite(got) & np.isfinite(exact)
            same_class = ((np.isnan(got) & np.isnan(exact)) | (got == exact)
                          | (np.isfinite(got) & np.isfinite(exact)))
            assert stats["mismatch"] == pytest.approx(np.mean(~same_class))
            assert stats["excluded"] == pytest.approx(np.mean(~finite))
            assert stats["exact"] == pytest.approx(np.mean(got[finite] == exact[finite]))
            assert 0 <= stats["mean_ulp"] <= stats["max_ulp"]
            assert (stats["max_ulp"] == 0) == (stats["exact"] == 1)


def test_bench_case_quick():
    (numerics_case,) = [c for c in bench.REGISTRY if c.name == "numerics_fp32_add"]
    (result,) = bench.run([numerics_case], bench.Options(quick=True))
    assert result["status"] == "ok", result.get("error")
    assert len(result["rows"]) == len(nm.CLASSES) * len(nm.FANINS)
    assert result["table"] == nm.table_markdown(result["rows"])
    assert len(result["table"]) == 2 + len(result["rows"])


# Bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda: nm.vectors("gaussian", 3, 10),
     r"^Vector class must be one of wide, cancelling, same sign, special, not 'gaussian'$"),
    (lambda: nm.vectors("wide", 18, 10), r"^Fan-in must be at most 17, not 18$"),
    (lambda: nm.vectors("wide", 0, 10), r"^Fan-in must be at least 1, not 0$"),
    (lambda: nm.vectors("wide", 3, 0), r"^Vector count must be at least 1, not 0$"),
    (lambda: nm.vectors("wide", 3, 10, seed=-1), r"^Seed must be at least 0, not -1$"),
    (lambda: nm.study([1], count=10), r"^Fan-in must be at least 2, not 1$"),
    (lambda: nm.study([2], count=10, classes=["x"]), r"^Vector class must be one of .*'x'$"),
    (lambda: nm.exact_sum(np.zeros(4, np.uint32)),
     r"^Operands must be a 2-d array with a column per operand, not shape \(4,\)$"),
    (lambda: nm.exact_sum(np.zeros((2, 18), np.uint32)),
     r"^At most 17 operands per vector, not 18$"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bad_input_type():
    with pytest.raises(TypeError, match=r"^Fan-in must be an integer, not 2.5$"):
        nm.vectors("wide", 2.5, 10)
