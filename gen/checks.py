"""Parameter checks shared by every generator and hardware block.

Each check returns the value it accepted, so a constructor can write
``self._radix = check_int("Radix", radix, low=2)``. The messages follow the house style: a
capital, the parameter's name, the bad value and the accepted range.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import TypeVar

import numpy as np

__all__ = ["MAX_DIGITS", "check_int", "check_type", "parse_dims", "parse_whole", "shown",
           "spell_shape"]

#: Most digits of a whole number written as text (leading zeros aside): longer ones are refused
#: before they are converted, far beyond any value innet takes.
MAX_DIGITS = 18

_T = TypeVar("_T")


def check_type(name: str, value: object, cls: type[_T]) -> _T:
    """``value`` if it is an instance of ``cls``.

    Raises
    ------
    TypeError
        ``{name} must be a {cls name}, not {type name of value}`` (``an`` before a vowel):
        ``Topology must be a Topology, not str``.
    """
    if not isinstance(value, cls):
        article = "an" if cls.__name__[:1].lower() in "aeiou" else "a"
        raise TypeError(f"{name} must be {article} {cls.__name__}, not {type(value).__name__}")
    return value


def parse_whole(text: str, what: str, high: int | None = None) -> int:
    """The whole number written as ``text``: ASCII digits, blanks around them and leading zeros
    allowed, at most ``high`` if given. A number of more digits than ``high`` has (or, without
    ``high``, than :data:`MAX_DIGITS`), leading zeros aside, is refused before it is converted.

    Raises
    ------
    ValueError
        ``{what} must be a whole number, not {text!r}``,
        ``{what} must be between 0 and {high}, not {text}`` or, without ``high``,
        ``{what} must have at most 18 digits, not {text}`` (the text cut to 40 characters).
    """
    text = str(text).strip()
    if not (text.isdigit() and text.isascii()):
        raise ValueError(f"{what} must be a whole number, not {text!r:.60}")
    digits = text.lstrip("0") or "0"
    if high is None:
        if len(digits) > MAX_DIGITS:
            raise ValueError(f"{what} must have at most {MAX_DIGITS} digits, not {text:.40}")
    elif len(digits) > len(str(high)) or int(digits) > high:
        raise ValueError(f"{what} must be between 0 and {high}, not {text:.40}")
    return int(digits)


def parse_dims(text: str, what: str, example: str) -> tuple[int, ...]:
    """``"4x4x4"`` (also ``4,4,4`` or ``4*4*4``, any case, blanks around the sizes) as
    ``(4, 4, 4)``: each size a whole number as :func:`parse_whole` reads it. The sizes are not
    checked further.

    Raises
    ------
    ValueError
        ``{what} must be sizes joined by 'x' such as {example}, not {text!r}`` or
        ``Each size of {what} must have at most 18 digits, not {size}``.
    """
    parts = str(text).strip().lower().replace(",", "x").replace("*", "x").split("x")
    if not all(p.strip().isdigit() and p.strip().isascii() for p in parts):
        raise ValueError(f"{what} must be sizes joined by 'x' such as {example}, not {text!r:.60}")
    return tuple(parse_whole(p, f"Each size of {what.lower()}") for p in parts)


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


def shown(value: int, large: str = "a {bits}-bit integer") -> str:
    """``value``'s digits, or ``large`` naming its size in bits where it has more than 128 bits
    (39 digits or more)."""
    bits = abs(value).bit_length()
    return str(value) if bits <= 128 else large.format(bits=bits)


def spell_shape(shape: Iterable[object]) -> str:
    """The sizes of ``shape`` joined by ``x`` (``4x4x2``), cut to 60 characters (ending in
    ``...``); a size too large to print is shown by its bits (``<201-bit>x3``), an item that is not
    an ``int`` as ``str`` shows it."""
    spelled = "x".join(shown(d, "<{bits}-bit>") if isinstance(d, int) else str(d) for d in shape)
    return spelled if len(spelled) <= 60 else spelled[:57] + "..."
