# amaranth: UnusedElaboratable=no
"""innet.hw.switch in amaranth.sim: latency, throughput, credits, routing, collectives, errors.

Small switches only (radix 2 or 3); the radix-8 switch and long random runs are in the cocotb
tests (tests/sim/test_switch_rtl.py).
"""

import random

import pytest
from amaranth import Cat, Const, Module, Mux
from amaranth.sim import Simulator

from innet.gen.regmap import port_mask
from innet.gen.regmap.switch import COLL_BURST
from innet.hw.collective import PASS_CYCLES, CollectivePath
from innet.hw.credit import LOCAL_EXTRA, MAX_DEPTH
from innet.hw.flit import Flit, FlitParams, Kind
from innet.hw.switch import (
    CREDIT_ROUND_TRIP,
    ERROR_FIELDS,
    HOP_CYCLES,
    STAGED_FLITS,
    Switch,
    SwitchCore,
    default_collective,
)
from innet.hw.testing import wrap
from innet.sim.tb.bus import sim_read, sim_write
from innet.sim.tb.links import Backpressure, LinkSink, LinkSource

RADIX = 2
LOCAL = RADIX


def small_switch(**kwargs):
    # The fabric with the pass-through collective path (requests forwarded from any port, no
    # reduction); the collective engine is tested in tests/hw/test_ceng*.py and
    # tests/sim/test_ceng_rtl.py.
    args = {"radix": RADIX, "routing_depth": 4, "collective_ids": 2, "buffer_depth": 5,
            "collective": CollectivePath}
    args.update(kwargs)
    return Switch(**args)


async def write(ctx, dut, name, **fields):
    reg = dut.regmap[name]
    await sim_write(ctx, dut.cfg, reg.address, reg.split(reg.encode(fields)))


async def read(ctx, dut, name):
    return await sim_read(ctx, dut.cfg, dut.regmap[name].address)


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


class Links:
    """Python ends of every link of ``dut``, stepped once per cycle."""

    def __init__(self, dut, rng, backpressure=None):
        p = dut.params
        self.dut = dut
        self.p = p
        ports = dut.radix + 1
        self.src = [LinkSource(p, dut.buffer_depth, rng, f"in{q}") for q in range(ports)]
        self.sink = [LinkSink(p, dut.local_depth if q == dut.radix else dut.buffer_depth, rng,
                              backpressure or Backpressure(1.0, 0.0), f"out{q}")
                     for q in range(ports)]
        self.arrivals = []  # (cycle, port, flit)
        self.departures = []  # (cycle, port, flit): on input link `port` in `cycle`
        self.cycle = 0

    async def step(self, ctx):
        dut, p = self.dut, self.p
        for q, (src, sink) in enumerate(zip(self.src, self.sink, strict=True)):
            src.credit(ctx.get(dut.i[q].credit))
            if ctx.get(dut.o[q].valid):
                flit = p.unpack(ctx.get(dut.o[q].payload.as_value()))
                sink.receive(flit)
                self.arrivals.append((self.cycle, q, flit))
            staged = [sink.expected_credits(v) - ctx.get(count)
                      for v, count in enumerate(dut.credit_counts[q])]
            assert min(staged) >= 0, (self.cycle, q, staged)
            assert sum(staged) <= STAGED_FLITS, (self.cycle, q, staged)
            ctx.set(dut.o[q].credit, sink.credits())
            sent = src.send()
            ctx.set(dut.i[q].valid, sent is not None)
            if sent is not None:
                ctx.set(dut.i[q].payload.as_value(), p.pack(sent[0]))
                self.departures.append((self.cycle, q, sent[0]))
        await ctx.tick()
        self.cycle += 1


async def random_routes(ctx, dut, rng, destinations=4):
    """Route each of ``destinations`` to a random port of ``dut``; returns the table."""
    table = {d: rng.randrange(RADIX + 1) for d in range(destinations)}
    for d, port in table.items():
        await write(ctx, dut, f"route[{d}]", port=port, valid=1)
    return table


def offer_random_p2p(links, rng, payload, table):
    """Push a p2p flit on each input with probability 0.7, to a destination of ``table``
    (destination: port) that does not send it back on the network port it came by, with a
    random hop VC on the network ports; returns the ``(input, flit)`` pushed."""
    pushed = []
    for q in range(RADIX + 1):
        onward = [d for d, port in sorted(table.items()) if q == LOCAL or port != q]
        if rng.random() < 0.7 and onward:
            hop = rng.randrange(links.p.p2p_vcs) if q < RADIX else 0
            flit = Flit.p2p(dst=rng.choice(onward), src=q, payload=payload + len(pushed),
                            hop=hop)
            links.src[q].push(flit)
            pushed.append((q, flit))
    return pushed


def test_idle_latency_is_hop_cycles_and_credit_comes_back():
    dut = small_switch()
    p = dut.params

    async def bench(ctx):
        await write(ctx, dut, "route[3]", port=0, valid=1)
        flit = Flit.p2p(dst=3, src=1, payload=0xDEADBEEF, tag=5, index=9)
        ctx.set(dut.i[LOCAL].payload.as_value(), p.pack(flit))
        ctx.set(dut.i[LOCAL].valid, 1)
        await ctx.tick()
        ctx.set(dut.i[LOCAL].valid, 0)
        seen = {}
        for cycle in range(1, 6):
            if ctx.get(dut.o[0].valid):
                seen.setdefault("flit", (cycle, p.unpack(ctx.get(dut.o[0].payload.as_value()))))
            if ctx.get(dut.i[LOCAL].credit):
                seen.setdefault("credit", (cycle, ctx.get(dut.i[LOCAL].credit)))
            await ctx.tick()
        # In on cycle 0, out on cycle 3; from the local port it keeps hop 0 on its first link.
        # The credit is on its way back from the allocation cycle: on the link in cycle 2.
        assert seen["flit"] == (HOP_CYCLES, flit)
        assert seen["credit"] == (2, 1 << p.vc(flit))

    run(dut, bench)


def test_hop_vc_increments_between_network_ports():
    dut = small_switch(p2p_vcs=2)

    async def bench(ctx):
        await write(ctx, dut, "route[2]", port=1, valid=1)
        await write(ctx, dut, "route[1]", port=LOCAL, valid=1)
        links = Links(dut, random.Random(1))
        links.src[0].push(Flit.p2p(dst=2, src=0, payload=1))           # hop 0 -> 1
        links.src[0].push(Flit.p2p(dst=2, src=0, payload=2, hop=1))    # saturates at 1
        links.src[0].push(Flit.p2p(dst=1, src=0, payload=3, hop=1))    # to local: hop 0
        for _ in range(12):
            await links.step(ctx)
        got = {flit.payload: (q, flit.hop) for _, q, flit in links.arrivals}
        assert got == {1: (1, 1), 2: (1, 1), 3: (LOCAL, 0)}

    run(dut, bench)


