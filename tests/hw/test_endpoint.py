# amaranth: UnusedElaboratable=no
"""hw.endpoint in amaranth.sim: registers and memory window, the collective intrinsic and the
step engine against a Python model of the switches, with seeded random stalls; parameter errors.

The network model (tests/endpoint_net.py) checks the link protocol (no flit without a credit,
every credit returned) and accounts for every flit; results are checked bit-exactly against
numpy (intrinsic: a fold in endpoint order with innet.gen.ops.combine) and against
innet.gen.swing.golden (step engine). Endpoints are programmed with innet.gen.image's
endpoint_registers, the path the product's images take.
"""

import random
import re

import numpy as np
import pytest
from amaranth import Module, Value
from amaranth.lib.memory import Memory
from amaranth.sim import Simulator
from endpoint_net import ModelNet

from innet.gen import ops
from innet.gen.image import MapParams
from innet.gen.image.build import endpoint_registers
from innet.gen.regmap import CollectiveMode
from innet.gen.swing import build_schedule, golden
from innet.hw.endpoint import Endpoint, Message, cts_flit, data_flit, message_of
from innet.hw.endpoint.intrinsic import Intrinsic
from innet.hw.flit import Flit, FlitParams, Kind
from innet.sim.tb.bus import sim_read, sim_write

PARAMS = FlitParams(routing_depth=4, collective_ids=2, p2p_vcs=1, index_width=8, tag_width=4)


def make(count: int, vector_depth: int = 16, step_depth: int = 12, **kwargs):
    eps = [Endpoint(PARAMS, vector_depth=vector_depth, step_depth=step_depth, **kwargs)
           for _ in range(count)]
    m = Module()
    for k, ep in enumerate(eps):
        m.submodules[f"ep{k}"] = ep
    sim = Simulator(m)
    sim.add_clock(1e-9)
    return eps, sim


def random_bits(rng: np.random.Generator, dtype: ops.DType, shape) -> np.ndarray:
    """Inputs that exercise the type: any pattern for integers; for fp32 mostly moderate
    values of both signs, some zeros, subnormals, infinities and NaNs."""
    bits = rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)
    if dtype is not ops.DType.FP32:
        return bits
    values = rng.uniform(-4, 4, size=shape).astype(np.float32)
    out = ops.to_bits(values, dtype)
    special = rng.random(shape) < 0.1
    pool = np.array([0x0, 0x80000000, 0x1, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001,
                     0x7F7FFFFF], dtype=np.uint32)
    out[special] = pool[rng.integers(0, len(pool), size=int(special.sum()))]
    return out


def map_params(ep: Endpoint) -> MapParams:
    return MapParams(radix=1, collective_ids=PARAMS.collective_ids,
                     routing_depth=PARAMS.routing_depth, step_depth=ep.step_depth,
                     vector_depth=ep.vector_depth, node_id_width=PARAMS.node_width)


async def load_vector(ctx, ep, base: int, values) -> None:
    await sim_write(ctx, ep.cfg, ep.memory_base + base, [int(v) for v in values])


async def read_vector(ctx, ep, base: int, n: int) -> list[int]:
    return [await sim_read(ctx, ep.cfg, ep.memory_base + base + i) for i in range(n)]


async def write_reg(ctx, ep, name: str, **fields) -> None:
    reg = ep.regmap[name]
    await sim_write(ctx, ep.cfg, reg.address, [reg.encode(fields)])


async def read_reg(ctx, ep, name: str) -> dict:
    reg = ep.regmap[name]
    return reg.decode(await sim_read(ctx, ep.cfg, reg.address))


async def start(ctx, ep, unit: str) -> None:
    """Write ``unit.ctrl.start`` and wait until the status shows the start (2 cycles)."""
    await write_reg(ctx, ep, f"{unit}.ctrl", start=1)
    await ctx.tick()


async def wait_until(ctx, predicate, limit: int, what: str) -> int:
    for cycle in range(limit):
        if predicate():
            return cycle
        await ctx.tick()
    raise AssertionError(f"{what} did not happen within {limit} cycles")


