"""cocotb testbench for the collective engine inside switches (a :class:`SwitchBench` top).

One switch (every port external) or a network of switches whose local ports are external
(endpoints modelled here). The testbench extends :class:`innet.sim.tb.tb_switch.TB` (links with
credits and random backpressure, configuration bus, p2p golden model, credit checks every
cycle, scoreboard) with collective elements: it injects every contributing port's request
flits with independent random timing (arrival skew), predicts each result with
:mod:`innet.sim.golden` (bit for bit, in the engine's port order where the order matters), and
expects it as one flit per target output. Every test ends with an empty scoreboard, every
credit back and no error flag.

Parameters (:func:`innet.sim.tb.kit.params`) besides those of :mod:`innet.sim.tb.tb_switch`:
single switch: ``phases`` (a list of ``{"collectives": [per id: req_in, req_out, root,
resp_out, op, dtype], "elements": n}``), ``ids`` (the registers of every id, as in a phase),
``rates`` (range of the per-port injection probability), ``p2p_load``, ``ks`` (port counts to
measure latency and throughput for), ``op``, ``dtype``, ``stream``; networks: ``writes`` (per
switch the image's bus writes ``[address, word]``), ``embeddings`` (``Embedding.to_dict()``
per id), ``elements``.
"""

from __future__ import annotations

from collections import defaultdict

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from innet.gen.embed import Embedding
from innet.gen.ops import DType, Op
from innet.gen.topology import LOCAL
from innet.hw.ceng import engine_latency
from innet.hw.flit import Flit, Kind
from innet.hw.switch import ERROR_FIELDS, HOP_CYCLES
from innet.sim.golden import embedding_results, reduce_switch
from innet.sim.tb import kit
from innet.sim.tb.links import Backpressure
from innet.sim.tb.tb_switch import TB

__all__ = [
    "CengTB",
    "operands",
    "test_embeddings",
    "test_latency_throughput",
    "test_network_latency",
    "test_reduce_phases",
    "test_two_ids_with_p2p",
]


def operands(rng: np.random.Generator, dtype: DType, shape) -> np.ndarray:
    """Random uint32 patterns for ``dtype``: for fp32 a mixture of specials (zeros, subnormals,
    infinities, NaNs) and values of close exponents (cancellation, rounding ties)."""
    shape = tuple(np.atleast_1d(shape))
    if dtype != DType.FP32:
        return rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    from innet.sim.tb.tb_alu import FP32_SPECIALS

    close = ((rng.integers(0, 2, shape) << 31) | (rng.integers(118, 136, shape) << 23)
             | rng.integers(0, 1 << 23, shape)).astype(np.uint32)
    specials = np.asarray(FP32_SPECIALS, dtype=np.uint32)[
        rng.integers(0, len(FP32_SPECIALS), shape)]
    uniform = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    pick = rng.integers(0, 100, shape)
    return np.where(pick < 8, specials, np.where(pick < 20, uniform, close)).astype(np.uint32)


