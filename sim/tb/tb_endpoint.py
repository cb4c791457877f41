"""cocotb testbench for endpoints in a small network (innet.sim.tb.endpointbench.EndpointBench).

Each *run* builds a configuration image with :func:`innet.gen.image.build_image` (routing
tables, step tables from :func:`innet.gen.swing.build_schedule`, in-network trees from
:func:`innet.gen.embed.embed`), writes it through the configuration buses, loads random input
vectors through the endpoints' memory windows, starts every endpoint after a random delay,
waits for ``done`` and reads every vector back: step-table results must equal
:func:`innet.gen.swing.golden` bit for bit, intrinsic runs (an in-network broadcast from a
root through the bench's switches, the default :class:`innet.hw.switch.Switch` with its
reducing collective engine) the root's vector. Between runs the design is not reset: the next
image is written over the last one once everything is quiet.

A monitor sees every flit an endpoint sends and every flit delivered to one, and matches them
in a scoreboard: each p2p flit exactly once at its destination, in order per source, each
collective response at every endpoint the tree delivers to; at the end of every run the
scoreboard must be empty, every node quiet (nothing buffered, every credit home, no CTS
held) and every error flag clear. Random backpressure comes from the throttles between the
switches and the endpoints (``stall_rate``) and, with ``background``, from host p2p traffic
with random host backpressure.

Parameters (:func:`innet.sim.tb.kit.params`): ``shape`` (torus), ``flit`` (FlitParams fields),
``sizes`` (image map parameters), ``addr_width``, ``endpoint_digest``, ``seed``, and per test:
``runs`` (list of run specs: ``algorithm``, ``schedule_shape``, ``op``, ``dtype``, ``elements``,
``base``, ``stall``, ``background``, ``delay``), ``random_runs`` (count), ``monitor``,
``intrinsic`` (list of ``{"root", "elements", "stall"}``).
"""

from __future__ import annotations

import functools
import random
from collections import defaultdict

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from innet.gen import ops
from innet.gen.deadlock import check, image_graph
from innet.gen.embed import embed
from innet.gen.image import build_image
from innet.gen.regmap import CollectiveMode
from innet.gen.routing import routing
from innet.gen.swing import ALGORITHMS, build_schedule, golden
from innet.gen.topology import torus
from innet.hw.endpoint import Message, message_of
from innet.hw.flit import Flit, FlitParams, Kind
from innet.sim.tb import kit
from innet.sim.tb.bus import ConfigBus
from innet.sim.tb.hosttraffic import HostTraffic
from innet.sim.tb.links import Scoreboard

__all__ = ["TB", "test_intrinsic", "test_measure", "test_random_runs", "test_schedules"]

SUPPORTED = [(op, dtype) for dtype in ops.DType for op in ops.Op if ops.is_supported(op, dtype)]


