"""Parameter checks shared by every generator and hardware block.

Each check returns the value it accepted, so a constructor can write
``self._radix = check_int("Radix", radix, low=2)``. The messages follow the house style: a
capital, the parameter's name, the bad value and the accepted range.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["MAX_DIGITS", "check_int", "digits", "shown", "whole"]

#: Most digits of a whole number written as text (leading zeros aside): longer ones are refused
#: before they are converted, far beyond any value innet takes.
MAX_DIGITS = 18


def digits(text: str) -> int:
    """How many digits the number ``text`` (ASCII digits) has, leading zeros aside."""
    return len(text.strip().lstrip("0")) or 1


def whole(text: str) -> int:
    """The number ``text`` (ASCII digits of at most :data:`MAX_DIGITS` beside leading zeros,
    which Python's ``int`` would count against its own limit)."""
    return int(text.strip().lstrip("0") or "0")


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (a Python or numpy integer, not a bool)
    within ``low..high`` (either bound optional).

    Raises
    ------
    TypeError
        ``{name} must be an integer, not {value!r}``.
    ValueError
        ``{name} must be at least {low}, not {value}`` or
        ``{name} must be at most {high}, not {value}``.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low}, not {shown(value)}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, not {shown(value)}")
    return value


def shown(value: int) -> str:
    """``value``'s digits, or its size in bits where they would run to more than 38."""
    bits = abs(value).bit_length()
    return str(value) if bits <= 128 else f"a {bits}-bit integer"