class CengTB(TB):
    """:class:`~innet.sim.tb.tb_switch.TB` with in-network reductions as the golden model."""

    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.nprng = np.random.default_rng(self.P.get("seed", 1))
        self.last_left: dict[tuple[int, int], int] = {}  # (cid, index) -> last operand sent
        self.result_came: dict[tuple[int, int], int] = {}  # (cid, index) -> last copy
        self.result_at: dict[tuple[int, int, int], int] = {}  # (cid, index, link) -> cycle
        self.feeds: dict[int, list[Flit]] = defaultdict(list)  # link -> requests to inject
        self.rate = [1.0] * len(self.external)
        self.results = 0

    # -- configuration ---------------------------------------------------------------------

    async def configure(self) -> None:
        """The image's bus writes when given (networks), else the registers of the params."""
        writes = self.P.get("writes")
        if writes is None:
            await super().configure()
            return
        await self.bus.write_all({n: [tuple(w) for w in words] for n, words in enumerate(writes)})
        for _ in range(3):  # the engine registers its configuration
            await FallingEdge(self.dut.clk)

    async def pause(self) -> None:
        """End the last :meth:`step`'s cycle and drive idle links (no flit, no credit), so
        that cycles without :meth:`step` (bus writes) repeat nothing."""
        await FallingEdge(self.dut.clk)
        self.dut.in_valid.value = 0
        self.dut.out_credit.value = 0

    async def set_collectives(self, colls: list[dict]) -> None:
        """Single switch: write every id's registers (a phase's configuration)."""
        await self.pause()
        for c, cfg in enumerate(colls):
            await self.write(0, f"coll[{c}].ctrl", enable=1, op=cfg["op"], dtype=cfg["dtype"])
            await self.write(0, f"coll[{c}].req_in", ports=sum(1 << q for q in cfg["req_in"]))
            await self.write(0, f"coll[{c}].req_out", port=cfg.get("req_out", 0),
                             root=int(cfg.get("root", False)))
            await self.write(0, f"coll[{c}].resp_out",
                             ports=sum(1 << q for q in cfg.get("resp_out", [])))
        self.colls = [list(colls)]
        for _ in range(3):
            await FallingEdge(self.dut.clk)

    # -- expectations ----------------------------------------------------------------------

    def expect_result(self, cid: int, index: int, flit: Flit, links) -> None:
        for e in links:
            self.sb.expect(("res", cid, index), e, flit, ("res", cid), self.cycle)

    def switch_elements(self, colls: list[dict], count: int, base: int = 0) -> None:
        """Queue ``count`` elements of every id of a single switch; expect their results."""
        for c, cfg in enumerate(colls):
            op, dtype = Op(cfg["op"]), DType(cfg["dtype"])
            ports = sorted(cfg["req_in"])  # hardware ports: local = radix is last
            values = operands(self.nprng, dtype, (len(ports), count))
            result = reduce_switch(op, dtype, list(values))
            kind = Kind.RESP if cfg.get("root") else Kind.REQ
            targets = cfg["resp_out"] if cfg.get("root") else [cfg["req_out"]]
            for j in range(count):
                index = base + j
                for row, q in enumerate(ports):
                    self.feeds[self.ext_of[(0, q)]].append(
                        Flit.request(c, index, int(values[row, j])))
                want = Flit(kind, payload=int(result[j]), index=index, cid=c)
                self.expect_result(c, index, want, [self.ext_of[(0, q)] for q in targets])
                self.results += 1

    def network_elements(self, embeddings: list[Embedding], count: int) -> dict:
        """Queue ``count`` elements of every embedding at its contributing endpoints; expect
        each delivered result (the embedding's golden order). Returns the inputs by id."""
        inputs = {}
        for emb in embeddings:
            c = emb.collective_id
            senders = [s.node for s in emb.switches if LOCAL in s.req_in]
            vectors = {u: operands(self.nprng, emb.dtype, count) for u in senders}
            inputs[c] = vectors
            for u, vector in vectors.items():
                e = self.ext_of[(u, self.radix)]
                self.feeds[e] += [Flit.request(c, j, int(x)) for j, x in enumerate(vector)]
            for u, result in embedding_results(emb, vectors).items():
                for j, x in enumerate(result):
                    self.expect_result(c, j, Flit.response(c, j, int(x)),
                                       [self.ext_of[(u, self.radix)]])
                    self.results += 1
        return inputs

    def feed(self, tb, e: int) -> None:
        """Inject step: move this link's next request into its source at its own rate."""
        feed = self.feeds[e]
        if (feed and len(self.src[e].queues[self.p.vc(feed[0])]) < 4
                and self.rng.random() < self.rate[e]):
            self.src[e].push(feed.pop(0))

    def expect(self, e: int, flit: Flit) -> None:
        if flit.kind is Kind.REQ:  # expected as results when queued
            self.left[("req", flit.cid, flit.index, e)] = self.cycle
            key = (flit.cid, flit.index)
            self.last_left[key] = max(self.last_left.get(key, -1), self.cycle)
            return
        super().expect(e, flit)

    def arrive(self, e: int, flit: Flit) -> None:
        uid = ("res", flit.cid, flit.index)
        if flit.kind is not Kind.P2P and any(w.port == e for w in self.sb.pending.get(uid, ())):
            self.sb.check(uid, e, flit, self.cycle)
            self.delivered[e] += 1
            self.result_came[(flit.cid, flit.index)] = self.cycle
            self.result_at[(flit.cid, flit.index, e)] = self.cycle
            return
        super().arrive(e, flit)

    async def step(self, inject=None, drain=None, prefer=None) -> None:
        """One cycle of :meth:`TB.step`; fails at once when a switch raises an error flag."""
        await super().step(inject, drain, prefer)
        errors = int(self.dut.errors.value)
        if errors:
            names = list(ERROR_FIELDS)
            flags = [f"switch {n}: {names[b]}" for n in range(self.n)
                     for b in range(len(names)) if errors >> (n * len(names) + b) & 1]
            raise AssertionError(f"cycle {self.cycle}: error flags {', '.join(flags)}")

    async def run_until_done(self, inject=None, limit: int = 200000) -> int:
        """Step (injecting) until every feed is empty and every expected result arrived
        (p2p flits still in flight are left to :meth:`drain_all`)."""
        start = self.cycle

        def results_pending() -> bool:
            return any(isinstance(uid, tuple) and uid[0] == "res" for uid in self.sb.pending)

        # Senders give collective flits priority, as the endpoint's link sender does.
        prefer = list(range(self.p.p2p_vcs, self.p.vcs))
        for _ in range(limit):
            if not any(self.feeds.values()) and not results_pending():
                break
            await self.step(inject or self.feed, prefer=prefer)
        assert not results_pending(), (
            f"{self.sb.outstanding} expected flits never arrived, e.g. "
            f"{next(iter(self.sb.pending.items()))}")
        return self.cycle - start