class TB:
    """Buses, flit monitor and scoreboard, host traffic, image loading and result checks."""

    def __init__(self, dut) -> None:
        P = kit.params()
        self.dut = dut
        self.P = P
        self.p = FlitParams(**P["flit"])
        self.topology = torus(tuple(P["shape"]))
        self.n = self.topology.nodes
        self.routes = routing(self.topology)
        self.sizes = P["sizes"]
        self.bus = ConfigBus(dut, addr_width=P["addr_width"])
        self.rng = random.Random(P.get("seed", 1))
        self.np_rng = np.random.default_rng(P.get("seed", 1))
        self.sb = Scoreboard()
        self.cycle = 0
        self.monitoring = False
        self.deliver: dict[int, list[int]] = {}  # collective id -> endpoints getting responses
        self.host = HostTraffic(dut, self.p, self.n, self.rng, ready_rate=0.6)
        self.flits = defaultdict(int)  # message class -> flits sent
        self.timeline: dict[str, list[int]] = {}  # "node:entry:what" -> [first, last, count]
        self.checked: tuple | None = None  # the switches' writes last checked for deadlock

    # -- bring-up --------------------------------------------------------------------------------

    async def start(self) -> None:
        dut = self.dut
        for name in ("cfg_addr", "cfg_w_data", "cfg_w_en", "stall_rate", "host_tx_valid",
                     "host_tx_payload"):
            getattr(dut, name).value = 0
        dut.host_rx_ready.value = (1 << self.n) - 1
        dut.rng_seed.value = self.rng.getrandbits(32)
        dut.rng_load.value = 1
        await kit.reset(dut)
        dut.rng_load.value = 0
        cocotb.start_soon(self._clock())

    async def _clock(self) -> None:
        while True:
            await FallingEdge(self.dut.clk)
            self.cycle += 1
            if self.monitoring:
                self._monitor()
            if self.monitoring:
                self.host.tick()

    # -- configuration buses ---------------------------------------------------------------------

    def ep_address(self, name: str) -> int:
        return self.emap[name].address

    async def start_units(self, unit: str, delays: list[int]) -> int:
        """Write ``unit.ctrl.start`` to every endpoint, endpoint ``k`` ``delays[k]`` cycles
        after the first; returns the cycle of the first start."""
        address = self.ep_address(f"{unit}.ctrl")
        word = self.emap[f"{unit}.ctrl"].encode({"start": 1})
        first = None
        for at, k in sorted((d, k) for k, d in enumerate(delays)):
            while first is not None and self.cycle - first < at:
                await FallingEdge(self.dut.clk)
            await self.bus.write_all({self.n + k: [(address, word)]})
            if first is None:
                first = self.cycle - 1
        await FallingEdge(self.dut.clk)
        return first

    async def wait_for(self, predicate, limit: int, what: str) -> int:
        for _ in range(limit):
            if predicate():
                return self.cycle
            await FallingEdge(self.dut.clk)
        dut = self.dut
        raise AssertionError(
            f"{what}: not within {limit} cycles (cycle {self.cycle}; intrinsic status "
            f"{dut.coll_status.value}, engine status {dut.engine_status.value}, quiet "
            f"{dut.quiet.value}, {self.sb.outstanding} flits expected)")

    def quiet(self) -> bool:
        n = self.n
        return int(self.dut.quiet.value) == (1 << n) - 1 and not self.sb.pending

    # -- monitor and scoreboard ------------------------------------------------------------------

    def _monitor(self) -> None:
        dut, p, w = self.dut, self.p, self.p.width
        mask = (1 << w) - 1
        sent = int(dut.mon_tx_valid.value)
        if sent:
            payloads = int(dut.mon_tx_payload.value)
            for k in range(self.n):
                if sent >> k & 1:
                    self._sent(k, p.unpack((payloads >> (w * k)) & mask))
        got = int(dut.mon_rx_valid.value)
        if got:
            payloads = int(dut.mon_rx_payload.value)
            for k in range(self.n):
                if got >> k & 1:
                    flit = p.unpack((payloads >> (w * k)) & mask)
                    self.sb.check(flit, k, flit, self.cycle)
                    message = message_of(flit)
                    if message is Message.HOST:
                        self.host.arrived()
                    elif message is Message.DATA:
                        self._time(k, flit.tag >> 2, "data_in")
                    elif flit.kind is Kind.RESP:
                        self._time(k, 0, "response_in")

    def _time(self, node: int, entry: int, what: str) -> None:
        """Record a flit of ``what`` at ``node`` for ``entry``: [first cycle, last, count]."""
        span = self.timeline.setdefault(f"{node}:{entry}:{what}", [self.cycle, self.cycle, 0])
        span[1] = self.cycle
        span[2] += 1

    def _sent(self, k: int, flit: Flit) -> None:
        if flit.kind is Kind.P2P:
            assert flit.src == k, f"endpoint {k} sent {flit} with the wrong source"
            assert flit.hop == 0, f"endpoint {k} sent {flit} on hop VC {flit.hop}"
            message = message_of(flit)
            assert message is not None, f"endpoint {k} sent {flit} of no message class"
            self.flits[message] += 1
            if message is Message.HOST:
                self.host.left(k, flit)
            if message in (Message.DATA, Message.CTS):
                self._time(k, flit.tag >> 2, message.name.lower())
            self.sb.expect(flit, flit.dst, flit, (k, flit.dst), self.cycle)
        elif flit.kind is Kind.REQ:
            self.flits["request"] += 1
            self._time(k, 0, "request")
            response = Flit.response(flit.cid, flit.index, flit.payload)
            for d in self.deliver[flit.cid]:
                self.sb.expect(response, d, response, ("resp", flit.cid), self.cycle)
        else:
            raise AssertionError(f"endpoint {k} sent a response {flit}")

    # -- one run --------------------------------------------------------------------------------

    def image(self, **kwargs):
        # The channel-dependency graph comes from the switches' registers alone, which most
        # runs leave as they were: checked when they change.
        image = build_image(self.topology, routes=self.routes, **self.sizes,
                            check_deadlock=False, **kwargs)
        switches = image.writes[:self.n]
        if switches != self.checked:
            check(image_graph(image))
            self.checked = switches
        assert image.params.endpoint_map.digest == self.P["endpoint_digest"]
        self.emap = image.params.endpoint_map
        return image

    async def load(self, image, vectors: dict[int, tuple[int, list[int]]]) -> None:
        """Write the image to every target and ``vectors[k] = (base, values)`` to endpoint k."""
        writes = {t: list(image.writes[t]) for t in range(2 * self.n)}
        await self.bus.write_all(writes)
        mem = self.P["memory_base"]
        await self.bus.write_all({self.n + k: [(mem + base + i, int(v))
                                               for i, v in enumerate(values)]
                                  for k, (base, values) in vectors.items()})

    async def read_vectors(self, base: int, count: int) -> list[list[int]]:
        mem = self.P["memory_base"]
        got = await self.bus.read_all({self.n + k: [mem + base + i for i in range(count)]
                                       for k in range(self.n)})
        return [got[self.n + k] for k in range(self.n)]

    async def status(self, name: str) -> list[dict]:
        address = self.ep_address(name)
        got = await self.bus.read_all({self.n + k: [address] for k in range(self.n)})
        return [self.emap[name].decode(got[self.n + k][0]) for k in range(self.n)]

    async def finish_run(self, what: str) -> None:
        await self.wait_for(self.quiet, 5000, f"{what}: quiet and scoreboard empty")
        assert int(self.dut.errors.value) == 0, f"{what}: error flags {self.dut.errors.value}"

    async def schedule_run(self, spec: dict) -> dict:
        """One step-table run; returns its measurements."""
        algorithm, shape = spec["algorithm"], spec["schedule_shape"]
        op, dtype = ops.Op.parse(spec["op"]), ops.DType.parse(spec["dtype"])
        n, base = spec["elements"], spec["base"]
        schedule = _schedule(algorithm, tuple(shape))
        what = f"{algorithm} {shape} {op.name.lower()} {dtype.name.lower()} n={n} base={base}"
        image = self.image(schedule=schedule, elements=n, op=op, dtype=dtype, vec_base=base)
        ranks = schedule.ranks
        inputs = kit.random_bits(self.np_rng, dtype, (self.n, n))
        expected = golden(schedule, op, dtype, inputs[:ranks])
        self.dut.stall_rate.value = spec.get("stall", 0)
        await self.load(image, {k: (base, inputs[k].tolist()) for k in range(self.n)})
        self.flits.clear()
        self.timeline = {}
        self.host.rate = spec.get("background", 0.0)
        delay = spec.get("delay", 0)
        first = await self.start_units("engine", [self.rng.randrange(delay + 1)
                                                  for _ in range(self.n)])
        end = await self.wait_for(lambda: int(self.dut.all_engines_done.value), 200_000,
                                  f"{what}: every engine done")
        self.host.stop()
        await self.wait_for(lambda: self.host.drained, 20_000, f"{what}: host queues")
        await self.finish_run(what)
        got = await self.read_vectors(base, n)
        for k in range(self.n):
            want = expected[k].tolist() if k < ranks else inputs[k].tolist()
            assert got[k] == want, f"{what}: endpoint {k} got {got[k]}, expected {want}"
        for k, st in enumerate(await self.status("engine.status")):
            assert st == {"busy": 0, "done": 1, "error": 0}, f"{what}: endpoint {k}: {st}"
        return {"cycles": end - first, "start": first, "elements": n,
                "data": self.flits[Message.DATA],
                "cts": self.flits[Message.CTS], "timeline": self.timeline}

    async def intrinsic_run(self, spec: dict) -> dict:
        """One in-network broadcast from ``root`` through the switches' collective engines: the
        root sends (mode BOTH) and receives its own vector back, the others receive (RECV)."""
        root, n, base = spec["root"], spec["elements"], spec.get("base", 0)
        tree = embed(self.topology, kind="broadcast", root=root, collective_id=spec["cid"])
        image = self.image(embeddings=[tree], elements=max(n, 1), vec_base=base)
        values = kit.random_bits(self.np_rng, ops.DType.UINT32, (self.n, n))
        self.dut.stall_rate.value = spec.get("stall", 0)
        await self.load(image, {k: (base, values[k].tolist()) for k in range(self.n)})
        self.deliver = {spec["cid"]: list(range(self.n))}
        writes = {}
        for k in range(self.n):
            mode = CollectiveMode.BOTH if k == root else CollectiveMode.RECV
            writes[self.n + k] = [
                (self.ep_address("coll.cmd"),
                 self.emap["coll.cmd"].encode({"cid": spec["cid"], "mode": mode})),
                (self.ep_address("coll.count"), self.emap["coll.count"].encode({"count": n}))]
        await self.bus.write_all(writes)
        self.flits.clear()
        self.timeline = {}
        delay = spec.get("delay", 0)
        first = await self.start_units("coll", [self.rng.randrange(delay + 1)
                                                for _ in range(self.n)])
        end = await self.wait_for(lambda: int(self.dut.all_coll_done.value), 200_000,
                                  "intrinsic done")
        await self.finish_run(f"broadcast from {root}")
        got = await self.read_vectors(base, n)
        for k in range(self.n):
            assert got[k] == values[root].tolist(), f"endpoint {k} got {got[k]}"
        sent = await self.status("coll.sent")
        received = await self.status("coll.received")
        for k, st in enumerate(await self.status("coll.status")):
            assert st == {"busy": 0, "done": 1, "error": 0}, (
                f"broadcast from {root}: endpoint {k}: {st}, sent {sent[k]}, received "
                f"{received[k]}")
        for k in range(self.n):
            assert sent[k]["count"] == (n if k == root else 0)
            assert received[k]["count"] == n
        return {"cycles": end - first, "start": first, "requests": self.flits["request"],
                "timeline": self.timeline}


