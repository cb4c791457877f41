"""cocotb testbench of a whole network (:class:`innet.sim.tb.networkbench.NetworkBench`: the
:class:`innet.hw.network.Network` with throttles and monitors on its local links).

Driven by :func:`innet.sim.network.simulate`, which prepares every run (its image, its
embeddings or schedule) and passes them as parameters. For each run the testbench

1. loads the run's image through the configuration bus with :class:`innet.sim.tb.loader.Loader`
   (validated, written, read back and compared; the first image in full, later ones only the
   words that changed) and the input vectors through the endpoints' memory windows;
2. for in-network scenarios writes each endpoint's command (``coll.cmd``: collective id and
   mode from the embedding: it sends if ``LOCAL`` is in its ``req_in``, receives if in its
   ``resp_out``; ``coll.count``);
3. starts every endpoint of the run in the same cycle (``cmd_coll_start`` or
   ``cmd_engine_start``), offers background host p2p traffic (:class:`HostTraffic`: uniform
   random destinations or a fixed random permutation, at the run's load; a source queue of
   :data:`HOST_QUEUE` flits),
   and waits for every endpoint's ``done``: the latency is the start cycle to the last
   ``done``;
4. drains the host traffic, waits until the network is quiet and the scoreboard empty, checks
   that no error flag is set, and reads every result back, comparing it bit for bit with the
   golden model: :func:`innet.sim.golden.embedding_results` (the embedding's exact reduction
   order) for in-network collectives, :func:`innet.gen.swing.golden` for step schedules.

A monitor on every endpoint's local link matches flits in a scoreboard: every p2p flit (host,
DATA, CTS) exactly once at its destination, in order per source and destination; every
in-network response exactly once per element at every endpoint the tree delivers to, with the
golden value. Random backpressure: the bench's credit throttles on the local links
(``stall_rate``) and random host receive readiness.

Parameters: ``topology`` (JSON), ``flit``, ``memory_base``, ``endpoint_digest``,
``switch_digest``, ``seed``, ``stall_rate``, ``runs`` (see :func:`innet.sim.network.simulate`).
Output: ``runs``, one entry per scenario.
"""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from innet.gen import ops
from innet.gen.embed import Embedding
from innet.gen.image import decode
from innet.gen.regmap import CollectiveMode
from innet.gen.swing import build_schedule, golden
from innet.gen.topology import LOCAL, Topology
from innet.hw.endpoint import Message, message_of
from innet.hw.flit import Flit, FlitParams, Kind
from innet.sim.golden import embedding_results
from innet.sim.tb import kit
from innet.sim.tb.bus import ConfigBus
from innet.sim.tb.hosttraffic import HostTraffic
from innet.sim.tb.links import Scoreboard
from innet.sim.tb.loader import Loader

__all__ = ["HOST_QUEUE", "TB", "test_runs"]

#: Host flits a node's source queue holds (offered load beyond what the network takes is
#: dropped at the source, as a host that stops generating when its queue is full).
HOST_QUEUE = 8


