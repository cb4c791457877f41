"""Finite-field tables for GF(q): built once, then used by numpy integer indexing.

Elements are the integers ``0..q-1``. For a prime ``q`` they are residues modulo ``q``; for
``q = p**m`` with ``m > 1`` they are the coefficients of the polynomial basis written in base
``p`` (the coefficient of ``x**i`` is digit ``i``), modulo the Conway polynomial ``C(p, m)``:
the integer representation galois uses by default, so a PolarFly built here is the one built
with galois. Hot loops index the flat ``q*q`` tables with numpy arrays instead of doing
per-element field arithmetic.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

__all__ = ["FieldTables", "conway_polynomial", "factor_prime_power", "field_tables"]


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
        The irreducible polynomial of the representation for ``m > 1``, the Conway polynomial
        (``"x^2 + 2x + 2"`` for GF(9)); ``""`` for a prime field.
    """

    q: int
    p: int
    m: int
    add: np.ndarray
    mul: np.ndarray
    neg: np.ndarray
    inv: np.ndarray
    poly: str


def _prime_factors(n: int) -> list[int]:
    found, d = [], 2
    while d * d <= n:
        if n % d == 0:
            found.append(d)
            while n % d == 0:
                n //= d
        d += 1
    return found + ([n] if n > 1 else [])


def _mulmod(a: list[int], b: list[int], f: list[int], p: int) -> list[int]:
    """``a * b`` modulo the monic ``f`` over GF(p); polynomials as coefficient lists, lowest
    degree first, residues of length ``deg f``."""
    m = len(f) - 1
    product = [0] * (2 * m - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                product[i + j] += x * y
    for k in range(len(product) - 1, m - 1, -1):
        c = product[k] % p
        if c:
            for i in range(m):
                product[k - m + i] -= c * f[i]
    return [c % p for c in product[:m]]


def _x(f: list[int], p: int) -> list[int]:
    """``x`` modulo the monic ``f`` (degree at least 1) over GF(p)."""
    m = len(f) - 1
    return [0, 1] + [0] * (m - 2) if m > 1 else [(-f[0]) % p]


def _powmod_x(e: int, f: list[int], p: int) -> list[int]:
    """``x**e`` modulo the monic ``f`` (degree at least 1) over GF(p)."""
    m = len(f) - 1
    result = [1] + [0] * (m - 1)
    base = _x(f, p)
    while e:
        if e & 1:
            result = _mulmod(result, base, f, p)
        base = _mulmod(base, base, f, p)
        e >>= 1
    return result


@cache
def conway_polynomial(p: int, m: int) -> tuple[int, ...]:
    """The Conway polynomial ``C(p, m)``: its coefficients, lowest degree first (monic: the last
    is 1).

    It is the first, in Conway's order, of the monic polynomials of degree ``m`` over GF(p)
    that are primitive (``x`` has order ``p**m - 1`` modulo it) and compatible with the Conway
    polynomials of the subfields (for every proper divisor ``d`` of ``m``,
    ``C(p, d)(x**((p**m - 1) / (p**d - 1)))`` vanishes modulo it). Conway's order compares
    ``x**m - c[m-1] x**(m-1) + c[m-2] x**(m-2) - ... + (-1)**m c[0]`` by
    ``(c[m-1], ..., c[0])``, each ``c[i]`` in ``0..p-1`` (Lübeck's definition, the one of
    his tables, which galois ships). Found by search: the fields of PolarFly
    (``q <= 512``) have at most 512 candidates each.

    Raises
    ------
    ValueError
        If ``p`` is not a prime or ``m`` is below 1.
    """
    if factor_prime_power(p) != (p, 1) or m < 1:
        raise ValueError(f"The Conway polynomial needs a prime and a degree of at least 1, not "
                         f"({p}, {m})")
    order = p**m - 1
    cofactors = [order // r for r in _prime_factors(order)]
    one = [1] + [0] * (m - 1)
    subfields = [(d, conway_polynomial(p, d)) for d in range(1, m) if m % d == 0]
    for c in itertools.product(range(p), repeat=m):
        # c = (c[m-1], ..., c[0]); the coefficient of x**i is (-1)**(m - i) c[i].
        f = [((-1) ** (m - i) * c[m - 1 - i]) % p for i in range(m)] + [1]
        if f[0] == 0 or _powmod_x(order, f, p) != one:
            continue
        if any(_powmod_x(e, f, p) == one for e in cofactors):
            continue
        if all(_vanishes(sub, _powmod_x(order // (p**d - 1), f, p), f, p)
               for d, sub in subfields):
            return tuple(f)
    raise AssertionError(f"no Conway polynomial found for GF({p}^{m})")  # a primitive exists


def _vanishes(g: tuple[int, ...], y: list[int], f: list[int], p: int) -> bool:
    """Whether ``g(y)`` is 0 modulo ``f`` (Horner's rule)."""
    m = len(f) - 1
    value = [0] * m
    for coefficient in reversed(g):
        value = _mulmod(value, y, f, p)
        value[0] = (value[0] + coefficient) % p
    return not any(value)


def _poly_text(f: tuple[int, ...]) -> str:
    """``"x^2 + 2x + 2"``: as galois writes a polynomial."""
    terms = []
    for i in range(len(f) - 1, -1, -1):
        c = f[i]
        if c == 0:
            continue
        power = "" if i == 0 else "x" if i == 1 else f"x^{i}"
        terms.append(str(c) if i == 0 else f"{c if c != 1 else ''}{power}")
    return " + ".join(terms)


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
        f = list(conway_polynomial(p, m))
        # exp[k]: x**k as the integer of its coefficients (x is primitive modulo f).
        weights = p ** np.arange(m, dtype=np.int64)
        x_f, power = _x(f, p), [1] + [0] * (m - 1)
        exp = np.zeros(q - 1, dtype=np.int64)
        for k in range(q - 1):
            exp[k] = int(np.dot(power, weights))
            power = _mulmod(power, x_f, f, p)
        log = np.zeros(q, dtype=np.int64)
        log[exp] = np.arange(q - 1)
        x = np.arange(q, dtype=np.int64)
        digits = (x[:, None] // weights[None, :]) % p
        add = (((digits[:, None, :] + digits[None, :, :]) % p) @ weights)
        mul = np.where((x[:, None] == 0) | (x[None, :] == 0), 0,
                       exp[(log[:, None] + log[None, :]) % (q - 1)])
        neg = ((-digits) % p) @ weights
        inv = np.zeros(q, dtype=np.int64)
        inv[1:] = exp[(-log[1:]) % (q - 1)]
        poly = _poly_text(tuple(f))
    tables = [np.ascontiguousarray(t.reshape(-1), dtype=np.int32) for t in (add, mul, neg, inv)]
    for table in tables:
        table.flags.writeable = False
    return FieldTables(q, p, m, *tables, poly)
