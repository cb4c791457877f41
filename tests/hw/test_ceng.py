# amaranth: UnusedElaboratable=no
"""innet.hw.ceng.CollectiveEngine in amaranth.sim, on its own (radix 3, two or three ids).

The harness models the switch around the engine: request flits arrive on every input port at
random times, at most one per port and cycle, of any id whose buffer in the engine has room
(skew between ports and ids; ``buffer`` holds the flits written that the engine has not
returned a credit for on ``req_pop``); per (output, VC) a credit counter's credits come back at
random times (backpressure); and the switch's fork takes a flit from ``result`` whenever it is
free and sends a copy to each target as that target holds a credit. It checks every flit taken
against the golden model (:func:`innet.sim.golden.reduce_switch`) and the engine's promise that
every target of a flit it offers holds a credit, and every copy: the right flit, at every
target and nowhere else, in element order per id, never without a credit.
"""

import random
from collections import deque

import numpy as np
import pytest
from amaranth.sim import Simulator

from innet.gen.ops import DType, Op
from innet.hw.alu import LATENCY
from innet.hw.alu.multi import multi_latency
from innet.hw.ceng import FRONT_CYCLES, CollectiveEngine, engine_latency
from innet.hw.flit import Flit, FlitParams, Kind
from innet.sim.golden import reduce_switch
from innet.sim.tb.tb_alu import FP32_SPECIALS

RADIX = 3
PORTS = RADIX + 1
LOCAL = RADIX


def engine(ids=2, **kwargs):
    params = FlitParams(collective_ids=ids, routing_depth=4, index_width=8)
    kwargs.setdefault("mul", False)
    return CollectiveEngine(params, RADIX, **kwargs)


def value(rng: random.Random, dtype: DType) -> int:
    if dtype == DType.FP32 and rng.random() < 0.2:
        return rng.choice(FP32_SPECIALS)
    if dtype == DType.FP32:
        return (rng.getrandbits(1) << 31) | (rng.randint(110, 140) << 23) | rng.getrandbits(23)
    return rng.getrandbits(32)


