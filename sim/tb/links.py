"""Python models of both ends of a credit-flow-controlled link, and a flit scoreboard.

Used by the switch testbenches (``amaranth.sim`` unit tests and cocotb + Verilator runs) and
meant for every testbench that drives or receives :func:`innet.hw.flit.link_signature` links:

- :class:`LinkSource` is an upstream sender: per-VC queues and one credit counter per VC,
  started at the receiver's buffer depth; it raises if the receiver returns more credits than
  it holds flits (a duplicated credit).
- :class:`LinkSink` is a downstream receiver: it models the receive buffers, raises if a flit
  arrives without a credit (the sender's counter went below zero), and returns credits when
  flits "leave" its buffer, with random backpressure (stall phases).
- :class:`Scoreboard` matches every received flit to exactly one expected flit, at the right
  port, in order per ordering key.

Timing convention: call the methods once per clock cycle, after the outputs of that cycle are
settled (for example on the falling edge); the credit bits :meth:`LinkSink.credits` returns are
driven during the following cycle.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from innet.hw.flit import Flit, FlitParams

__all__ = ["Backpressure", "Expected", "LinkSink", "LinkSource", "Scoreboard"]


class LinkSource:
    """The sending end of a link: per-VC queues and credit counters.

    Parameters
    ----------
    params : FlitParams
        The flit format.
    depth : int or list of int
        The receiver's buffer depth (per VC when a list).
    rng : random.Random
        Chooses among the VCs that can send.
    name : str
        Used in error messages.
    """

    def __init__(self, params: FlitParams, depth: int | list[int], rng: random.Random,
                 name: str = "link") -> None:
        self.params = params
        self.depth = list(depth) if isinstance(depth, list) else [depth] * params.vcs
        self.credits = list(self.depth)
        self.queues: list[deque] = [deque() for _ in range(params.vcs)]
        self.rng = rng
        self.name = name
        self.sent = 0

    def push(self, flit: Flit, tag: Any = None) -> None:
        """Queue ``flit`` (with an opaque ``tag`` returned by :meth:`send`)."""
        self.queues[self.params.vc(flit)].append((flit, tag))

    @property
    def pending(self) -> int:
        """Flits queued and not yet sent."""
        return sum(len(q) for q in self.queues)

    @property
    def idle(self) -> bool:
        """Nothing queued and every credit back."""
        return self.pending == 0 and self.credits == self.depth

    def credit(self, bits: int) -> None:
        """Take the credit pulses of one cycle (bit ``v`` = one credit of VC ``v``)."""
        v = 0
        while bits:
            if bits & 1:
                self.credits[v] += 1
                if self.credits[v] > self.depth[v]:
                    raise AssertionError(f"{self.name}: VC {v} got a credit back beyond its "
                                         f"depth {self.depth[v]} (a duplicated credit)")
            bits >>= 1
            v += 1

    def send(self, prefer: list[int] | None = None) -> tuple[Flit, Any] | None:
        """Pick a queued flit whose VC holds a credit (VCs in ``prefer`` first), take the
        credit and return ``(flit, tag)``; None when nothing can go."""
        ready = [v for v in range(self.params.vcs) if self.queues[v] and self.credits[v] > 0]
        if not ready:
            return None
        first = [v for v in ready if prefer and v in prefer]
        v = self.rng.choice(first or ready)
        self.credits[v] -= 1
        self.sent += 1
        return self.queues[v].popleft()


@dataclass
class Backpressure:
    """Random stall phases: a receiver drains with probability ``drain`` per cycle and VC
    while flowing, and stops for a random number of cycles now and then.

    ``stall_rate`` is the probability per cycle of starting a stall of 1 to ``max_stall``
    cycles. ``Backpressure(1.0, 0.0)`` never stalls.
    """

    drain: float = 0.7
    stall_rate: float = 0.02
    max_stall: int = 30


class LinkSink:
    """The receiving end of a link: models the buffers and returns credits.

    Parameters
    ----------
    params : FlitParams
        The flit format.
    depth : int
        The buffer depth per VC the sender's credits count.
    rng : random.Random
        Draws the backpressure.
    backpressure : Backpressure
        When held flits leave the buffer.
    name : str
        Used in error messages.
    """

    def __init__(self, params: FlitParams, depth: int, rng: random.Random,
                 backpressure: Backpressure | None = None, name: str = "link") -> None:
        self.params = params
        self.depth = depth
        self.rng = rng
        self.bp = backpressure or Backpressure()
        self.name = name
        self.held = [0] * params.vcs
        self.stalled = 0
        self.received = 0

    def receive(self, flit: Flit) -> None:
        """A flit arrived this cycle."""
        v = self.params.vc(flit)
        self.held[v] += 1
        self.received += 1
        if self.held[v] > self.depth:
            raise AssertionError(f"{self.name}: a flit of VC {v} arrived with {self.depth} "
                                 f"flits already buffered (sent without a credit)")

    def expected_credits(self, vc: int) -> int:
        """What the sender's counter for ``vc`` must read this cycle (before :meth:`credits`)."""
        return self.depth - self.held[vc]

    def credits(self, vcs: list[int] | None = None) -> int:
        """Credit bits to drive next cycle: the VCs whose head flit leaves the buffer.

        ``vcs`` limits the draining to these VCs (the others stay stalled).
        """
        if self.stalled:
            self.stalled -= 1
            return 0
        if self.rng.random() < self.bp.stall_rate:
            self.stalled = self.rng.randint(1, self.bp.max_stall)
            return 0
        bits = 0
        for v in range(self.params.vcs):
            if vcs is not None and v not in vcs:
                continue
            if self.held[v] and self.rng.random() < self.bp.drain:
                self.held[v] -= 1
                bits |= 1 << v
        return bits

    @property
    def empty(self) -> bool:
        return not any(self.held)