# -- parameters -------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"params": None}, TypeError, "Params must be a FlitParams, not None"),
    ({"params": FlitParams(payload_width=16)}, ValueError,
     "Endpoint elements are 32 bits: the payload width must be 32, not 16"),
    ({"params": FlitParams(tag_width=1)}, ValueError,
     "Endpoint needs a tag width of at least 2 (the message class), not 1"),
    ({"vector_depth": 0}, ValueError, "Vector depth must be at least 1, not 0"),
    ({"vector_depth": 257}, ValueError,
     "Vector depth must be at most 256 (a 8-bit flit index), not 257"),
    ({"vector_depth": 2.0}, TypeError, "Vector depth must be an integer, not 2.0"),
    ({"step_depth": 0}, ValueError, "Step depth must be at least 1, not 0"),
    ({"step_depth": 300}, ValueError,
     "Step depth must be at most 256 (a 8-bit flit index), not 300"),
    ({"params": FlitParams(), "step_depth": 65536}, ValueError,
     "Step depth must be at most 65535, not 65536"),
    ({"buffer_depth": 0}, ValueError, "Buffer depth must be at least 1, not 0"),
    ({"buffer_depth": 99999999999}, ValueError,
     "Buffer depth must be at most 4096, not 99999999999"),
    ({"local_depth": "6"}, TypeError, "Local depth must be an integer, not '6'"),
    ({"node_id_width": 33}, ValueError, "Node id width must be at most 32, not 33"),
    ({"mul": 1}, TypeError, "Multiplier option must be a bool, not 1"),
])
def test_parameter_errors(kwargs, error, message):
    args = {"params": PARAMS, "vector_depth": 16, **kwargs}
    params = args.pop("params")
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Endpoint(params, **args)


def test_for_switch_takes_the_switch_parameters():
    from innet.hw.switch import Switch

    sw = Switch(2, buffer_depth=6, routing_depth=8, collective_ids=2, local_depth=5)
    ep = Endpoint.for_switch(sw, vector_depth=100, step_depth=3)
    assert (ep.params, ep.buffer_depth, ep.local_depth) == (sw.params, 6, 5)
    assert ep.regmap.params == {"collective_ids": 2, "step_depth": 3, "vector_depth": 100,
                                "node_id_width": sw.params.node_width}
    # The window sits above the registers and holds the whole memory.
    assert ep.memory_base >= max(ep.regmap.size, 100)
    assert ep.address_width == ep.memory_base.bit_length()


def test_protocol_flits():
    f = data_flit(PARAMS, src=1, dst=2, entry=5, index=7, payload=0xABCD)
    assert (message_of(f), f.tag >> 2, f.index, f.dst, f.src) == (Message.DATA, 1, 7, 2, 1)
    c = cts_flit(PARAMS, src=3, dst=0, entry=6)
    assert (message_of(c), c.index, c.tag >> 2) == (Message.CTS, 6, 2)
    assert message_of(Flit.p2p(0, 1, 5, tag=0b1100)) is Message.HOST
    assert message_of(Flit.p2p(0, 1, 5, tag=0b0011)) is None
    assert message_of(Flit.request(0, 1, 2)) is None


# -- registers and memory window ----------------------------------------------------------------

@pytest.mark.rtl
def test_registers_and_memory_window():
    (ep,), sim = make(1, vector_depth=20)
    rng = random.Random(3)
    values = [rng.getrandbits(32) for _ in range(20)]

    async def bench(ctx):
        regmap = ep.regmap
        for reg in regmap:
            if reg.name.startswith("step[") and reg.index[0] > 1:
                continue
            assert await sim_read(ctx, ep.cfg, reg.address) == (reg.reset & 0xFFFF_FFFF), reg.name
        await write_reg(ctx, ep, "vec_len", count=17)
        await write_reg(ctx, ep, "step[1].recv_first", index=9)
        assert (await read_reg(ctx, ep, "vec_len"))["count"] == 17
        assert (await read_reg(ctx, ep, "step[1].recv_first"))["index"] == 9
        await load_vector(ctx, ep, 0, values)
        assert await read_vector(ctx, ep, 0, 20) == values
        # Holes between the registers and the window, and beyond the memory, read 0 and do not
        # alias the registers.
        for address in (regmap.size + 1, ep.memory_base - 1, ep.memory_base + 20,
                        2 * ep.memory_base - 1):
            await sim_write(ctx, ep.cfg, address, [0xFFFF_FFFF])
            assert await sim_read(ctx, ep.cfg, address) == 0
        assert await read_vector(ctx, ep, 0, 20) == values
        assert (await read_reg(ctx, ep, "vec_len"))["count"] == 17
        assert ctx.get(ep.quiet) == 1

    sim.add_testbench(bench)
    sim.run()