class Harness:
    """The switch around an engine: input buffers, credit counters, the fork, expectations."""

    def __init__(self, dut, rng, *, arrive=1.0, credit_back=1.0, depth=4):
        self.dut, self.rng = dut, rng
        self.p = dut.params
        ids = self.p.collective_ids
        self.arrive, self.credit_back, self.depth = arrive, credit_back, depth
        self.config = [None] * ids
        self.pending = [[deque() for _ in range(PORTS)] for _ in range(ids)]  # not arrived
        self.buffer = [[deque() for _ in range(PORTS)] for _ in range(ids)]   # not credited
        self.credits = [[depth] * self.p.vcs for _ in range(PORTS)]
        self.fork = None  # the flit the switch took from ``result`` and its targets left
        self.expected = {}  # (cid, index) -> (set of ports, flit)
        self.order = {}  # (cid, output port) -> keys in order
        self.sent = []  # (cycle, port, flit)
        self.cycle = 0
        self.pulses = {"dropped": 0, "mismatch": 0, "unsupported": 0}
        self.arrived = {}  # (cid, index) -> cycle its last operand was on ``req``
        self.out_cycle = {}  # (cid, index) -> cycle the switch took it from ``result``

    def configure(self, cid, *, req_in, op=Op.ADD, dtype=DType.INT32, root=False, req_out=0,
                  resp_out=(), enable=True):
        self.config[cid] = {"req_in": sorted(req_in), "op": Op(op), "dtype": DType(dtype),
                            "root": root, "req_out": req_out, "resp_out": sorted(resp_out),
                            "enable": enable}

    async def apply(self, ctx):
        """Drive the configuration and wait the two cycles the engine takes to apply it."""
        for c, cfg in enumerate(self.config):
            port = self.dut.config[c]
            if cfg is None:
                ctx.set(port.enable, 0)
                continue
            ctx.set(port.enable, int(cfg["enable"]))
            ctx.set(port.op, cfg["op"])
            ctx.set(port.dtype, cfg["dtype"])
            ctx.set(port.req_in, sum(1 << q for q in cfg["req_in"]))
            ctx.set(port.req_out, cfg["req_out"])
            ctx.set(port.root, int(cfg["root"]))
            ctx.set(port.resp_out, sum(1 << q for q in cfg["resp_out"]))
        await self.step(ctx)
        await self.step(ctx)

    def targets(self, cid):
        cfg = self.config[cid]
        return set(cfg["resp_out"]) if cfg["root"] else {cfg["req_out"]}

    def element(self, cid, index, operands=None, *, expect=True):
        """Queue one element of id ``cid`` on every contributing port; expect its result."""
        cfg = self.config[cid]
        if operands is None:
            operands = [value(self.rng, cfg["dtype"]) for _ in cfg["req_in"]]
        for q, x in zip(cfg["req_in"], operands, strict=True):
            self.pending[cid][q].append(Flit.request(cid, index, x))
        if not expect:
            return
        result = int(reduce_switch(cfg["op"], cfg["dtype"], [np.uint32(x) for x in operands]))
        kind = Kind.RESP if cfg["root"] else Kind.REQ
        flit = Flit(kind, payload=result, index=index, cid=cid)
        key = (cid, index)
        assert key not in self.expected
        self.expected[key] = (self.targets(cid), flit)
        for t in self.targets(cid):
            self.order.setdefault((cid, t), []).append(key)

    def _held(self, port, vc):
        """Copies of VC ``vc`` the fork still sends on ``port`` (0 or 1)."""
        return int(self.fork is not None and port in self.fork[1] and self.p.vc(self.fork[0]) == vc)

    async def step(self, ctx):
        dut, p, rng = self.dut, self.p, self.rng
        # Arrivals: each port takes a request flit at random times, of a random id with a flit
        # pending and room in the engine.
        writes = []
        for q in range(PORTS):
            room = [c for c in range(p.collective_ids)
                    if self.pending[c][q] and len(self.buffer[c][q]) < dut.depth]
            ctx.set(dut.req[q].valid, 0)
            if room and rng.random() < self.arrive:
                c = rng.choice(room)
                flit = self.pending[c][q].popleft()
                ctx.set(dut.req[q].valid, 1)
                ctx.set(dut.req[q].payload.as_value(), p.pack(flit))
                writes.append((c, q, flit))
                self.arrived[(c, flit.index)] = self.cycle
        # Credits the engine sees: those beyond the copies the fork still sends.
        for c in range(p.collective_ids):
            ctx.set(dut.credit_req[c], sum(
                1 << o for o in range(PORTS)
                if self.credits[o][p.req_vc(c)] > self._held(o, p.req_vc(c))))
        ctx.set(dut.credit_resp, sum(1 << o for o in range(PORTS)
                                     if self.credits[o][p.resp_vc] > self._held(o, p.resp_vc)))
        # The fork sends a copy on every target left that holds a credit.
        if self.fork is not None:
            flit, left = self.fork
            v = p.vc(flit)
            for o in sorted(left):
                if self.credits[o][v] > 0:
                    self.credits[o][v] -= 1
                    self.sent.append((self.cycle, o, flit))
                    self.check(o, flit)
                    left.discard(o)
            if not left:
                self.fork = None
        # The switch takes the engine's flit when its fork is free.
        ctx.set(dut.result.ready, self.fork is None)
        if self.fork is None and ctx.get(dut.result.valid):
            flit = p.unpack(ctx.get(dut.result.payload.as_value()))
            targets = {o for o in range(PORTS) if ctx.get(dut.result.targets) >> o & 1}
            assert targets, f"cycle {self.cycle}: {flit} offered with no target"
            v = p.vc(flit)
            assert all(self.credits[o][v] > 0 for o in targets), (
                f"cycle {self.cycle}: {flit} offered to {targets} without a credit on each")
            self.out_cycle.setdefault((flit.cid, flit.index), self.cycle)
            self.fork = (flit, targets)
        # Outputs of this cycle (a credit may go back for a flit arriving in the same cycle).
        for c, q, flit in writes:
            self.buffer[c][q].append(flit)
        for c in range(p.collective_ids):
            popped = ctx.get(dut.req_pop[c])
            for q in range(PORTS):
                if popped >> q & 1:
                    assert self.buffer[c][q], f"cycle {self.cycle}: pop of id {c} port {q} empty"
                    self.buffer[c][q].popleft()
        assert not ctx.get(dut.req_refused), f"cycle {self.cycle}: a request flit refused"
        for name in self.pulses:
            self.pulses[name] += ctx.get(getattr(dut, name))
        # Credits come back at random times.
        for o in range(PORTS):
            back = self.credit_back[o] if isinstance(self.credit_back, list) else self.credit_back
            for v in range(p.vcs):
                if self.credits[o][v] < self.depth and rng.random() < back:
                    self.credits[o][v] += 1
        await ctx.tick()
        self.cycle += 1

    def check(self, port, flit):
        key = (flit.cid, flit.index)
        assert key in self.expected, f"cycle {self.cycle}: unexpected {flit} on port {port}"
        targets, want = self.expected[key]
        assert flit == want, f"cycle {self.cycle}: port {port} got {flit}, expected {want}"
        assert port in targets, f"cycle {self.cycle}: {flit} on port {port}, not {targets}"
        order = self.order[(flit.cid, port)]
        assert order[0] == key, f"cycle {self.cycle}: {flit} on port {port} out of order"
        order.pop(0)
        targets.discard(port)
        if not targets:
            del self.expected[key]

    @property
    def idle(self):
        return (not self.expected and self.fork is None
                and not any(q for row in self.pending for q in row)
                and not any(q for row in self.buffer for q in row))


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


