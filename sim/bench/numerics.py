"""Floating-point error of the collective engine's fp32 reduction against the exact sum.

The engine adds the ``k`` contributing ports of a switch (``k`` = 2 .. 17 up to radix 16) in
one multi-operand unit: aligned once, summed exactly, rounded once
(:func:`innet.gen.ops.sum_fp32`, the same for every element and any port order; its bit-exact
model is :func:`innet.sim.golden.reduce_switch`). This module measures how far that result is
from the exactly rounded sum, beside two orders of pairwise float32 adds: a fixed pairwise
tree of two-operand units in port order (PIUMA, "Collective Engine": "reductions are computed
in a fixed port order [...]"), and a left-to-right sequential fold
(:func:`innet.gen.ops.fold`, what a host loop does), per fan-in and per class of input vector
(:data:`CLASSES`).

- **Exact sum** (:func:`exact_sum`): every finite fp32 operand is an integer times 2^-149;
  their sum is kept exactly in nine 32-bit limbs and rounded once to fp32, to nearest, ties to
  even, with subnormal results, overflow to ±inf at 2^128 - 2^103 (the midpoint above the
  largest finite value). A NaN operand, or both infinities, give NaN; otherwise an infinite
  operand gives that infinity.
- **Error** (:func:`ulp_distance`): the distance of two fp32 values in units in the last
  place, counted on the ordered integer line of the encodings (``+0`` and ``-0`` are one
  point, neighbours by :func:`numpy.nextafter` are 1 apart, the smallest subnormals of
  opposite sign 2 apart).
- **Specials**: the ulp statistics count only the vectors whose result and exact sum are both
  finite. The others are counted apart: ``mismatch`` is the share of vectors whose result is
  of a different class (finite, +inf, -inf, NaN) than the exact sum's (an intermediate
  overflow that cancels later, or a finite sum next to an overflowing one), ``excluded`` the
  share left out of the ulp statistics.

The bench case ``numerics_fp32_add`` runs :func:`study` on 10^5 vectors per class and
fan-in (2,000 with ``--quick``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from innet.gen.checks import check_int
from innet.sim.bench import Options, case

__all__ = [
    "CLASSES",
    "FANINS",
    "ORDERS",
    "engine_sum",
    "exact_sum",
    "sequential_sum",
    "study",
    "table_markdown",
    "tree_sum",
    "ulp_distance",
    "vectors",
]

#: Fan-ins measured: 2 contributing ports up to 17 (16 network ports and the local one).
FANINS = tuple(range(2, 18))

#: Limbs of 32 bits holding an exact sum of up to 17 fp32 values in units of 2^-149.
_LIMBS = 9
_MAX_OPERANDS = 17
_POS_INF = 0x7F80_0000
_NEG_INF = 0xFF80_0000
_MASK32 = 0xFFFF_FFFF


def engine_sum(bits: np.ndarray) -> np.ndarray:
    """The engine's fp32 add of each row of ``bits`` (operands in port order):
    :func:`innet.sim.golden.reduce_switch`, the golden model the RTL is checked against."""
    from innet.sim.golden import reduce_switch

    return reduce_switch("add", "fp32", list(np.asarray(bits, dtype=np.uint32).T))


def tree_sum(bits: np.ndarray) -> np.ndarray:
    """A pairwise tree of float32 adds over each row of ``bits``: adjacent pairs level by level,
    an odd last operand moving up (:func:`innet.hw.ceng.tree.tree_shape`), as a tree of
    two-operand ALUs computes it."""
    from innet.gen.ops import combine

    level = list(np.asarray(bits, dtype=np.uint32).T)
    while len(level) > 1:
        level = [combine("add", "fp32", level[i], level[i + 1]) if i + 1 < len(level)
                 else level[i] for i in range(0, len(level), 2)]
    return level[0]


def sequential_sum(bits: np.ndarray) -> np.ndarray:
    """Left-to-right fp32 add of each row of ``bits``, ``((x0 + x1) + x2) + ...``
    (:func:`innet.gen.ops.fold`)."""
    from innet.gen.ops import fold

    return fold("add", "fp32", list(np.asarray(bits, dtype=np.uint32).T))


#: The reduction orders compared, by name.
ORDERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "engine": engine_sum,
    "tree": tree_sum,
    "sequential": sequential_sum,
}


def _check_matrix(bits: Any) -> np.ndarray:
    bits = np.asarray(bits)
    if bits.ndim != 2 or bits.shape[1] < 1:
        raise ValueError(f"Operands must be a 2-d array with a column per operand, not shape "
                         f"{bits.shape}")
    if bits.shape[1] > _MAX_OPERANDS:
        raise ValueError(f"At most {_MAX_OPERANDS} operands per vector, not {bits.shape[1]}")
    return bits.astype(np.uint32)


def exact_sum(bits: Any) -> np.ndarray:
    """The exactly rounded fp32 sum of each row of ``bits``.

    Parameters
    ----------
    bits : array_like of uint32, shape (n, k)
        fp32 bit patterns, one row per vector, ``1 <= k <= 17``.

    Returns
    -------
    numpy.ndarray of uint32, shape (n,)
        The real sum rounded once to fp32: nearest, ties to even, subnormal results kept,
        overflow to ±inf. An exact zero is ``-0`` only if every operand is ``-0`` (as IEEE 754
        addition gives). A NaN operand, or ``+inf`` and ``-inf`` together, give the canonical
        NaN ``0x7FC00000``; otherwise an infinite operand gives its infinity.

    Raises
    ------
    ValueError
        If ``bits`` is not a 2-d array of 1 to 17 columns.
    """
    from innet.gen.ops import CANONICAL_NAN

    bits = _check_matrix(bits)
    n, k = bits.shape
    exponent = (bits >> 23) & 0xFF
    fraction = bits & 0x7F_FFFF
    special = exponent == 0xFF
    any_nan = (special & (fraction != 0)).any(axis=1)
    pos_inf = (bits == _POS_INF).any(axis=1)
    neg_inf = (bits == _NEG_INF).any(axis=1)

    # Each finite operand is +-m * 2^shift in units of 2^-149 (m < 2^24, shift < 254).
    normal = exponent > 0
    m = np.where(normal, fraction | (1 << 23), fraction).astype(np.uint64)
    m[special] = 0
    shift = np.where(normal, exponent.astype(np.int64) - 1, 0)
    limb = shift // 32
    wide = m << (shift % 32).astype(np.uint64)  # < 2^55: spans limbs `limb` and `limb + 1`
    sign = np.where(bits >> 31, -1.0, 1.0)
    rows = np.repeat(np.arange(n, dtype=np.int64) * _LIMBS, k).reshape(n, k)
    # Per limb, at most 17 terms below 2^32 each: float64 sums them exactly.
    acc = np.bincount((rows + limb).ravel(),
                      weights=(sign * (wide & _MASK32).astype(np.float64)).ravel(),
                      minlength=n * _LIMBS)
    acc += np.bincount((rows + limb + 1).ravel(),
                       weights=(sign * (wide >> 32).astype(np.float64)).ravel(),
                       minlength=n * _LIMBS)
    acc = acc.astype(np.int64).reshape(n, _LIMBS)
    _carry(acc)
    negative = acc[:, -1] < 0
    acc[negative] = -acc[negative]
    _carry(acc)

    magnitude = _round(acc)
    zero = magnitude == 0
    all_negative_zero = (bits == 0x8000_0000).all(axis=1)
    sign_bit = np.where(zero, all_negative_zero, negative).astype(np.uint32) << 31
    out = sign_bit | magnitude.astype(np.uint32)
    out = np.where(pos_inf, np.uint32(_POS_INF), out)
    out = np.where(neg_inf, np.uint32(_NEG_INF), out)
    return np.where(any_nan | (pos_inf & neg_inf), np.uint32(CANONICAL_NAN),
                    out).astype(np.uint32)


def _carry(acc: np.ndarray) -> None:
    """Bring limbs ``0 .. L-2`` into ``[0, 2^32)`` in place; the top limb keeps the sign."""
    for i in range(acc.shape[1] - 1):
        high = acc[:, i] >> 32  # floor division, also for negative limbs
        acc[:, i] -= high << 32
        acc[:, i + 1] += high


def _round(mag: np.ndarray) -> np.ndarray:
    """fp32 magnitude encodings (int64) of the non-negative limb integers ``mag`` (units of
    2^-149), rounded to nearest, ties to even; ``0x7F800000`` on overflow."""
    n, limbs = mag.shape
    nonzero = mag != 0
    top_limb = limbs - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    top_value = mag[np.arange(n), top_limb]
    _, length = np.frexp(top_value.astype(np.float64))  # bit length of each top limb
    top_bit = 32 * top_limb + length.astype(np.int64) - 1
    # Below 2^24 units the value is exact, and its encoding is the integer itself.
    small = (top_bit < 24) | ~nonzero.any(axis=1)
    shift = np.maximum(top_bit - 23, 1)  # bits dropped from the 24-bit significand
    guard_bit = shift - 1
    low = guard_bit // 32
    offset = (guard_bit % 32).astype(np.uint64)
    padded = np.concatenate([mag, np.zeros((n, 1), np.int64)], axis=1).astype(np.uint64)
    rows = np.arange(n)
    window = (padded[rows, low] | (padded[rows, low + 1] << np.uint64(32))) >> offset
    guard = (window & np.uint64(1)).astype(bool)
    significand = ((window >> np.uint64(1)) & np.uint64((1 << 24) - 1)).astype(np.int64)
    below = np.concatenate([np.zeros((n, 1), bool),
                            np.logical_or.accumulate(nonzero, axis=1)[:, :-1]], axis=1)
    sticky = (((padded[rows, low] & ((np.uint64(1) << offset) - np.uint64(1))) != 0)
              | below[rows, low])
    up = guard & (sticky | ((significand & 1) == 1))
    # (shift << 23) + significand: the exponent field is shift + 1 (a carry out of the
    # significand moves into the exponent, up to the infinity encoding).
    encoded = np.minimum((shift << 23) + significand + up, _POS_INF)
    return np.where(small, mag[:, 0], encoded)


def _ordered(bits: np.ndarray) -> np.ndarray:
    magnitude = (bits & 0x7FFF_FFFF).astype(np.int64)
    return np.where(bits >> 31, -magnitude, magnitude)


def ulp_distance(a: Any, b: Any) -> np.ndarray:
    """Units in the last place between fp32 bit patterns ``a`` and ``b`` (broadcast).

    The distance on the ordered integer line of the encodings: two neighbours (by
    :func:`numpy.nextafter`) are 1 apart, ``+0`` and ``-0`` are 0 apart, the smallest
    subnormals of opposite sign 2 apart, the largest finite value and infinity 1 apart.

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    ValueError
        If an operand is a NaN (it has no place on the line).
    """
    a = np.asarray(a, dtype=np.uint32)
    b = np.asarray(b, dtype=np.uint32)
    for x in (a, b):
        nan = ((x & 0x7F80_0000) == 0x7F80_0000) & ((x & 0x7F_FFFF) != 0)
        if nan.any():
            raise ValueError(f"A NaN has no ulp distance, not {int(x[nan].flat[0]):#010x}")
    return np.abs(_ordered(a) - _ordered(b))


def _kind(bits: np.ndarray) -> np.ndarray:
    """0 finite, 1 +inf, 2 -inf, 3 NaN."""
    special = (bits & 0x7F80_0000) == 0x7F80_0000
    nan = special & ((bits & 0x7F_FFFF) != 0)
    return np.where(nan, 3, np.where(special, np.where(bits >> 31, 2, 1), 0))


# Vector classes ------------------------------------------------------------------------------


def _compose(sign: np.ndarray, exponent: np.ndarray, fraction: np.ndarray) -> np.ndarray:
    return ((sign.astype(np.uint32) << 31) | (exponent.astype(np.uint32) << 23)
            | fraction.astype(np.uint32))


def _wide(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Random significands, exponents uniform over 2^-24 .. 2^24, random signs."""
    return _compose(rng.integers(0, 2, (n, k)), rng.integers(127 - 24, 127 + 25, (n, k)),
                    rng.integers(0, 1 << 23, (n, k)))