# -- the collective intrinsic -------------------------------------------------------------------

@pytest.mark.rtl
@pytest.mark.parametrize(("op", "dtype", "seed"), [
    ("add", "int32", 1), ("max", "fp32", 2), ("xor", "uint32", 3), ("add", "fp32", 4)])
def test_intrinsic_allreduce(op, dtype, seed):
    count, n, base = 3, 13, 2
    eps, sim = make(count, vector_depth=16)
    op, dtype = ops.Op.parse(op), ops.DType.parse(dtype)
    net = ModelNet(eps, seed=seed, stall=0.3, collective={1: (op, dtype, [0, 1, 2])})
    rng = np.random.default_rng(seed)
    inputs = random_bits(rng, dtype, (count, n))
    expected = inputs[0]
    for k in range(1, count):
        expected = ops.combine(op, dtype, expected, inputs[k])
    py = random.Random(seed)

    async def bench(ctx):
        for k, ep in enumerate(eps):
            await load_vector(ctx, ep, base, inputs[k])
            await write_reg(ctx, ep, "vec_base", index=base)
            await write_reg(ctx, ep, "coll.cmd", cid=1, op=op, dtype=dtype)
            await write_reg(ctx, ep, "coll.count", count=n)
        for ep in eps:
            for _ in range(py.randrange(12)):
                await ctx.tick()
            await start(ctx, ep, "coll")
            assert ctx.get(ep.coll_status.busy) == 1
        await wait_until(ctx, lambda: all(ctx.get(ep.coll_status.done) for ep in eps), 3000,
                         "done on every endpoint")
        await wait_until(ctx, lambda: all(ctx.get(ep.quiet) for ep in eps), 100, "quiet")
        for k, ep in enumerate(eps):
            assert await read_vector(ctx, ep, base, n) == expected.tolist()
            assert await read_reg(ctx, ep, "coll.status") == {"busy": 0, "done": 1, "error": 0}
            assert (await read_reg(ctx, ep, "coll.sent"))["count"] == n
            assert (await read_reg(ctx, ep, "coll.received"))["count"] == n
            assert await sim_read(ctx, ep.cfg, ep.memory_base + base - 1) == 0  # untouched
            assert (len(net.sent[k]), len(net.delivered[k])) == (n, n)
        net.check_empty()

    sim.add_testbench(net.run, background=True)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.rtl
@pytest.mark.parametrize(("mode", "count"), [
    (CollectiveMode.BOTH, 3), (CollectiveMode.SEND, 3), (CollectiveMode.RECV, 3),
    (CollectiveMode.BARRIER, 5), (CollectiveMode.BOTH, 0)])