class TB:
    """Bus, loader, monitors, scoreboards, host traffic and result checks."""

    def __init__(self, dut) -> None:
        P = self.P = kit.params()
        self.dut = dut
        self.p = FlitParams(**P["flit"])
        self.topology = Topology.from_json(P["topology"])
        self.n = self.topology.nodes
        self.rng = random.Random(P.get("seed", 1))
        self.np_rng = np.random.default_rng(P.get("seed", 1))
        self.bus = ConfigBus(dut, select=True)
        self.loader = Loader(self.bus, switch_digest=P["switch_digest"],
                             endpoint_digest=P["endpoint_digest"], nodes=self.n)
        self.sb = Scoreboard()
        self.cycle = 0
        self.host = HostTraffic(dut, self.p, self.n, self.rng, ready_rate=0.7,
                                queue_limit=HOST_QUEUE)
        self.responses: dict[tuple[int, int], dict[int, int]] = {}  # (node, cid) -> index: v
        self.golden_resp: dict[tuple[int, int], np.ndarray] = {}
        self.watch: tuple[str, int, int] | None = None  # (status port, node mask, start)
        self.done_at: dict[int, int] = {}
        self.armed: set[int] = set()
        self.first_req: dict[int, int] = {}  # cid -> cycle its first request flit left
        self.first_resp: dict[tuple[int, int], int] = {}  # (node, cid) -> first response

    async def start(self) -> None:
        dut = self.dut
        for name in ("cfg_sel", "cfg_addr", "cfg_w_data", "cfg_w_en", "cmd_coll_start",
                     "cmd_engine_start", "stall_rate", "host_tx_valid", "host_tx_payload"):
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
            self._monitor()
            self.host.tick()
            if self.watch is not None:
                self._watch()

    # -- monitor and scoreboard -------------------------------------------------------------

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
                    self._received(k, p.unpack((payloads >> (w * k)) & mask))

    def _sent(self, k: int, flit: Flit) -> None:
        if flit.kind is Kind.P2P:
            assert flit.src == k, f"endpoint {k} sent {flit} with another source"
            assert flit.hop == 0, f"endpoint {k} sent {flit} on a hop VC"
            if message_of(flit) is Message.HOST:
                self.host.left(k, flit)
            self.sb.expect(flit, flit.dst, flit, (k, flit.dst),
                           self.cycle)
        elif flit.kind is Kind.REQ:
            self.first_req.setdefault(flit.cid, self.cycle)
        else:
            raise AssertionError(f"endpoint {k} sent a response {flit}")

    def _received(self, k: int, flit: Flit) -> None:
        if flit.kind is Kind.P2P:
            self.sb.check(flit, k, flit, self.cycle)
            if message_of(flit) is Message.HOST:
                self.host.arrived()
            return
        assert flit.kind is Kind.RESP, f"endpoint {k} received a request {flit}"
        key = (k, flit.cid)
        want = self.golden_resp.get(key)
        assert want is not None, f"endpoint {k} received {flit}: no response expected there"
        got = self.responses.setdefault(key, {})
        assert flit.index not in got, f"endpoint {k} received element {flit.index} twice"
        assert flit.index < len(want), f"endpoint {k} received {flit} beyond the vector"
        got[flit.index] = flit.payload
        self.first_resp.setdefault(key, self.cycle)

    def _watch(self) -> None:
        # A node's done counts once it has dropped after the start (done of the last run
        # stays high until the start command reaches the unit).
        port, nodes, _start = self.watch
        status = int(getattr(self.dut, port).value)
        for k in range(self.n):
            if not nodes >> k & 1 or k in self.done_at:
                continue
            bits = (status >> (3 * k)) & 0b011
            if k not in self.armed:
                if bits != 0b010:
                    self.armed.add(k)
            elif bits == 0b010:
                self.done_at[k] = self.cycle

    # -- helpers -----------------------------------------------------------------------------

    async def wait_for(self, predicate, limit: int, what: str) -> int:
        for _ in range(limit):
            if predicate():
                return self.cycle
            await FallingEdge(self.dut.clk)
        raise AssertionError(
            f"{what}: not within {limit} cycles (cycle {self.cycle}; coll status "
            f"{self.dut.coll_status.value}, engine status {self.dut.engine_status.value}, quiet "
            f"{self.dut.quiet.value}, {self.sb.outstanding} p2p flits outstanding)")

    def quiet(self) -> bool:
        return int(self.dut.quiet.value) == (1 << self.n) - 1 and not self.sb.pending

    async def write_vectors(self, vectors: dict[int, list[int]]) -> None:
        mem = self.P["memory_base"]
        for k, values in vectors.items():
            await self.bus.write(self.n + k, [(mem + i, int(v)) for i, v in enumerate(values)])

    async def read_vector(self, k: int, count: int) -> list[int]:
        mem = self.P["memory_base"]
        return await self.bus.read(self.n + k, [mem + i for i in range(count)])

    # -- one run -------------------------------------------------------------------------------

    async def run(self, spec: dict) -> list[dict]:
        image = decode(spec["image"])
        elements = spec["elements"]
        dtype = ops.DType.parse(spec["dtype"])
        op = ops.Op.parse(spec["op"])
        emap = image.params.endpoint_map
        await self.loader.load(image, full=False)
        schedule = None
        if spec.get("schedule"):
            algorithm, shape = spec["schedule"]
            schedule = build_schedule(algorithm, tuple(shape))
        embeddings = [Embedding.from_dict(e) for e in spec.get("embeddings", [])]
        count = max(elements, 1)
        inputs = kit.random_bits(self.np_rng, dtype, (self.n, count))
        writes_vec = {k: inputs[k].tolist() for k in range(self.n)}
        await self.write_vectors(writes_vec)
        self.responses, self.golden_resp = {}, {}
        self.first_req, self.first_resp = {}, {}
        expected: dict[int, np.ndarray] = {}
        nodes_mask = 0
        per_scenario_nodes: list[list[int]] = []
        per_scenario_receivers: list[tuple[int, list[int]] | None] = []
        if schedule is None:
            commands = {}
            for e in embeddings:
                senders = [s.node for s in e.switches if LOCAL in s.req_in]
                receivers = [s.node for s in e.switches if LOCAL in s.resp_out]
                if e.kind == "barrier":
                    vec = {u: np.zeros(1, dtype=np.uint32) for u in senders}
                else:
                    vec = {u: inputs[u] for u in senders}
                results = embedding_results(e, vec)
                for u in receivers:
                    self.golden_resp[(u, e.collective_id)] = results[u]
                    if e.kind != "barrier":
                        expected[u] = results[u]
                involved = sorted(set(senders) | set(receivers))
                per_scenario_nodes.append(involved)
                per_scenario_receivers.append((e.collective_id, receivers))
                for u in involved:
                    mode = (CollectiveMode.BARRIER if e.kind == "barrier" else
                            CollectiveMode.BOTH if u in senders and u in receivers else
                            CollectiveMode.SEND if u in senders else CollectiveMode.RECV)
                    commands[u] = [
                        (emap["coll.cmd"].address,
                         emap["coll.cmd"].encode({"cid": e.collective_id, "mode": mode})),
                        (emap["coll.count"].address,
                         emap["coll.count"].encode({"count": elements}))]
                    nodes_mask |= 1 << u
            for u, words in commands.items():
                await self.bus.write(self.n + u, words)
            port, cmd = "coll_status", self.dut.cmd_coll_start
        else:
            want = golden(schedule, op, dtype, inputs[:schedule.ranks])
            for r in range(schedule.ranks):
                expected[r] = want[r]
                nodes_mask |= 1 << r
            per_scenario_nodes.append(list(range(schedule.ranks)))
            per_scenario_receivers.append(None)
            port, cmd = "engine_status", self.dut.cmd_engine_start
        self.dut.stall_rate.value = spec.get("stall_rate", 0)
        background = spec.get("background", 0.0)
        if spec.get("pattern") == "permutation":
            order = list(range(self.n))
            while any(order[k] == k for k in range(self.n)):
                self.rng.shuffle(order)
            self.host.dst = order
        else:
            self.host.dst = None
        host0 = (self.host.sent, self.host.got)
        self.host.rate = background
        for _ in range(self.rng.randrange(1, 30) if background else 1):
            await FallingEdge(self.dut.clk)
        self.done_at = {}
        self.armed: set[int] = set()
        cmd.value = nodes_mask
        await FallingEdge(self.dut.clk)
        start = self.cycle - 1
        cmd.value = 0
        self.watch = (port, nodes_mask, start)
        wanted = bin(nodes_mask).count("1")
        what = f"run {spec['label']}"
        await self.wait_for(lambda: len(self.done_at) == wanted, 400_000, f"{what}: done")
        self.watch = None
        self.host.stop()
        await self.wait_for(lambda: self.host.drained, 50_000, f"{what}: host queues")
        await self.wait_for(self.quiet, 50_000, f"{what}: quiet and scoreboard empty")
        assert int(self.dut.errors.value) == 0, f"{what}: error flags {self.dut.errors.value}"
        status = int(getattr(self.dut, port).value)
        for k in range(self.n):
            if nodes_mask >> k & 1:
                assert (status >> (3 * k)) & 0b111 == 0b010, (
                    f"{what}: endpoint {k} status {(status >> (3 * k)) & 7:03b}")
        detail = ""
        for key, want in self.golden_resp.items():
            got = self.responses.get(key, {})
            if len(got) != len(want):
                raise AssertionError(f"{what}: endpoint {key[0]} received {len(got)} of "
                                     f"{len(want)} responses of id {key[1]}")
            for i, v in enumerate(want.tolist()):
                if got[i] != v and not detail:
                    detail = (f"endpoint {key[0]} response {i}: got {got[i]:#010x}, expected "
                              f"{v:#010x}")
        for k, want in sorted(expected.items()):
            got = await self.read_vector(k, elements)
            if got != want[:elements].tolist() and not detail:
                pairs = zip(got, want.tolist(), strict=False)
                i = next(i for i, (a, b) in enumerate(pairs) if a != b)
                detail = (f"endpoint {k} element {i}: got {got[i]:#010x}, expected "
                          f"{int(want[i]):#010x}")
        sent, got = self.host.sent - host0[0], self.host.got - host0[1]
        out = []
        for scenario, involved, tree in zip(spec["scenarios"], per_scenario_nodes,
                                            per_scenario_receivers, strict=True):
            last = max(self.done_at[k] for k in involved)
            arrivals = None
            if tree is not None:  # first request flit out to each first response flit in
                cid, receivers = tree
                arrivals = {str(u): self.first_resp[(u, cid)] - self.first_req[cid]
                            for u in receivers}
            out.append({"label": scenario, "latency": last - start, "correct": not detail,
                        "detail": detail, "p2p_sent": sent, "p2p_received": got,
                        "arrivals": arrivals})
        return out


@cocotb.test()
async def test_runs(dut):
    """Every run of the parameters, in order, in one simulation."""
    tb = TB(dut)
    await tb.start()
    results = []
    for spec in tb.P["runs"]:
        results.extend(await tb.run(spec))
        kit.report(runs=results, cycles=tb.cycle, loaded_words=tb.loader.written)
    assert not tb.sb.pending, f"{tb.sb.outstanding} p2p flits never arrived"