def test_early_links_are_the_same_cycles_with_the_register_moved():
    """A switch with early links whose network outputs are registered outside it (as a node
    with retimed links does) equals the plain switch in every cycle: random p2p traffic with
    backpressure, every link output compared (valid, payload, credit)."""
    from amaranth import Module

    from innet.hw.network import delayed

    ref, early = small_switch(p2p_vcs=2), small_switch(p2p_vcs=2, early_links=True)
    m = Module()
    m.submodules.ref, m.submodules.early = ref, early
    m.d.comb += [early.cfg.addr.eq(ref.cfg.addr), early.cfg.w_data.eq(ref.cfg.w_data),
                 early.cfg.w_en.eq(ref.cfg.w_en)]
    moved = []  # per port: the early switch's outputs, registered on the network ports
    for q in range(RADIX + 1):
        m.d.comb += [early.i[q].valid.eq(ref.i[q].valid),
                     early.i[q].payload.eq(ref.i[q].payload),
                     early.o[q].credit.eq(ref.o[q].credit)]
        stages = int(q < RADIX)
        moved.append([delayed(m, value, stages, f"moved{q}_{name}") for name, value in (
            ("valid", early.o[q].valid), ("payload", early.o[q].payload.as_value()),
            ("credit", early.i[q].credit))])
    rng = random.Random(5)

    async def bench(ctx):
        table = await random_routes(ctx, ref, rng)
        links = Links(ref, rng, Backpressure(0.6, 0.05, 8))
        for cycle in range(500):
            offer_random_p2p(links, rng, payload=cycle, table=table)
            await links.step(ctx)
            for q, got in enumerate(moved):
                want = [ref.o[q].valid, ref.o[q].payload.as_value(), ref.i[q].credit]
                assert [ctx.get(v) for v in got] == [ctx.get(v) for v in want], (cycle, q)
        assert len(links.arrivals) > 300

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.rtl
@pytest.mark.parametrize("collective", [CollectivePath, None], ids=["pass", "p2p"])
def test_one_stream_runs_at_one_flit_per_cycle(collective):
    dut = small_switch(collective=collective)

    async def bench(ctx):
        await write(ctx, dut, "route[0]", port=1, valid=1)
        links = Links(dut, random.Random(2))
        for n in range(200):
            links.src[0].push(Flit.p2p(dst=0, src=3, payload=n))
        for _ in range(210):
            await links.step(ctx)
        cycles = [c for c, _, _ in links.arrivals]
        assert [f.payload for _, _, f in links.arrivals] == list(range(200))
        assert cycles == list(range(cycles[0], cycles[0] + 200))  # no bubble

    run(dut, bench)


@pytest.mark.rtl
@pytest.mark.parametrize("collective", [CollectivePath, None], ids=["pass", "p2p"])
def test_random_traffic_with_backpressure_small_switch(collective):
    """Every flit once, at its routed port, in order per (input, VC); credits exact."""
    dut = small_switch(routing_depth=4, p2p_vcs=2, collective=collective)
    p = dut.params
    rng = random.Random(3)

    async def bench(ctx):
        table = await random_routes(ctx, dut, rng)
        links = Links(dut, rng, Backpressure(0.6, 0.05, 8))
        sent = []
        for _ in range(600):
            sent += offer_random_p2p(links, rng, payload=len(sent), table=table)
            await links.step(ctx)
        for _ in range(3000):
            if all(src.idle for src in links.src):
                break
            await links.step(ctx)
        assert all(src.idle for src in links.src)
        for _ in range(HOP_CYCLES):  # credits come back before the last flits leave
            await links.step(ctx)
        got = {f.payload: (q, f) for _, q, f in links.arrivals}
        assert len(got) == len(links.arrivals) == len(sent)
        order = {}
        for q_in, flit in sent:
            q_out, out = got[flit.payload]
            assert q_out == table[flit.dst]
            hop = 0 if q_out == LOCAL else min(flit.hop + (q_in < RADIX), p.p2p_vcs - 1)
            assert out == flit.replace(hop=hop)
            order.setdefault((q_in, flit.hop, q_out), []).append(flit.payload)
        arrival_order = {}
        for _, q, f in links.arrivals:
            arrival_order.setdefault(q, []).append(f.payload)
        for (_, _, q_out), payloads in order.items():
            seen = [x for x in arrival_order[q_out] if x in set(payloads)]
            assert seen == payloads
        assert ctx.get(dut.errors.as_value()) == 0

    run(dut, bench)


@pytest.mark.rtl
def test_root_turns_requests_into_a_multicast():
    dut = small_switch()

    async def bench(ctx):
        await write(ctx, dut, "coll[1].ctrl", enable=1)
        await write(ctx, dut, "coll[1].req_out", port=0, root=1)
        await write(ctx, dut, "coll[1].resp_out", ports=port_mask([0, 1, -1], RADIX))
        await write(ctx, dut, "coll[0].ctrl", enable=1)
        await write(ctx, dut, "coll[0].req_out", port=1, root=0)
        links = Links(dut, random.Random(4))
        links.src[LOCAL].push(Flit.request(1, index=7, payload=42))
        links.src[0].push(Flit.request(0, index=8, payload=43))
        for _ in range(8):
            await links.step(ctx)
        arrivals = sorted(links.arrivals, key=lambda a: a[1])
        resp = Flit.response(1, index=7, payload=42)
        assert [(q, f) for _, q, f in arrivals if f.cid == 1] == [(0, resp), (1, resp),
                                                                    (LOCAL, resp)]
        assert [(q, f) for _, q, f in arrivals if f.cid == 0] == [
            (1, Flit.request(0, index=8, payload=43))]
        # The pass-through issues one flit a cycle, round-robin over the ids from id 0 (and
        # over each id's ports), and offers it PASS_CYCLES after it arrived: the request of
        # id 0 first, then the response, on all three targets in one cycle (every one of them
        # has a credit).
        h = HOP_CYCLES + PASS_CYCLES
        assert [(c, f.cid) for c, _, f in sorted(arrivals)] == [(h, 0), (h + 1, 1), (h + 1, 1),
                                                                 (h + 1, 1)]

    run(dut, bench)


