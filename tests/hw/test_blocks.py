# amaranth: UnusedElaboratable=no
"""Buffers, credit counters, credit throttles and arbiters against their Python models (seeded
random traffic)."""

import random

import pytest
from amaranth import ClockDomain, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from innet.hw.arbiter import (
    RoundRobin,
    RoundRobinModel,
    binary_mux,
    encode_onehot,
)
from innet.hw.buffer import RAMS, Buffer, BufferModel, Bypass
from innet.hw.credit import CreditCounter, CreditModel
from innet.hw.testing import CreditThrottle, MulAdd, wrap


def simulate(dut, bench):
    m = Module()
    m.domains.sync = ClockDomain()  # also for blocks without state (size-1 arbiters)
    m.submodules.dut = dut
    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("ram", RAMS)
@pytest.mark.parametrize(("depth", "p_write", "p_read"), [
    (1, 0.9, 0.9), (2, 0.5, 0.5), (4, 0.9, 0.3), (4, 0.3, 0.9), (5, 1.0, 1.0), (21, 0.6, 0.5),
])
def test_buffer_matches_model(depth, p_write, p_read, ram):
    rng = random.Random(depth * 100 + int(p_write * 10))
    dut = Buffer(16, depth, ram=ram)
    model = BufferModel(depth)
    sent, got = [], []

    async def bench(ctx):
        counter = 0
        for _ in range(1500):
            w_valid = rng.random() < p_write
            r_ready = rng.random() < p_read
            ctx.set(dut.w.valid, w_valid)
            ctx.set(dut.w.payload, counter)
            ctx.set(dut.r.ready, r_ready)
            assert ctx.get(dut.w.ready) == model.w_ready
            assert ctx.get(dut.r.valid) == model.r_valid
            assert ctx.get(dut.level) == len(model.items)
            if model.r_valid:
                assert ctx.get(dut.r.payload) == model.head
                if r_ready:
                    got.append(model.head)
            if w_valid and model.w_ready:
                sent.append(counter)
            model.step(w_valid, counter, r_ready)
            counter = (counter + 1) & 0xFFFF
            await ctx.tick()

    simulate(dut, bench)
    assert got == sent[:len(got)]
    assert len(sent) - len(got) == len(model.items)
    assert len(got) > 300


@pytest.mark.parametrize("ram", RAMS)
def test_buffer_full_throughput(ram):
    """Simultaneous write and read sustain one entry per cycle with a one-cycle latency."""
    dut = Buffer(8, 4, ram=ram)

    async def bench(ctx):
        ctx.set(dut.r.ready, 1)
        ctx.set(dut.w.valid, 1)
        outs = []
        for i in range(20):
            ctx.set(dut.w.payload, i)
            if ctx.get(dut.r.valid):
                outs.append(ctx.get(dut.r.payload))
            await ctx.tick()
        assert outs == list(range(19))

    simulate(dut, bench)


class _Bypassed(wiring.Component):
    """A Buffer behind a Bypass, with the reader's decision as an input."""

    arriving: In(1)
    payload: In(16)
    take: In(1)
    flush: In(1)
    room: Out(1)
    waiting: Out(1)
    head: Out(16)
    level: Out(4)

    def __init__(self, depth: int, ram: str = "lut") -> None:
        super().__init__()
        self.depth = depth
        self.ram = ram

    def elaborate(self, platform):
        m = Module()
        m.submodules.buffer = buffer = Buffer(16, self.depth, ram=self.ram)
        bypass = Bypass(m, buffer, self.arriving, self.payload, name="q", flush=self.flush)
        bypass.take(self.take)
        m.d.comb += [self.room.eq(buffer.w.ready), self.waiting.eq(bypass.waiting),
                     self.head.eq(bypass.head), self.level.eq(buffer.level)]
        return m


