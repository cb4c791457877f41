"""One alpha-beta cost model, in clock cycles and elements, for every allreduce innet generates.

Units
-----
Time is counted in cycles of the network clock, data in *elements* (one element is one flit
payload of ``element_bytes`` bytes; a channel moves ``link_bandwidth`` elements per cycle).
That is what the RTL simulation measures. ``clock_hz``, when set, turns cycles into seconds.

Every algorithm the project generates has Hockney's form ``T(m) = alpha + beta · m`` for a vector
of ``m`` elements, with alpha in cycles and beta in cycles per element (:class:`Cost`):

- **in-network** (PIUMA, "Analysis", Eq. 1 and 2; :func:`innet.gen.embed.embedding_cost`): one
  pipelined round trip. alpha is the latency of the slowest leaf-to-root path of the reduction
  tree plus that of the slowest root-to-leaf path of the broadcast tree (PIUMA bounds it by
  twice the longest leaf-root path); beta is the time per element at the slowest pipeline stage.
- **host-style** (Swing, Section 2.2, Eq. 1 taken step by step;
  :meth:`innet.gen.swing.cost.Congestion.cost`): every step ``s`` costs
  ``alpha_s + m · beta_s`` with

  - ``alpha_s`` the time of the rank whose entries of the step take longest: the endpoint runs
    its step table one entry after another over its one local port, one entry of each
    collective in every step. An entry that moves data takes ``max(max(step_overhead, R) + R,
    max(step_overhead, S))``, ``R`` and ``S`` the latencies (:meth:`CostModel.latency`) of
    its receive and send routes on the project's routing: its clear-to-send travels to its
    receive peer during the drain of the entry before it, then the data comes back, and its
    send waits for its send peer's clear-to-send. An entry that moves nothing takes 2 cycles,
    and the entries of a step and collective where no rank moves data are left out of the
    tables and take none;
  - ``beta_s = max(load_s / link_bandwidth, port_s / local_bandwidth)``: ``load_s`` is the
    largest fraction of the vector any one directed channel carries in the step (all messages
    of all collectives on it; this is where Swing's congestion deficiency Ξ comes from) and
    ``port_s`` the largest fraction any endpoint injects or ejects through its one local port.

  A sum of lines is a line, so a whole schedule is again one :class:`Cost`, exact for every
  vector that gives each block of each collective an element. A shorter vector leaves more
  entries empty, so below that length the alphas depend on ``m`` and the schedule is priced
  length by length.

Where every algorithm is a line in ``m``, which one wins at which size is the lower envelope of
the lines (:func:`envelope`): exact intervals, not just samples. :mod:`innet.gen.compare` adds
the short vectors of host-style schedules to it.

Parameters and their defaults
-----------------------------
The defaults describe the project's own network as the RTL (:mod:`innet.hw`) builds it; the
network simulation (:mod:`innet.sim.network`) measures them:

``link_latency = 0``
    Cycles a link adds on top of the switches: links are wired directly (``hw/switch.py``:
    the output register of one switch is the input of the next); pipelined long links add
    their stages.
``switch_latency = 3``
    A flit crosses an idle switch in 3 cycles (``hw/switch.py``, measured by its tests): buffer
    write, allocation, then traversal of the crossbar into the output register.
``local_latency = 1``
    Endpoint to switch and switch to endpoint, each: the endpoint's link sender and receiver
    register the flit once (``hw/link.py``).
``front_latency = 4``
    Cycles a switch's collective engine adds to every request crossing before its reduction:
    the write into its request buffer and its front end (issue, operand read, index check;
    ``innet.hw.ceng.engine_latency(1, radix)``).
``reduce_latency = None``
    Cycles a switch's collective engine takes to reduce ``k >= 2`` contributing ports after
    its front end, the same for every ``k``: its multi-operand reduction unit
    (``hw/alu/multi.py``) has ``radix + 1`` leaves, and ``None`` takes that unit's latency at
    the topology's radix, :func:`reduce_cycles` (17 cycles at radix 8); ``mul`` goes through
    the tree of pairwise ALUs of an engine with multipliers, :func:`product_cycles` of ``k``.
``step_overhead = 11``
    Host-style only: cycles an endpoint's step engine takes after the last element of a
    step-table entry that moves data (its reduction pipeline drains, 9 cycles, then the next
    entry loads); the next entry's clear-to-send travels meanwhile, so an entry between
    neighbours (a one-hop latency of 8 cycles) takes ``11 + 8`` cycles beyond its elements, as
    the step engine measures (:mod:`innet.sim.bench.endpoint`).
``element_bytes = 4``
    One 32-bit element per flit (``int32``, ``uint32``, ``fp32``).
``link_bandwidth = 1``
    Elements per cycle per channel direction: one flit per cycle per port (``hw/switch.py``).
``local_bandwidth = 1``
    Elements per cycle each way between an endpoint and its switch: the local port is one more
    switch port. ``None``: never the bottleneck.
``engine_bandwidth = None``
    Elements per cycle a switch's collective engine reduces over all collective ids together;
    ``None``: one engine per id at line rate.
``clock_hz = None``
    Optional, to print seconds.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from innet.gen.checks import check_int, shown
from innet.gen.ops import Op

__all__ = ["Cost", "CostModel", "envelope", "product_cycles", "reduce_cycles"]


def reduce_cycles(radix: int) -> int:
    """Cycles of the collective engine's reduction unit in a switch of ``radix`` network ports:
    ``9 + ceil(log2(radix + 1)) + ceil(log2(radix + 2))``, as
    ``innet.hw.alu.multi.multi_latency(radix + 1)`` builds it (15, 17 and 19 cycles at radix
    4, 8 and 16)."""
    radix = check_int("Radix", radix, low=1)
    return 9 + radix.bit_length() + (radix + 1).bit_length()


def product_cycles(count: int) -> int:
    """Cycles of an engine built with multipliers to multiply ``count`` contributing ports:
    its fixed-order tree of pairwise ALUs, 9 cycles (``innet.hw.alu.LATENCY``) per level,
    ``ceil(log2(count))`` levels (``innet.hw.ceng.engine_latency`` of ``mul``, without the
    front end)."""
    count = check_int("Count", count, low=2)
    return 9 * (count - 1).bit_length()


def _finite(value: numbers.Real) -> bool:
    """Whether ``value`` is a finite float (an integer beyond every float is not)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _number(name: str, value: Any, *, allow_none: bool = False, allow_zero: bool = True,
            allow_inf: bool = False) -> float | None:
    """A non-negative number (``name`` starts the error message)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {value!r:.60}")
    try:
        value, shown_value = float(value), None
    except OverflowError:  # an integer beyond every float
        value, shown_value = math.inf, shown(value)
    bad = math.isnan(value) or value < 0 or (value == 0 and not allow_zero) or (
        math.isinf(value) and not allow_inf)
    if bad:
        bound = ">= 0" if allow_zero else "> 0"
        what = f"{bound} (inf allowed)" if allow_inf else f"finite and {bound}"
        raise ValueError(f"{name} must be {what}, not {shown_value or value}")
    return value


@dataclass(frozen=True)
class CostModel:
    """Latency and bandwidth parameters of the network, in cycles and elements.

    The defaults and where they come from are in the module documentation.

    Parameters
    ----------
    link_latency : float
        Cycles a link adds per hop (default 0: links are wired directly).
    switch_latency : float
        Cycles for a flit to cross a switch (default 3).
    local_latency : float
        Cycles between an endpoint and its switch, each way (default 1).
    link_latencies : mapping of (u, v) to float, optional
        Per-link overrides of ``link_latency`` (either orientation of the pair), e.g. PIUMA's
        different latencies per network level. In-network embeddings and host-style schedules
        both price every route by its links' own latencies.
    element_bytes : int
        Bytes per element (default 4).
    link_bandwidth : float
        Elements per cycle a channel carries in each direction (default 1; ``inf`` allowed).
    local_bandwidth : float, optional
        Elements per cycle between an endpoint and its switch, each way (default 1);
        ``None`` or ``inf``: the endpoint is never the bottleneck.
    engine_bandwidth : float, optional
        Elements per cycle a switch's collective engine reduces over all collective ids
        together; ``None`` (default): never the bottleneck.
    front_latency : float
        Cycles a switch's collective engine adds to a request before its reduction (default 4).
    reduce_latency : float, optional
        Cycles a switch's collective engine takes to reduce two or more ports after its front
        end; ``None`` (default): :func:`reduce_cycles` at the topology's radix.
    step_overhead : float
        Host-style algorithms: cycles an endpoint's step engine takes after the last element
        of a step-table entry (default 11).
    clock_hz : float, optional
        Clock frequency, to convert cycles to seconds (:meth:`seconds`).

    Raises
    ------
    TypeError
        If a parameter is not a number (or ``link_latencies`` not a mapping of pairs).
    ValueError
        If a latency is negative or infinite, a bandwidth, ``element_bytes`` or ``clock_hz``
        is not positive.
    """

    link_latency: float = 0.0
    switch_latency: float = 3.0
    local_latency: float = 1.0
    link_latencies: Mapping[tuple[int, int], float] = field(default_factory=dict)
    element_bytes: int = 4
    link_bandwidth: float = 1.0
    local_bandwidth: float | None = 1.0
    engine_bandwidth: float | None = None
    front_latency: float = 4.0
    reduce_latency: float | None = None
    step_overhead: float = 11.0
    clock_hz: float | None = None

    def __post_init__(self) -> None:
        for name, label in (("link_latency", "Link latency"),
                            ("switch_latency", "Switch latency"),
                            ("local_latency", "Local latency"),
                            ("front_latency", "Front latency"),
                            ("step_overhead", "Step overhead")):
            object.__setattr__(self, name, _number(label, getattr(self, name)))
        object.__setattr__(self, "reduce_latency", _number(
            "Reduce latency", self.reduce_latency, allow_none=True))
        if isinstance(self.element_bytes, bool) or not isinstance(self.element_bytes,
                                                                  numbers.Integral):
            raise TypeError(f"Element bytes must be an integer, not {self.element_bytes!r:.60}")
        if self.element_bytes < 1:
            raise ValueError(f"Element bytes must be at least 1, not {self.element_bytes}")
        object.__setattr__(self, "element_bytes", int(self.element_bytes))
        object.__setattr__(self, "link_bandwidth", _number(
            "Link bandwidth", self.link_bandwidth, allow_zero=False, allow_inf=True))
        for name, label in (("local_bandwidth", "Local bandwidth"),
                            ("engine_bandwidth", "Engine bandwidth")):
            value = _number(label, getattr(self, name), allow_none=True, allow_zero=False,
                            allow_inf=True)
            object.__setattr__(self, name, None if value == math.inf else value)
        object.__setattr__(self, "clock_hz", _number(
            "Clock frequency", self.clock_hz, allow_none=True, allow_zero=False))
        if not isinstance(self.link_latencies, Mapping):
            raise TypeError(f"Link latencies must be a mapping of (u, v) to cycles, not "
                            f"{self.link_latencies!r:.60}")
        frozen = {}
        for key, value in self.link_latencies.items():
            if not (isinstance(key, tuple) and len(key) == 2 and all(
                    isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in key)):
                raise TypeError(f"Link latency keys must be (u, v) pairs of node ids, not "
                                f"{key!r:.60}")
            key = (int(key[0]), int(key[1]))
            frozen[(min(key), max(key))] = _number(f"Latency of link {key[0]}-{key[1]}", value)
        object.__setattr__(self, "link_latencies", frozen)

    def __hash__(self) -> int:
        return hash((self.link_latency, self.switch_latency, self.local_latency,
                     tuple(sorted(self.link_latencies.items())), self.element_bytes,
                     self.link_bandwidth, self.local_bandwidth, self.engine_bandwidth,
                     self.front_latency, self.reduce_latency, self.step_overhead,
                     self.clock_hz))

    @classmethod
    def from_seconds(cls, alpha: float, beta: float, hop_latency: float, *,
                     clock_hz: float = 1e9, element_bytes: int = 4) -> CostModel:
        """The model of Swing's Eq. 1 in seconds, expressed in cycles of a ``clock_hz`` clock.

        ``alpha`` seconds per step (per message), ``beta`` seconds per byte on a link and
        ``hop_latency`` seconds per hop (link and switch) become ``step_overhead = alpha·f``,
        ``link_latency = hop_latency·f``, no switch, endpoint, engine or reduction latency, and
        ``link_bandwidth = 1 / (beta · element_bytes · f)`` elements per cycle (``inf`` for
        ``beta = 0``); the endpoints are never the bottleneck (Swing, Section 2.2: every port
        sends and receives concurrently).

        Raises
        ------
        TypeError, ValueError
            If a value is not a non-negative number (``clock_hz`` positive, ``element_bytes``
            a positive integer), or ``beta`` is too small or large to give a bandwidth.
        """
        alpha = _number("Alpha", alpha)
        beta = _number("Beta", beta)
        hop_latency = _number("Hop latency", hop_latency)
        clock_hz = _number("Clock frequency", clock_hz, allow_zero=False)
        element_bytes = check_int("Element bytes", element_bytes, low=1)
        cycles = beta * element_bytes * clock_hz  # per element on a link
        if beta and not 0 < cycles < math.inf:
            raise ValueError(f"Beta {beta:g} s/byte at {clock_hz:g} Hz gives {cycles:g} cycles "
                             f"per element; it must be finite and above 0")
        bandwidth = math.inf if beta == 0 else 1.0 / cycles
        return cls(link_latency=hop_latency * clock_hz, switch_latency=0.0, local_latency=0.0,
                   front_latency=0.0, reduce_latency=0.0, step_overhead=alpha * clock_hz,
                   element_bytes=element_bytes, link_bandwidth=bandwidth,
                   local_bandwidth=None, clock_hz=clock_hz)

    def reduction(self, radix: int, count: int | None = None, op: Op | str = "add") -> float:
        """Cycles a switch of ``radix`` network ports takes to reduce ``count`` (two or more)
        ports with ``op`` after its engine's front end: :attr:`reduce_latency`, or if that is
        ``None`` :func:`reduce_cycles`, or for ``mul`` (which goes through the pairwise tree
        of an engine with multipliers) :func:`product_cycles` of ``count``.

        Raises
        ------
        ValueError
            If ``op`` is ``mul`` (without :attr:`reduce_latency`) and ``count`` is not given.
        """
        if self.reduce_latency is not None:
            return self.reduce_latency
        if (op if isinstance(op, Op) else Op.parse(op)) == Op.MUL:
            if count is None:
                raise ValueError("The reduction of mul depends on the count of ports: give it")
            return product_cycles(count)
        return reduce_cycles(radix)

    def latency(self, hops: int, link_cycles: float | None = None) -> float:
        """One-way latency of a point-to-point message over ``hops`` links, endpoint to
        endpoint: ``2·local_latency + link_cycles + (hops + 1)·switch_latency``, where
        ``link_cycles`` is what the route's links add (default ``hops·link_latency``; a route
        over links with their own latencies, :attr:`link_latencies`, passes their sum)."""
        if link_cycles is None:
            link_cycles = hops * self.link_latency
        return 2 * self.local_latency + link_cycles + (hops + 1) * self.switch_latency

    def link_latency_of(self, u: int, v: int) -> float:
        """Cycles the link between nodes ``u`` and ``v`` adds: its entry in
        :attr:`link_latencies`, else :attr:`link_latency`."""
        return self.link_latencies.get((min(u, v), max(u, v)), self.link_latency)

    def beta(self, link_load: float = 1.0, engine_load: float = 1.0,
             local_load: float = 1.0) -> float:
        """Cycles per element when the busiest channel carries ``link_load`` times the vector,
        the busiest endpoint port ``local_load`` times it and the busiest collective engine
        reduces ``engine_load`` times it: the slowest of the three stages."""
        times = [link_load / self.link_bandwidth]
        if self.local_bandwidth is not None:
            times.append(local_load / self.local_bandwidth)
        if self.engine_bandwidth is not None:
            times.append(engine_load / self.engine_bandwidth)
        return max(times)

    def seconds(self, cycles: Any) -> Any:
        """``cycles / clock_hz`` (scalar or array).

        Raises
        ------
        ValueError
            If ``clock_hz`` is not set.
        """
        if self.clock_hz is None:
            raise ValueError("The cost model has no clock frequency: set clock_hz to convert "
                             "cycles to seconds")
        return cycles / self.clock_hz

    def to_dict(self) -> dict[str, Any]:
        """The parameters as JSON-ready values (``null`` bandwidth: never the bottleneck)."""
        def finite(value: float | None) -> float | None:
            return None if value is None or math.isinf(value) else value

        return {"link_latency": self.link_latency, "switch_latency": self.switch_latency,
                "local_latency": self.local_latency, "front_latency": self.front_latency,
                "reduce_latency": self.reduce_latency,
                "step_overhead": self.step_overhead,
                "link_latencies": [[u, v, lat] for (u, v), lat in
                                   sorted(self.link_latencies.items())],
                "element_bytes": self.element_bytes,
                "link_bandwidth": finite(self.link_bandwidth),
                "local_bandwidth": finite(self.local_bandwidth),
                "engine_bandwidth": finite(self.engine_bandwidth),
                "clock_hz": self.clock_hz}


@dataclass(frozen=True)
class Cost:
    """Hockney's ``T(m) = alpha + beta · m`` in cycles (PIUMA, "Analysis: Model").

    Members
    -------
    alpha : float
        Latency, in cycles.
    beta : float
        Cycles per element.

    Raises
    ------
    TypeError, ValueError
        If ``alpha`` or ``beta`` is not a finite number.
    """

    alpha: float
    beta: float

    def __post_init__(self) -> None:
        for name, value in (("Alpha", self.alpha), ("Beta", self.beta)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name} must be a number of cycles, not {value!r:.60}")
            if not _finite(value):
                shown_value = shown(value) if isinstance(value, numbers.Integral) else value
                raise ValueError(f"{name} must be finite, not {shown_value}")

    def time(self, elements: Any) -> Any:
        """``alpha + beta * elements`` (scalar or array)."""
        if isinstance(elements, int | float):
            return self.alpha + self.beta * float(elements)
        import numpy as np

        if np.ndim(elements):
            return self.alpha + self.beta * np.asarray(elements, dtype=float)
        return self.alpha + self.beta * float(elements)

    def __add__(self, other: Cost) -> Cost:
        """Two phases one after the other."""
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(alpha=self.alpha + other.alpha, beta=self.beta + other.beta)


def envelope(costs: Mapping[str, Cost]) -> list[tuple[float, float | None, str]]:
    """Which cost wins for which vector sizes: the lower envelope of the lines ``T(m)``.

    Returns
    -------
    list of (start, stop, name)
        Consecutive intervals ``[start, stop)`` of ``m >= 0`` (``stop`` is ``None`` for the
        last, unbounded one) and the name of the fastest cost on each; at a crossing the
        cost that is faster beyond it takes over, and exact ties go to the name listed first.

    Raises
    ------
    TypeError
        If ``costs`` is not a mapping of names to :class:`Cost`.
    ValueError
        If ``costs`` is empty.
    """
    if not isinstance(costs, Mapping):
        raise TypeError(f"Costs must be a mapping of names to Costs, not {costs!r:.60}")
    if not costs:
        raise ValueError("Envelope needs at least one cost")
    for name, cost in costs.items():
        if not isinstance(cost, Cost):
            raise TypeError(f"Cost {name!r} must be a Cost, not {cost!r:.60}")
    names = list(costs)
    order = {name: i for i, name in enumerate(names)}
    current = min(names, key=lambda n: (costs[n].alpha, costs[n].beta, order[n]))
    start = 0.0
    out: list[tuple[float, float | None, str]] = []
    while True:
        here = costs[current]
        best: tuple[float, float, int, str] | None = None
        for name in names:
            other = costs[name]
            if other.beta >= here.beta:
                continue
            cross = max(start, (other.alpha - here.alpha) / (here.beta - other.beta))
            key = (cross, other.beta, order[name], name)
            if best is None or key < best:
                best = key
        if best is None:
            out.append((start, None, current))
            return out
        cross, _, _, name = best
        if cross > start:
            out.append((start, cross, current))
        current, start = name, cross