@pytest.mark.rtl
@pytest.mark.parametrize("streams", [[(0, LOCAL)], [(0, LOCAL), (1, 0)]], ids=["one", "two"])
def test_the_pass_through_forwards_a_flit_every_cycle(streams):
    """Request streams through the pass-through (one id from the endpoint; or two ids from two
    ports, to different outputs): one flit a cycle in all, each stream in order, the first
    PASS_CYCLES after it arrived, nothing lost."""
    dut = small_switch()
    count = 60

    async def bench(ctx):
        outs = {0: 1, 1: LOCAL}
        for cid, _ in streams:
            await write(ctx, dut, f"coll[{cid}].ctrl", enable=1)
            await write(ctx, dut, f"coll[{cid}].req_out", port=outs[cid], root=0)
        links = Links(dut, random.Random(12))
        for n in range(count):
            for cid, q in streams:
                links.src[q].push(Flit.request(cid, index=n % 2, payload=n))
        for _ in range(count * len(streams) + 20):
            await links.step(ctx)
        cycles = sorted(c for c, _, _ in links.arrivals)
        assert len(cycles) == count * len(streams)
        assert cycles[0] == HOP_CYCLES + PASS_CYCLES
        assert cycles == list(range(cycles[0], cycles[0] + len(cycles)))  # no bubble
        for cid, _ in streams:
            got = [(q, f.payload) for _, q, f in sorted(links.arrivals) if f.cid == cid]
            assert got == [(outs[cid], n) for n in range(count)]

    run(dut, bench)


def test_a_multicast_forks_and_waits_for_its_slowest_target():
    dut = small_switch()

    async def bench(ctx):
        await write(ctx, dut, "coll[0].ctrl", enable=1)
        await write(ctx, dut, "coll[0].resp_out", ports=port_mask([0, 1], RADIX))
        links = Links(dut, random.Random(5))
        for n in range(10):
            links.src[LOCAL].push(Flit.response(0, index=n, payload=n))
        # Port 1 returns no credits: after its buffer depth of flits the multicast stops. The
        # next flit leaves on port 0, which has credits, and waits for port 1; the one after
        # it waits behind it.
        links.sink[1].bp = Backpressure(0.0, 0.0)
        for _ in range(20):
            await links.step(ctx)
        per_port = [sum(1 for _, q, _ in links.arrivals if q == port) for port in (0, 1)]
        assert per_port == [dut.buffer_depth + 1, dut.buffer_depth]
        links.sink[1].bp = Backpressure(1.0, 0.0)
        for _ in range(20):
            await links.step(ctx)
        for port in (0, 1):
            assert [f.index for _, q, f in links.arrivals if q == port] == list(range(10))

    run(dut, bench)


@pytest.mark.rtl
def test_collective_overtakes_p2p_at_a_busy_output():
    """Both inputs flood output 1 with p2p; requests still cross in the minimum cycles."""
    dut = small_switch()
    rng = random.Random(6)

    async def bench(ctx):
        await write(ctx, dut, "route[0]", port=1, valid=1)
        await write(ctx, dut, "coll[0].ctrl", enable=1)
        await write(ctx, dut, "coll[0].req_out", port=1)
        links = Links(dut, rng)
        serial = 0
        for _ in range(300):
            for q in (0, LOCAL):
                if links.src[q].pending < 8:
                    links.src[q].push(Flit.p2p(dst=0, src=q, payload=serial))
                    serial += 1
            if rng.random() < 0.1:
                links.src[0].push(Flit.request(0, index=0, payload=serial))
                serial += 1
            await links.step(ctx)
        for _ in range(60):
            await links.step(ctx)
        left = {f.payload: c for c, _, f in links.departures}
        came = {f.payload: c for c, _, f in links.arrivals}
        reqs = [f.payload for _, _, f in links.departures if f.kind is Kind.REQ]
        p2p = [f.payload for _, _, f in links.departures if f.kind is Kind.P2P]
        assert len(came) == len(left)
        assert len(reqs) > 20
        # Output 1 is offered two p2p flits per cycle, yet every request crosses in the
        # minimum: HOP_CYCLES and its PASS_CYCLES in the pass-through.
        assert {came[r] - left[r] for r in reqs} == {HOP_CYCLES + PASS_CYCLES}
        assert max(came[x] - left[x] for x in p2p) > HOP_CYCLES
        # Overtaking: p2p flits that entered before a request and left after it.
        overtaken = sum(1 for r in reqs for x in p2p if left[x] < left[r] and came[x] > came[r])
        assert overtaken > 20

    run(dut, bench)


async def responses_to_port0_p2p_to_port1(ctx, dut):
    """Id 0's responses leave on port 0; p2p flits for node 0 on port 1."""
    await write(ctx, dut, "route[0]", port=1, valid=1)
    await write(ctx, dut, "coll[0].ctrl", enable=1)
    await write(ctx, dut, "coll[0].resp_out", ports=port_mask([0], RADIX))


def test_a_busy_fork_takes_no_bandwidth_from_other_inputs():
    """The local input multicasts a stream of responses to port 0 and holds p2p flits for
    port 1, and input 0 floods port 1 with p2p flits. While the local input's fork asks, its
    p2p flit cannot go (one flit per input and cycle), and it takes none of port 1's cycles:
    port 1 carries a flit of input 0 in every cycle of the response stream. Every flit leaves
    once, in order per input."""
    dut = small_switch()

    async def bench(ctx):
        await responses_to_port0_p2p_to_port1(ctx, dut)
        links = Links(dut, random.Random(7))
        for n in range(40):
            links.src[LOCAL].push(Flit.response(0, index=n, payload=n))
        for n in range(8):
            links.src[LOCAL].push(Flit.p2p(dst=0, src=LOCAL, payload=1000 + n))
        sent = 0
        for _ in range(120):
            if links.src[0].pending < 8:
                links.src[0].push(Flit.p2p(dst=0, src=0, payload=sent))
                sent += 1
            await links.step(ctx)
        for _ in range(40):
            await links.step(ctx)
        responses = [c for c, q, f in links.arrivals if q == 0 and f.kind is Kind.RESP]
        # Unchanged, p2p fields zero, though the input's p2p flits wait beside them.
        assert [f for _, q, f in links.arrivals if q == 0] == [
            Flit.response(0, index=n, payload=n) for n in range(40)]
        on_port1 = {c: f for c, q, f in links.arrivals if q == 1}
        assert [f.payload for f in on_port1.values() if f.src == 0] == list(range(sent))
        assert [f.payload for f in on_port1.values() if f.src == LOCAL] == [
            1000 + n for n in range(8)]
        window = range(responses[0] + 1, responses[-1])
        assert len(window) > 30
        assert [c for c in window if c not in on_port1] == []

    run(dut, bench)