@pytest.mark.parametrize("ram", RAMS)
@pytest.mark.parametrize(("depth", "p_arrive", "p_take", "p_flush"), [
    (1, 0.9, 0.9, 0.0), (2, 0.5, 0.5, 0.0), (4, 0.9, 0.3, 0.0), (4, 0.3, 0.9, 0.0),
    (4, 0.7, 0.6, 0.05),
])
def test_bypass_is_a_fifo_that_a_reader_may_take_from_at_once(depth, p_arrive, p_take,
                                                              p_flush, ram):
    """Against a deque: the head is the oldest flit not taken (an arriving one at once when
    none waits), so every flit is taken once, in order; a flush discards the head."""
    rng = random.Random(depth * 1000 + int(p_take * 100))
    dut = _Bypassed(depth, ram)
    stats = {"taken": 0, "straight": 0, "flushed": 0}

    async def bench(ctx):
        queue, counter = [], 0
        for cycle in range(2000):
            quiet = cycle >= 1900  # drain at the end
            arriving = not quiet and ctx.get(dut.room) and rng.random() < p_arrive
            flush = not quiet and rng.random() < p_flush
            ctx.set(dut.arriving, arriving)
            ctx.set(dut.payload, counter)
            ctx.set(dut.flush, flush)
            if arriving:
                queue.append(counter)
                counter = (counter + 1) & 0xFFFF
            waiting = ctx.get(dut.waiting)
            assert waiting == (len(queue) > arriving), f"cycle {cycle}"
            take = bool(queue) and not flush and (quiet or rng.random() < p_take)
            ctx.set(dut.take, take)
            if queue:
                assert ctx.get(dut.head) == queue[0], f"cycle {cycle}"
            if take:
                stats["straight"] += not waiting
                stats["taken"] += 1
                queue.pop(0)
            elif flush and waiting:
                stats["flushed"] += 1
                queue.pop(0)
            await ctx.tick()
        assert not queue
        assert ctx.get(dut.level) == 0, "an entry was left behind in the buffer"

    simulate(dut, bench)
    assert stats["taken"] > 400
    if p_take >= p_arrive:  # (a reader slower than the writer keeps the buffer full)
        assert stats["straight"] > 20
    assert (stats["flushed"] > 0) == (p_flush > 0)


@pytest.mark.parametrize("depth", [1, 3, 4, 8])
def test_credit_counter_matches_model(depth):
    rng = random.Random(depth)
    dut = CreditCounter(depth)
    model = CreditModel(depth)

    async def bench(ctx):
        for cycle in range(2000):
            # Mostly legal traffic; now and then a violation to exercise the error flag.
            take = model.available and rng.random() < 0.5
            give = model.count < depth and rng.random() < 0.5
            if cycle > 1800:
                take, give = rng.random() < 0.5, rng.random() < 0.5
            ctx.set(dut.take, take)
            ctx.set(dut.give, give)
            assert ctx.get(dut.count) == model.count
            assert ctx.get(dut.available) == model.available
            assert ctx.get(dut.error) == model.error
            assert 0 <= ctx.get(dut.count) <= depth
            model.step(take, give)
            await ctx.tick()

    simulate(dut, bench)
    assert model.error  # the violations at the end were seen by both


@pytest.mark.parametrize("vcs", [1, 3])
def test_credit_throttle_holds_credits_back_only_while_stopped(vcs):
    rng = random.Random(vcs)
    depth = 4
    dut = CreditThrottle(vcs, depth)
    owed = [0] * vcs

    async def bench(ctx):
        given = passed = 0
        for cycle in range(1500):
            go = cycle >= 1400 or rng.random() < 0.4
            credit_in = [owed[v] + 1 <= depth and rng.random() < 0.5 and cycle < 1400
                         for v in range(vcs)]
            ctx.set(dut.go, go)
            ctx.set(dut.credit_in, sum(c << v for v, c in enumerate(credit_in)))
            out = ctx.get(dut.credit_out)
            assert ctx.get(dut.quiet) == (owed == [0] * vcs)
            for v in range(vcs):
                # Straight through while go is high, one owed credit per cycle after a stop.
                release = go and (owed[v] > 0 or credit_in[v])
                assert (out >> v) & 1 == release
                owed[v] += credit_in[v] - release
                given += credit_in[v]
                passed += release
            await ctx.tick()
        assert given == passed > 0

    simulate(dut, bench)


