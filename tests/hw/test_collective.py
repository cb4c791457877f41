# amaranth: UnusedElaboratable=no
"""The pass-through collective path alone (:class:`innet.hw.collective.CollectivePath`) against
the contract of :mod:`innet.hw.collective`: random request flits on every port within the
senders' credits, random credits and readiness downstream, several sizes."""

import random
from collections import deque

import pytest
from amaranth import Cat, Const, Module
from amaranth.sim import Simulator

from innet.hw.collective import PASS_CYCLES, CollectivePath
from innet.hw.flit import FlitParams, Kind
from innet.hw.testing import wrap


def run_random(dut: CollectivePath, seed: int, cycles: int = 500) -> int:
    """Random traffic through ``dut``, then a drain with every credit and ``ready`` high.

    Asserts that every flit leaves exactly once, unaltered, in order per (id, port), to its
    id's targets with its kind, never before :data:`PASS_CYCLES` and never without a credit
    of every target; that ``valid`` does not depend on ``ready``; that every credit comes back
    once (no sender ever holds more than ``depth``) and none is refused; that ``busy`` stays
    high while the block holds a flit of the id and is low at the end. Returns the flits
    forwarded.
    """
    rng = random.Random(seed)
    ids, ports, depth = dut.params.collective_ids, dut.radix + 1, dut.depth
    root = [rng.random() < 0.4 for _ in range(ids)]
    req_out = [rng.randrange(ports) for _ in range(ids)]
    resp_out = [rng.randrange(1, 1 << ports) for _ in range(ids)]
    targets = [resp_out[c] if root[c] else 1 << req_out[c] for c in range(ids)]
    credits = {(c, q): depth for c in range(ids) for q in range(ports)}
    queued = {(c, q): deque() for c in range(ids) for q in range(ports)}
    forwarded = []

    async def bench(ctx):
        for c in range(ids):
            ctx.set(dut.config[c].enable, 1)
            ctx.set(dut.config[c].root, root[c])
            ctx.set(dut.config[c].req_out, req_out[c])
            ctx.set(dut.config[c].resp_out, resp_out[c])
        serial = 0
        busy_until = dict.fromkeys(range(ids), -1)
        for t in range(cycles + 200):
            traffic = t < cycles
            for q in range(ports):
                open_ids = [c for c in range(ids) if credits[c, q] > 0]
                send = traffic and open_ids and rng.random() < 0.8
                ctx.set(dut.req[q].valid, bool(send))
                if send:
                    c = rng.choice(open_ids)
                    serial += 1
                    credits[c, q] -= 1
                    ctx.set(dut.req[q].payload.kind, Kind.REQ)
                    ctx.set(dut.req[q].payload.cid, c)
                    ctx.set(dut.req[q].payload.index, q)
                    ctx.set(dut.req[q].payload.payload, serial)
                    queued[c, q].append((serial, t))
            everything = (1 << ports) - 1
            held = {c: rng.randrange(1 << ports) | (0 if traffic else everything)
                    for c in range(ids)}
            resp = rng.randrange(1 << ports) | (0 if traffic else everything)
            for c in range(ids):
                ctx.set(dut.credit_req[c], held[c])
            ctx.set(dut.credit_resp, resp)
            ctx.set(dut.result.ready, 0)
            offered = ctx.get(dut.result.valid)
            ready = not traffic or rng.random() < 0.7
            ctx.set(dut.result.ready, ready)
            assert ctx.get(dut.result.valid) == offered, f"cycle {t}: valid depends on ready"
            assert not ctx.get(dut.req_refused), f"cycle {t}: a flit within credits refused"
            for c in range(ids):
                pops = ctx.get(dut.req_pop[c])
                for q in range(ports):
                    credits[c, q] += pops >> q & 1
                    assert credits[c, q] <= depth, f"cycle {t}: credit of id {c}, port {q} twice"
            if offered:
                c = ctx.get(dut.result.payload.cid)
                q = ctx.get(dut.result.payload.index)
                have = resp if root[c] else held[c]
                assert ctx.get(dut.result.targets) == targets[c], f"cycle {t}: targets"
                assert targets[c] & ~have == 0, f"cycle {t}: id {c} offered without a credit"
                assert ctx.get(dut.result.payload.kind) == (Kind.RESP if root[c] else Kind.REQ)
                if ready:
                    assert queued[c, q], f"cycle {t}: a flit of id {c}, port {q} never sent"
                    expected, arrived = queued[c, q].popleft()
                    got = ctx.get(dut.result.payload.payload)
                    assert got == expected, (
                        f"cycle {t}: id {c}, port {q} sent {got}, expected {expected} next")
                    assert t - arrived >= PASS_CYCLES, f"cycle {t}: flit {got} too early"
                    forwarded.append(got)
                    busy_until[c] = max(busy_until[c], t + 1)
            for (c, _), waiting in queued.items():
                if any(arrived + 2 <= t for _, arrived in waiting) or busy_until[c] >= t:
                    assert ctx.get(dut.busy[c]), f"cycle {t}: id {c} holds a flit, not busy"
            await ctx.tick()
        assert all(not waiting for waiting in queued.values()), "flits left in the block"
        assert all(v == depth for v in credits.values()), f"credits not home: {credits}"
        assert not any(ctx.get(dut.busy[c]) for c in range(ids)), "busy at the end"

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return len(forwarded)


def pass_through(ids: int, radix: int, depth: int, block=CollectivePath) -> CollectivePath:
    return block(FlitParams(payload_width=16, collective_ids=ids), radix, depth)


@pytest.mark.parametrize(("args", "error", "message"), [
    ((16, 2), TypeError, r"^Params must be a FlitParams, not 16$"),
    ((None, 0), TypeError, r"^Params must be a FlitParams, not None$"),
])
def test_parameter_errors(args, error, message):
    with pytest.raises(error, match=message):
        CollectivePath(*args)


@pytest.mark.parametrize(("ids", "radix", "depth"), [(1, 1, 1), (2, 1, 4), (3, 2, 3),
                                                      (4, 2, 5)])
def test_random_requests_through_the_pass_through(ids, radix, depth):
    assert run_random(pass_through(ids, radix, depth), seed=ids * 10 + depth) > 100


class IgnoresCredits(CollectivePath):
    """Offers a flit whatever its targets' credits."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = CollectivePath(self.params, self.radix, self.depth)
        ports, ids = self.radix + 1, self.params.collective_ids
        wrap(m, self, inner, {("credit_resp",): Const(-1, ports),
                              **{("credit_req", c): Const(-1, ports) for c in range(ids)}})
        return m


class ReturnsArrivals(CollectivePath):
    """Returns a request's credit as it arrives, and again as it leaves its buffer."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = CollectivePath(self.params, self.radix, self.depth)
        wrap(m, self, inner, {
            ("req_pop", c): inner.req_pop[c] | Cat(r.valid & (r.payload.cid == c)
                                                   for r in self.req)
            for c in range(self.params.collective_ids)})
        return m


@pytest.mark.parametrize(("block", "fault"), [(IgnoresCredits, "offered without a credit"),
                                              (ReturnsArrivals, "twice")])
def test_the_random_run_catches_a_broken_pass_through(block, fault):
    with pytest.raises(AssertionError, match=fault):
        run_random(pass_through(2, 2, 4, block), seed=3)