def test_intrinsic_cycles(mode, count):
    """A start that is taken reads the first element in its own cycle (only if it sends), so
    its request is offered in the next cycle, held while the link refuses it, and the rest
    follow one a cycle; ``done`` rises in the cycle after the last request is taken or the
    last response written, whichever is later (and not before). A refused start reads
    nothing."""
    base = 2
    sends = mode != CollectiveMode.RECV
    n = 1 if mode == CollectiveMode.BARRIER else count
    intr = Intrinsic(PARAMS, 8)
    m = Module()
    m.submodules.intr = intr
    m.submodules.memory = memory = Memory(shape=32, depth=8, init=[100 + e for e in range(8)])
    read = memory.read_port()
    m.d.comb += [read.addr.eq(intr.rd_addr), read.en.eq(intr.rd_en),
                 intr.rd_data.eq(read.data)]
    sim = Simulator(m)
    sim.add_clock(1e-9)
    payload = (lambda e: 0) if mode == CollectiveMode.BARRIER else (lambda e: 100 + base + e)

    async def bench(ctx):
        for name, value in (("cid", 1), ("mode", mode), ("count", count), ("base", base)):
            ctx.set(getattr(intr, name), value)
        ctx.set(intr.blocked, 1)
        ctx.set(intr.start, 1)
        assert ctx.get(intr.reading) == 0  # refused: another user owns the memory
        await ctx.tick()
        ctx.set(intr.blocked, 0)
        assert ctx.get(intr.status) == {"busy": 0, "done": 0, "error": 1}
        assert ctx.get(intr.reading) == (sends and n > 0)
        await ctx.tick()
        ctx.set(intr.start, 0)
        sent, done_at = [], None
        # The link refuses the first offer, then takes one a cycle.
        for cycle in range(n + 4):
            ctx.set(intr.tx.ready, cycle > 0)
            if ctx.get(intr.tx.valid):
                flit = ctx.get(intr.tx.payload)
                sent.append((cycle, flit.index, flit.payload))
            if done_at is None and ctx.get(intr.status.done):
                done_at = cycle
            await ctx.tick()
        want = [(0, 0, payload(0))] + [(e + 1, e, payload(e)) for e in range(n)]
        assert sent == (want if sends and n else [])
        if mode == CollectiveMode.SEND or n == 0:
            # Nothing to receive: done the cycle after the last take.
            assert done_at == n + 1
            return
        assert done_at is None
        for e in range(n):
            assert ctx.get(intr.status.done) == 0
            ctx.set(intr.rx.valid, 1)
            ctx.set(intr.rx.payload, {"kind": Kind.RESP, "cid": 1, "index": e,
                                      "payload": 7 * e})
            assert ctx.get(intr.wr_en) == (mode != CollectiveMode.BARRIER)
            await ctx.tick()
        ctx.set(intr.rx.valid, 0)
        assert ctx.get(intr.status) == {"busy": 0, "done": 1, "error": 0}

    sim.add_testbench(bench)
    sim.run()


@pytest.mark.rtl
@pytest.mark.parametrize("stall", [0.0, 0.3])
def test_the_window_is_the_intrinsics_from_the_cycle_after_its_start(stall):
    """The start's strobe comes the cycle after the write of coll.ctrl, and the intrinsic
    reads its first element in it: a window write in that cycle is ignored (the request and
    the result carry what the memory held) and a window read gives 0. The same with the
    network's deliveries stalled at random."""
    eps, sim = make(1, vector_depth=8)
    ep = eps[0]
    net = ModelNet(eps, seed=7, stall=stall,
                   collective={1: (ops.Op.ADD, ops.DType.INT32, [0])})

    async def bench(ctx):
        await load_vector(ctx, ep, 0, [5, 6])
        await write_reg(ctx, ep, "vec_base", index=0)
        await write_reg(ctx, ep, "coll.cmd", cid=1, op=ops.Op.ADD, dtype=ops.DType.INT32)
        await write_reg(ctx, ep, "coll.count", count=2)
        await write_reg(ctx, ep, "coll.ctrl", start=1)
        assert ctx.get(ep.coll_status.busy) == 0  # the strobe is on now
        await sim_write(ctx, ep.cfg, ep.memory_base + 1, [99])  # in the start's cycle: ignored
        assert ctx.get(ep.coll_status.busy) == 1
        await wait_until(ctx, lambda: ctx.get(ep.coll_status.done), 200, "done")
        await wait_until(ctx, lambda: ctx.get(ep.quiet), 100, "quiet")
        assert net.sent[0] == [Flit.request(1, 0, 5), Flit.request(1, 1, 6)]
        assert await read_vector(ctx, ep, 0, 2) == [5, 6]
        # Again, with a window read in the start's cycle.
        await write_reg(ctx, ep, "coll.ctrl", start=1)
        assert await sim_read(ctx, ep.cfg, ep.memory_base + 1) == 0
        await wait_until(ctx, lambda: ctx.get(ep.coll_status.done), 200, "done")
        await wait_until(ctx, lambda: ctx.get(ep.quiet), 100, "quiet")
        assert await sim_read(ctx, ep.cfg, ep.memory_base + 1) == 6
        net.check_empty()

    sim.add_testbench(net.run, background=True)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.rtl