# -- tests -------------------------------------------------------------------------------------


@cocotb.test()
async def test_reduce_phases(dut):
    """Single switch: per phase every id reduces its ports (random skew on every port, random
    backpressure on every output), results bit-exact against the golden model."""
    tb = CengTB(dut)
    await tb.start()
    await tb.configure()
    P = tb.P
    lo, hi = P.get("rates", [0.2, 1.0])
    base = 0
    for phase in P["phases"]:
        await tb.set_collectives(phase["collectives"])
        tb.rate = [tb.rng.uniform(lo, hi) for _ in tb.external]
        tb.switch_elements(phase["collectives"], phase["elements"], base)
        base += phase["elements"]
        await tb.run_until_done()
    await tb.drain_all()
    result = await tb.finish()
    kit.report(results=tb.results, matched=result["matched"], cycles=result["cycles"])


@cocotb.test()
async def test_latency_throughput(dut):
    """Single switch, id 0 reducing ``k`` ports to one output: the latency of one element on
    an idle switch, then a long stream with inputs and credits always available."""
    tb = CengTB(dut)
    await tb.start()
    await tb.configure()
    P = tb.P
    for s in tb.sink:
        s.bp = Backpressure(1.0, 0.0)
    radix = tb.radix
    latency, throughput = {}, {}
    base = 0
    for k in P["ks"]:
        ports = list(range(radix + 1 - k, radix + 1))  # the local port and the last ones
        cfg = {"req_in": ports, "req_out": 0, "root": False, "op": P["op"],
               "dtype": P["dtype"]}
        await tb.set_collectives([cfg])
        # One element at a time: every operand sent in the same cycle.
        probes = []
        for _ in range(3):
            tb.switch_elements([cfg], 1, base)
            for e in tb.feeds:
                tb.src[e].queues[tb.p.req_vc(0)].extend((f, None) for f in tb.feeds[e])
                tb.feeds[e] = []
            await tb.run_until_done()
            probes.append(tb.result_came[(0, base)] - tb.last_left[(0, base)])
            base += 1
        assert len(set(probes)) == 1, f"k={k}: latencies {probes}"
        latency[k] = probes[0]
        want = HOP_CYCLES + engine_latency(k, radix, P["op"])
        assert latency[k] == want, f"k={k}: latency {latency[k]}, model {want}"
        # Full stream.
        tb.rate = [1.0] * len(tb.external)
        count = P.get("stream", 400)
        tb.switch_elements([cfg], count, base)
        first = base
        base += count
        await tb.run_until_done()
        came = sorted(tb.result_came[(0, first + j)] for j in range(count))
        span = came[-1] - came[20] + 1  # past the start-up
        throughput[k] = round((count - 20) / span, 4)
    await tb.drain_all()
    await tb.finish()
    cocotb.log.info("engine latency by ports: %s; elements per cycle: %s", latency, throughput)
    kit.report(latency={str(k): v for k, v in latency.items()},
                 throughput={str(k): v for k, v in throughput.items()})


