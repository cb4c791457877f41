"""cocotb testbench of a whole network (:class:`innet.sim.tb.networkbench.NetworkBench`: the
:class:`innet.hw.network.Network` with traffic generators, checkers and throttles on its local
links).

Driven by :func:`innet.sim.network.simulate`, which prepares every run (its image, its
embeddings or schedule) and passes them as parameters. cocotb never wakes in every cycle:
the bench's own logic generates the host traffic and the backpressure and checks every flit
(see :mod:`innet.sim.tb.networkbench`); the testbench acts between runs and waits for events.
For each run it

1. loads the run's image (the words that changed since the last one) and the input vectors:
   by default by the backdoor (``load="backdoor"``: each node's boot memory, filled by the
   simulator from a file this testbench writes per node, drives its switch and endpoint, every
   node at once, with no testbench step per word), through the bench's parallel load port
   (``load="lanes"``, every target at once), or through the network's own configuration bus with
   :class:`innet.sim.tb.loader.Loader`, one target after another (``load="bus"``). The lanes
   and the bus read every word of the image back and compare it; the backdoor reads the image,
   the vectors and the commands back when ``check_load`` is set;
2. for in-network scenarios writes each endpoint's command (``coll.cmd``: collective id and
   mode from the embedding: it sends if ``LOCAL`` is in its ``req_in``, receives if in its
   ``resp_out``; ``coll.count``);
3. clears the per-run latches, sets the background host traffic (uniform random destinations
   or a fixed random derangement, at the run's load) and the backpressure, starts every
   endpoint of the run in the same cycle (``cmd_coll_start`` or ``cmd_engine_start``) and
   waits for ``tb_done`` (every endpoint's ``done``; the bench stamps the cycles);
4. stops the host traffic, waits for ``tb_idle`` (nothing in flight), reads every node's
   counters and compares them: per (source, destination) the p2p flits sent and received
   (count and order-sensitive hash: every p2p flit exactly once and in order), the host
   sequence numbers generated and checked, every id's response count and sum against the
   golden values (every response exactly once per element with the golden value); then reads
   every result back, comparing it bit for bit with the golden model
   (:func:`innet.sim.golden.embedding_results`, the embedding's exact reduction order, for
   in-network collectives; :func:`innet.gen.swing.golden` for step schedules).

A fault a node latches (a host flit out of sequence or altered, a response element twice, a
stray flit) ends the simulation at once with the node, the flit and the cycle.

Parameters: ``topology`` (JSON), ``flit``, ``memory_base``, ``endpoint_digest``,
``switch_digest``, ``seed``, ``runs`` (see :func:`innet.sim.network.simulate`), ``readout``
(:func:`innet.sim.tb.networkbench.readout_map`), ``load`` (``"backdoor"``, ``"lanes"`` or
``"bus"``), ``check_load``, ``boot_depth`` (the boot memory's rows; ``boot_fill``, if
given, fills fewer at a time), ``inject`` (``[code, node]`` or null), ``inject_load`` (a node
or null: the backdoor writes its first vector element with bit 0 flipped). Output: ``runs``,
one entry per scenario.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, FallingEdge, First, RisingEdge, Timer

from innet.gen import ops
from innet.gen.embed import Embedding
from innet.gen.image import decode
from innet.gen.regmap import CollectiveMode, Map
from innet.gen.swing import build_schedule, golden
from innet.gen.topology import LOCAL, Topology
from innet.hw.flit import FlitParams
from innet.sim.golden import embedding_results
from innet.sim.tb import kit
from innet.sim.tb.bus import ConfigBus
from innet.sim.tb.loader import Loader, check_readback
from innet.sim.tb.networkbench import BOOT_FILE, FAULTS, READOUT, boot_rows, response_mix

__all__ = ["HOST_RX_STALL", "TB", "test_runs"]

#: While host traffic runs, a host holds its receive ready low in ``HOST_RX_STALL / 256`` of
#: the cycles.
HOST_RX_STALL = 77


class _Lanes:
    """The bench's ``lane_*`` ports under the ``cfg_*`` names :class:`ConfigBus` drives."""

    def __init__(self, dut) -> None:
        self.clk = dut.clk
        self.cfg_addr, self.cfg_w_data = dut.lane_addr, dut.lane_w_data
        self.cfg_w_en, self.cfg_r_data = dut.lane_w_en, dut.lane_r_data