def test_intrinsic_modes_and_errors():
    """A reduce to endpoint 0 (endpoint 1 only sends), a broadcast whose receiver starts late,
    a barrier, and the errors: stray responses while running, a start while busy, a start
    while the engine runs."""
    eps, sim = make(2, vector_depth=8)
    add, i32 = ops.Op.ADD, ops.DType.INT32
    net = ModelNet(eps, seed=5, stall=0.2,
                   collective={0: (add, i32, [0, 1], [0]), 1: (add, i32, [0, 1])})
    a = [10, 20, 30, 40]
    b = [1, 2, 3, 4]

    async def command(ctx, ep, mode, cid, count):
        await write_reg(ctx, ep, "coll.cmd", cid=cid, mode=mode)
        await write_reg(ctx, ep, "coll.count", count=count)
        await start(ctx, ep, "coll")

    async def finish(ctx, what):
        await wait_until(ctx, lambda: all(ctx.get(ep.coll_status.done) for ep in eps), 500,
                         f"{what} done")
        await wait_until(ctx, lambda: all(ctx.get(ep.quiet) for ep in eps), 100,
                         f"{what} quiet")

    async def bench(ctx):
        await load_vector(ctx, eps[0], 0, a)
        await load_vector(ctx, eps[1], 0, b)
        # Reduce to endpoint 0: endpoint 1 only sends.
        await command(ctx, eps[0], CollectiveMode.BOTH, 0, 4)
        await command(ctx, eps[1], CollectiveMode.SEND, 0, 4)
        await finish(ctx, "reduce")
        assert await read_vector(ctx, eps[0], 0, 4) == [11, 22, 33, 44]
        assert await read_vector(ctx, eps[1], 0, 4) == b
        for ep in eps:
            assert await read_reg(ctx, ep, "coll.status") == {"busy": 0, "done": 1, "error": 0}
        assert (await read_reg(ctx, eps[1], "coll.received"))["count"] == 0
        # Broadcast from 0 (the test stands in for the tree): endpoint 1's responses arrive
        # before it starts; they wait for the command instead of being lost.
        for i in (2, 0, 3, 1):
            net.inject(1, Flit.response(1, i, 100 + i))
        for _ in range(40):
            await ctx.tick()
        assert ctx.get(eps[1].quiet) == 0  # held in the response buffer, not an error
        assert await read_reg(ctx, eps[1], "coll.status") == {"busy": 0, "done": 1, "error": 0}
        await command(ctx, eps[1], CollectiveMode.RECV, 1, 4)
        await write_reg(ctx, eps[1], "coll.ctrl", start=1)  # while busy: refused, error
        await wait_until(ctx, lambda: ctx.get(eps[1].coll_status.done), 200, "broadcast done")
        assert await read_vector(ctx, eps[1], 0, 4) == [100, 101, 102, 103]
        assert await read_reg(ctx, eps[1], "coll.status") == {"busy": 0, "done": 1, "error": 1}
        # Barrier on id 1: one request each (payload 0), no memory access.
        for ep in eps:
            await command(ctx, ep, CollectiveMode.BARRIER, 1, 3)
        await finish(ctx, "barrier")
        for k, ep in enumerate(eps):
            assert await read_reg(ctx, ep, "coll.status") == {"busy": 0, "done": 1, "error": 0}
            assert net.sent[k][-1] == Flit.request(1, 0, 0)
            assert (await read_reg(ctx, ep, "coll.received"))["count"] == 1
        assert await read_vector(ctx, eps[0], 0, 4) == [11, 22, 33, 44]
        # Stray responses while running (other id, index beyond the count) are discarded with
        # an error; the right one is written.
        await command(ctx, eps[0], CollectiveMode.RECV, 0, 1)
        net.inject(0, Flit.response(1, 0, 7))
        net.inject(0, Flit.response(0, 5, 8))
        net.inject(0, Flit.response(0, 0, 9))
        await wait_until(ctx, lambda: ctx.get(eps[0].coll_status.done), 200, "recv done")
        await wait_until(ctx, lambda: ctx.get(eps[0].quiet), 100, "quiet")
        assert await read_reg(ctx, eps[0], "coll.status") == {"busy": 0, "done": 1, "error": 1}
        assert await read_vector(ctx, eps[0], 0, 2) == [9, 22]
        # The engine refuses to start while the intrinsic runs.
        await command(ctx, eps[0], CollectiveMode.RECV, 0, 1)
        await write_reg(ctx, eps[0], "engine.cfg", steps=1)
        await start(ctx, eps[0], "engine")
        assert await read_reg(ctx, eps[0], "engine.status") == {"busy": 0, "done": 0,
                                                                "error": 1}
        net.inject(0, Flit.response(0, 0, 1))
        await wait_until(ctx, lambda: ctx.get(eps[0].coll_status.done), 200, "recv done")
        net.check_empty()

    sim.add_testbench(net.run, background=True)
    sim.add_testbench(bench)
    sim.run()


