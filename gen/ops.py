"""Reduction operations and data types, and their bit-exact reference semantics.

These codes are the contract between the generators (embeddings, schedules, images), the
register model and the RTL (:mod:`innet.hw.alu`, :mod:`innet.hw.flit`): the numeric value of an
:class:`Op` or :class:`DType` is what a configuration register holds.

Values travel as raw 32-bit patterns (``numpy.uint32`` arrays). :func:`combine` is the reference
for one two-operand step of the hardware; it is what golden models fold with, in the hardware's
fixed operand order, so that floating-point results can be checked bit-exactly.

Semantics (PIUMA, "Collective Engine": integer and floating-point add, multiply, min, max and
bitwise operators):

- ``int32`` and ``uint32``: ``add`` and ``mul`` wrap modulo 2**32 (the low word of the product);
  ``min``/``max`` compare as signed or unsigned; ``and``, ``or``, ``xor``, ``nor`` are bitwise.
- ``fp32`` (IEEE-754 binary32): ``add`` and ``mul`` round to nearest, ties to even, with
  subnormal inputs and outputs (no flush to zero); ``min``/``max`` are IEEE 754-2019
  ``minimum``/``maximum``: NaN if either operand is NaN, and -0 < +0. Every NaN result is the
  canonical quiet NaN ``0x7FC00000``. Bitwise operators are not defined on ``fp32``.
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from innet.gen.checks import check_int, shown

__all__ = [
    "CANONICAL_NAN",
    "SUM_GUARD_BITS",
    "DType",
    "Op",
    "bit_patterns",
    "check_supported",
    "combine",
    "fold",
    "from_bits",
    "is_supported",
    "sum_fp32",
    "to_bits",
]

#: The quiet NaN every floating-point NaN result is replaced with.
CANONICAL_NAN = 0x7FC0_0000


def _parse(cls, what: str, name):
    """The member of the enum ``cls`` named ``name`` (any case), or ``name`` if it is one."""
    if isinstance(name, cls):
        return name
    names = ", ".join(member.name.lower() for member in cls)
    if not isinstance(name, str):
        given = shown(name) if isinstance(name, int) else f"{name!r:.60}"
        raise ValueError(f"{what} must be one of {names}, not {given}")
    try:
        return cls[name.upper()]
    except KeyError:
        raise ValueError(f"{what} must be one of {names}, not {name!r:.60}") from None


class Op(enum.IntEnum):
    """Reduction operation; the value is the register encoding (4 bits)."""

    ADD = 0
    MIN = 1
    MAX = 2
    AND = 3
    OR = 4
    XOR = 5
    NOR = 6
    MUL = 7

    @classmethod
    def parse(cls, name: str | Op) -> Op:
        """``"add"`` -> ``Op.ADD``; a clear error for unknown names."""
        return _parse(cls, "Operation", name)


class DType(enum.IntEnum):
    """Element data type; the value is the register encoding (2 bits)."""

    INT32 = 0
    UINT32 = 1
    FP32 = 2

    @classmethod
    def parse(cls, name: str | DType) -> DType:
        """``"fp32"`` -> ``DType.FP32``; a clear error for unknown names."""
        return _parse(cls, "Data type", name)

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype holding values of this type."""
        return np.dtype({DType.INT32: np.int32, DType.UINT32: np.uint32,
                         DType.FP32: np.float32}[self])


_FLOAT_OPS = frozenset({Op.ADD, Op.MIN, Op.MAX, Op.MUL})


def is_supported(op: Op | str, dtype: DType | str) -> bool:
    """Whether the hardware implements ``op`` on ``dtype`` (members or names,
    :meth:`Op.parse`, :meth:`DType.parse`)."""
    return DType.parse(dtype) != DType.FP32 or Op.parse(op) in _FLOAT_OPS


def check_supported(op: Op | str, dtype: DType | str) -> None:
    """Raise ``ValueError`` if ``op`` is not defined on ``dtype`` (members or names)."""
    op, dtype = Op.parse(op), DType.parse(dtype)
    if not is_supported(op, dtype):
        raise ValueError(f"Operation {op.name.lower()} is not defined on {dtype.name.lower()}")


def bit_patterns(values, name: str = "Bit patterns") -> np.ndarray:
    """``values`` as a ``uint32`` array, if they are integers from 0 to 2^32 - 1.

    Raises
    ------
    TypeError
        If they are not integers (floats are not truncated).
    ValueError
        If one is outside ``0..0xFFFFFFFF``.
    """
    array = np.asarray(values)
    if array.dtype == np.uint32:
        return array
    if array.dtype == object:
        if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool)
                   for x in array.flat):
            raise TypeError(f"{name} must be integers, not {values!r:.60}")
    elif array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must be integers, not {array.dtype} values")
    if array.size:
        low, high = array.min(), array.max()
        if low < 0 or high > 0xFFFF_FFFF:
            raise ValueError(f"{name} must be uint32 bit patterns (0..0xFFFFFFFF), not "
                             f"{low if low < 0 else high}")
    return array.astype(np.uint32)