class _Pipe(wiring.Component):
    """Registers ``a`` into ``q`` with ``ok`` alongside: a small component to wrap."""

    def __init__(self):
        super().__init__({"a": In(4), "bus": Out(wiring.Signature({"q": Out(4), "ok": In(1)})),
                          "seen": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.d.sync += [self.bus.q.eq(self.a), self.seen.eq(self.bus.ok)]
        return m


class _Wrapped(_Pipe):
    """A _Pipe around a _Pipe, its input plus one on the way in, its ``ok`` from the inner's."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = _Pipe()
        wrap(m, self, inner, {("a",): (self.a + 1)[:4], ("bus", "ok"): ~self.bus.ok})
        return m


def test_wrap_connects_every_port_but_those_it_replaces():
    dut = _Wrapped()

    async def bench(ctx):
        for a, ok in [(3, 1), (15, 0), (7, 0)]:
            ctx.set(dut.a, a)
            ctx.set(dut.bus.ok, ok)
            await ctx.tick()
            assert (ctx.get(dut.bus.q), ctx.get(dut.seen)) == ((a + 1) % 16, 1 - ok)

    simulate(dut, bench)
    with pytest.raises(KeyError, match=r"^\"No port \('b',\) to replace\"$"):
        wrap(Module(), _Pipe(), _Pipe(), {("b",): 0})


@pytest.mark.parametrize("count", [1, 2, 5, 9, 17])
def test_round_robin_matches_model(count):
    rng = random.Random(count)
    dut = RoundRobin(count)
    model = RoundRobinModel(count)
    grants = [0] * count

    async def bench(ctx):
        for _ in range(2000):
            requests = rng.getrandbits(count) if rng.random() < 0.7 else (1 << count) - 1
            take = rng.random() < 0.8
            ctx.set(dut.requests, requests)
            ctx.set(dut.take, take)
            want = model.step(requests, take)
            got = ctx.get(dut.grant)
            assert got == (0 if want is None else 1 << want)
            if want is not None and take:
                grants[want] += 1
            await ctx.tick()

    simulate(dut, bench)
    assert min(grants) > 0


def test_round_robin_is_fair_under_full_load():
    dut = RoundRobin(4)

    async def bench(ctx):
        ctx.set(dut.requests, 0b1111)
        ctx.set(dut.take, 1)
        order = []
        for _ in range(8):
            order.append(ctx.get(dut.grant).bit_length() - 1)
            await ctx.tick()
        assert order == [0, 1, 2, 3, 0, 1, 2, 3]

    simulate(dut, bench)


@pytest.mark.parametrize(("factory", "error", "message"), [
    (lambda: Buffer(8, 0), ValueError, "Buffer depth must be at least 1, not 0"),
    (lambda: Buffer(8, 2**40), ValueError, "Buffer depth must be at most 4096, not 1099511627776"),
    (lambda: Buffer(8, 2.0), TypeError, "Buffer depth must be an integer, not 2.0"),
    (lambda: Buffer(8, 4, ram="bram"), ValueError,
     "Buffer RAM must be one of lut, block, not 'bram'"),
    (lambda: CreditCounter(0), ValueError, "Credit depth must be at least 1, not 0"),
    (lambda: CreditCounter("4"), TypeError, "Credit depth must be an integer, not '4'"),
    (lambda: CreditThrottle(0, 4), ValueError, "Throttle VCs must be at least 1, not 0"),
    (lambda: CreditThrottle(2.0, 4), TypeError, "Throttle VCs must be an integer, not 2.0"),
    (lambda: CreditThrottle(2, 0), ValueError, "Throttle depth must be at least 1, not 0"),
    (lambda: CreditThrottle(2, None), TypeError, "Throttle depth must be an integer, not None"),
    (lambda: MulAdd(0), ValueError, "Width must be at least 1, not 0"),
    (lambda: MulAdd("8"), TypeError, "Width must be an integer, not '8'"),
    (lambda: RoundRobin(0), ValueError, "Arbiter size must be at least 1, not 0"),
    (lambda: RoundRobin(None), TypeError, "Arbiter size must be an integer, not None"),
])
def test_errors(factory, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        factory()


def test_onehot_mux_selects_the_one_value():
    from amaranth import Signal

    from innet.hw.arbiter import onehot_mux

    sel = Signal(4)
    values = [Signal(8, name=f"v{i}") for i in range(4)]
    out = Signal(8)
    m = Module()
    m.d.comb += out.eq(onehot_mux(list(sel), values))

    async def bench(ctx):
        rng = random.Random(9)
        for _ in range(50):
            data = [rng.getrandbits(8) for _ in range(4)]
            for v, d in zip(values, data, strict=True):
                ctx.set(v, d)
            pick = rng.randrange(5)
            ctx.set(sel, 0 if pick == 4 else 1 << pick)
            assert ctx.get(out) == (0 if pick == 4 else data[pick])

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("count", [1, 2, 5, 9, 16, 17])
def test_binary_mux_and_onehot_encoder_match_indexing(count):
    rng = random.Random(count)
    values = [rng.getrandbits(12) for _ in range(count)]
    width = max(1, (count - 1).bit_length())
    select, onehot = Signal(width + 1), Signal(count)
    picked, index = Signal(12), Signal(width)
    m = Module()
    m.d.comb += [picked.eq(binary_mux(select, [Const(v, 12) for v in values])),
                 index.eq(encode_onehot(onehot))]
    sim = Simulator(m)

    async def bench(ctx):
        for s in range(1 << (width + 1)):
            ctx.set(select, s)
            assert ctx.get(picked) == (values[s] if s < count else 0), s
        for i in range(count):
            ctx.set(onehot, 1 << i)
            assert ctx.get(index) == i
        ctx.set(onehot, 0)
        assert ctx.get(index) == 0

    sim.add_testbench(bench)
    sim.run()
