"""Parsers of the ``innet`` command line: sizes, times, bandwidths, node and link lists.

Sizes have one grammar everywhere (:func:`parse_size`, :func:`parse_sizes`): a whole number
with an optional multiplier, ``K`` or ``Ki`` (both 2^10 = 1024), ``M`` or ``Mi`` (2^20), ``G``
or ``Gi`` (2^30), case-insensitive; options that count bytes also accept a trailing ``B``
(``4KiB``). A list is ``A,B,C``; a range ``LO..HI`` is ``LO, 4·LO, 16·LO, ...`` up to ``HI``,
with ``HI`` itself last (``0..HI`` starts ``0, 1, 4, ...``).
"""

from __future__ import annotations

import math
import re
from typing import Any

import click

from innet.gen.checks import parse_whole

__all__ = [
    "SIZE_GRAMMAR",
    "Finite",
    "Size",
    "Sizes",
    "format_bytes",
    "format_count",
    "node_id",
    "parse_bandwidth",
    "parse_links",
    "parse_mesh",
    "parse_node_ids",
    "parse_size",
    "parse_sizes",
    "parse_time",
]

#: What the help of every size option says about the grammar.
SIZE_GRAMMAR = "K = Ki = 1024, M = Mi = 2^20, G = Gi = 2^30"

_MULTIPLIERS = {"": 1, "k": 1 << 10, "ki": 1 << 10, "m": 1 << 20, "mi": 1 << 20,
                "g": 1 << 30, "gi": 1 << 30}
_SIZE = re.compile(r"\s*(\d+)\s*([kKmMgG][iI]?)?([bB]?)\s*")
_TIME = {"": 1.0, "ps": 1e-3, "ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_RATE = {"": 1.0, "gbps": 1.0, "gbit/s": 1.0, "mbps": 1e-3, "mbit/s": 1e-3, "tbps": 1e3,
         "tbit/s": 1e3}
_NUMBER = r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Zµ/]*)\s*"


def _example(unit: str) -> str:
    return "64, 4Ki or 1MiB" if unit == "B" else "64, 4K or 1Mi"


def parse_size(text: str, what: str = "Size", *, low: int = 0, high: int | None = None,
               unit: str = "") -> int:
    """``"64"``, ``"4K"``, ``"4Ki"``, ``"1M"`` -> the whole number (``K = Ki = 1024``);
    with ``unit="B"`` a trailing ``B`` is accepted too (``"4KiB"``).

    Raises
    ------
    ValueError
        If the text is not a whole number with an optional multiplier, or is below ``low``
        or above ``high``.
    """
    match = _SIZE.fullmatch(str(text))
    if match is None or (match.group(3) and unit != "B"):
        raise ValueError(f"{what} must be a size such as {_example(unit)}, not {text!r}")
    value = parse_whole(match.group(1), what) * _MULTIPLIERS[(match.group(2) or "").lower()]
    if value < low:
        raise ValueError(f"{what} must be at least {low}, not {text.strip()!r}")
    if high is not None and value > high:
        raise ValueError(f"{what} must be at most {high:,}, not {text.strip()!r}")
    return value


def parse_sizes(text: str, what: str = "Sizes", *, low: int = 0, high: int | None = None,
                unit: str = "") -> list[int]:
    """``"1,64,1K"`` -> ``[1, 64, 1024]``; ``"LO..HI"`` -> ``LO, 4·LO, 16·LO, ...`` up to
    ``HI`` (``HI`` itself last; ``LO = 0`` starts ``0, 1, 4, ...``). Each size as
    :func:`parse_size`.

    Raises
    ------
    ValueError
        If an item is not a size, is below ``low`` or above ``high``, or the range is empty.
    """
    text = str(text)
    if ".." in text:
        lo_text, hi_text = text.split("..", 1)
        lo = parse_size(lo_text, what, low=low, high=high, unit=unit)
        hi = parse_size(hi_text, what, low=low, high=high, unit=unit)
        if hi < lo:
            raise ValueError(f"{what} range {text!r} is empty: {hi_text.strip()} is below "
                             f"{lo_text.strip()}")
        out = [0] if lo == 0 else []
        size = max(lo, 1)
        while size < hi:
            out.append(size)
            size *= 4
        return [*out, hi] if not out or out[-1] != hi else out
    return [parse_size(part, what, low=low, high=high, unit=unit) for part in text.split(",")]


def format_count(count: float) -> str:
    """An element count as the largest exact binary multiple: ``64``, ``4K``, ``1M``."""
    if count == int(count):
        count = int(count)
        for suffix, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
            if count >= factor and count % factor == 0:
                return f"{count // factor}{suffix}"
        return str(count)
    return f"{count:.4g}"


def format_bytes(size: int) -> str:
    """Bytes as the largest exact binary unit: ``32B``, ``4KiB``, ``128MiB``."""
    for suffix, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return f"{size}B"


class Finite(click.FloatRange):
    """A click type for a finite number, optionally in a range (as :class:`click.FloatRange`):
    ``nan`` and the infinities are refused, naming the option."""

    def __init__(self, min: float | None = None, max: float | None = None, **options: Any) -> None:
        super().__init__(min, max, **options)
        if min is None and max is None:
            self.name = "float"

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{number} is not a finite number.", param, ctx)
        return number