# -- the step engine ------------------------------------------------------------------------------

def run_schedule(algorithm, shape, op, dtype, n, seed, *, base=1, stall=0.3, step_depth=12):
    schedule = build_schedule(algorithm, shape)
    count = schedule.ranks
    eps, sim = make(count, vector_depth=16, step_depth=step_depth)
    net = ModelNet(eps, seed=seed, stall=stall)
    op, dtype = ops.Op.parse(op), ops.DType.parse(dtype)
    rng = np.random.default_rng(seed)
    inputs = random_bits(rng, dtype, (count, n))
    expected = golden(schedule, op, dtype, inputs)
    params = map_params(eps[0])
    assert params.endpoint_map.digest == eps[0].regmap.digest
    py = random.Random(seed)
    result = {}

    async def bench(ctx):
        for k, ep in enumerate(eps):
            values = endpoint_registers(k, params, schedule=schedule, elements=n, op=op,
                                        dtype=dtype, vec_base=base)
            for address, word in params.endpoint_map.pack(values):
                await sim_write(ctx, ep.cfg, address, [word])
            await load_vector(ctx, ep, base, inputs[k])
        order = list(range(count))
        py.shuffle(order)
        for k in order:
            for _ in range(py.randrange(30)):
                await ctx.tick()
            await start(ctx, eps[k], "engine")
        cycles = await wait_until(ctx, lambda: all(ctx.get(ep.engine_status.done)
                                                   for ep in eps), 20000, "done everywhere")
        await wait_until(ctx, lambda: all(ctx.get(ep.quiet) for ep in eps), 100, "quiet")
        for k, ep in enumerate(eps):
            assert await read_vector(ctx, ep, base, n) == expected[k].tolist(), f"rank {k}"
            assert await read_reg(ctx, ep, "engine.status") == {"busy": 0, "done": 1,
                                                                "error": 0}
            steps = len(schedule.table(k))
            assert (await read_reg(ctx, ep, "engine.current"))["step"] == steps
        net.check_empty()
        result["cycles"] = cycles
        result["net"] = net

    sim.add_testbench(net.run, background=True)
    sim.add_testbench(bench)
    sim.run()
    return result


@pytest.mark.rtl
@pytest.mark.parametrize(("algorithm", "shape", "op", "dtype", "n", "seed"), [
    ("swing-l", 2, "add", "fp32", 7, 1),
    ("swing-b", 2, "mul", "int32", 9, 2),
    ("recdoub-b", 4, "min", "fp32", 11, 3),
    ("ring", 3, "add", "uint32", 10, 4),
    ("swing-l", 3, "nor", "int32", 5, 5),
])
def test_step_engine_schedules(algorithm, shape, op, dtype, n, seed):
    out = run_schedule(algorithm, shape, op, dtype, n, seed)
    net = out["net"]
    # Every DATA flit went to its entry's peer; one CTS per receiving entry.
    schedule = build_schedule(algorithm, shape)
    for k in range(schedule.ranks):
        kinds = [message_of(f) for f in net.sent[k]]
        params = map_params(net.eps[0])
        table = endpoint_registers(k, params, schedule=schedule, elements=n)
        entries = range(len(schedule.table(k)))
        want_data = sum(table[f"step[{e}].send_count"]["count"] for e in entries)
        want_cts = sum(table[f"step[{e}].flags"]["recv"] for e in entries)
        assert kinds.count(Message.DATA) == want_data
        assert kinds.count(Message.CTS) == want_cts
        assert len(kinds) == want_data + want_cts


