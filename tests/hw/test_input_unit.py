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
    dut = InputUnit(8, 16, vcs, depth)
    model = InputUnitModel(vcs, depth)
    sent = [[] for _ in range(vcs)]
    got = [[] for _ in range(vcs)]

    async def bench(ctx):
        counter = 0
        for _ in range(2000):
            write = None
            if rng.random() < p_write:
                vc = rng.randrange(vcs)
                write = (vc, counter & 0xFF, counter)
                counter = (counter + 1) & 0xFFFF
            take = rng.random() < p_take
            ctx.set(dut.w_valid, write is not None)
            if write is not None:
                ctx.set(dut.w_vc, write[0])
                ctx.set(dut.w_route, write[1])
                ctx.set(dut.w_flit, write[2])
            ctx.set(dut.take, take)
            assert ctx.get(dut.offer_valid) == model.valid
            assert ctx.get(dut.offer_vc) == 1 << model.vc
            if model.valid:
                assert ctx.get(dut.offer) == model.offer[0]
                if take:
                    got[model.vc].append(model.offer[1])
            assert ctx.get(dut.pop) == ((1 << model.vc) if take and model.valid else 0)
            assert [ctx.get(dut.levels[h]) for h in range(vcs)] == [
                len(q) for q in model.queues]
            refused, flit = model.step(write, take)
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
    dut = InputUnit(8, 16, vcs, 5)

    async def bench(ctx):
        ctx.set(dut.w_valid, 1)
        ctx.set(dut.w_vc, vcs - 1)
        ctx.set(dut.take, 1)
        offers, flits = [], []
        for n in range(40):
            ctx.set(dut.w_route, n)
            ctx.set(dut.w_flit, 1000 + n)
            offers.append(ctx.get(dut.offer) if ctx.get(dut.offer_valid) else None)
            if n >= 2:
                flits.append(ctx.get(dut.flit))
            await ctx.tick()
        assert offers == [None, *range(39)]
        assert flits == [1000 + n for n in range(38)]

    simulate(dut, bench)


def test_no_vc_waits_more_than_a_streak():
    """Two full VCs, every offer taken: the offered VC changes after every :data:`STREAK`
    takes."""
    dut = InputUnit(8, 16, 2, 5)

    async def bench(ctx):
        ctx.set(dut.take, 1)
        for n in range(12):  # fill both
            ctx.set(dut.take, 0)
            ctx.set(dut.w_valid, 1)
            ctx.set(dut.w_vc, n % 2)
            await ctx.tick()
        ctx.set(dut.w_valid, 0)
        ctx.set(dut.take, 1)
        vcs = []
        for _ in range(4 * STREAK):
            if ctx.get(dut.offer_valid):
                vcs.append(ctx.get(dut.offer_vc))
            await ctx.tick()
        runs = [len(list(group)) for _, group in itertools.groupby(vcs)]
        assert max(runs) <= STREAK
        assert set(vcs) == {1, 2}

    simulate(dut, bench)


@pytest.mark.parametrize(("vcs", "depth", "error", "message"), [
    (0, 5, ValueError, "VCs must be at least 1, not 0"),
    (2, 0, ValueError, "Depth must be at least 1, not 0"),
    (2.0, 5, TypeError, "VCs must be an integer, not 2.0"),
])
def test_errors(vcs, depth, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        InputUnit(8, 16, vcs, depth)