def to_bits(values, dtype: DType) -> np.ndarray:
    """Values of ``dtype`` (anything numpy can convert) as ``uint32`` bit patterns."""
    dtype = DType.parse(dtype)
    return np.ascontiguousarray(np.asarray(values, dtype=dtype.numpy)).view(np.uint32)


def from_bits(bits, dtype: DType) -> np.ndarray:
    """``uint32`` bit patterns as values of ``dtype``."""
    dtype = DType.parse(dtype)
    return np.ascontiguousarray(bit_patterns(bits)).view(dtype.numpy)


def _canonical(bits: np.ndarray) -> np.ndarray:
    nan = ((bits & 0x7F80_0000) == 0x7F80_0000) & ((bits & 0x007F_FFFF) != 0)
    return np.where(nan, np.uint32(CANONICAL_NAN), bits).astype(np.uint32)


def _float_minmax(a: np.ndarray, b: np.ndarray, want_min: bool) -> np.ndarray:
    fa, fb = a.view(np.float32), b.view(np.float32)
    with np.errstate(invalid="ignore"):
        pick_a = (fa < fb) if want_min else (fa > fb)
        equal = fa == fb
    out = np.where(pick_a, a, b)
    # Equal values differ only for -0 and +0: min takes the negative one, max the positive one.
    out = np.where(equal, (a | b) if want_min else (a & b), out)
    either_nan = np.isnan(fa) | np.isnan(fb)
    return np.where(either_nan, np.uint32(CANONICAL_NAN), out).astype(np.uint32)


def combine(op: Op, dtype: DType, a, b) -> np.ndarray:
    """One hardware reduction step, ``a op b``, on ``uint32`` bit patterns.

    Parameters
    ----------
    op, dtype : Op, DType
        The operation and the type the bit patterns hold.
    a, b : array_like of uint32
        Operand bit patterns (broadcast against each other). For non-commutative cases
        (floating-point rounding is commutative, but NaN payloads are not kept) ``a`` is the
        operand from the lower port.

    Returns
    -------
    numpy.ndarray of uint32
    """
    op, dtype = Op.parse(op), DType.parse(dtype)
    check_supported(op, dtype)
    a = bit_patterns(a, "Operands")
    b = bit_patterns(b, "Operands")
    if dtype == DType.FP32:
        if op in (Op.MIN, Op.MAX):
            return _float_minmax(a, b, op == Op.MIN)
        fa, fb = a.view(np.float32), b.view(np.float32)
        with np.errstate(all="ignore"):
            result = (fa + fb) if op == Op.ADD else (fa * fb)
        return _canonical(np.asarray(result, dtype=np.float32).view(np.uint32))
    wide_a, wide_b = a.astype(np.uint64), b.astype(np.uint64)
    if op == Op.ADD:
        return ((wide_a + wide_b) & 0xFFFF_FFFF).astype(np.uint32)
    if op == Op.MUL:
        return ((wide_a * wide_b) & 0xFFFF_FFFF).astype(np.uint32)
    if op == Op.AND:
        return a & b
    if op == Op.OR:
        return a | b
    if op == Op.XOR:
        return a ^ b
    if op == Op.NOR:
        return ~(a | b)
    if dtype == DType.INT32:
        sa, sb = a.view(np.int32), b.view(np.int32)
        pick_a = (sa < sb) if op == Op.MIN else (sa > sb)
    else:
        pick_a = (a < b) if op == Op.MIN else (a > b)
    return np.where(pick_a, a, b).astype(np.uint32)


def fold(op: Op, dtype: DType, operands: Sequence) -> np.ndarray:
    """Left fold ``((x0 op x1) op x2) ...`` of ``uint32`` bit-pattern vectors, in the given order.

    For a tree-shaped order, combine the subtrees with :func:`combine` instead.

    Raises
    ------
    TypeError
        If ``operands`` is not a sequence of vectors (a mapping, a string, a non-iterable), or
        an operand is not bit patterns.
    ValueError
        If there is no operand, or as :func:`combine`.
    """
    if isinstance(operands, Mapping | str | bytes) or not isinstance(operands, Iterable):
        raise TypeError(f"Operands must be a sequence of bit-pattern vectors, not "
                        f"{operands!r:.60}")
    operands = list(operands)
    if len(operands) == 0:
        raise ValueError("Fold needs at least one operand")
    result = bit_patterns(operands[0], "Operands")
    for operand in operands[1:]:
        result = combine(op, dtype, result, operand)
    return result