@pytest.mark.rtl
def test_step_engine_errors_and_restart():
    """Stray DATA and CTS flits raise ``error`` and are discarded; too many steps is refused;
    a second run of the same table gives the same result."""
    schedule = build_schedule("recdoub-l", 2)
    eps, sim = make(2, vector_depth=8, step_depth=2)
    net = ModelNet(eps, seed=7, stall=0.3)
    params = map_params(eps[0])
    inputs = np.array([[1, 2, 3], [10, 20, 30]], dtype=np.uint32)

    async def program(ctx):
        for k, ep in enumerate(eps):
            values = endpoint_registers(k, params, schedule=schedule, elements=3)
            for address, word in params.endpoint_map.pack(values):
                await sim_write(ctx, ep.cfg, address, [word])
            await load_vector(ctx, ep, 0, inputs[k])

    async def start_all(ctx, which=eps):
        for ep in which:
            await start(ctx, ep, "engine")
        await wait_until(ctx, lambda: all(ctx.get(ep.engine_status.done) for ep in eps), 2000,
                         "done")
        await wait_until(ctx, lambda: all(ctx.get(ep.quiet) for ep in eps), 100, "quiet")

    async def bench(ctx):
        await program(ctx)
        await start_all(ctx)
        for ep in eps:
            assert await read_vector(ctx, ep, 0, 3) == [11, 22, 33]
            assert (await read_reg(ctx, ep, "engine.status"))["error"] == 0
        # The same table again on new inputs (CTS bits of a rerun are not confused); the
        # intrinsic refuses to start while the engine runs (endpoint 0 waits for endpoint 1).
        await program(ctx)
        await start(ctx, eps[0], "engine")
        await start(ctx, eps[0], "coll")
        assert await read_reg(ctx, eps[0], "coll.status") == {"busy": 0, "done": 0, "error": 1}
        assert ctx.get(eps[0].engine_status.busy) == 1
        await start_all(ctx, eps[1:])
        for ep in eps:
            assert await read_vector(ctx, ep, 0, 3) == [11, 22, 33]
            assert (await read_reg(ctx, ep, "engine.status"))["error"] == 0
        # Stray flits while idle: DATA, a CTS beyond the table, a message of class 3.
        net.inject(0, data_flit(PARAMS, src=1, dst=0, entry=0, index=0, payload=5))
        net.inject(0, cts_flit(PARAMS, src=1, dst=0, entry=9))
        net.inject(1, Flit.p2p(1, 0, 0, tag=3))
        await wait_until(ctx, lambda: ctx.get(eps[0].quiet) and ctx.get(eps[1].quiet)
                         and ctx.get(eps[1].errors.stray), 200, "strays taken")
        assert (await read_reg(ctx, eps[0], "engine.status"))["error"] == 1
        assert await read_vector(ctx, eps[0], 0, 3) == [11, 22, 33]  # not written
        # A duplicated CTS is an error too (the first is held until a run uses it).
        net.inject(1, cts_flit(PARAMS, src=0, dst=1, entry=1))
        net.inject(1, cts_flit(PARAMS, src=0, dst=1, entry=1))
        for _ in range(30):
            await ctx.tick()
        assert (await read_reg(ctx, eps[1], "engine.status"))["error"] == 1
        assert ctx.get(eps[1].quiet) == 0  # a CTS is held
        # More steps than the table holds: refused.
        await sim_write(ctx, eps[0].cfg, eps[0].regmap["engine.cfg"].address, [3])
        await start(ctx, eps[0], "engine")
        assert await read_reg(ctx, eps[0], "engine.status") == {"busy": 0, "done": 0,
                                                                "error": 1}
        net.check_empty()

    sim.add_testbench(net.run, background=True)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.rtl