def _cancelling(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Pairs ``x, -x(1 + d)`` with ``|d| = 2^-u``, ``u`` in 1 .. 30 (beyond 24, often exactly
    ``-x``); for odd ``k`` the last operand is minus the rounded sum of the others, so the
    total is near zero. Positions shuffled per vector."""
    pairs = k // 2
    x = _wide(rng, n, pairs).view(np.float32).astype(np.float64)
    d = np.where(rng.integers(0, 2, (n, pairs)), -1.0, 1.0) * np.exp2(
        -rng.integers(1, 31, (n, pairs)).astype(np.float64))
    partner = (-x * (1.0 + d)).astype(np.float32).view(np.uint32)
    out = np.concatenate([x.astype(np.float32).view(np.uint32), partner], axis=1)
    if k % 2:
        if pairs:
            rest = exact_sum(out) ^ np.uint32(1 << 31)
        else:
            rest = _wide(rng, n, 1)[:, 0]
        out = np.concatenate([out, rest[:, None]], axis=1)
    return rng.permuted(out, axis=1)


def _same_sign(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """One sign per vector, magnitudes within two binades ``[2^e, 2^(e+2))``, ``e`` per
    vector in -24 .. 23."""
    base = rng.integers(127 - 24, 127 + 24, (n, 1))
    sign = np.broadcast_to(rng.integers(0, 2, (n, 1)), (n, k))
    return _compose(sign, base + rng.integers(0, 2, (n, k)), rng.integers(0, 1 << 23, (n, k)))


#: Shares of the special operands in the ``special`` class, by kind.
_SPECIALS = {"nan": 0.1, "+inf": 0.1, "-inf": 0.1, "zero": 0.2, "subnormal": 0.25,
             "near overflow": 0.15, "smallest normals": 0.1}


def _special(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """The ``wide`` class with each operand replaced, with probability 0.15, by a special
    value (:data:`_SPECIALS`): NaNs with random payloads and signs, infinities, ``±0``,
    random subnormals, values of the top binade (intermediate overflow) and of the lowest
    normal binade."""
    out = _wide(rng, n, k)
    chosen = rng.random((n, k)) < 0.15
    count = int(chosen.sum())
    kind = rng.choice(len(_SPECIALS), size=count, p=list(_SPECIALS.values()))
    sign = rng.integers(0, 2, count)
    fraction = rng.integers(1, 1 << 23, count)
    exponent = np.choose(kind, [255, 255, 255, 0, 0, 254, 1])
    fraction = np.choose(kind, [fraction, 0, 0, 0, fraction, fraction, fraction])
    sign = np.choose(kind, [sign, 0, 1, sign, sign, sign, sign])
    out[chosen] = _compose(sign, exponent, fraction)
    return out


#: The vector classes: name -> ``generate(rng, n, k)`` of an ``(n, k)`` uint32 array.
CLASSES: dict[str, Callable[[np.random.Generator, int, int], np.ndarray]] = {
    "wide": _wide,
    "cancelling": _cancelling,
    "same sign": _same_sign,
    "special": _special,
}


def vectors(kind: str, fanin: int, count: int, seed: int = 0) -> np.ndarray:
    """``count`` random operand vectors of ``fanin`` fp32 bit patterns of class ``kind``
    (:data:`CLASSES`), reproducible from ``seed``.

    Raises
    ------
    ValueError
        If ``kind`` is not a class, ``fanin`` is not in 1 .. 17 or ``count`` is below 1.
    """
    if kind not in CLASSES:
        raise ValueError(f"Vector class must be one of {', '.join(CLASSES)}, not {kind!r}")
    check_int("Fan-in", fanin, low=1, high=_MAX_OPERANDS)
    check_int("Vector count", count, low=1)
    check_int("Seed", seed, low=0)
    index = list(CLASSES).index(kind)
    rng = np.random.default_rng(np.random.SeedSequence([seed, index, fanin]))
    return CLASSES[kind](rng, count, fanin)


def _stats(result: np.ndarray, exact: np.ndarray) -> dict[str, Any]:
    kind, exact_kind = _kind(result), _kind(exact)
    both = (kind == 0) & (exact_kind == 0)
    ulps = ulp_distance(result[both], exact[both])
    return {"max_ulp": int(ulps.max()) if ulps.size else None,
            "mean_ulp": float(ulps.mean()) if ulps.size else None,
            "exact": float(np.mean(ulps == 0)) if ulps.size else None,
            "mismatch": float(np.mean(kind != exact_kind)),
            "excluded": float(np.mean(~both))}


def study(fanins: Iterable[int] = FANINS, count: int = 100_000, seed: int = 0,
          classes: Iterable[str] = tuple(CLASSES)) -> list[dict[str, Any]]:
    """The error of every order (:data:`ORDERS`) per vector class and fan-in.

    Parameters
    ----------
    fanins : iterable of int
        Fan-ins, each in 2 .. 17.
    count : int
        Random vectors per class and fan-in.
    seed : int
        Seed of :func:`vectors`.
    classes : iterable of str
        Names from :data:`CLASSES`.

    Returns
    -------
    list of dict
        One row per class and fan-in: ``class``, ``fanin``, ``vectors`` and per order name a
        dict of ``max_ulp``, ``mean_ulp`` and ``exact`` (the share with 0 ulp) over the
        vectors whose result and exact sum are finite (``None`` if there is none),
        ``mismatch`` (the share whose result class differs from the exact sum's) and
        ``excluded`` (the share left out of the ulp statistics).

    Raises
    ------
    ValueError
        As :func:`vectors`, or if a fan-in is below 2.
    """
    fanins, classes = list(fanins), list(classes)
    for k in fanins:
        check_int("Fan-in", k, low=2, high=_MAX_OPERANDS)
    rows = []
    for kind in classes:
        for k in fanins:
            bits = vectors(kind, k, count, seed)
            exact = exact_sum(bits)
            row: dict[str, Any] = {"class": kind, "fanin": k, "vectors": count}
            for name, reduce in ORDERS.items():
                row[name] = _stats(reduce(bits), exact)
            rows.append(row)
    return rows


def _ulp_text(value: float | None, digits: int) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if digits else f"{value:,}"


def table_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The Markdown table of :func:`study`'s rows: per class and fan-in, max and mean ulp of
    the engine, of the pairwise tree and of the sequential fold, and their shares of class
    mismatches."""
    lines = [("| class | fan-in | engine max ulp | engine mean ulp | tree max ulp | "
              "tree mean ulp | sequential max ulp | sequential mean ulp | "
              "class mismatch engine / tree / sequential |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        cells = []
        for name in ORDERS:
            cells += [_ulp_text(r[name]["max_ulp"], 0), _ulp_text(r[name]["mean_ulp"], 3)]
        mismatch = " / ".join(f"{100 * r[name]['mismatch']:.2f} %" for name in ORDERS)
        lines.append(f"| {r['class']} | {r['fanin']} | {' | '.join(cells)} | {mismatch} |")
    return lines


def _no_worse(rows: list[dict[str, Any]], stat: str) -> int:
    """How many rows have the engine's ``stat`` at most the pairwise tree's."""
    return sum(r["engine"][stat] is None or r["tree"][stat] is None
               or r["engine"][stat] <= r["tree"][stat] for r in rows)


@case("numerics_fp32_add", "simulation",
      "fp32 add, engine, pairwise tree and sequential fold: ulp error against the exactly "
      "rounded sum", quick=True)
def _numerics(options: Options) -> dict[str, Any]:
    count = 2_000 if options.quick else 100_000
    start = time.perf_counter()
    rows = study(FANINS, count)
    seconds = time.perf_counter() - start
    both = sum(_no_worse([r], "max_ulp") and _no_worse([r], "mean_ulp") for r in rows)
    return {"size": f"{len(CLASSES)} classes x fan-in {FANINS[0]}..{FANINS[-1]} x "
                    f"{count:,} vectors",
            "seconds": round(seconds, 2),
            "result": (f"class/fan-in cells (of {len(rows)}) where the engine's ulp error "
                       f"against the exactly rounded sum is no worse than the pairwise "
                       f"tree's: max {_no_worse(rows, 'max_ulp')}, mean "
                       f"{_no_worse(rows, 'mean_ulp')}, both {both} ({count:,} vectors per "
                       f"cell, {seconds:.1f} s)"),
            "rows": rows, "table": table_markdown(rows)}