class Size(click.ParamType):
    """A click type for one size (:func:`parse_size`); ``unit="B"`` for bytes. A bad value
    raises the parser's :class:`ValueError`, which names the option."""

    name = "size"

    def __init__(self, *, low: int = 0, high: int | None = None, unit: str = "") -> None:
        self.low, self.high, self.unit = low, high, unit

    def get_metavar(self, param: Any, *args: Any, **kwargs: Any) -> str:
        return "SIZE"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        what = param.opts[-1] if param is not None and param.opts else "Size"
        return parse_size(value, what, low=self.low, high=self.high, unit=self.unit)


class Sizes(click.ParamType):
    """A click type for a list or range of sizes (:func:`parse_sizes`), errors as
    :class:`Size`."""

    name = "sizes"

    def __init__(self, *, low: int = 0, high: int | None = None, unit: str = "") -> None:
        self.low, self.high, self.unit = low, high, unit

    def get_metavar(self, param: Any, *args: Any, **kwargs: Any) -> str:
        return "SIZES"

    def convert(self, value: Any, param: Any, ctx: Any) -> list[int]:
        if isinstance(value, list):
            return value
        what = param.opts[-1] if param is not None and param.opts else "Sizes"
        return parse_sizes(value, what, low=self.low, high=self.high, unit=self.unit)


def parse_time(text: str, what: str = "Latency") -> float:
    """``"5ns"``, ``"0.5us"``, ``"25"`` (ns) -> ns.

    Raises
    ------
    ValueError
        If the text is not a non-negative time.
    """
    match = re.fullmatch(_NUMBER, str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _TIME:
        raise ValueError(f"{what} must be a time such as 5ns or 0.5us, not {text!r}")
    return float(match.group(1)) * _TIME[unit]


def parse_bandwidth(text: str, what: str = "Bandwidth") -> float:
    """``"51.2Gbps"``, ``"64 Gbit/s"``, ``"64"`` (Gbit/s) -> Gbit/s.

    Raises
    ------
    ValueError
        If the text is not a bandwidth.
    """
    match = re.fullmatch(_NUMBER, str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _RATE:
        raise ValueError(f"{what} must be a bandwidth such as 51.2Gbps, not {text!r}")
    return float(match.group(1)) * _RATE[unit]


def parse_mesh(text: str | None) -> tuple[int, int] | None:
    """``"2x4"`` -> ``(2, 4)``; ``None`` stays ``None``.

    Raises
    ------
    ValueError
        If the text is not rows x cols.
    """
    if text is None:
        return None
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and p.isascii() for p in parts):
        raise ValueError(f"Core mesh must be rows x cols such as 2x4, not {text!r:.60}")
    rows, cols = (parse_whole(p, "Each size of core mesh") for p in parts)
    return rows, cols


def node_id(text: str, what: str, nodes: int) -> int:
    """The node id ``text`` (ASCII digits) of a network of ``nodes`` nodes.

    Raises
    ------
    ValueError
        ``{what} names node {text}, outside 0..{nodes - 1}``.
    """
    try:
        return parse_whole(text, what, high=nodes - 1)
    except ValueError:
        raise ValueError(f"{what} names node {text:.40}, outside 0..{nodes - 1}") from None


def parse_node_ids(text: str, what: str, *, nodes: int) -> list[int]:
    """``"0,3,5"`` or ranges ``"0-7,9"`` -> node ids of a network of ``nodes`` nodes.

    Raises
    ------
    ValueError
        If an item is not a non-negative integer or an ascending ``a-b`` range, or names a
        node outside ``0..nodes-1``.
    """
    out: list[int] = []
    for item in (part.strip() for part in text.split(",")):
        lo, sep, hi = item.partition("-")
        if lo.isdigit() and (not sep or hi.isdigit()) and lo.isascii() and hi.isascii():
            a = node_id(lo, what, nodes)
            b = node_id(hi, what, nodes) if sep else a
            if b >= a:
                out.extend(range(a, b + 1))
                continue
        raise ValueError(f"{what} must be node ids such as 0,3,5 or 0-7, not {item!r:.60}")
    return out


def parse_links(text: str, *, nodes: int) -> list[tuple[int, int]]:
    """``"0-1,2-7"`` -> ``[(0, 1), (2, 7)]``, links of a network of ``nodes`` nodes.

    Raises
    ------
    ValueError
        If an item is not ``u-v`` with non-negative integers, or names a node outside
        ``0..nodes-1``.
    """
    out = []
    for item in (part.strip() for part in text.split(",")):
        u, sep, v = item.partition("-")
        if not (sep and u.isdigit() and v.isdigit() and u.isascii() and v.isascii()):
            raise ValueError(f"--fail-links must be links u-v separated by commas, not "
                             f"{item!r:.60}")
        out.append((node_id(u, "--fail-links", nodes), node_id(v, "--fail-links", nodes)))
    return out