async def settle(h, ctx, limit=400):
    for _ in range(limit):
        if h.idle:
            break
        await h.step(ctx)
    assert h.idle, f"{len(h.expected)} results never came out, e.g. {next(iter(h.expected))}"


@pytest.mark.rtl
@pytest.mark.parametrize(("mul", "op", "dtype"), [(False, Op.ADD, DType.FP32),
                                                  (True, Op.MUL, DType.INT32)])
def test_latency_per_port_count(mul, op, dtype):
    """Idle engine: a reduction of k ports is on ``result`` engine_latency(k, radix, op) cycles
    after its last operand arrived on ``req`` (4 cycles for one port): the multi-operand
    unit's latency for every k, or with multipliers the tree's levels for mul."""
    dut = engine(mul=mul)
    rng = random.Random(1)
    latencies = {}

    async def bench(ctx):
        h = Harness(dut, rng)
        for k in range(1, PORTS + 1):
            ports = sorted(rng.sample(range(PORTS), k))
            h.configure(0, req_in=ports, req_out=1, op=op, dtype=dtype)
            await h.apply(ctx)
            h.element(0, k)
            await settle(h, ctx)
            latencies[k] = h.out_cycle[(0, k)] - h.arrived[(0, k)]

    run(dut, bench)
    assert latencies == {k: engine_latency(k, RADIX, op) for k in range(1, PORTS + 1)}
    # The write into the request buffer, the front end, the reduction.
    if op == Op.MUL:
        want = {k: 1 + FRONT_CYCLES + LATENCY * levels
                for k, levels in ((1, 0), (2, 1), (3, 2), (4, 2))}
    else:
        want = {k: 1 + FRONT_CYCLES + (k > 1) * multi_latency(PORTS) for k in range(1, 5)}
    assert latencies == want


@pytest.mark.rtl
@pytest.mark.parametrize("k", [2, 4])
def test_one_element_per_cycle(k):
    """Inputs and credits always there: one result per cycle, no bubble."""
    dut = engine()
    rng = random.Random(2)

    async def bench(ctx):
        h = Harness(dut, rng)
        h.configure(1, req_in=range(PORTS - k, PORTS), req_out=0)
        await h.apply(ctx)
        for n in range(100):
            h.element(1, n)
        await settle(h, ctx)
        cycles = [c for c, _, _ in h.sent]
        assert len(cycles) == 100
        assert cycles == list(range(cycles[0], cycles[0] + 100))

    run(dut, bench)


