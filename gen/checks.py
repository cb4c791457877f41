"""Parameter checks shared by every generator and hardware block.

Each check returns the value it accepted, so a constructor can write
``self._radix = check_int("Radix", radix, low=2)``. The messages follow the house style: a
capital, the parameter's name, the bad value and the accepted range.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_int"]


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
        raise ValueError(f"{name} must be at least {low}, not {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, not {value}")
    return value