@functools.cache
def _schedule(algorithm: str, shape: tuple[int, ...]):
    """:func:`innet.gen.swing.build_schedule`, once per (algorithm, shape): the random runs
    draw from a handful of them, and build each again for every run otherwise."""
    return build_schedule(algorithm, shape)


def _random_spec(rng: random.Random, nodes: int, vector_depth: int, step_depth: int) -> dict:
    shapes = [(nodes,)] + ([(2, 2)] if nodes == 4 else [])
    while True:
        shape = rng.choice(shapes)
        algorithm = rng.choice(ALGORITHMS)
        schedule = _schedule(algorithm, tuple(shape))
        if schedule.steps * schedule.collectives <= step_depth:
            break
    op, dtype = rng.choice(SUPPORTED)
    n = rng.randint(1, 24)
    return {"algorithm": algorithm, "schedule_shape": list(shape), "op": op.name.lower(),
            "dtype": dtype.name.lower(), "elements": n,
            "base": rng.randrange(vector_depth - n + 1), "stall": rng.choice([0, 32, 96, 160]),
            "delay": rng.choice([0, 5, 40])}


@cocotb.test()
async def test_schedules(dut):
    """The listed step-table runs, with the flit monitor."""
    tb = TB(dut)
    await tb.start()
    tb.monitoring = True
    results = []
    for spec in tb.P["runs"]:
        results.append(await tb.schedule_run(spec))
    kit.report(runs=results, host_flits=tb.host.got)
    assert tb.host.got == tb.host.sent


