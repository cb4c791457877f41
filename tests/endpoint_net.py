"""A Python model of the switches around endpoints, for amaranth.sim unit tests of hw.endpoint.

:class:`ModelNet` drives the ``tx``/``rx`` links of several :class:`~innet.hw.endpoint.Endpoint`
instances as a switch's local port would (credits per VC both ways), routes p2p flits to the
endpoint named by ``dst`` after a random delay, and reduces collective requests of an id with
:func:`innet.gen.ops.combine` in endpoint order once every participant sent an element, then
sends the responses to every participant (a one-switch model of an in-network allreduce). Random
stalls everywhere; every flit sent is accounted for (:meth:`ModelNet.check_empty`).
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np
from amaranth import Value

from innet.gen import ops
from innet.hw.flit import Flit, FlitParams, Kind
from innet.sim.tb.links import LinkSource

__all__ = ["ModelNet"]


class ModelNet:
    """Switches (as a model) around ``endpoints``; call :meth:`run` as a background testbench.

    Parameters
    ----------
    endpoints : list of Endpoint
        Endpoint ``n`` is node ``n``.
    seed : int
        Random stalls and delays.
    stall : float
        Probability per cycle and endpoint that the model takes nothing from the endpoint's
        link buffers and delivers nothing to it.
    collective : dict, optional
        ``{cid: (op, dtype, participants)}`` for in-network reductions (the result goes to
        every participant), or ``{cid: (op, dtype, participants, receivers)}``.
    """

    def __init__(self, endpoints, seed: int = 1, stall: float = 0.2,
                 collective: dict | None = None) -> None:
        self.eps = endpoints
        self.p: FlitParams = endpoints[0].params
        self.rng = random.Random(seed)
        self.stall = stall
        self.collective = collective or {}
        n = len(endpoints)
        self.inputs = [[deque() for _ in range(self.p.vcs)] for _ in range(n)]
        self.outputs = [LinkSource(self.p, ep.local_depth, self.rng, f"to endpoint {k}")
                        for k, ep in enumerate(endpoints)]
        self.partial: dict[tuple[int, int], dict[int, int]] = {}
        self.sent = [[] for _ in range(n)]  # every flit each endpoint sent
        self.delivered = [[] for _ in range(n)]  # every flit delivered to each endpoint
        self.cycle = 0
        self.extra: list[tuple[int, Flit]] = []  # flits a test injects: (endpoint, flit)

    def inject(self, node: int, flit: Flit) -> None:
        """Deliver ``flit`` to endpoint ``node`` (a test's stray flit)."""
        self.outputs[node].push(flit)

    async def run(self, ctx) -> None:
        p = self.p
        while True:
            await ctx.tick()
            self.cycle += 1
            for k, ep in enumerate(self.eps):
                if ctx.get(ep.tx.valid):
                    flit = p.unpack(ctx.get(Value.cast(ep.tx.payload)))
                    v = p.vc(flit)
                    assert len(self.inputs[k][v]) < ep.buffer_depth, \
                        f"endpoint {k} sent on VC {v} without a credit"
                    self.inputs[k][v].append(flit)
                    self.sent[k].append(flit)
                self.outputs[k].credit(int(ctx.get(ep.rx.credit)))
            for k, ep in enumerate(self.eps):
                credit = 0
                if self.rng.random() >= self.stall:
                    for v, queue in enumerate(self.inputs[k]):
                        if queue and self.rng.random() < 0.8:
                            self._forward(k, queue.popleft())
                            credit |= 1 << v
                ctx.set(ep.tx.credit, credit)
            for k, ep in enumerate(self.eps):
                got = None if self.rng.random() < self.stall else self.outputs[k].send()
                ctx.set(ep.rx.valid, got is not None)
                if got is not None:
                    flit = got[0]
                    ctx.set(Value.cast(ep.rx.payload), p.pack(flit))
                    self.delivered[k].append(flit)

    def _forward(self, k: int, flit: Flit) -> None:
        if flit.kind is Kind.P2P:
            assert flit.src == k, f"endpoint {k} sent a p2p flit with src {flit.src}"
            self.outputs[flit.dst].push(flit.replace(hop=0))
            return
        assert flit.kind is Kind.REQ, f"endpoint {k} sent {flit}"
        op, dtype, members, *receivers = self.collective[flit.cid]
        got = self.partial.setdefault((flit.cid, flit.index), {})
        assert k not in got, f"endpoint {k} sent element {flit.index} twice"
        got[k] = flit.payload
        if len(got) == len(members):
            del self.partial[(flit.cid, flit.index)]
            value = np.uint32(got[members[0]])
            for member in members[1:]:
                value = ops.combine(op, dtype, value, np.uint32(got[member]))
            for member in (receivers[0] if receivers else members):
                self.outputs[member].push(Flit.response(flit.cid, flit.index, int(value)))

    def check_empty(self) -> None:
        """Nothing buffered in the model, nothing half-reduced, every credit returned."""
        assert not self.partial, f"unreduced requests: {sorted(self.partial)}"
        for k in range(len(self.eps)):
            assert not any(self.inputs[k]), f"flits from endpoint {k} still buffered"
            assert self.outputs[k].idle, f"flits or credits to endpoint {k} outstanding"