class TB:
    """Loads, starts, waits on events and checks the bench's counters after each run."""

    def __init__(self, dut) -> None:
        P = self.P = kit.params()
        self.dut = dut
        self.p = FlitParams(**P["flit"])
        self.topology = Topology.from_json(P["topology"])
        self.n = self.topology.nodes
        self.rng = random.Random(P.get("seed", 1))
        self.np_rng = np.random.default_rng(P.get("seed", 1))
        load = P.get("load", "backdoor")
        self.backdoor = load == "backdoor"
        self.check_load = P.get("check_load", False)
        self.lane_port = load != "bus"  # the backdoor reads back through the lanes
        self.readout = P["readout"]
        self.latency = P["read_latency"]
        self.bus = ConfigBus(dut, select=True, latency=self.latency)
        self.lane_bus = ConfigBus(_Lanes(dut), addr_width=P["addr_width"],
                                  latency=self.latency)
        self.loader = Loader(self.bus, switch_digest=P["switch_digest"],
                             endpoint_digest=P["endpoint_digest"], nodes=self.n)
        self.epoch = 0
        self.host_total = (0, 0)

    @property
    def cycle(self) -> int:
        return int(self.dut.tb_cycle.value)

    async def start(self) -> None:
        dut = self.dut
        for name in ("cfg_sel", "cfg_addr", "cfg_w_data", "cfg_w_en", "cmd_coll_start",
                     "cmd_engine_start", "stall_rate", "host_tx_valid", "host_tx_payload",
                     "clear", "epoch", "host_rate", "host_perm", "host_perm_dst",
                     "host_rx_stall", "lane_addr", "lane_w_data", "lane_w_en", "boot_load",
                     "boot_count", "rd_addr"):
            getattr(dut, name).value = 0
        inject = self.P.get("inject")
        dut.inject.value = inject[0] if inject else 0
        dut.inject_node.value = inject[1] if inject else 0
        dut.lane_on.value = int(self.lane_port)
        dut.host_rx_ready.value = (1 << self.n) - 1
        dut.rng_seed.value = self.rng.getrandbits(32)
        dut.rng_load.value = 1
        await kit.reset(dut)
        # The nodes leave reset and see rng_load `latency - 1` cycles after the ports.
        await ClockCycles(dut.clk, self.latency)
        dut.rng_load.value = 0
        await FallingEdge(dut.clk)

    # -- events ----------------------------------------------------------------------------

    async def wait_high(self, signal, limit: int, what: str) -> None:
        """Wait (at most ``limit`` cycles) until ``signal`` is high, on a falling edge; a
        fault on the way ends the run with the fault."""
        dut = self.dut
        if not int(signal.value) and not int(dut.tb_fault.value):
            # A timer, not ClockCycles (which wakes Python on every edge): the clock period
            # is 1 ns (kit.reset).
            await First(RisingEdge(signal), RisingEdge(dut.tb_fault), Timer(limit, "ns"))
            await FallingEdge(dut.clk)
        if int(dut.tb_fault.value):
            await self.raise_fault(what)
        if not int(signal.value):
            raise AssertionError(
                f"{what}: not within {limit} cycles (cycle {self.cycle}; coll status "
                f"{dut.coll_status.value}, engine status {dut.engine_status.value}, quiet "
                f"{dut.quiet.value})")

    async def read(self, addresses: list[int]) -> list[list[int]]:
        """Every node's readout words at ``addresses``: ``out[i][k]`` is node ``k``'s word at
        ``addresses[i]`` (one address per cycle, pipelined: the word of an address comes
        :attr:`latency` cycles after it)."""
        dut, n = self.dut, self.n
        words = []
        for i in range(len(addresses) + self.latency - 1):
            if i < len(addresses):
                dut.rd_addr.value = addresses[i]
            await FallingEdge(dut.clk)
            if i >= self.latency - 1:
                words.append(int(dut.rd_data.value))
        return [[(word >> (32 * k)) & 0xFFFF_FFFF for k in range(n)] for word in words]

    async def read_named(self, names: list[str]) -> dict[str, list[int]]:
        """Named readout words (:data:`READOUT`; ``name_c`` reads one per collective id as
        ``name0``, ``name1``, ...) of every node."""
        addresses, keys = [], []
        for name in names:
            if name.endswith("_c"):
                for c in range(self.p.collective_ids):
                    addresses.append(self.readout[name] + c)
                    keys.append(f"{name[:-2]}{c}")
            else:
                addresses.append(READOUT[name])
                keys.append(name)
        return dict(zip(keys, await self.read(addresses), strict=True))

    async def read_block(self, name: str) -> list[list[int]]:
        """A pair block: ``out[k][peer]``, node ``k``'s word for ``peer``."""
        base = self.readout[name]
        got = await self.read([base + peer for peer in range(self.n)])
        return [[got[peer][k] for peer in range(self.n)] for k in range(self.n)]

    async def raise_fault(self, what: str) -> None:
        """Raise AssertionError naming the earliest fault a node latched."""
        words = await self.read_named(["fault", "fault_a", "fault_b", "fault_flit0",
                                       "fault_flit1", "fault_flit2", "fault_cycle"])
        faulty = [k for k in range(self.n) if words["fault"][k]]
        k = min(faulty, key=lambda k: words["fault_cycle"][k])
        code, a, b = words["fault"][k], words["fault_a"][k], words["fault_b"][k]
        raw = sum(words[f"fault_flit{i}"][k] << (32 * i) for i in range(3))
        flit = self.p.unpack(raw & ((1 << self.p.width) - 1))
        cycle = words["fault_cycle"][k]
        about = {5: f" (from {a}, expected sequence {b})", 6: f" (from {a}, for {b})",
                 4: f" (id {a}, element {b})"}.get(code, "")
        raise AssertionError(f"{what}: endpoint {k} {FAULTS[code]}{about} in cycle {cycle}: "
                             f"{flit}")

    # -- loading ---------------------------------------------------------------------------

    async def boot(self, writes: dict[int, list[tuple[int, int]]]) -> None:
        """Write ``(address, word)`` pairs (by target) by the backdoor: each node's rows (its
        switch's writes in slot 0, its endpoint's in slot 1) go into its file
        (:data:`~innet.sim.tb.networkbench.BOOT_FILE`), every node fills its boot memory from
        its file and drives one row a cycle into its configuration buses; ``boot_depth`` rows
        per fill. With the ``load`` injection, the first vector element of the injected
        endpoint is written with bit 0 flipped."""
        dut, n = self.dut, self.n
        node = self.P.get("inject_load")
        target = None if node is None else n + node
        mem = self.P["memory_base"]
        if target in writes:
            pairs = list(writes[target])
            first = next((i for i, (a, _w) in enumerate(pairs) if a >= mem), None)
            if first is not None:
                pairs[first] = (pairs[first][0], pairs[first][1] ^ 1)
                writes = {**writes, target: pairs}
        rows = [boot_rows({slot: writes[t] for slot, t in enumerate((k, n + k)) if t in writes},
                          self.P["addr_width"]) for k in range(n)]
        total = max(len(r) for r in rows)
        depth = self.P.get("boot_fill", self.P["boot_depth"])
        files = [Path(BOOT_FILE.format(node=k)) for k in range(n)]
        for at in range(0, total, depth):
            count = min(depth, total - at)
            for file, mine in zip(files, rows, strict=True):
                chunk = mine[at:at + count]
                # Every node drives `count` rows: a shorter file would leave older rows there.
                file.write_text("".join(f"{row:x}\n" for row in chunk)
                                + "0\n" * (count - len(chunk)))
            dut.boot_count.value = count
            dut.boot_load.value = 1
            await FallingEdge(dut.clk)
            dut.boot_load.value = 0
            # The nodes see the pulse `latency - 1` cycles after the ports.
            await ClockCycles(dut.clk, self.latency - 1, rising=False)
            if not int(dut.boot_busy.value):
                raise AssertionError(f"The backdoor load of {count} rows did not start")
            await First(FallingEdge(dut.boot_busy), Timer(count + 2, "ns"))
            await FallingEdge(dut.clk)
            if int(dut.boot_busy.value):
                raise AssertionError(f"The backdoor load of {count} rows did not end")
        for file in files:
            file.unlink(missing_ok=True)

    async def load_image(self, image) -> None:
        if not self.lane_port:
            await self.loader.load(image, full=False)
            return
        plan = self.loader.plan(image, full=False)
        if self.backdoor:
            await self.boot(plan)
        else:
            await self.lane_bus.write_all(plan)
        params = image.params
        if not self.backdoor or self.check_load:
            got = await self.lane_bus.read_all({t: [a for a, _w in w] for t, w in plan.items()})
            for target, writes in plan.items():
                regmap = params.switch_map if target < self.n else params.endpoint_map
                check_readback(target, regmap, writes, got[target])
                self.loader.verified += len(writes)
        for target, writes in plan.items():
            self.loader.current.setdefault(target, {}).update(writes)
            self.loader.written += len(writes)

    async def write_endpoints(self, writes: dict[int, list[tuple[int, int]]],
                              regmap: Map) -> None:
        """Write ``(address, word)`` pairs to endpoints (by node); by the backdoor with
        ``check_load``, every word is read back and compared (a register's ``RW`` bits by
        ``regmap``, the endpoints' register map; a vector element whole)."""
        jobs = {self.n + k: w for k, w in writes.items()}
        if self.backdoor:
            await self.boot(jobs)
            if self.check_load:
                got = await self.lane_bus.read_all({t: [a for a, _w in w]
                                                    for t, w in jobs.items()})
                for k, w in writes.items():
                    self.check_endpoint(k, regmap, w, got[self.n + k])
        elif self.lane_port:
            await self.lane_bus.write_all(jobs)
        else:
            for target, w in jobs.items():
                await self.bus.write(target, w)

    def check_endpoint(self, node: int, regmap: Map, writes: list[tuple[int, int]],
                       got: list[int]) -> None:
        """Compare the words read back from endpoint ``node`` with its ``(address, word)``
        writes: a register's ``RW`` bits, a vector element whole."""
        mem = self.P["memory_base"]
        regs = [(pair, back) for pair, back in zip(writes, got, strict=True) if pair[0] < mem]
        check_readback(self.n + node, regmap, [pair for pair, _b in regs],
                       [back for _p, back in regs])
        for (address, word), back in zip(writes, got, strict=True):
            if address >= mem and back != word:
                raise AssertionError(f"Endpoint {node} element {address - mem} reads "
                                     f"{back:#010x} after the backdoor load, which wrote "
                                     f"{word:#010x}")

    async def read_vectors(self, nodes: list[int], count: int) -> dict[int, list[int]]:
        mem = self.P["memory_base"]
        reads = {self.n + k: [mem + i for i in range(count)] for k in nodes}
        bus = self.lane_bus if self.lane_port else self.bus
        got = await bus.read_all(reads)
        return {k: got[self.n + k] for k in nodes}

    # -- one run -------------------------------------------------------------------------------

    async def run(self, spec: dict) -> list[dict]:
        dut, n = self.dut, self.n
        image = decode(spec["image"])
        elements = spec["elements"]
        dtype = ops.DType.parse(spec["dtype"])
        op = ops.Op.parse(spec["op"])
        emap = image.params.endpoint_map
        what = f"run {spec['label']}"
        await self.load_image(image)
        schedule = None
        if spec.get("schedule"):
            algorithm, shape = spec["schedule"]
            schedule = build_schedule(algorithm, tuple(shape))
        embeddings = [Embedding.from_dict(e) for e in spec.get("embeddings", [])]
        count = max(elements, 1)
        inputs = kit.random_bits(self.np_rng, dtype, (n, count))
        mem = self.P["memory_base"]
        await self.write_endpoints({k: [(mem + i, int(v)) for i, v in enumerate(inputs[k])]
                                    for k in range(n)}, emap)
        golden_resp: dict[tuple[int, int], np.ndarray] = {}
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
                    golden_resp[(u, e.collective_id)] = results[u]
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
            await self.write_endpoints(commands, emap)
            port, cmd = "coll_status", dut.cmd_coll_start
        else:
            want = golden(schedule, op, dtype, inputs[:schedule.ranks])
            for r in range(schedule.ranks):
                expected[r] = want[r]
                nodes_mask |= 1 << r
            per_scenario_nodes.append(list(range(schedule.ranks)))
            per_scenario_receivers.append(None)
            port, cmd = "engine_status", dut.cmd_engine_start
        # Background traffic and backpressure; the per-run latches cleared.
        host_rate = spec.get("host_rate", 0)
        perm = 0
        if spec.get("pattern") == "permutation":
            order = list(range(n))
            while any(order[k] == k for k in range(n)):
                self.rng.shuffle(order)
            perm = sum(d << (self.p.node_width * k) for k, d in enumerate(order))
        self.epoch = self.epoch % 0xFFFF + 1
        dut.epoch.value = self.epoch
        dut.stall_rate.value = spec.get("stall_rate", 0)
        dut.host_perm.value = int(spec.get("pattern") == "permutation")
        dut.host_perm_dst.value = perm
        dut.host_rate.value = host_rate
        dut.host_rx_stall.value = HOST_RX_STALL if host_rate else 0
        dut.clear.value = 1
        await FallingEdge(dut.clk)
        dut.clear.value = 0
        if host_rate:
            await ClockCycles(dut.clk, self.rng.randrange(1, 30), rising=False)
        cmd.value = nodes_mask
        began = time.perf_counter()
        await FallingEdge(dut.clk)
        cmd.value = 0
        await self.wait_high(dut.tb_done, spec["cycle_limit"], f"{what}: done")
        seconds = time.perf_counter() - began
        dut.host_rate.value = 0
        dut.host_rx_stall.value = 0
        await self.wait_high(dut.tb_idle, 50_000, f"{what}: quiet")
        status = int(getattr(dut, port).value)
        for k in range(n):
            if nodes_mask >> k & 1:
                assert (status >> (3 * k)) & 0b111 == 0b010, (
                    f"{what}: endpoint {k} status {(status >> (3 * k)) & 7:03b}")
        assert int(dut.errors.value) == 0, f"{what}: error flags {dut.errors.value}"
        start = int(dut.tb_start.value)
        words = await self.read_named(["done_at", "host_sent", "host_got", "first_req_c",
                                       "first_resp_c", "resp_count_c", "resp_sum_c"])
        await self.check_pairs(what)
        detail = ""
        cids = self.p.collective_ids
        for k in range(n):
            for c in range(cids):
                want = golden_resp.get((k, c))
                got = words[f"resp_count{c}"][k]
                if want is None:
                    assert got == 0, (f"{what}: endpoint {k} received {got} responses of id "
                                      f"{c}: none expected there")
                    continue
                if got != len(want):
                    raise AssertionError(f"{what}: endpoint {k} received {got} of {len(want)} "
                                         f"responses of id {c}")
                total = sum(response_mix(i, int(v)) for i, v in enumerate(want)) & 0xFFFF_FFFF
                if words[f"resp_sum{c}"][k] != total and not detail:
                    detail = (f"endpoint {k}: the responses of id {c} differ from the golden "
                              f"values")
        got_vectors = await self.read_vectors(sorted(expected), elements)
        value_detail = ""
        for k, want in sorted(expected.items()):
            got = got_vectors[k]
            if got != want[:elements].tolist() and not value_detail:
                pairs = zip(got, want.tolist(), strict=False)
                i = next(i for i, (a, b) in enumerate(pairs) if a != b)
                value_detail = (f"endpoint {k} element {i}: got {got[i]:#010x}, expected "
                                f"{int(want[i]):#010x}")
        detail = value_detail or detail
        sent_total, got_total = sum(words["host_sent"]), sum(words["host_got"])
        sent = sent_total - self.host_total[0]
        got = got_total - self.host_total[1]
        self.host_total = (sent_total, got_total)
        out = []
        for scenario, involved, tree in zip(spec["scenarios"], per_scenario_nodes,
                                            per_scenario_receivers, strict=True):
            last = max(words["done_at"][k] for k in involved)
            arrivals = None
            if tree is not None:  # first request flit out to each first response flit in
                cid, receivers = tree
                first = min(c for c in words[f"first_req{cid}"] if c)
                arrivals = {str(u): words[f"first_resp{cid}"][u] - first for u in receivers}
            out.append({"label": scenario, "latency": last - start, "correct": not detail,
                        "detail": detail, "p2p_sent": sent, "p2p_received": got,
                        "arrivals": arrivals, "seconds": seconds})
        return out

    async def check_pairs(self, what: str) -> None:
        """Every (source, destination): the p2p flits sent and received agree in count and
        hash, the host sequence numbers generated and checked agree."""
        blocks = {name: await self.read_block(name) for name in
                  ("tx_count", "rx_count", "tx_hash", "rx_hash", "gen_seq", "chk_seq")}
        n = self.n
        for s in range(n):
            for d in range(n):
                sent, got = blocks["tx_count"][s][d], blocks["rx_count"][d][s]
                if sent != got:
                    raise AssertionError(f"{what}: endpoint {s} sent {sent} p2p flits to "
                                         f"endpoint {d}, which received {got}")
                if blocks["tx_hash"][s][d] != blocks["rx_hash"][d][s]:
                    raise AssertionError(f"{what}: the {sent} p2p flits from endpoint {s} to "
                                         f"endpoint {d} arrived altered or out of order")
                made, checked = blocks["gen_seq"][s][d], blocks["chk_seq"][d][s]
                if made != checked:
                    raise AssertionError(f"{what}: endpoint {s} offered {made} host flits to "
                                         f"endpoint {d}, whose host took {checked}")


@cocotb.test()
async def test_runs(dut):
    """Every run of the parameters, in order, in one simulation."""
    tb = TB(dut)
    await tb.start()
    results = []
    for spec in tb.P["runs"]:
        results.extend(await tb.run(spec))
        kit.report(runs=results, cycles=tb.cycle, loaded_words=tb.loader.written)