@pytest.mark.rtl
@pytest.mark.parametrize("seed", [3, 4])
def test_random_skew_and_backpressure(seed):
    """Three ids (a reduction to a port, a reduction at the root multicasting, a forwarding id)
    with random operations, arrival skew and backpressure."""
    rng = random.Random(seed)
    dut = engine(ids=3)
    ops = [(Op.ADD, DType.FP32), (Op.MIN, DType.FP32), (Op.MAX, DType.INT32),
           (Op.NOR, DType.UINT32), (Op.XOR, DType.INT32), (Op.ADD, DType.INT32)]

    async def bench(ctx):
        h = Harness(dut, rng, arrive=0.5, credit_back=0.4)
        op0, op1 = rng.sample(ops, 2)
        h.configure(0, req_in=[0, 2, LOCAL], op=op0[0], dtype=op0[1], req_out=1)
        h.configure(1, req_in=[0, 1, 2, LOCAL], op=op1[0], dtype=op1[1], root=True,
                    resp_out=[0, 2, LOCAL])
        h.configure(2, req_in=[1], root=True, resp_out=[0, 1, LOCAL])
        await h.apply(ctx)
        for n in range(60):
            for c in range(3):
                h.element(c, n)
        await settle(h, ctx, 3000)
        assert h.pulses == {"dropped": 0, "mismatch": 0, "unsupported": 0}

    run(dut, bench)


@pytest.mark.rtl
def test_blocked_id_does_not_hold_up_another():
    """Id 0's output returns no credits: its results wait in its own queue, and id 1 keeps
    reducing at one element per cycle; id 0 resumes when credits come back."""
    depth = multi_latency(PORTS) + FRONT_CYCLES + 1  # id 1 at one element per cycle
    dut = engine(queue_depth=depth)
    rng = random.Random(5)

    async def bench(ctx):
        h = Harness(dut, rng, depth=4)
        h.configure(0, req_in=[0, 1], req_out=2)
        h.configure(1, req_in=[2, LOCAL], req_out=0)  # no input port shared with id 0
        await h.apply(ctx)
        h.credit_back = [1.0, 1.0, 0.0, 1.0]
        h.credits[2] = [0] * dut.params.vcs  # output 2 full on every VC
        for n in range(60):
            h.element(0, n)
            h.element(1, n)
        for _ in range(140):
            await h.step(ctx)
        out1 = [c for c, _, f in h.sent if f.cid == 1]
        # Both take turns (id 0 first) until id 0 fills its queue, then id 1 issues alone.
        # Id 0's k-th issue (cycle 2k) sees its k - 1 elements consumed by then and needs room
        # for them and the front end's three: depth - 1 issues, so between id 1's first and
        # last result only id 0's other depth - 2 elements.
        assert len(out1) == 60
        assert out1[-1] - out1[0] + 1 == 60 + depth - 2
        assert not [f for _, _, f in h.sent if f.cid == 0]
        h.credit_back = 1.0
        await settle(h, ctx)

    run(dut, bench)


@pytest.mark.rtl
@pytest.mark.parametrize("start", [0, 250])  # 250: the 8-bit element indices wrap past 255
def test_a_lost_flit_costs_one_element_and_the_streams_resynchronise(start):
    """Port 2 loses one element's flit, port 0 another's, and the local port sends one flit
    twice: each lost flit costs exactly its element (the heads holding the oldest index pop,
    ``mismatch`` pulses), the duplicate costs nothing, and every other element is reduced
    bit-exact, in order, under skew and backpressure."""
    dut = engine()
    rng = random.Random(6 + start)
    width = 1 << dut.params.index_width
    lost = {(start + 3) % width: 2, (start + 9) % width: 0}
    duplicate = (start + 6) % width

    async def bench(ctx):
        h = Harness(dut, rng, arrive=0.6, credit_back=0.7)
        h.configure(0, req_in=[0, 2, LOCAL], req_out=1, op=Op.ADD, dtype=DType.FP32)
        await h.apply(ctx)
        for n in range(20):
            index = (start + n) % width
            h.element(0, index, expect=index not in lost)
            if index in lost:
                h.pending[0][lost[index]].pop()
            if index == duplicate:
                h.pending[0][LOCAL].append(h.pending[0][LOCAL][-1])
        await settle(h, ctx, 1000)
        got = [f.index for _, _, f in h.sent]
        assert got == [(start + n) % width for n in range(20) if (start + n) % width not in lost]
        assert h.pulses == {"dropped": 0, "mismatch": len(lost) + 1, "unsupported": 0}

    run(dut, bench)