def test_host_p2p_passes_through():
    """Host flits leave with the node id as source, class HOST, and reach the other host,
    in order, while a step table runs."""
    eps, sim = make(2, vector_depth=8, step_depth=4)
    net = ModelNet(eps, seed=11, stall=0.3)
    schedule = build_schedule("swing-b", 2)
    params = map_params(eps[0])
    rng = random.Random(11)
    sent = [[Flit.p2p(1 - k, 0, rng.getrandbits(32), tag=rng.getrandbits(4), index=j)
             for j in range(12)] for k in range(2)]
    got = [[], []]
    programmed = []

    async def host(ctx, k):
        ep = eps[k]
        queue = list(sent[k])
        while not programmed:
            await ctx.tick()
        while queue or len(got[k]) < len(sent[1 - k]):
            ctx.set(ep.p2p_rx.ready, rng.random() < 0.5)
            if queue:
                ctx.set(ep.p2p_tx.valid, 1)
                ctx.set(Value.cast(ep.p2p_tx.payload), PARAMS.pack(queue[0].replace(src=3)))
            else:
                ctx.set(ep.p2p_tx.valid, 0)
            taken = queue and ctx.get(ep.p2p_tx.ready)
            if ctx.get(ep.p2p_rx.valid) and ctx.get(ep.p2p_rx.ready):
                got[k].append(PARAMS.unpack(ctx.get(Value.cast(ep.p2p_rx.payload))))
            await ctx.tick()
            if taken:
                queue.pop(0)
        ctx.set(ep.p2p_tx.valid, 0)

    async def bench(ctx):
        for k, ep in enumerate(eps):
            values = endpoint_registers(k, params, schedule=schedule, elements=6)
            for address, word in params.endpoint_map.pack(values):
                await sim_write(ctx, ep.cfg, address, [word])
            await load_vector(ctx, ep, 0, [k + 1] * 6)
        programmed.append(True)
        for ep in eps:
            await start(ctx, ep, "engine")
        await wait_until(ctx, lambda: all(ctx.get(ep.engine_status.done) for ep in eps), 3000,
                         "done")
        await wait_until(ctx, lambda: len(got[0]) == 12 and len(got[1]) == 12, 3000, "host")
        await wait_until(ctx, lambda: all(ctx.get(ep.quiet) for ep in eps), 100, "quiet")
        for k in range(2):
            assert await read_vector(ctx, eps[k], 0, 6) == [3] * 6
            want = [f.replace(src=1 - k, tag=f.tag & ~3) for f in sent[1 - k]]
            assert got[k] == want
        net.check_empty()

    sim.add_testbench(net.run, background=True)
    def host_of(k):
        async def run(ctx):
            await host(ctx, k)
        return run

    for k in range(2):
        sim.add_testbench(host_of(k), background=True)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.rtl
@pytest.mark.parametrize(("seed", "stall"), [(13, 0.0), (14, 0.3)])
def test_step_engine_overlapping_ranges_with_different_peers(seed, stall):
    """A table the generators do not produce but the registers allow: each rank sends to the
    next and receives from the previous. Rank 0 sends all 64 elements and receives the last 16,
    which arrive before its snapshot has copied them: the receive must wait for the snapshot
    (without that wait this test fails), so that the send carries the values from before the
    entry. Without stalls the data arrive as early as they can; with random stalls of the
    network's deliveries, in other orders."""
    from innet.gen.swing import Schedule

    blocks = [(0, 4), (3, 4), (3, 4)]  # rank r sends these blocks to r + 1
    send_peer = [[[1, 2, 0]]]
    recv_peer = [[[2, 0, 1]]]
    send = [[blocks]]
    recv = [[[blocks[2], blocks[0], blocks[1]]]]
    schedule = Schedule("rotate", (3,), [4], send_peer, recv_peer, send, recv, [[True]])
    eps, sim = make(3, vector_depth=64, step_depth=1)
    net = ModelNet(eps, seed=seed, stall=stall)
    params = map_params(eps[0])
    n = 64
    inputs = random_bits(np.random.default_rng(seed), ops.DType.INT32, (3, n))
    expected = golden(schedule, "add", "int32", inputs)

    async def bench(ctx):
        for k, ep in enumerate(eps):
            values = endpoint_registers(k, params, schedule=schedule, elements=n)
            for address, word in params.endpoint_map.pack(values):
                await sim_write(ctx, ep.cfg, address, [word])
            await load_vector(ctx, ep, 0, inputs[k])
        for ep in eps:
            await start(ctx, ep, "engine")
        await wait_until(ctx, lambda: all(ctx.get(ep.engine_status.done) for ep in eps), 3000,
                         "done")
        await wait_until(ctx, lambda: all(ctx.get(ep.quiet) for ep in eps), 100, "quiet")
        for k, ep in enumerate(eps):
            assert await read_vector(ctx, ep, 0, n) == expected[k].tolist(), f"rank {k}"
        net.check_empty()

    sim.add_testbench(net.run, background=True)
    sim.add_testbench(bench)
    sim.run()