def test_a_fork_waiting_for_a_credit_keeps_its_inputs_p2p_flit_waiting():
    """The local input's fork holds a response whose target (port 0) returns no credits, and
    p2p flits for port 1 wait behind it on the same input: the input's turn is its fork's
    while the fork holds a flit, so none of them leaves while the fork waits, though port 1
    is free. When port 0's credits come back every flit leaves once, in order, the p2p flits
    right after the last response."""
    dut = small_switch()

    async def bench(ctx):
        await responses_to_port0_p2p_to_port1(ctx, dut)
        links = Links(dut, random.Random(3))
        links.sink[0].bp = Backpressure(0.0, 0.0)
        count = dut.buffer_depth + 3
        for n in range(count):
            links.src[LOCAL].push(Flit.response(0, index=n, payload=n))
        for _ in range(20):
            await links.step(ctx)
        # Port 0 has taken its buffer depth of responses; the fork holds the next one.
        assert [f.index for _, q, f in links.arrivals if q == 0] == list(range(dut.buffer_depth))
        for n in range(4):
            links.src[LOCAL].push(Flit.p2p(dst=0, src=LOCAL, payload=100 + n))
        for _ in range(30):
            await links.step(ctx)
        assert len(links.departures) == count + 4
        assert [f for _, q, f in links.arrivals if q == 1] == []
        links.sink[0].bp = Backpressure(1.0, 0.0)
        for _ in range(40):
            await links.step(ctx)
        assert [f.index for _, q, f in links.arrivals if q == 0] == list(range(count))
        on_port1 = [(c, f.payload) for c, q, f in links.arrivals if q == 1]
        assert [x for _, x in on_port1] == [100 + n for n in range(4)]
        last_response = max(c for c, q, _ in links.arrivals if q == 0)
        assert on_port1[0][0] <= last_response + 1

    run(dut, bench)


def test_a_route_written_applies_to_every_input():
    """Each input looks routes up in its own copy of the table: a write reaches them all, and
    the flits that arrive after it follow it."""
    dut = small_switch()

    async def bench(ctx):
        links = Links(dut, random.Random(11))
        rounds = [(0, 1), (1, LOCAL), (2, 0)]  # (round, port of route[3])
        # Every input but the route's own network port (that flit would turn back).
        senders = {n: [q for q in range(RADIX + 1) if q != port or q == LOCAL]
                   for n, port in rounds}
        for n, port in rounds:
            await write(ctx, dut, "route[3]", port=port, valid=1)
            for q in senders[n]:
                links.src[q].push(Flit.p2p(dst=3, src=q, payload=n * 10 + q))
            for _ in range(12):
                await links.step(ctx)
        got = sorted((flit.payload, q) for _, q, flit in links.arrivals)
        assert got == [(n * 10 + q, port) for n, port in rounds for q in senders[n]]
        assert ctx.get(dut.errors.no_route) == 0
        await write(ctx, dut, "route[3]", port=0, valid=0)
        links.src[1].push(Flit.p2p(dst=3, src=1, payload=99))
        for _ in range(8):
            await links.step(ctx)
        assert len(links.arrivals) == len(got)
        assert ctx.get(dut.errors.no_route) == 1

    run(dut, bench)


@pytest.mark.parametrize("collective", [CollectivePath, None], ids=["pass", "p2p"])
def test_no_flit_turns_back_on_the_link_it_came_by(collective):
    """A p2p flit whose route names the network port it arrived on is discarded as having no
    route (its credit comes back); the same destination from the other ports, and a flit of
    the endpoint routed back to the endpoint, cross. A response leaves on every port of its
    id's ``resp_out`` but the one it came by."""
    dut = small_switch(collective=collective)

    async def bench(ctx):
        links = Links(dut, random.Random(8))
        await write(ctx, dut, "route[3]", port=0, valid=1)
        await write(ctx, dut, "route[1]", port=LOCAL, valid=1)
        links.src[0].push(Flit.p2p(dst=3, src=0, payload=1))
        for _ in range(6):
            await links.step(ctx)
        assert links.arrivals == []
        assert links.src[0].idle
        assert ctx.get(dut.errors.no_route) == 1
        await write(ctx, dut, "errors", no_route=1)
        links.src[1].push(Flit.p2p(dst=3, src=1, payload=2))
        links.src[LOCAL].push(Flit.p2p(dst=3, src=2, payload=3))
        links.src[LOCAL].push(Flit.p2p(dst=1, src=2, payload=4))
        for _ in range(8):
            await links.step(ctx)
        got = sorted((flit.payload, q) for _, q, flit in links.arrivals)
        assert got == [(2, 0), (3, 0), (4, LOCAL)]
        assert ctx.get(dut.errors.no_route) == 0
        if collective is None:
            return
        links.arrivals.clear()
        await write(ctx, dut, "coll[0].resp_out", ports=0b111)
        await write(ctx, dut, "coll[0].ctrl", enable=1, op=0, dtype=0)
        links.src[1].push(Flit.response(0, index=5, payload=6))
        for _ in range(8):
            await links.step(ctx)
        assert sorted(q for _, q, _ in links.arrivals) == [0, LOCAL]
        assert all(src.idle for src in links.src)

    run(dut, bench)


def test_no_route_is_discarded_and_flagged():
    dut = small_switch()
    p = dut.params

    async def bench(ctx):
        links = Links(dut, random.Random(7))
        links.src[0].push(Flit.p2p(dst=2, src=0, payload=1))  # route[2] not valid
        for _ in range(6):
            await links.step(ctx)
        assert links.arrivals == []
        assert links.src[0].idle  # the credit came back
        assert ctx.get(dut.errors.no_route) == 1
        assert ctx.get(dut.errors.bad_vc) == 0
        ctx.set(dut.i[1].payload.as_value(), 3 << p.offsets["kind"])
        ctx.set(dut.i[1].valid, 1)
        await ctx.tick()
        ctx.set(dut.i[1].valid, 0)
        await ctx.tick()
        assert ctx.get(dut.errors.bad_vc) == 1

    run(dut, bench)