@pytest.mark.rtl
def test_a_missing_contributor_times_out_and_the_id_runs_again_after_abort():
    """Port 1 never sends for id 0: after ``timeout`` cycles of waiting the watchdog fires
    once, ``missing`` names port 1, and id 1 keeps reducing meanwhile; ``abort`` drains id 0
    (its heads are discarded, ``busy`` falls, the watchdog clears) and afterwards id 0 reduces
    bit-exact again."""
    dut = engine()
    rng = random.Random(8)
    timeout = 40

    async def bench(ctx):
        h = Harness(dut, rng, credit_back=0.8)
        h.configure(0, req_in=[0, 1, LOCAL], req_out=2, op=Op.MAX, dtype=DType.INT32)
        h.configure(1, req_in=[0, 2], req_out=1, op=Op.ADD, dtype=DType.INT32)
        await h.apply(ctx)
        ctx.set(dut.timeout, timeout)
        stalled = 0
        for n in range(6):
            h.element(0, n, expect=False)
            h.pending[0][1].pop()
        for n in range(50):
            h.element(1, n)
        for cycle in range(timeout + 60):
            await h.step(ctx)
            stalled += ctx.get(dut.stalled)
            if cycle == timeout - 5:
                assert (ctx.get(dut.timed_out), stalled) == (0, 0)
        assert [f.cid for _, _, f in h.sent] == [1] * 50  # id 1 went on meanwhile
        assert (ctx.get(dut.timed_out), ctx.get(dut.missing[0]), stalled) == (1, 1 << 1, 1)
        assert ctx.get(dut.busy) & 1
        ctx.set(dut.abort, 1)
        for _ in range(12):
            await h.step(ctx)
        ctx.set(dut.abort, 0)
        await h.step(ctx)
        await h.step(ctx)
        assert not any(h.buffer[0])
        assert not any(h.pending[0])
        assert (ctx.get(dut.busy), ctx.get(dut.timed_out), ctx.get(dut.missing[0])) == (0, 0, 0)
        for n in range(30):
            h.element(0, n)
        await settle(h, ctx)
        assert h.pulses == {"dropped": 0, "mismatch": 0, "unsupported": 0}

    run(dut, bench)


@pytest.mark.rtl
@pytest.mark.parametrize("before", [0, 1000])
def test_a_timeout_written_during_a_wait_counts_from_the_write(before):
    """Id 0 waits for port 1 with the watchdog off (``before`` 0) or at 1,000 cycles; after
    200 cycles software writes 50: the watchdog fires 50 cycles later, once, naming port
    1 (not when a count that started before the write reaches the new value)."""
    dut = engine()
    rng = random.Random(10)

    async def bench(ctx):
        h = Harness(dut, rng)
        h.configure(0, req_in=[0, 1], req_out=2, op=Op.ADD, dtype=DType.INT32)
        await h.apply(ctx)
        ctx.set(dut.timeout, before)
        h.element(0, 0, expect=False)
        h.pending[0][1].pop()
        fired = []
        for cycle in range(300):
            if cycle == 200:
                ctx.set(dut.timeout, 50)
            if ctx.get(dut.stalled):  # this cycle's pulse, before its clock edge
                fired.append(cycle)
            await h.step(ctx)
        assert fired == [250]
        assert (ctx.get(dut.timed_out), ctx.get(dut.missing[0])) == (1, 1 << 1)

    run(dut, bench)


