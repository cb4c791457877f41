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
from collections.abc import Sequence

import numpy as np

__all__ = [
    "CANONICAL_NAN",
    "DType",
    "Op",
    "check_supported",
    "combine",
    "fold",
    "from_bits",
    "is_supported",
    "to_bits",
]

#: The quiet NaN every floating-point NaN result is replaced with.
CANONICAL_NAN = 0x7FC0_0000


def _parse(cls, what: str, name):
    """The member of the enum ``cls`` named ``name`` (any case), or ``name`` if it is one."""
    if isinstance(name, cls):
        return name
    try:
        return cls[str(name).upper()]
    except KeyError:
        names = ", ".join(member.name.lower() for member in cls)
        raise ValueError(f"{what} must be one of {names}, not {name!r}") from None


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


def is_supported(op: Op, dtype: DType) -> bool:
    """Whether the hardware implements ``op`` on ``dtype``."""
    return dtype != DType.FP32 or op in _FLOAT_OPS


def check_supported(op: Op, dtype: DType) -> None:
    """Raise ``ValueError`` if ``op`` is not defined on ``dtype``."""
    if not is_supported(op, dtype):
        raise ValueError(f"Operation {op.name.lower()} is not defined on {dtype.name.lower()}")


def to_bits(values, dtype: DType) -> np.ndarray:
    """Values of ``dtype`` (anything numpy can convert) as ``uint32`` bit patterns."""
    dtype = DType.parse(dtype)
    return np.ascontiguousarray(np.asarray(values, dtype=dtype.numpy)).view(np.uint32)


def from_bits(bits, dtype: DType) -> np.ndarray:
    """``uint32`` bit patterns as values of ``dtype``."""
    dtype = DType.parse(dtype)
    return np.ascontiguousarray(np.asarray(bits, dtype=np.uint32)).view(dtype.numpy)


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
    a = np.asarray(a, dtype=np.uint32)
    b = np.asarray(b, dtype=np.uint32)
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
    """
    if len(operands) == 0:
        raise ValueError("Fold needs at least one operand")
    result = np.asarray(operands[0], dtype=np.uint32)
    for operand in operands[1:]:
        result = combine(op, dtype, result, operand)
    return result