@cocotb.test()
async def test_random_runs(dut):
    """Seeded random runs (algorithm, operation, type, length, base, delays, stalls)."""
    tb = TB(dut)
    await tb.start()
    tb.monitoring = tb.P.get("monitor", True)
    sizes = tb.sizes
    count = tb.P["random_runs"]
    done = 0
    cycles = 0
    for _ in range(count):
        spec = _random_spec(tb.rng, tb.n, sizes["vector_depth"], sizes["step_depth"])
        out = await tb.schedule_run(spec)
        cycles += out["cycles"]
        done += 1
    kit.report(random_runs=done, run_cycles=cycles, total_cycles=tb.cycle)


@cocotb.test()
async def test_measure(dut):
    """The listed step-table runs and intrinsic runs, reported with their flit timelines."""
    tb = TB(dut)
    await tb.start()
    tb.monitoring = True
    runs = [await tb.schedule_run(spec) for spec in tb.P.get("runs", [])]
    intrinsic = [await tb.intrinsic_run(spec) for spec in tb.P.get("intrinsic", [])]
    kit.report(runs=runs, intrinsic=intrinsic)


@cocotb.test()
async def test_intrinsic(dut):
    """In-network broadcasts through the pass-through switches."""
    tb = TB(dut)
    await tb.start()
    tb.monitoring = tb.P.get("monitor", True)
    results = []
    for spec in tb.P["intrinsic"]:
        results.append(await tb.intrinsic_run(spec))
    kit.report(intrinsic=results)