#: Bits below the last place of the largest operand that :func:`sum_fp32` keeps of every
#: operand: enough that its error is no worse than the pairwise tree's in every class of
#: :mod:`innet.sim.bench.numerics` (``docs/measurements.md``).
SUM_GUARD_BITS = 16


def sum_fp32(operands: Sequence, guard: int = SUM_GUARD_BITS) -> np.ndarray:
    """The fp32 sum of ``k`` operands with one alignment and one rounding (the engine's).

    Every finite operand's significand is aligned to the largest effective exponent ``emax``
    and cut off ``guard`` bits below that exponent's last place, the bits cut off leaving a
    sticky bit in the lowest place kept (as a two-operand adder keeps one); these magnitudes
    are summed exactly with their signs, and the sum is rounded once to nearest, ties to even,
    with subnormal results and overflow to infinity. So the result is exactly rounded whenever
    no operand lies more than ``guard`` places below ``emax`` (nothing is cut), and always for
    two operands (the sticky bit tells a tie from a value beside it); no intermediate sum
    overflows, and the order of the operands does not matter.

    Specials as in IEEE 754 addition: a NaN operand, or both infinities, give the canonical
    NaN; otherwise an infinite operand gives that infinity. A zero sum is ``-0`` only when
    every operand is ``-0``.

    Parameters
    ----------
    operands : sequence of array_like of uint32
        One bit-pattern vector (or scalar) per operand, at least one.
    guard : int
        Bits kept below ``emax``'s last place, 3 .. 33.

    Returns
    -------
    numpy.ndarray of uint32

    Raises
    ------
    TypeError
        If ``guard`` is not an integer.
    ValueError
        If there is no operand or ``guard`` is out of range.
    """
    if len(operands) == 0:
        raise ValueError("A sum needs at least one operand")
    check_int("Guard bits", guard, low=3, high=33)
    bits = np.stack(np.broadcast_arrays(*(bit_patterns(x, "Operands") for x in operands)),
                    axis=-1)
    sign = (bits >> 31).astype(bool)
    exponent = ((bits >> 23) & 0xFF).astype(np.int64)
    fraction = (bits & 0x7F_FFFF).astype(np.int64)
    finite = exponent != 0xFF
    effective = np.where(finite, np.maximum(exponent, 1), 0)
    emax = effective.max(axis=-1)
    distance = np.minimum(emax[..., None] - effective, 24 + guard)
    significand = np.where(exponent != 0, fraction | (1 << 23), fraction)
    moved = np.where(finite, significand << guard, 0)
    # The bits cut off leave a sticky bit in the lowest place kept.
    cut = (moved & ((np.int64(1) << distance) - 1)) != 0
    magnitude = (moved >> distance) | cut
    total = np.where(sign, -magnitude, magnitude).sum(axis=-1)
    # |total| < 17 * 2**(24 + guard) <= 2**62 for up to 17 operands: exact in int64 and in the
    # float64 whose exponent gives its bit length.
    mag = np.abs(total)
    length = np.frexp(mag.astype(np.float64))[1]
    # The value is mag * 2**(emax - guard - 150): biased exponent emax - guard - 24 + length.
    biased = emax - guard - 24 + length
    shift = np.where(biased >= 1, length - 24, 1 - (emax - guard))
    right = np.maximum(shift, 0)
    kept = (mag >> right) << np.maximum(-shift, 0)
    rest = mag & ((np.int64(1) << right) - 1)
    half = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
    kept = kept + ((right > 0) & ((rest > half) | ((rest == half) & (kept & 1 == 1))))
    # Exponent field (biased - 1) above a significand with its hidden bit, so that a carry of
    # the rounding into bit 24, or a subnormal's into bit 23, increments the exponent field.
    packed = ((np.maximum(biased, 1) - 1) << 23) + kept
    packed = np.where(packed >= 0x7F80_0000, 0x7F80_0000, packed)
    result = (packed | (total < 0).astype(np.int64) << 31).astype(np.uint32)
    result = np.where(mag == 0, np.where(np.all(bits == 0x8000_0000, axis=-1), 0x8000_0000, 0),
                      result)
    inf = ~finite & ((bits & 0x7F_FFFF) == 0)
    pos_inf = np.any(inf & ~sign, axis=-1)
    neg_inf = np.any(inf & sign, axis=-1)
    nan = np.any(~finite & ~inf, axis=-1) | (pos_inf & neg_inf)
    result = np.where(pos_inf, 0x7F80_0000, np.where(neg_inf, 0xFF80_0000, result))
    return np.where(nan, CANONICAL_NAN, result).astype(np.uint32)