def test_a_route_to_a_port_above_the_radix_is_no_route():
    """The table holds port numbers: a valid entry naming a port the switch does not have (a
    raw bus write, past the register model's check) decodes to no output, so the flit is
    discarded and flagged like one with no entry; rewritten in range, the route works."""
    dut = small_switch()
    reg = dut.regmap["route[3]"]
    port, valid = reg.field("port"), reg.field("valid")
    assert (1 << port.width) - 1 > RADIX  # a port number above the radix is representable

    async def bench(ctx):
        links = Links(dut, random.Random(5))
        word = (1 << port.width) - 1 << port.offset | 1 << valid.offset
        await sim_write(ctx, dut.cfg, reg.address, reg.split(word))
        links.src[LOCAL].push(Flit.p2p(dst=3, src=2, payload=7))
        for _ in range(6):
            await links.step(ctx)
        assert links.arrivals == []
        assert links.src[LOCAL].idle  # the credit came back
        assert ctx.get(dut.errors.no_route) == 1
        await write(ctx, dut, "route[3]", port=1, valid=1)
        links.src[LOCAL].push(Flit.p2p(dst=3, src=2, payload=8))
        for _ in range(8):
            await links.step(ctx)
        assert [(q, flit.payload) for _, q, flit in links.arrivals] == [(1, 8)]

    run(dut, bench)


def test_a_p2p_switch_discards_collective_flits_and_returns_their_credits():
    """Without a collective path, request and response flits are discarded (``coll_drop``)
    and their credits come back, while p2p flits beside them still cross in HOP_CYCLES."""
    dut = small_switch(collective=None)
    p = dut.params

    async def bench(ctx):
        await write(ctx, dut, "route[1]", port=0, valid=1)
        await write(ctx, dut, "coll[0].ctrl", enable=1, op=0, dtype=0)
        await write(ctx, dut, "coll[0].resp_out", ports=port_mask([0, 1, -1], RADIX))
        await write(ctx, dut, "coll[0].req_in", ports=port_mask([0, 1, -1], RADIX))
        links = Links(dut, random.Random(5))
        for n, make in enumerate([Flit.response, Flit.request]):
            for q in range(RADIX + 1):
                links.src[q].push(make(cid=0, index=q, payload=q))
            links.src[1].push(Flit.p2p(dst=1, src=1, payload=n))
            for _ in range(12):
                await links.step(ctx)
            assert [(q, f.payload) for _, q, f in links.arrivals] == [(0, n)]
            assert all(src.idle for src in links.src)  # every credit came back
            errors = {name: ctx.get(getattr(dut.errors, name)) for name in ERROR_FIELDS}
            assert errors == {name: int(name == "coll_drop") for name in ERROR_FIELDS}
            await write(ctx, dut, "errors", coll_drop=1)
            links.arrivals.clear()
        assert [len(row) for row in dut.credit_counts] == [p.p2p_vcs] * (RADIX + 1)
        # A credit on a VC the switch never sends on breaks the protocol.
        ctx.set(dut.o[1].credit, 1 << p.resp_vc)
        await ctx.tick()
        ctx.set(dut.o[1].credit, 0)
        await ctx.tick()
        assert ctx.get(dut.errors.credit) == 1

    run(dut, bench)


