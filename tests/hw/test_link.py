# amaranth: UnusedElaboratable=no
"""innet.hw.link: LinkSender into LinkReceiver with random traffic and random pops."""

import random

import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from innet.hw.flit import Flit, FlitParams, Kind
from innet.hw.link import LinkReceiver, LinkSender

P = FlitParams(routing_depth=4, collective_ids=2, p2p_vcs=2)


def pair(depth, inputs):
    m = Module()
    m.submodules.tx = tx = LinkSender(P, depth, inputs)
    m.submodules.rx = rx = LinkReceiver(P, depth)
    wiring.connect(m, tx.link, rx.link)
    return m, tx, rx


def random_flit(rng, serial):
    kind = rng.choice(list(Kind))
    if kind is Kind.P2P:
        return Flit.p2p(rng.randrange(4), rng.randrange(4), serial, hop=rng.randrange(2))
    if kind is Kind.REQ:
        return Flit.request(rng.randrange(2), 0, serial)
    return Flit.response(rng.randrange(2), 0, serial)


@pytest.mark.rtl
@pytest.mark.parametrize(("depth", "p_valid", "p_pop"), [(4, 0.9, 0.5), (1, 0.5, 0.9),
                                                        (6, 1.0, 1.0)])
def test_everything_arrives_in_order_per_input_and_vc(depth, p_valid, p_pop):
    rng = random.Random(depth)
    m, tx, rx = pair(depth, 3)
    pending = [None] * 3
    sent, got = [], []

    async def bench(ctx):
        serial = 0
        # 1,500 cycles of random traffic, then the offers still pending go and the receiver
        # drains: every flit sent must arrive and every credit come back.
        for cycle in range(2000):
            if cycle >= 1500 and pending == [None] * 3 and len(got) == len(sent):
                break
            for k in range(3):
                if cycle < 1500 and pending[k] is None and rng.random() < p_valid:
                    pending[k] = random_flit(rng, serial)
                    serial += 1
                ctx.set(tx.i[k].valid, pending[k] is not None)
                if pending[k] is not None:
                    ctx.set(tx.i[k].payload.as_value(), P.pack(pending[k]))
            for v in range(P.vcs):
                ctx.set(rx.o[v].ready, rng.random() < p_pop)
            for v in range(P.vcs):
                assert 0 <= ctx.get(tx.credits[v]) <= depth
                if ctx.get(rx.o[v].valid) and ctx.get(rx.o[v].ready):
                    got.append((v, P.unpack(ctx.get(rx.o[v].payload.as_value()))))
            for k in range(3):
                if ctx.get(tx.i[k].ready):
                    assert ctx.get(tx.i[k].valid)
                    sent.append((k, pending[k]))
                    pending[k] = None
            assert ctx.get(rx.overflow) == 0
            await ctx.tick()
        for v in range(P.vcs):
            ctx.set(rx.o[v].ready, 0)
        for k in range(3):
            ctx.set(tx.i[k].valid, 0)
        await ctx.tick().repeat(4)  # the last credits' way back
        assert [ctx.get(tx.credits[v]) for v in range(P.vcs)] == [depth] * P.vcs
        assert not any(ctx.get(rx.o[v].valid) for v in range(P.vcs))

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert pending == [None] * 3
    assert len(got) > 300
    arrived = {f.payload: (v, f) for v, f in got}
    assert len(arrived) == len(got)
    for v, f in arrived.values():
        assert v == P.vc(f)
    # Every flit arrives once, none is invented, and the order is kept per (input, VC).
    origin = {f.payload: k for k, f in sent}
    assert sorted(arrived) == sorted(origin)
    for k in range(3):
        for v in range(P.vcs):
            order = [f.payload for kk, f in sent if kk == k and P.vc(f) == v]
            seen = [f.payload for vv, f in got if vv == v and origin[f.payload] == k]
            assert seen == order


def test_one_flit_per_cycle_and_collectives_first():
    m, tx, rx = pair(4, 2)

    async def bench(ctx):
        for v in range(P.vcs):
            ctx.set(rx.o[v].ready, 1)
        ctx.set(tx.i[0].valid, 1)
        ctx.set(tx.i[0].payload.as_value(), P.pack(Flit.p2p(1, 0, 7)))
        ctx.set(tx.i[1].valid, 1)
        ctx.set(tx.i[1].payload.as_value(), P.pack(Flit.request(1, 0, 9)))
        grants = []
        for _ in range(6):
            grants.append((ctx.get(tx.i[0].ready), ctx.get(tx.i[1].ready)))
            await ctx.tick()
        assert grants == [(0, 1)] * 6        # the request input always wins
        ctx.set(tx.i[1].valid, 0)
        valid = []
        for _ in range(10):
            valid.append(ctx.get(tx.link.valid))
            await ctx.tick()
        assert valid[2:] == [1] * 8          # p2p streams at one flit per cycle

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize(("factory", "error", "message"), [
    (lambda: LinkSender(P, 0), ValueError, "Depth must be at least 1, not 0"),
    (lambda: LinkSender(P, 4, 0), ValueError, "Inputs must be at least 1, not 0"),
    (lambda: LinkSender("p", 4), TypeError, "Params must be a FlitParams, not 'p'"),
    (lambda: LinkReceiver(P, 1.5), TypeError, "Depth must be an integer, not 1.5"),
])
def test_errors(factory, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        factory()