@dataclass
class Expected:
    """One expected arrival: where, what, its ordering key and position, and when it left."""

    port: Any
    flit: Flit
    key: Any
    seq: int
    cycle: int
    info: dict = field(default_factory=dict)


class Scoreboard:
    """Matches received flits to expected ones by a unique id.

    Every expectation has an id (for example the payload); :meth:`check` pops it and verifies
    port, flit and order: within one ordering key, flits must arrive in the order they were
    expected. At the end :attr:`pending` must be empty.
    """

    def __init__(self) -> None:
        self.pending: dict[Any, list[Expected]] = {}
        self.next_seq: dict[Any, int] = {}
        self.last_seen: dict[Any, int] = {}
        self.latencies: list[int] = []
        self.matched = 0

    def expect(self, uid: Any, port: Any, flit: Flit, key: Any, cycle: int, **info) -> None:
        """Expect ``flit`` at ``port``; several expectations may share a ``uid`` (multicast)."""
        seq = self.next_seq.get((key, port), 0)
        self.next_seq[(key, port)] = seq + 1
        self.pending.setdefault(uid, []).append(Expected(port, flit, key, seq, cycle, info))

    def check(self, uid: Any, port: Any, flit: Flit, cycle: int) -> Expected:
        """Match an arrival; raises AssertionError on anything unexpected."""
        candidates = self.pending.get(uid)
        if not candidates:
            raise AssertionError(f"Unexpected flit {flit} at port {port} in cycle {cycle} "
                                 "(never sent, or a duplicate)")
        want = next((w for w in candidates if w.port == port), None)
        if want is None:
            ports = sorted(str(w.port) for w in candidates)
            raise AssertionError(f"Flit {flit} arrived at port {port} in cycle {cycle}; "
                                 f"expected at {', '.join(ports)}")
        candidates.remove(want)
        if not candidates:
            del self.pending[uid]
        if flit != want.flit:
            raise AssertionError(f"At port {port} in cycle {cycle}: got {flit}, "
                                 f"expected {want.flit}")
        order = (want.key, port)
        last = self.last_seen.get(order, -1)
        if want.seq <= last:
            raise AssertionError(f"Flit {flit} at port {port} in cycle {cycle} overtook an "
                                 f"earlier flit with the same ordering key {want.key}")
        self.last_seen[order] = want.seq
        self.latencies.append(cycle - want.cycle)
        self.matched += 1
        return want

    @property
    def outstanding(self) -> int:
        return sum(len(v) for v in self.pending.values())
