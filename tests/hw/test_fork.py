# amaranth: UnusedElaboratable=no
"""innet.hw.fork in amaranth.sim, against a Python model of the multicast register."""

import random

import pytest
from amaranth.sim import Simulator

from innet.hw.flit import Flit, FlitParams
from innet.hw.fork import Fork

OUTPUTS, IDS = 3, 2


class ForkModel:
    """What a fork holds: a flit, its id and the targets still to take it."""

    def __init__(self):
        self.valid, self.flit, self.left = False, None, 0

    def step(self, offer, targets, taken, abort):
        """One cycle: the offered flit (or None), its targets, the outputs taking the held
        flit, the ids aborting; returns ``(load, dropped, aborted)``."""
        aborted = self.valid and bool(abort >> self.flit.cid & 1)
        free = not self.valid or (self.left & ~taken) == 0 or aborted
        load = free and offer is not None
        gone = load and bool(abort >> offer.cid & 1)
        dropped = load and not gone and targets == 0
        if free:
            self.valid = load and not gone and targets != 0
            self.flit, self.left = offer, targets
        else:
            self.left &= ~taken
        return load, dropped, aborted


def test_fork_matches_its_model_under_random_offers_grants_and_aborts():
    p = FlitParams(payload_width=8, routing_depth=4, collective_ids=IDS)
    dut = Fork(p.layout, OUTPUTS, IDS)
    rng = random.Random(4)
    model = ForkModel()
    seen = {"loads": 0, "drops": 0, "aborts": 0, "partial": 0}

    async def bench(ctx):
        held = None  # the flit the fork held last cycle
        for cycle in range(3000):
            offer = None
            if rng.random() < 0.7:
                offer = Flit.response(rng.randrange(IDS), index=rng.randrange(4),
                                      payload=rng.getrandbits(8))
            targets = rng.choice([0, rng.randrange(1 << OUTPUTS)])
            left = model.left if model.valid else 0
            taken = left & rng.getrandbits(OUTPUTS)
            abort = rng.getrandbits(IDS) if rng.random() < 0.05 else 0
            ctx.set(dut.offer_valid, offer is not None)
            if offer is not None:
                ctx.set(dut.offer.as_value(), p.pack(offer))
            ctx.set(dut.offer_targets, targets)
            ctx.set(dut.taken, taken)
            ctx.set(dut.abort, abort)
            assert ctx.get(dut.valid) == model.valid, cycle
            if model.valid:
                assert ctx.get(dut.left) == model.left, cycle
                assert p.unpack(ctx.get(dut.flit.as_value())) == model.flit, cycle
                assert ctx.get(dut.id) == 1 << model.flit.cid, cycle
            if held is not None:
                assert p.unpack(ctx.get(dut.sent.as_value())) == held, cycle
            held = model.flit if model.valid else None
            load, dropped, aborted = model.step(offer, targets, taken, abort)
            assert (ctx.get(dut.load), ctx.get(dut.dropped)) == (load, dropped), cycle
            if held is not None:
                assert ctx.get(dut.aborted) == aborted, cycle
            seen["loads"] += load
            seen["drops"] += dropped
            seen["aborts"] += aborted
            seen["partial"] += bool(taken) and (left & ~taken) != 0
            await ctx.tick()
        assert min(seen.values()) > 20, seen

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize(("outputs", "ids", "message"), [
    (0, 1, "Outputs must be at least 1, not 0"),
    (2, 0, "Collective ids must be at least 1, not 0"),
    (1026, 1, "Outputs must be at most 1025, not 1026"),
    (2, 257, "Collective ids must be at most 256, not 257"),
])
def test_fork_parameter_errors(outputs, ids, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        Fork(FlitParams().layout, outputs, ids)