@pytest.mark.rtl
def test_register_changes_apply_to_the_next_flit():
    dut = small_switch()
    p = dut.params

    async def bench(ctx):
        await write(ctx, dut, "route[1]", port=0, valid=1)
        assert await read(ctx, dut, "route[1]") == dut.regmap["route[1]"].encode(
            {"port": 0, "valid": 1})
        ctx.set(dut.i[LOCAL].payload.as_value(), p.pack(Flit.p2p(1, 0, 5)))
        ctx.set(dut.i[LOCAL].valid, 1)
        # The write and a flit in the same cycle: the flit still sees the old entry; the next
        # flit sees the new one.
        reg = dut.regmap["route[1]"]
        ctx.set(dut.cfg.addr, reg.address)
        ctx.set(dut.cfg.w_data, reg.encode({"port": 1, "valid": 1}))
        ctx.set(dut.cfg.w_en, 1)
        await ctx.tick()
        ctx.set(dut.cfg.w_en, 0)
        ctx.set(dut.i[LOCAL].payload.as_value(), p.pack(Flit.p2p(1, 0, 6)))
        await ctx.tick()
        ctx.set(dut.i[LOCAL].valid, 0)
        out = {}
        for _ in range(4):
            for q in (0, 1):
                if ctx.get(dut.o[q].valid):
                    out[p.unpack(ctx.get(dut.o[q].payload.as_value())).payload] = q
            await ctx.tick()
        assert out == {5: 0, 6: 1}

    run(dut, bench)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"radix": 0}, ValueError, "Radix must be at least 1, not 0"),
    ({"radix": 1025}, ValueError, "Radix must be at most 1024, not 1025"),
    ({"radix": 2, "buffer_depth": 10**20}, ValueError,
     "Buffer depth must be at most 4096, not 100000000000000000000"),
    ({"radix": 2.5}, TypeError, "Radix must be an integer, not 2.5"),
    ({"radix": 2, "payload_width": 0}, ValueError,
     "Payload width must be between 1 and 1024, not 0"),
    ({"radix": 2, "buffer_depth": 2}, ValueError,
     (f"Buffer depth must be at least {CREDIT_ROUND_TRIP} \\(the credit round trip\\) for "
      "full throughput, not 2")),
    ({"radix": 2, "buffer_depth": 0}, ValueError, "Buffer depth must be at least 1, not 0"),
    ({"radix": 2, "collective_ids": 0}, ValueError,
     "Collective ids must be between 1 and 256, not 0"),
    ({"radix": 2, "routing_depth": 0}, ValueError,
     "Routing depth must be between 1 and 65536, not 0"),
    ({"radix": 2, "local_depth": 0}, ValueError, "Local depth must be at least 1, not 0"),
    ({"radix": 2, "collective": 3}, TypeError,
     "Collective must be a callable building the collective path, or None, not 3"),
    ({"radix": 2, "early_links": 1}, TypeError, "Early links must be a bool, not 1"),
])
def test_parameter_errors(kwargs, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        Switch(**kwargs)


def test_numpy_integers_build_the_same_switch():
    import numpy as np

    switch = Switch(np.int64(2), buffer_depth=np.uint16(8), local_depth=np.int32(6))
    assert (switch.radix, switch.buffer_depth, switch.local_depth) == (2, 8, 6)
    assert all(type(v) is int for v in (switch.radix, switch.buffer_depth, switch.local_depth))


@pytest.mark.parametrize(("collective", "extra"), [
    (None, 0), (CollectivePath, LOCAL_EXTRA), (default_collective, LOCAL_EXTRA)])
def test_local_depth_defaults_to_a_result_per_cycle_from_the_collective_path(collective, extra):
    """The endpoint's receive buffer (the local output's credits) defaults to the buffer depth,
    and with a collective path to :data:`LOCAL_EXTRA` more: the root's results are offered a
    cycle before they can leave. An endpoint built for the switch takes the same depth."""
    from innet.hw.endpoint import Endpoint

    switch = Switch(2, buffer_depth=7, collective_ids=1, routing_depth=4, collective=collective)
    assert switch.local_depth == 7 + extra
    assert Endpoint.for_switch(switch, vector_depth=16).local_depth == switch.local_depth
    for depth in (CREDIT_ROUND_TRIP, 9):
        endpoint = Endpoint(switch.params, vector_depth=16, buffer_depth=depth)
        assert endpoint.local_depth == depth + LOCAL_EXTRA
    # The deepest buffer leaves room for the longer loop: the default stays within MAX_DEPTH.
    deepest = Switch(2, buffer_depth=MAX_DEPTH, collective_ids=1, routing_depth=4,
                     collective=collective)
    assert deepest.local_depth == MAX_DEPTH
    assert Endpoint(switch.params, vector_depth=16, buffer_depth=MAX_DEPTH).local_depth == \
        MAX_DEPTH


def test_core_parameter_errors():
    with pytest.raises(TypeError, match=r"^Params must be a FlitParams, not 32$"):
        SwitchCore(2, 32)
    with pytest.raises(ValueError, match=r"^Radix must be at most 1024, not 100000$"):
        SwitchCore(100000, FlitParams())
    with pytest.raises(ValueError, match=rf"^Buffer depth must be at least {CREDIT_ROUND_TRIP} "
                                         r"\(the credit round trip\) for full throughput, not 3$"):
        SwitchCore(2, FlitParams(), 3)


def test_switch_reports_its_parameters():
    s = Switch(8, payload_width=16, collective_ids=3, routing_depth=13)
    assert s.params == FlitParams(payload_width=16, routing_depth=13, collective_ids=3)
    assert s.regmap.params == {"radix": 8, "collective_ids": 3, "routing_depth": 13,
                               "node_id_width": 4}
    assert len(s.i) == len(s.o) == 9


def test_error_flags_read_and_clear_through_the_bus():
    """The sticky flags are the RW1C ``errors`` register: software reads them, a 0 written
    leaves them, a 1 clears only its flag, and a flag raised again reads back."""
    dut = small_switch()
    p = dut.params
    reg = dut.regmap["errors"]

    async def bench(ctx):
        links = Links(dut, random.Random(7))
        assert reg.decode(await read(ctx, dut, "errors")) == dict.fromkeys(ERROR_FIELDS, 0)
        links.src[0].push(Flit.p2p(dst=2, src=0, payload=1))  # route[2] not valid
        for _ in range(6):
            await links.step(ctx)
        ctx.set(dut.i[1].payload.as_value(), 3 << p.offsets["kind"])  # no VC: bad_vc
        ctx.set(dut.i[1].valid, 1)
        await ctx.tick()
        ctx.set(dut.i[1].valid, 0)
        await ctx.tick()
        both = {**dict.fromkeys(ERROR_FIELDS, 0), "no_route": 1, "bad_vc": 1}
        assert reg.decode(await read(ctx, dut, "errors")) == both
        await write(ctx, dut, "errors")  # all zeros: nothing cleared
        assert reg.decode(await read(ctx, dut, "errors")) == both
        assert ctx.get(dut.errors.no_route) == 1
        await write(ctx, dut, "errors", no_route=1)
        assert reg.decode(await read(ctx, dut, "errors")) == {**both, "no_route": 0}
        assert (ctx.get(dut.errors.no_route), ctx.get(dut.errors.bad_vc)) == (0, 1)
        await write(ctx, dut, "errors", bad_vc=1)
        assert await read(ctx, dut, "errors") == 0
        assert ctx.get(dut.errors.as_value()) == 0
        links.src[0].push(Flit.p2p(dst=3, src=0, payload=2))  # route[3] not valid either
        for _ in range(6):
            await links.step(ctx)
        assert reg.decode(await read(ctx, dut, "errors"))["no_route"] == 1

    run(dut, bench)


@pytest.mark.rtl
@pytest.mark.parametrize("burst", [0, 1, 2, 4, COLL_BURST, 15])
def test_p2p_keeps_its_floor_under_saturating_collective_traffic(burst):
    """Requests of id 0 from port 0 and p2p flits from the local port both want output 1 every
    cycle: p2p gets one cycle in ``burst + 1`` of it (none with the floor off), collective
    traffic the rest, and the output never idles."""
    dut = small_switch()
    window = 240

    async def bench(ctx):
        await write(ctx, dut, "route[0]", port=1, valid=1)
        await write(ctx, dut, "coll[0].ctrl", enable=1)
        await write(ctx, dut, "coll[0].req_out", port=1)
        await write(ctx, dut, "coll_burst", cycles=burst)
        links = Links(dut, random.Random(7), Backpressure(1.0, 0.0))
        serial = 0
        for _ in range(window + 40):
            for q, make in ((0, Flit.request), (LOCAL, Flit.p2p)):
                if links.src[q].pending < 8:
                    flit = make(0, index=0, payload=serial) if q == 0 else make(
                        dst=0, src=3, payload=serial)
                    links.src[q].push(flit)
                    serial += 1
            await links.step(ctx)
        seen = [f.kind for c, q, f in links.arrivals if q == 1 and 40 <= c < 40 + window]
        assert len(seen) == window
        p2p = seen.count(Kind.P2P)
        if burst == 0:
            assert p2p == 0
        else:
            assert window // (burst + 1) <= p2p <= -(-window // (burst + 1))
            runs = "".join("p" if kind is Kind.P2P else "c" for kind in seen).split("p")
            assert max(len(run) for run in runs) == burst

    run(dut, bench)


def test_every_hop_vc_crosses_an_idle_switch_in_hop_cycles():
    """A flit on either p2p VC, from a network port, alone in the switch: out after HOP_CYCLES
    whichever VC the input offered last."""
    dut = small_switch()
    p = dut.params

    async def bench(ctx):
        await write(ctx, dut, "route[3]", port=1, valid=1)
        for hop in (1, 0, 1, 1, 0, 0):
            flit = Flit.p2p(dst=3, src=1, payload=hop, hop=hop)
            ctx.set(dut.i[0].payload.as_value(), p.pack(flit))
            ctx.set(dut.i[0].valid, 1)
            await ctx.tick()
            ctx.set(dut.i[0].valid, 0)
            seen = None
            for cycle in range(1, 8):
                if seen is None and ctx.get(dut.o[1].valid):
                    seen = cycle
                ctx.set(dut.o[1].credit, ctx.get(dut.o[1].valid) << p.vc(flit.replace(hop=1)))
                await ctx.tick()
            ctx.set(dut.o[1].credit, 0)
            assert seen == HOP_CYCLES, (hop, seen)

    run(dut, bench)


def test_a_busy_collective_id_refuses_reconfiguration():
    """The configuration interlock, through the bus: id 0 (reducing ports 0 and 1 at the root,
    the result to the local port) holds one operand, so it is busy; writes to its registers
    are refused and flagged (``coll_config``) and read back unchanged, while its ``abort``
    stays writable; the element then completes with the operation it started with. Quiet
    again, the id takes a new configuration; a ``ctrl`` that enables an operation its data
    type does not define is refused even then."""
    from innet.gen.ops import DType, Op

    dut = Switch(RADIX, routing_depth=4, collective_ids=2, buffer_depth=5)

    async def bench(ctx):
        await write(ctx, dut, "coll[0].req_in", ports=port_mask([0, 1], RADIX))
        await write(ctx, dut, "coll[0].req_out", port=0, root=1)
        await write(ctx, dut, "coll[0].resp_out", ports=port_mask([-1], RADIX))
        await write(ctx, dut, "coll[0].ctrl", enable=1, op=Op.MAX, dtype=DType.INT32)
        ctrl = await read(ctx, dut, "coll[0].ctrl")
        links = Links(dut, random.Random(5))
        links.src[0].push(Flit.request(0, index=3, payload=5))
        for _ in range(6):
            await links.step(ctx)
        status = dut.regmap["coll[0].status"]
        assert status.decode(await read(ctx, dut, "coll[0].status"))["busy"] == 1
        await write(ctx, dut, "coll[0].ctrl", enable=1, op=Op.MIN, dtype=DType.INT32)
        await write(ctx, dut, "coll[0].resp_out", ports=port_mask([0], RADIX))
        assert await read(ctx, dut, "coll[0].ctrl") == ctrl
        assert await read(ctx, dut, "coll[0].resp_out") == port_mask([-1], RADIX)
        errors = dut.regmap["errors"]
        assert errors.decode(await read(ctx, dut, "errors"))["coll_config"] == 1
        links.src[1].push(Flit.request(0, index=3, payload=9))
        for _ in range(30):
            await links.step(ctx)
        assert [(q, f) for _, q, f in links.arrivals] == [
            (LOCAL, Flit.response(0, index=3, payload=9))]  # MAX, as it started
        assert status.decode(await read(ctx, dut, "coll[0].status"))["busy"] == 0
        await write(ctx, dut, "errors", coll_config=1)
        await write(ctx, dut, "coll[0].ctrl", enable=1, op=Op.MIN, dtype=DType.INT32)
        assert dut.regmap["coll[0].ctrl"].decode(
            await read(ctx, dut, "coll[0].ctrl"))["op"] == Op.MIN
        await write(ctx, dut, "coll[1].ctrl", enable=1, op=Op.AND, dtype=DType.FP32)
        assert await read(ctx, dut, "coll[1].ctrl") == 0
        assert errors.decode(await read(ctx, dut, "errors"))["coll_config"] == 1

    run(dut, bench)


@pytest.mark.parametrize(("collective", "accepted"), [
    ("engine", False), ("engine-mul", True), ("pass", True)])
def test_mul_is_refused_at_write_by_an_engine_without_multipliers(collective, accepted):
    """A ``ctrl`` write enabling ``mul`` is refused and flagged (``coll_config``) by a switch
    whose engine has no multiplier, and taken by one whose engine has it and by the
    pass-through (which never reduces); ``add`` is taken by all three."""
    from innet.gen.ops import DType, Op
    from innet.hw.variants import switch_collective

    builder = switch_collective(collective.removesuffix("-mul"), mul=collective.endswith("-mul"))
    dut = Switch(RADIX, routing_depth=4, collective_ids=2, buffer_depth=5, collective=builder)
    ctrl, errors = dut.regmap["coll[1].ctrl"], dut.regmap["errors"]

    async def bench(ctx):
        await write(ctx, dut, "coll[1].ctrl", enable=1, op=Op.MUL, dtype=DType.INT32)
        got = ctrl.decode(await read(ctx, dut, "coll[1].ctrl"))
        assert (got["enable"], got["op"]) == ((1, Op.MUL) if accepted else (0, 0))
        assert errors.decode(await read(ctx, dut, "errors"))["coll_config"] == (not accepted)
        await write(ctx, dut, "coll[0].ctrl", enable=1, op=Op.ADD, dtype=DType.FP32)
        assert ctrl.decode(await read(ctx, dut, "coll[0].ctrl"))["op"] == Op.ADD

    run(dut, bench)


def test_the_watchdog_names_the_missing_port_and_abort_clears_it():
    """Through the bus: ``coll_timeout`` cycles after id 1's operand on port 1 arrived
    without the local port's, ``errors.coll_timeout`` and ``coll[1].status.timed_out`` are set
    and ``coll[1].missing`` names the local port; ``coll[1].abort``, held until the status
    reads quiet, drains the id and clears the watchdog."""
    dut = Switch(RADIX, routing_depth=4, collective_ids=2, buffer_depth=5)

    async def bench(ctx):
        await write(ctx, dut, "coll_timeout", cycles=30)
        await write(ctx, dut, "coll[1].req_in", ports=port_mask([1, -1], RADIX))
        await write(ctx, dut, "coll[1].req_out", port=0, root=0)
        await write(ctx, dut, "coll[1].ctrl", enable=1)
        links = Links(dut, random.Random(6))
        links.src[1].push(Flit.request(1, index=0, payload=1))
        for _ in range(20):
            await links.step(ctx)
        status, errors = dut.regmap["coll[1].status"], dut.regmap["errors"]
        assert status.decode(await read(ctx, dut, "coll[1].status")) == {"busy": 1,
                                                                        "timed_out": 0}
        for _ in range(20):
            await links.step(ctx)
        assert status.decode(await read(ctx, dut, "coll[1].status")) == {"busy": 1,
                                                                        "timed_out": 1}
        assert await read(ctx, dut, "coll[1].missing") == port_mask([-1], RADIX)
        assert errors.decode(await read(ctx, dut, "errors"))["coll_timeout"] == 1
        await write(ctx, dut, "coll[1].abort", drain=1)  # held until the id is quiet
        for _ in range(10):
            if not status.decode(await read(ctx, dut, "coll[1].status"))["busy"]:
                break
        await write(ctx, dut, "coll[1].abort", drain=0)
        assert status.decode(await read(ctx, dut, "coll[1].status")) == {"busy": 0,
                                                                        "timed_out": 0}
        assert await read(ctx, dut, "coll[1].missing") == 0
        assert links.arrivals == []

    run(dut, bench)



def run_chaos(dut, rng):
    """Random p2p, request and response flits on every input of ``dut`` (radix 2, two ids)
    under backpressure, while a second testbench writes random collective configurations
    through the bus and raises and drops random aborts; at the end every id is aborted until
    quiet and disabled. Asserts that no credit is duplicated (by the senders, :class:`Links`)
    or lost (every sender idle at the end), that no output sends without a credit (the
    receivers) and that every p2p flit arrives exactly once, on its routed port."""
    from innet.gen.ops import DType, Op

    ids, ports = dut.params.collective_ids, RADIX + 1
    state = {"traffic": True, "done": False}
    table = {}

    async def configure(ctx):
        table.update(await random_routes(ctx, dut, rng))
        state["links"] = Links(dut, rng, Backpressure(0.6, 0.05, 8))
        while state["traffic"]:
            for _ in range(rng.randrange(1, 8)):
                await ctx.tick()
            c, pick = rng.randrange(ids), rng.randrange(7)
            if pick == 0:
                await write(ctx, dut, f"coll[{c}].ctrl", enable=rng.randrange(2),
                            op=rng.choice(list(Op)), dtype=rng.choice(list(DType)))
            elif pick in (1, 6):
                await write(ctx, dut, f"coll[{c}].req_in", ports=rng.randrange(1 << ports))
            elif pick == 2:
                await write(ctx, dut, f"coll[{c}].req_out", port=rng.randrange(ports),
                            root=rng.randrange(2))
            elif pick == 3:
                await write(ctx, dut, f"coll[{c}].resp_out", ports=rng.randrange(1 << ports))
            else:
                await write(ctx, dut, f"coll[{c}].abort", drain=rng.randrange(2))
        for c in range(ids):
            await write(ctx, dut, f"coll[{c}].abort", drain=1)
        status = dut.regmap["coll[0].status"]
        for _ in range(3000):
            busy = [status.decode(await read(ctx, dut, f"coll[{c}].status"))["busy"]
                    for c in range(ids)]
            if not any(busy) and all(src.idle for src in state["links"].src):
                break
        for c in range(ids):
            await write(ctx, dut, f"coll[{c}].ctrl", enable=0)
            await write(ctx, dut, f"coll[{c}].abort", drain=0)
        state["done"] = True

    async def traffic(ctx):
        while "links" not in state:
            await ctx.tick()
        links = state["links"]
        sent = []
        for _ in range(2500):
            if rng.random() < 0.4:
                sent += offer_random_p2p(links, rng, payload=len(sent), table=table)
            for q in range(ports):
                if rng.random() < 0.3:
                    make = Flit.request if rng.random() < 0.7 else Flit.response
                    links.src[q].push(make(rng.randrange(ids), index=rng.randrange(4),
                                           payload=rng.getrandbits(32)))
            await links.step(ctx)
        state["traffic"] = False
        while not state["done"]:
            await links.step(ctx)
        for _ in range(2 * HOP_CYCLES):
            await links.step(ctx)
        lost = [src.credits for src in links.src if not src.idle]
        assert not lost, f"credits lost: {lost} of {[src.depth for src in links.src]}"
        p2p = [(q, f) for _, q, f in links.arrivals if f.kind == Kind.P2P]
        got = {f.payload: q for q, f in p2p}
        assert len(got) == len(p2p) == len(sent)
        assert all(got[flit.payload] == table[flit.dst] for _, flit in sent)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(configure)
    sim.add_testbench(traffic)
    sim.run()


@pytest.mark.rtl
@pytest.mark.parametrize(("collective", "seed"), [
    ("engine", 0), ("engine", 3), ("pass", 11), ("p2p", 11)])
def test_reconfiguration_and_aborts_under_traffic_keep_every_credit(collective, seed):
    """:func:`run_chaos` on the switch with its engine, with the pass-through and without a
    collective path: the interlock refuses the writes to busy ids, from the cycle a flit of
    the id arrives, so nothing a running switch is told loses or duplicates a credit or a p2p
    flit. (With an interlock that saw an arriving flit only two cycles later, the engine
    returned a credit twice on seed 0 and lost four on seed 3.)"""
    args = {"engine": {}, "pass": {"collective": CollectivePath}, "p2p": {"collective": None}}
    run_chaos(Switch(RADIX, routing_depth=4, collective_ids=2, buffer_depth=5,
                     **args[collective]), random.Random(seed))


class _PopMutant(CollectivePath):
    """The pass-through with its credits (``req_pop``) changed by :meth:`pops`."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = CollectivePath(self.params, self.radix, self.depth)
        wrap(m, self, inner, {("req_pop", c): self.pops(c, inner)
                              for c in range(self.params.collective_ids)})
        return m


class LosesCreditsOnAbort(_PopMutant):
    """The credits of the flits an abort discards never go back."""

    def pops(self, c, inner):
        return Mux(self.abort[c], 0, inner.req_pop[c])


class ReturnsArrivalsOnAbort(_PopMutant):
    """A request flit arriving while its id aborts returns a credit at once, and again when it
    is discarded."""

    def pops(self, c, inner):
        arriving = Cat(r.valid & (r.payload.cid == c) for r in self.req)
        return inner.req_pop[c] | Mux(self.abort[c], arriving, 0)


class NoInterlock(Switch):
    """Writes to an enabled, busy collective id are taken: its configuration changes under the
    flits the engine holds."""

    def _refused(self, bus, cfg, busy, mul):
        return super()._refused(bus, cfg, Const(0, len(busy)), mul)


@pytest.mark.rtl
def test_the_chaos_run_catches_a_switch_without_its_interlock():
    with pytest.raises(AssertionError, match=r"got a credit back beyond its depth 5 "
                                             r"\(a duplicated credit\)$"):
        run_chaos(NoInterlock(RADIX, routing_depth=4, collective_ids=2, buffer_depth=5),
                  random.Random(11))


@pytest.mark.rtl
@pytest.mark.parametrize(("mutant", "message"), [
    (LosesCreditsOnAbort, r"^credits lost: "),
    (ReturnsArrivalsOnAbort, r"got a credit back beyond its depth 5 \(a duplicated credit\)$"),
])
def test_the_chaos_run_catches_a_lost_and_a_duplicated_credit(mutant, message):
    with pytest.raises(AssertionError, match=message):
        run_chaos(Switch(RADIX, routing_depth=4, collective_ids=2, buffer_depth=5,
                         collective=mutant), random.Random(11))
