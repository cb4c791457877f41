"""Background host p2p traffic, the host side of every endpoint in a cocotb testbench.

The endpoint test fixture (:class:`innet.sim.tb.endpointbench.EndpointBench`) gives endpoint
``k`` a host port with flat signals (as the network top level :class:`innet.hw.network.Network`
does; its simulation wrapper :mod:`innet.sim.tb.networkbench` generates and checks host
traffic in the simulated design instead): ``host_tx_valid[k]``, word ``k`` of
``host_tx_payload`` and ``host_tx_ready[k]`` (flits the host offers) and
``host_rx_valid``/``host_rx_payload``/``host_rx_ready`` (flits delivered to it).
:class:`HostTraffic` drives both sides from a cocotb testbench: it queues
p2p flits of the host message class at a chosen load, to uniformly random destinations or a
fixed permutation, offers each queue's head, and pulls delivered flits with random
backpressure. The testbench's link monitor reports when a host flit leaves an endpoint
(:meth:`HostTraffic.left`, checked against the queue's head, so the endpoint can neither lose,
reorder nor invent one) and when one arrives (:meth:`HostTraffic.arrived`); the scoreboard
checks the flit between them.
"""

from __future__ import annotations

import random

from innet.hw.flit import Flit, FlitParams

__all__ = ["HostTraffic"]


class HostTraffic:
    """Host p2p flits offered at every endpoint's host port.

    Parameters
    ----------
    dut
        The cocotb handle of the top level.
    params : FlitParams
        The network's flit format.
    nodes : int
        Endpoints (host ports).
    rng : random.Random
        The testbench's generator (flits, destinations and backpressure).
    ready_rate : float
        While traffic runs, the probability that a host takes a delivered flit in a cycle.
    queue_limit : int or None
        Flits a source queue holds at most (an offered load above what the endpoint takes is
        dropped at the source, before it is counted); ``None``: unbounded.

    Attributes
    ----------
    rate : float
        Probability that a source queues a new flit in a cycle; 0 stops new traffic.
    dst : list of int or None
        Each source's fixed destination (a permutation), or ``None`` for uniformly random
        destinations other than the source.
    sent, got : int
        Host flits that left an endpoint and that reached one.
    """

    def __init__(self, dut, params: FlitParams, nodes: int, rng: random.Random, *,
                 ready_rate: float, queue_limit: int | None = None) -> None:
        self.dut, self.params, self.nodes, self.rng = dut, params, nodes, rng
        self.ready_rate, self.queue_limit = ready_rate, queue_limit
        self.rate = 0.0
        self.dst: list[int] | None = None
        self.queues: list[list[Flit]] = [[] for _ in range(nodes)]
        self.sent = self.got = 0
        self._heads: tuple = (None,) * nodes
        self._ready = (1 << nodes) - 1

    @property
    def drained(self) -> bool:
        """Every offered flit has left its endpoint."""
        return not any(self.queues)

    def stop(self) -> None:
        """Queue no new flits (those queued still go)."""
        self.rate = 0.0

    def tick(self) -> None:
        """One cycle, in the falling half: queue new flits, offer the heads, set the readies."""
        dut, p, n, rng = self.dut, self.params, self.nodes, self.rng
        if self.rate:
            for k in range(n):
                queue = self.queues[k]
                if ((self.queue_limit is None or len(queue) < self.queue_limit)
                        and rng.random() < self.rate):
                    dst = (self.dst[k] if self.dst is not None
                           else rng.choice([d for d in range(n) if d != k]))
                    queue.append(Flit.p2p(dst, k, rng.getrandbits(32),
                                          tag=rng.getrandbits(p.tag_width) & ~3,
                                          index=rng.getrandbits(p.index_width)))
        heads = tuple(q[0] if q else None for q in self.queues)
        if heads != self._heads:
            self._heads = heads
            valid = payload = 0
            for k, head in enumerate(heads):
                if head is not None:
                    valid |= 1 << k
                    payload |= p.pack(head) << (p.width * k)
            dut.host_tx_valid.value = valid
            dut.host_tx_payload.value = payload
        ready = (sum(1 << k for k in range(n) if rng.random() < self.ready_rate) if self.rate
                 else (1 << n) - 1)
        if ready != self._ready:
            self._ready = ready
            dut.host_rx_ready.value = ready

    def left(self, k: int, flit: Flit) -> None:
        """Endpoint ``k`` sent host flit ``flit`` on its link: it must be its queue's head."""
        assert self.queues[k], f"endpoint {k} sent a host flit nobody gave it"
        want = self.queues[k].pop(0)
        assert flit == want, f"endpoint {k} sent host flit {flit}, expected {want}"
        self.sent += 1

    def arrived(self) -> None:
        """A host flit reached its endpoint (the scoreboard has checked it)."""
        self.got += 1