@cocotb.test()
async def test_two_ids_with_p2p(dut):
    """Single switch: two ids whose ports overlap reduce at the same time while every input
    also carries p2p traffic at ``p2p_load``; random backpressure; everything accounted for."""
    tb = CengTB(dut)
    await tb.start()
    await tb.configure()
    P = tb.P
    colls = P["ids"]
    await tb.set_collectives(colls)
    tb.rate = [tb.rng.uniform(0.3, 1.0) for _ in tb.external]
    tb.switch_elements(colls, P["elements"])
    load = P.get("p2p_load", 0.5)

    def inject(tb, e):
        tb.feed(tb, e)
        if tb.src[e].pending < 8 and tb.rng.random() < load:
            tb.src[e].push(tb.new_flit(e, Kind.P2P))

    cycles = await tb.run_until_done(inject)
    await tb.drain_all()
    result = await tb.finish()
    kit.report(results=tb.results, p2p=sum(len(v) for v in tb.by_hops.values()),
                 matched=result["matched"], cycles=cycles)


@cocotb.test()
async def test_embeddings(dut):
    """A network of switches programmed with an image: every embedding's endpoints inject
    their vectors with random skew (optionally with p2p background), every delivered element
    equals the embedding's golden result."""
    tb = CengTB(dut)
    await tb.start()
    await tb.configure()
    P = tb.P
    embeddings = [Embedding.from_dict(d) for d in P["embeddings"]]
    lo, hi = P.get("rates", [0.3, 1.0])
    tb.rate = [tb.rng.uniform(lo, hi) for _ in tb.external]
    tb.network_elements(embeddings, P["elements"])
    load = P.get("p2p_load", 0.0)

    def inject(tb, e):
        tb.feed(tb, e)
        if load and tb.src[e].pending < 8 and tb.rng.random() < load:
            tb.src[e].push(tb.new_flit(e, Kind.P2P))

    cycles = await tb.run_until_done(inject)
    await tb.drain_all()
    result = await tb.finish()
    kit.report(results=tb.results, matched=result["matched"], cycles=cycles,
                 p2p=sum(len(v) for v in tb.by_hops.values()))



@cocotb.test()
async def test_network_latency(dut):
    """A network, one embedding at a time on the idle network: every contributing endpoint
    sends one element in the same cycle; the cycles until each endpoint's result arrives."""
    tb = CengTB(dut)
    await tb.start()
    await tb.configure()
    for s in tb.sink:
        s.bp = Backpressure(1.0, 0.0)
    latency = {}
    for d in tb.P["embeddings"]:
        emb = Embedding.from_dict(d)
        tb.network_elements([emb], 1)
        for e, feed in tb.feeds.items():
            tb.src[e].queues[tb.p.req_vc(emb.collective_id)].extend((f, None) for f in feed)
            feed.clear()
        start = tb.cycle
        await tb.run_until_done()
        c = emb.collective_id
        latency[str(c)] = {str(tb.external[e][0]): cycle - start
                           for (cid, _, e), cycle in tb.result_at.items() if cid == c}
        assert tb.last_left[(c, 0)] == start, "the operands did not leave in one cycle"
    await tb.drain_all()
    await tb.finish()
    kit.report(latency=latency)