@pytest.mark.rtl
def test_abort_discards_queued_results_of_its_id_only():
    """Id 0's output returns no credits, so its results wait in its queue. ``abort`` of id 0
    discards them; id 1 still reduces."""
    dut = engine(queue_depth=20)
    rng = random.Random(9)

    async def bench(ctx):
        h = Harness(dut, rng, depth=4)
        h.configure(0, req_in=[0, 1], root=True, resp_out=[2])
        h.configure(1, req_in=[1], root=True, resp_out=[0, LOCAL])
        await h.apply(ctx)
        h.credit_back = [1.0, 1.0, 0.0, 1.0]
        h.credits[2] = [0] * dut.params.vcs
        for n in range(8):
            h.element(0, n, expect=False)
        for _ in range(40):
            await h.step(ctx)
        assert ctx.get(dut.busy) == 0b01
        assert h.sent == []
        ctx.set(dut.abort, 0b01)
        cycles = 0
        while ctx.get(dut.busy) and cycles < 20:
            await h.step(ctx)
            cycles += 1
        assert cycles <= 8 + 2  # the queue empties at one result per cycle
        ctx.set(dut.abort, 0)
        assert not any(h.buffer[0])
        h.credit_back = 1.0
        h.element(1, 5, [0x99])
        await settle(h, ctx)
        assert [(o, f.payload) for _, o, f in h.sent] == [(0, 0x99), (LOCAL, 0x99)]
        assert h.pulses == {"dropped": 0, "mismatch": 0, "unsupported": 0}

    run(dut, bench)


@pytest.mark.rtl
def test_unsupported_and_stray_flits_are_flagged_and_discarded():
    dut = engine(ids=3)
    rng = random.Random(7)

    async def bench(ctx):
        h = Harness(dut, rng)
        h.configure(0, req_in=[0, 1], op=Op.AND, dtype=DType.FP32, req_out=2)
        h.configure(1, req_in=[0, 1], op=Op.MUL, dtype=DType.INT32, req_out=2)  # no multiplier
        h.configure(2, req_in=[1], req_out=2, enable=False)
        await h.apply(ctx)
        h.element(0, 1, expect=False)
        h.element(1, 1, expect=False)
        h.pending[2][1].append(Flit.request(2, 3, 9))  # id disabled
        await settle(h, ctx)
        h.pending[1][LOCAL].append(Flit.request(1, 4, 9))  # port not in req_in
        await settle(h, ctx)
        for _ in range(40):
            await h.step(ctx)
        assert h.sent == []
        assert h.pulses == {"dropped": 2, "mismatch": 0, "unsupported": 2}

    run(dut, bench)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"params": FlitParams(payload_width=16)}, ValueError,
     "The collective engine reduces 32-bit payloads, not 16-bit ones"),
    ({"params": 3}, TypeError, "Params must be a FlitParams, not 3"),
    ({"radix": 0}, ValueError, "Radix must be at least 1, not 0"),
    ({"mul": "yes"}, TypeError, "Multiplier option must be a bool, not 'yes'"),
    ({"queue_depth": 2}, ValueError, "Queue depth must be at least 3, not 2"),
    ({"depth": 0}, ValueError, "Request buffer depth must be at least 1, not 0"),
    ({"depth": 70000}, ValueError, "Request buffer depth must be at most 4096, not 70000"),
    ({"radix": 10**6}, ValueError, "Radix must be at most 1024, not 1000000"),
    ({"queue_depth": 10**9}, ValueError, "Queue depth must be at most 4096, not 1000000000"),
])
def test_parameter_errors(kwargs, error, message):
    args = {"params": FlitParams(), "radix": 3} | kwargs
    with pytest.raises(error, match=rf"^{message}$"):
        CollectiveEngine(**args)


def test_defaults():
    e = CollectiveEngine(FlitParams(), 8)
    assert (e.reduce_cycles, e.queue_depth, e.depth, e.mul) == (17, 17 + FRONT_CYCLES + 1, 5,
                                                                False)
    # With multipliers the tree of 9 operands (4 levels) is the longer reduction.
    assert CollectiveEngine(FlitParams(), 8, mul=True).queue_depth == 4 * LATENCY + 4
    assert [engine_latency(k, 8) for k in (1, 2, 3, 4, 5, 8, 9)] == [4] + [4 + 17] * 6
    assert [engine_latency(k, 8, Op.MUL) for k in (1, 2, 3, 4, 5, 8, 9)] == [
        1 + FRONT_CYCLES + LATENCY * levels for levels in (0, 1, 2, 2, 3, 3, 4)]
