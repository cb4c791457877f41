"""Finite-field tables for GF(q): built once, then used by numpy integer indexing.

Elements are the integers ``0..q-1``. For a prime ``q`` they are residues modulo ``q``; for
``q = p**m`` with ``m > 1`` they are galois's integer representation (the coefficients of the
polynomial basis, base ``p``, over galois's default irreducible polynomial, the Conway
polynomial where one is known). Hot loops index the flat ``q*q`` tables with numpy arrays
instead of doing per-element field arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["FieldTables", "factor_prime_power", "field_tables"]


def factor_prime_power(q: int) -> tuple[int, int] | None:
    """``(p, m)`` with ``q == p**m`` and ``p`` prime, or ``None`` if ``q`` is not a prime power."""
    if q < 2:
        return None
    p = next((d for d in range(2, int(q**0.5) + 1) if q % d == 0), q)
    m = 0
    while q % p == 0:
        q //= p
        m += 1
    return (p, m) if q == 1 else None


@dataclass(frozen=True, eq=False)
class FieldTables:
    """Arithmetic tables of GF(q).

    Members
    -------
    q, p, m : int
        Order, characteristic and degree (``q == p**m``).
    add, mul : ndarray of int32, shape (q*q,)
        ``add[a*q + b] == a + b`` and ``mul[a*q + b] == a * b`` in GF(q).
    neg, inv : ndarray of int32, shape (q,)
        ``neg[a] == -a``; ``inv[a] == 1/a`` for ``a != 0`` (``inv[0] == 0``, never used).
    poly : str
        The irreducible polynomial of the representation for ``m > 1`` (galois's default);
        ``""`` for a prime field.
    """

    q: int
    p: int
    m: int
    add: np.ndarray
    mul: np.ndarray
    neg: np.ndarray
    inv: np.ndarray
    poly: str


@lru_cache(maxsize=8)
def field_tables(q: int) -> FieldTables:
    """The tables of GF(q) for a prime power ``q`` (cached).

    Raises
    ------
    ValueError
        If ``q`` is not a prime power.
    """
    factors = factor_prime_power(q)
    if factors is None:
        raise ValueError(f"q must be a prime power, not {q}")
    p, m = factors
    if m == 1:
        x = np.arange(q, dtype=np.int64)
        add = (x[:, None] + x[None, :]) % q
        mul = (x[:, None] * x[None, :]) % q
        neg = (-x) % q
        inv = np.zeros(q, dtype=np.int64)
        inv[1:] = [pow(int(a), -1, q) for a in range(1, q)]
        poly = ""
    else:
        import galois

        field = galois.GF(q)
        x = field.elements
        add = np.asarray(x[:, None] + x[None, :], dtype=np.int64)
        mul = np.asarray(x[:, None] * x[None, :], dtype=np.int64)
        neg = np.asarray(-x, dtype=np.int64)
        inv = np.zeros(q, dtype=np.int64)
        inv[1:] = np.asarray(np.reciprocal(x[1:]), dtype=np.int64)
        poly = str(field.irreducible_poly)
    tables = [np.ascontiguousarray(t.reshape(-1), dtype=np.int32) for t in (add, mul, neg, inv)]
    for table in tables:
        table.flags.writeable = False
    return FieldTables(q, p, m, *tables, poly)
