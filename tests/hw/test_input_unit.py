# amaranth: UnusedElaboratable=no
"""The switch input's p2p queues and registered offer against their Python model (seeded random
writes and takes), and the properties the allocator relies on: no bubble between back-to-back
takes of one VC, an arriving flit offered in the next cycle, no VC starved."""

import itertools
import random

import pytest
from amaranth import ClockDomain, Module
from amaranth.sim import Simulator

from innet.hw.input_unit import STREAK, InputUnit, InputUnitModel

OUTPUTS = 4


def simulate(dut, bench):
    m = Module()
    m.domains.sync = ClockDomain()
    m.submodules.dut = dut
    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize(("vcs", "depth", "p_write", "p_take"), [
    (1, 1, 0.9, 0.5), (1, 5, 0.9, 0.9), (2, 5, 0.7, 0.6), (2, 2, 0.9, 0.3),
    (3, 5, 0.9, 0.9), (3, 4, 0.4, 0.9), (4, 5, 1.0, 0.5),
])
def test_input_unit_matches_model(vcs, depth, p_write, p_take):
    """Offer, VC, pops, refusals and the flits read out agree with the model every cycle; every
    flit accepted is taken once, in order per VC."""
    rng = random.Random(vcs * 1000 + depth * 10 + int(p_write * 10))
    dut = InputUnit(OUTPUTS, 16, vcs, depth)
    model = InputUnitModel(vcs, depth)
    sent = [[] for _ in range(vcs)]
    got = [[] for _ in range(vcs)]

    async def bench(ctx):
        counter = 0
        for _ in range(2000):
            write = None
            if rng.random() < p_write:
                vc = rng.randrange(vcs)
                write = (vc, (1 << rng.randrange(OUTPUTS), rng.randrange(vcs)), counter)
                counter = (counter + 1) & 0xFFFF
            take = rng.random() < p_take
            ready = [rng.getrandbits(OUTPUTS) for _ in range(vcs)]
            for h in range(vcs):
                ctx.set(dut.ready[h], ready[h])
            ctx.set(dut.w_valid, write is not None)
            if write is not None:
                ctx.set(dut.w_vc, write[0])
                ctx.set(dut.w_route.out, write[1][0])
                ctx.set(dut.w_route.hop, write[1][1])
                ctx.set(dut.w_flit, write[2])
            ctx.set(dut.take, take)
            assert ctx.get(dut.offer_valid) == model.valid
            assert ctx.get(dut.offer_vc) == 1 << model.vc
            if model.valid:
                out, hop = model.offer[0]
                assert ctx.get(dut.offer.out) == out
                assert ctx.get(dut.offer.hop) == hop
                assert ctx.get(dut.request) == (out if out & ready[hop] else 0)
                if take:
                    got[model.vc].append(model.offer[1])
            assert ctx.get(dut.pop) == ((1 << model.vc) if take and model.valid else 0)
            assert [ctx.get(dut.levels[h]) for h in range(vcs)] == [
                len(q) for q in model.queues]
            refused, flit = model.step(write, take, lambda r, ready=ready: bool(r[0] & ready[r[1]]))
            assert ctx.get(dut.w_refused) == refused
            if write is not None and not refused:
                sent[write[0]].append(write[2])
            if flit is not None:
                assert ctx.get(dut.flit) == flit
            await ctx.tick()

    simulate(dut, bench)
    for h in range(vcs):
        assert got[h] == sent[h][:len(got[h])]
        assert len(sent[h]) - len(got[h]) == len(model.queues[h])
    assert sum(map(len, got)) > 400


@pytest.mark.parametrize("vcs", [1, 2, 3])
def test_back_to_back_takes_have_no_bubble(vcs):
    """One VC written every cycle and taken every cycle: an offer in every cycle from the second
    on, and every flit out in order one cycle after its take."""
    dut = InputUnit(64, 16, vcs, 5)

    async def bench(ctx):
        ctx.set(dut.w_valid, 1)
        ctx.set(dut.w_vc, vcs - 1)
        ctx.set(dut.take, 1)
        offers, flits = [], []
        for n in range(40):
            ctx.set(dut.w_route.out, n)
            ctx.set(dut.w_flit, 1000 + n)
            offers.append(ctx.get(dut.offer.out) if ctx.get(dut.offer_valid) else None)
            if n >= 2:
                flits.append(ctx.get(dut.flit))
            await ctx.tick()
        assert offers == [None, *range(39)]
        assert flits == [1000 + n for n in range(38)]

    simulate(dut, bench)


@pytest.mark.parametrize("period", [1, 2, 3, 4, 9])
def test_no_vc_waits_more_than_a_streak(period):
    """Two VCs kept full, the offer always asked for and taken every ``period`` cycles: the VC
    taken changes after at most :data:`STREAK` takes, whatever the rhythm of the grants (a VC
    that gives way on every cycle without a take would win every take when the gaps between
    takes are even)."""
    dut = InputUnit(8, 16, 2, 5)

    async def bench(ctx):
        ctx.set(dut.ready[0], 1)
        ctx.set(dut.ready[1], 1)
        ctx.set(dut.w_route.out, 1)
        held = [0, 0]
        taken = []
        for n in range(60 * period + 20):
            vc = held.index(min(held))
            ctx.set(dut.w_valid, held[vc] < 5)
            ctx.set(dut.w_vc, vc)
            take = n >= 20 and n % period == 0
            ctx.set(dut.take, take)
            if take and ctx.get(dut.offer_valid):
                taken.append(ctx.get(dut.offer_vc))
            held = [ctx.get(dut.levels[h]) for h in range(2)]
            await ctx.tick()
            held = [ctx.get(dut.levels[h]) for h in range(2)]
        runs = [len(list(group)) for _, group in itertools.groupby(taken)]
        assert max(runs) <= STREAK, runs
        assert len(taken) >= 55

    simulate(dut, bench)


@pytest.mark.parametrize(("outputs", "vcs", "depth", "error", "message"), [
    (0, 2, 5, ValueError, "Outputs must be at least 1, not 0"),
    ("8", 2, 5, TypeError, "Outputs must be an integer, not '8'"),
    (8, 0, 5, ValueError, "VCs must be at least 1, not 0"),
    (8, 10**6, 5, ValueError, "VCs must be at most 256, not 1000000"),
    (8, 2, 4097, ValueError, "Depth must be at most 4096, not 4097"),
    (1026, 2, 5, ValueError, "Outputs must be at most 1025, not 1026"),
    (8, 2, 0.5, TypeError, "Depth must be an integer, not 0.5"),
    (8, 2, 0, ValueError, "Depth must be at least 1, not 0"),
    (8, 2.0, 5, TypeError, "VCs must be an integer, not 2.0"),
])
def test_errors(outputs, vcs, depth, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        InputUnit(outputs, 16, vcs, depth)
