"""Test top level for whole networks: the :class:`~innet.hw.network.Network` with test ports.

A test fixture, not the network generator (that is :mod:`innet.hw.network`). Everything a
testbench would otherwise do in every cycle runs in the simulated design, so that cocotb wakes
only on events (a ``done``, a fault, a loader access) and reads counters after each run:

- credit throttles on each direction of every local link (random endpoint backpressure from
  on-chip LFSRs, :func:`local_link`);
- a host traffic generator per node (:class:`BenchNode`): host p2p flits at a load of
  ``host_rate / 256`` per cycle, to uniformly random other nodes or a fixed destination, each
  carrying its sequence number per (source, destination) (:func:`host_fields`);
- a host checker per node: random receive readiness (``host_rx_stall``), and every delivered
  host flit must be the next of its (source, destination) sequence with the fields
  :func:`host_fields` gives it (exactly once, in order, unaltered);
- a link monitor per node on both directions of the local link: per (source, destination)
  count and order-sensitive hash (:func:`fnv_step`) of every p2p flit (host, DATA, CTS) sent
  and received, compared after a run; every response of the run exactly once per element
  (a seen-bit per element, tagged by the run's ``epoch``), counted and summed per id
  (:func:`response_mix`); the endpoint must send neither responses nor foreign p2p flits nor
  receive requests; the cycle of each id's first request out and first response in;
- a done watch per node: the cycle its ``done`` rises after a start command;
- a parallel load port (``lane_*``): every switch and endpoint configuration bus on a lane of
  its own, so an image or the vectors load into every target at once;
- a backdoor load: in every node a memory the simulator fills from the node's file
  (:data:`BOOT_FILE`, Verilog ``$readmemh``, on ``boot_load``), whose rows the node then
  drives into its switch's and its endpoint's configuration buses, one row a cycle (the rows:
  :func:`boot_rows`), so an image or the vectors load without a testbench step per word;
- an injection mode: drop, duplicate or reorder a delivered host flit, or corrupt a response
  element on its way into an endpoint, once per run at one node, to show that the checkers
  catch each.

The first fault of a node is latched with its flit and cycle (:data:`FAULTS`); counters and
latches are read through ``rd_addr`` (every node at once; :data:`READOUT` and
:func:`readout_map`).

Ports beyond :class:`~innet.hw.network.Network`'s (``N`` nodes, ``W`` flit bits, ``A``
address bits, ``V`` node-id bits):

=======================  =========  ==========================================================
``stall_rate``           in 8       a local-link credit is held back in a cycle with
                                    probability ``stall_rate / 256``
``rng_seed``             in 32      LFSR seed, loaded while ``rng_load`` is high (every LFSR
``rng_load``             in 1       mixes in its own constant)
``clear``                in 1       clears the per-run latches (done, first cycles, response
                                    counts and sums, fault)
``epoch``                in 16      the run's tag for the response seen-bits (never repeat
                                    within 65,535 runs)
``host_rate``            in 9       host flits offered per node and cycle, ``/ 256``
``host_perm``            in 1       each node sends to ``host_perm_dst`` word ``n`` only
``host_perm_dst``        in N*V
``host_rx_stall``        in 8       a host holds its receive ready low with probability
                                    ``/ 256``
``inject``               in 3       :data:`INJECT` code applied at node ``inject_node``
``inject_node``          in V
``lane_on``              in 1       the configuration buses take the ``lane_*`` ports
``lane_addr``            in 2N*A    target ``t``'s address at bits ``A t`` (the *lanes*
``lane_w_data``          in 2N*32   layout of :class:`innet.sim.tb.bus.ConfigBus`)
``lane_w_en``            in 2N
``lane_r_data``          out 2N*32
``boot_load``            in 1       every node fills its boot memory from its file
``boot_count``           in B       (:data:`BOOT_FILE`) and drives its first ``boot_count``
                                    rows (at most ``boot_depth``; ``B`` bits hold it) into
                                    its configuration buses, one a cycle; meanwhile the
                                    nodes ignore the ``lane_*`` and ``cfg_*`` writes and
                                    the start commands
``boot_busy``            out 1      node 0 drives its boot memory's rows (every node does
                                    in the same cycles): high from ``L + 1`` cycles after
                                    ``boot_load`` for ``boot_count`` cycles; every row is
                                    written when it falls
``rd_addr``              in R       readout address (:func:`readout_map`)
``rd_data``              out N*32   node ``n``'s word at bits ``32 n``, ``L + 1`` cycles later
``tb_cycle``             out 32     cycles since reset (plus one)
``tb_start``             out 32     the cycle in which the nodes saw the last start command
``tb_done``              out 1      every node of the last start command is done
``tb_idle``              out 1      every node quiet, no host flit waiting at a generator, no
                                    host traffic on its way to the nodes
``tb_fault``             out 1      some node latched a fault
=======================  =========  ==========================================================

``quiet`` also waits for the throttles to hold nothing back.

Every node registers its inputs (:attr:`BenchNode.input_stages`, :attr:`BenchNode.retimed_links`):
its reset and every input but the links pass a register, so they reach the node's logic
``L = 1`` cycle after the ports (:attr:`~innet.hw.network.Network.control_latency`), the same
for every input, so their order is kept, and read data (``cfg_r_data``, ``lane_r_data``,
``rd_data``) comes ``L + 1`` cycles after its address. The switches' link registers sit at the
receiving end of each link, which changes no cycle from port to port. So no logic of a node
depends on its inputs within a cycle: Verilator evaluates a hierarchical block's input logic
whenever it evaluates the block (several times a cycle), and that logic is now empty. Each
node counts cycles itself, in step with ``tb_cycle``.
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth import (
    Cat,
    ClockSignal,
    Const,
    Instance,
    Module,
    Mux,
    ResetSignal,
    Signal,
    Value,
    unsigned,
)
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.hw.endpoint import Endpoint
from innet.hw.flit import FlitParams, Kind, bits_for
from innet.hw.network import Network, NetworkNode, delayed
from innet.hw.switch import Switch
from innet.hw.testing import CreditThrottle, xorshift32

__all__ = ["BENCH_NODE_MODULE", "BOOT_FILE", "FAULTS", "INJECT", "READOUT", "BenchNode",
           "NetworkBench", "boot_rows", "fnv_step", "host_fields", "local_link", "readout_map",
           "response_mix"]

#: Verilog name of the bench's node module.
BENCH_NODE_MODULE = "innet_bench_node"

#: The file (in the simulator's working directory) node ``{node}``'s boot memory is filled
#: from.
BOOT_FILE = "innet_boot_{node}.hex"

#: The boot memory: ``DEPTH`` rows of ``WIDTH`` bits, filled from node ``node``'s
#: :data:`BOOT_FILE` in the cycle ``load`` is high (``$readmemh`` at run time, so that every
#: fill reads the file as the testbench last wrote it), read asynchronously.
BOOT_ROM = f"""
module innet_boot_rom #(parameter WIDTH = 1, parameter DEPTH = 1, parameter ABITS = 1,
                        parameter NODE_BITS = 1) (
    input  wire                 clk,
    input  wire                 load,
    input  wire [NODE_BITS-1:0] node,
    input  wire [ABITS-1:0]     addr,
    output wire [WIDTH-1:0]     data
);
    reg [WIDTH-1:0] mem [0:DEPTH-1];
    always @(posedge clk)
        if (load) $readmemh($sformatf("{BOOT_FILE.format(node="%0d")}", node), mem);
    assign data = mem[addr];
endmodule
"""

#: Fault codes a node latches (its first fault only).
FAULTS = {1: "sent a p2p flit with a foreign source or a hop VC", 2: "sent a response",
          3: "received a request", 4: "received a response element twice",
          5: "received a host flit out of sequence or altered",
          6: "received a host flit addressed to another node"}

#: Injection codes (``inject`` port): what happens once per run at ``inject_node``.
INJECT = {"drop": 1, "duplicate": 2, "reorder": 3, "corrupt": 4}

#: Per-node readout words below the pair blocks: name -> offset (``_c`` names are followed by
#: one word per collective id).
READOUT = {"fault": 0, "fault_a": 1, "fault_b": 2, "fault_flit0": 3, "fault_flit1": 4,
           "fault_flit2": 5, "fault_cycle": 6, "host_sent": 7, "host_got": 8, "done_at": 9,
           "done": 10, "first_req_c": 16}

_FNV = 0x01000193
_MIX_A, _MIX_B = 0x9E3779B1, 0x85EBCA6B
_M32 = 0xFFFF_FFFF


def fnv_step(state: int, word: int, width: int) -> int:
    """The link monitor's hash after one flit ``word`` of ``width`` bits (its 32-bit chunks
    XOR-folded, then one FNV-1a step)."""
    fold = 0
    for at in range(0, width, 32):
        fold ^= (word >> at) & _M32
    return ((state ^ fold) * _FNV) & _M32


def response_mix(index: int, value: int) -> int:
    """One response element's term of the per-id response sum."""
    return ((value ^ (index * _MIX_A)) * _MIX_B) & _M32


def host_fields(params: FlitParams, seq: int) -> tuple[int, int]:
    """``(index, tag)`` of the host flit with sequence number ``seq`` (its payload is ``seq``;
    the tag's message-class bits are 0, the host class)."""
    mixed = (seq * _MIX_A) & _M32
    index = mixed >> (32 - params.index_width) if params.index_width else 0
    tag = (mixed & ((1 << params.tag_width) - 1)) & ~3
    return index, tag


def boot_rows(writes: dict[int, list[tuple[int, int]]], addr_width: int) -> list[int]:
    """The boot memory's rows for ``writes`` (``(address, word)`` pairs by target, in order):
    row ``i`` holds each target's ``i``-th write in a slot of ``addr_width + 33`` bits at
    ``(addr_width + 33) * target``: the word at bit 0, the address at bit 32 and the write
    enable above it."""
    slot = addr_width + 33
    enable = 1 << (addr_width + 32)
    rows = [0] * max((len(w) for w in writes.values()), default=0)
    for target, pairs in writes.items():
        at = slot * target
        for i, (address, word) in enumerate(pairs):
            rows[i] |= (enable | address << 32 | word) << at
    return rows


def readout_map(nodes: int, collective_ids: int) -> dict[str, int]:
    """Offsets of the per-id words and of the pair blocks (``nodes`` words each, indexed by
    the peer node) in a node's readout, and ``"width"``, the bits of ``rd_addr``.

    Each block spans a power of two of addresses at a multiple of it, above the other words,
    so that the readout decodes a block by its high address bits and the peer by its low
    ones."""
    c = collective_ids
    out = {"first_req_c": 16, "first_resp_c": 16 + c, "resp_count_c": 16 + 2 * c,
           "resp_sum_c": 16 + 3 * c}
    span = 1 << (nodes - 1).bit_length() if nodes > 1 else 1
    base = max(1 << (16 + 4 * c - 1).bit_length(), span)
    for i, name in enumerate(("gen_seq", "chk_seq", "tx_count", "tx_hash", "rx_count",
                              "rx_hash")):
        out[name] = base + i * span
    out["width"] = (base + 6 * span - 1).bit_length()
    return out


def local_link(m: Module, sw: Switch, ep: Endpoint, *, throttle: bool, stall_rate: Value,
               rng_seed: Value, rng_load: Value, salts: tuple[int, int], name: str = "") -> Value:
    """Wire endpoint ``ep`` to the local port of switch ``sw``; return the throttles' quiet flag.

    With ``throttle``, flits pass straight through and a :class:`CreditThrottle` on each
    direction holds the returning credits back in a cycle with probability ``stall_rate / 256``,
    from its own xorshift32 LFSR. The LFSRs load ``rng_seed`` mixed with their ``salts``
    (toward the switch, toward the endpoint) while ``rng_load`` is high, so every throttle of a
    network runs its own sequence. ``name`` tells the throttles of several nodes in one module
    apart. Without ``throttle`` the link is a plain connection.

    The flag is high when the throttles hold nothing back (always, without ``throttle``); the
    node is drained when :func:`innet.hw.network.local_quiet` is high too.
    """
    radix = sw.radix
    if not throttle:
        wiring.connect(m, ep.tx, sw.i[radix])
        wiring.connect(m, sw.o[radix], ep.rx)
        return Const(1, 1)
    up = CreditThrottle(sw.params.vcs, sw.buffer_depth)
    down = CreditThrottle(sw.params.vcs, ep.local_depth)
    m.submodules[f"up{name}"], m.submodules[f"down{name}"] = up, down
    up_link, down_link = sw.i[radix], ep.rx
    m.d.comb += [
        up_link.valid.eq(ep.tx.valid), up_link.payload.eq(ep.tx.payload),
        up.credit_in.eq(up_link.credit), ep.tx.credit.eq(up.credit_out),
        down_link.valid.eq(sw.o[radix].valid), down_link.payload.eq(sw.o[radix].payload),
        down.credit_in.eq(down_link.credit), sw.o[radix].credit.eq(down.credit_out),
    ]
    for unit, salt in zip((up, down), salts, strict=True):
        state = _lfsr(m, rng_seed, rng_load, salt, f"lfsr{name}_{salt}")
        m.d.comb += unit.go.eq(state[8:16] >= stall_rate)
    return up.quiet & down.quiet


def _lfsr(m: Module, seed: Value, load: Value, salt: int, name: str) -> Signal:
    """A free-running xorshift32 register that loads ``seed`` mixed with ``salt``."""
    state = Signal(32, init=salt, name=name)
    with m.If(load):
        m.d.sync += state.eq((seed ^ Const(0x9E3779B9 * salt & _M32, 32)) | 1)
    with m.Else():
        m.d.sync += state.eq(xorshift32(state))
    return state


def _fold(word: Value) -> Value:
    """``word``'s 32-bit chunks XOR-folded (as :func:`fnv_step`)."""
    word = Value.cast(word)
    out = Const(0, 32)
    for at in range(0, len(word), 32):
        out = out ^ word[at:at + 32]
    return out


def _fnv(state: Value, word: Value) -> Value:
    return ((state ^ _fold(word)) * _FNV)[:32]


class BenchNode(NetworkNode):
    """A :class:`~innet.hw.network.NetworkNode` with the test logic of the module docs (one
    node's share of :class:`NetworkBench`'s ports, with ``node_id``, ``cycle``, ``rd_data``,
    ``gen_busy``, ``done``, ``fault`` and ``boot_busy`` of its own); ``boot_depth`` rows in its
    boot memory."""

    control_inputs = (*NetworkNode.control_inputs, "stall_rate", "rng_seed", "rng_load",
                      "node_id", "clear", "epoch", "host_rate", "host_perm", "host_perm_dst",
                      "host_rx_stall", "inject", "lane_on", "lane_sw_addr", "lane_ep_addr",
                      "lane_sw_data", "lane_ep_data", "lane_sw_w_en", "lane_ep_w_en",
                      "boot_load", "boot_count", "rd_addr")
    #: One register on each control input, and the switch's link registers at the receiving
    #: end of each link: the node's logic depends on no input within a cycle, so the
    #: simulator's evaluation of a node's input logic (whenever it evaluates the node) is
    #: nearly free.
    input_stages = 1
    retimed_links = True

    def __init__(self, radix: int, *, boot_depth: int, **node_args) -> None:
        self.nodes = node_args["routing_depth"]
        self.boot_depth = boot_depth
        super().__init__(radix, **node_args)
        self.readout = readout_map(self.nodes, self.params.collective_ids)

    def _members(self) -> dict:
        p, a = self.params, self.addr_width
        nw = p.node_width
        rd = readout_map(self.nodes, p.collective_ids)["width"]
        return super()._members() | {
            "stall_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "node_id": In(nw), "clear": In(1), "epoch": In(16),
            "host_rate": In(9), "host_perm": In(1), "host_perm_dst": In(nw),
            "host_rx_stall": In(8), "inject": In(3),
            "lane_on": In(1), "lane_sw_addr": In(a), "lane_ep_addr": In(a),
            "lane_sw_data": In(32), "lane_ep_data": In(32),
            "lane_sw_w_en": In(1), "lane_ep_w_en": In(1),
            "boot_load": In(1), "boot_count": In(range(self.boot_depth + 1)),
            "boot_busy": Out(1),
            "rd_addr": In(rd), "rd_data": Out(32),
            "gen_busy": Out(1), "done": Out(1), "fault": Out(1),
        }

    def _local_link(self, m: Module, ins: SimpleNamespace) -> Value:
        sw, ep = self.switch, self.endpoint
        return local_link(m, sw, ep, throttle=True, stall_rate=ins.stall_rate,
                          rng_seed=ins.rng_seed, rng_load=ins.rng_load, salts=(1, 2))

    def _wrap(self, m: Module, ins: SimpleNamespace) -> None:
        self._lanes(m, ins)
        self._test_logic(m, ins)

    def _lanes(self, m: Module, ins: SimpleNamespace) -> None:
        """The configuration buses: from the boot memory while it drives its rows, else from
        the lanes when they are on (the endpoint's not in a start command's cycle)."""
        sw, ep = self.switch, self.endpoint
        boot = self._boot(m, ins)
        with m.If(self.boot_busy):
            m.d.comb += [sw.cfg.addr.eq(boot.sw.addr), sw.cfg.w_data.eq(boot.sw.data),
                         sw.cfg.w_en.eq(boot.sw.en), ep.cfg.addr.eq(boot.ep.addr),
                         ep.cfg.w_data.eq(boot.ep.data), ep.cfg.w_en.eq(boot.ep.en)]
        with m.Elif(ins.lane_on):
            m.d.comb += [sw.cfg.addr.eq(ins.lane_sw_addr), sw.cfg.w_data.eq(ins.lane_sw_data),
                         sw.cfg.w_en.eq(ins.lane_sw_w_en)]
            with m.If(~ins.coll_start & ~ins.engine_start):
                m.d.comb += [ep.cfg.addr.eq(ins.lane_ep_addr),
                             ep.cfg.w_data.eq(ins.lane_ep_data),
                             ep.cfg.w_en.eq(ins.lane_ep_w_en)]

    def _boot(self, m: Module, ins: SimpleNamespace) -> SimpleNamespace:
        """The boot memory and the counter that drives its rows (``boot_busy`` while it
        does); returns the row's write to the switch (``sw``) and to the endpoint (``ep``):
        ``addr``, ``data``, ``en`` (its slots 0 and 1, :func:`boot_rows`)."""
        a, depth = self.addr_width, self.boot_depth
        slot = a + 33
        abits = max(1, (depth - 1).bit_length())
        row, left = Signal(abits, name="boot_row"), Signal(range(depth + 1), name="boot_left")
        data = Signal(2 * slot, name="boot_data")
        m.submodules.boot_rom = Instance(
            "innet_boot_rom", p_WIDTH=len(data), p_DEPTH=depth, p_ABITS=abits,
            p_NODE_BITS=len(ins.node_id), i_clk=ClockSignal(), i_load=ins.boot_load,
            i_node=ins.node_id, i_addr=row, o_data=data)
        with m.If(ins.boot_load):
            m.d.sync += [row.eq(0), left.eq(ins.boot_count)]
        with m.Elif(left != 0):
            m.d.sync += [row.eq(row + 1), left.eq(left - 1)]
        m.d.comb += self.boot_busy.eq(left != 0)

        def target(t: int) -> SimpleNamespace:
            field = data[slot * t:slot * (t + 1)]
            return SimpleNamespace(data=field[:32], addr=field[32:32 + a], en=field[32 + a])

        return SimpleNamespace(sw=target(0), ep=target(1))

    def _test_logic(self, m: Module, ins: SimpleNamespace) -> None:
        p, ep, n = self.params, self.endpoint, self.nodes
        layout = p.layout
        cids = p.collective_ids
        me, inject = ins.node_id, ins.inject
        # The network's cycle count (tb_cycle), kept here: an input that changes in every
        # cycle would make the simulator evaluate the node's input logic in every cycle.
        cycle = Signal(32, init=1)
        m.d.sync += cycle.eq(cycle + 1)
        fault = Signal(3)
        fault_a, fault_b, fault_cycle = Signal(32), Signal(32), Signal(32)
        fault_flit = Signal(p.width)
        m.d.comb += self.fault.eq(fault != 0)
        raised = []  # (hit, code, a, b, flit): the first hit of a cycle is latched

        def raise_fault(code: int, a: Value, b: Value, flit: Value) -> None:
            hit = Signal(name=f"fault_hit{len(raised)}")
            m.d.comb += hit.eq(1)
            raised.append((hit, code, a, b, flit))

        # -- host traffic generator ---------------------------------------------------------
        gen_rng = _lfsr(m, ins.rng_seed, ins.rng_load, 3, "gen_lfsr")
        gen_seq = Memory(shape=unsigned(32), depth=n, init=[])
        m.submodules.gen_seq = gen_seq
        gen_rd, gen_wr = gen_seq.read_port(domain="comb"), gen_seq.write_port()
        gen_out = gen_seq.read_port(domain="comb")
        hold_valid, hold_dst, hold_seq = Signal(), Signal(p.node_width), Signal(32)
        host_sent = Signal(32)
        fire = Signal()
        m.d.comb += [fire.eq(hold_valid & ep.p2p_tx.ready), self.gen_busy.eq(hold_valid)]
        pick = ((gen_rng[:16] * (n - 1)) >> 16)[:p.node_width]
        dst = Mux(ins.host_perm, ins.host_perm_dst, Mux(pick >= me, pick + 1, pick))
        new = Signal()
        m.d.comb += [new.eq((~hold_valid | fire) & (gen_rng[16:24] < ins.host_rate)),
                     gen_rd.addr.eq(dst)]
        with m.If(new):
            m.d.sync += [hold_valid.eq(1), hold_dst.eq(dst), hold_seq.eq(gen_rd.data)]
            m.d.comb += [gen_wr.addr.eq(dst), gen_wr.data.eq(gen_rd.data + 1), gen_wr.en.eq(1)]
        with m.Elif(fire):
            m.d.sync += hold_valid.eq(0)
        with m.If(fire):
            m.d.sync += host_sent.eq(host_sent + 1)
        out = Signal(layout)
        index, tag = self._host_fields(hold_seq)
        m.d.comb += [out.kind.eq(Kind.P2P), out.payload.eq(hold_seq), out.index.eq(index),
                     out.tag.eq(tag), out.src.eq(me), out.dst.eq(hold_dst),
                     ep.p2p_tx.valid.eq(hold_valid), ep.p2p_tx.payload.eq(out)]

        # -- host checker (with the drop, duplicate and reorder injections) -----------------
        chk_rng = _lfsr(m, ins.rng_seed, ins.rng_load, 4, "chk_lfsr")
        chk_seq = Memory(shape=unsigned(32), depth=n, init=[])
        m.submodules.chk_seq = chk_seq
        chk_rd, chk_wr = chk_seq.read_port(domain="comb"), chk_seq.write_port()
        chk_out = chk_seq.read_port(domain="comb")
        host_got = Signal(32)
        replay, replay_go = Signal(), Signal()
        replay_flit = Signal(p.width)
        injected = Signal()  # this run's injection happened
        ready = Signal()
        m.d.comb += [ready.eq(~(replay & replay_go) & (chk_rng[8:16] >= ins.host_rx_stall)),
                     ep.p2p_rx.ready.eq(ready)]
        arrive = ep.p2p_rx.valid & ready
        word = Mux(replay & replay_go, replay_flit, ep.p2p_rx.payload)
        got = layout(word)
        check = Signal()
        armed = (inject != 0) & ~injected
        m.d.comb += check.eq(replay & replay_go | arrive)
        with m.If(arrive & armed & (inject == INJECT["drop"])):
            m.d.comb += check.eq(0)
            m.d.sync += injected.eq(1)
        with m.If(arrive & armed & (inject == INJECT["duplicate"])):
            m.d.sync += [injected.eq(1), replay.eq(1), replay_go.eq(1),
                         replay_flit.eq(ep.p2p_rx.payload)]
        with m.If(arrive & armed & (inject == INJECT["reorder"])):
            m.d.comb += check.eq(0)
            m.d.sync += [injected.eq(1), replay.eq(1), replay_go.eq(0),
                         replay_flit.eq(ep.p2p_rx.payload)]
        held = layout(replay_flit)
        with m.If(arrive & replay & ~replay_go & (got.src == held.src)):
            m.d.sync += replay_go.eq(1)
        with m.If(replay & replay_go):
            m.d.sync += [replay.eq(0), replay_go.eq(0)]
        m.d.comb += chk_rd.addr.eq(got.src)
        want = chk_rd.data
        want_index, want_tag = self._host_fields(want)
        with m.If(check):
            m.d.sync += host_got.eq(host_got + 1)
            m.d.comb += [chk_wr.addr.eq(got.src), chk_wr.data.eq(want + 1), chk_wr.en.eq(1)]
            with m.If(got.dst != me):
                raise_fault(6, got.src, got.dst, word)
            with m.Elif((got.kind != Kind.P2P) | (got.payload != want)
                        | (got.index != want_index) | (got.tag != want_tag) | (got.hop != 0)):
                raise_fault(5, got.src, want, word)

        # -- link monitor --------------------------------------------------------------------
        tx, rx = layout(Value.cast(ep.tx.payload)), layout(Value.cast(ep.rx.payload))
        pair_mems = {}
        for name in ("tx", "rx"):
            mem = Memory(shape=unsigned(64), depth=n, init=[])
            m.submodules[f"{name}_pairs"] = mem
            pair_mems[name] = (mem.read_port(domain="comb"), mem.write_port(),
                               mem.read_port(domain="comb"))
        tx_rd, tx_wr, tx_out = pair_mems["tx"]
        rx_rd, rx_wr, rx_out = pair_mems["rx"]
        m.d.comb += [tx_rd.addr.eq(tx.dst), rx_rd.addr.eq(rx.src)]
        first_req = [Signal(32, name=f"first_req{c}") for c in range(cids)]
        first_resp = [Signal(32, name=f"first_resp{c}") for c in range(cids)]
        resp_count = [Signal(32, name=f"resp_count{c}") for c in range(cids)]
        resp_sum = [Signal(32, name=f"resp_sum{c}") for c in range(cids)]
        with m.If(ep.tx.valid), m.Switch(tx.kind):
            with m.Case(Kind.P2P):
                m.d.comb += [tx_wr.addr.eq(tx.dst), tx_wr.en.eq(1),
                             tx_wr.data.eq(Cat(tx_rd.data[:32] + 1,
                                               _fnv(tx_rd.data[32:], ep.tx.payload)))]
                with m.If((tx.src != me) | (tx.hop != 0)):
                    raise_fault(1, tx.src, tx.hop, ep.tx.payload)
            with m.Case(Kind.REQ):
                for c in range(cids):
                    with m.If((tx.cid == c) & (first_req[c] == 0)):
                        m.d.sync += first_req[c].eq(cycle)
            with m.Default():
                raise_fault(2, tx.cid, tx.index, ep.tx.payload)
        seen = Memory(shape=unsigned(16), depth=cids * ep.vector_depth, init=[])
        m.submodules.seen = seen
        seen_rd, seen_wr = seen.read_port(domain="comb"), seen.write_port()
        vbits = (ep.vector_depth - 1).bit_length()
        slot = Cat(Value.cast(rx.index)[:vbits], Value.cast(rx.cid)[:bits_for(cids)])
        m.d.comb += seen_rd.addr.eq(slot)
        with m.If(ep.rx.valid), m.Switch(rx.kind):
            with m.Case(Kind.P2P):
                m.d.comb += [rx_wr.addr.eq(rx.src), rx_wr.en.eq(1),
                             rx_wr.data.eq(Cat(rx_rd.data[:32] + 1,
                                               _fnv(rx_rd.data[32:], ep.rx.payload)))]
            with m.Case(Kind.RESP):
                m.d.comb += [seen_wr.addr.eq(slot), seen_wr.data.eq(ins.epoch),
                             seen_wr.en.eq(1)]
                with m.If(seen_rd.data == ins.epoch):
                    raise_fault(4, rx.cid, rx.index, ep.rx.payload)
                mix = ((rx.payload ^ (Value.cast(rx.index) * _MIX_A)[:32]) * _MIX_B)[:32]
                for c in range(cids):
                    with m.If(rx.cid == c):
                        m.d.sync += [resp_count[c].eq(resp_count[c] + 1),
                                     resp_sum[c].eq(resp_sum[c] + mix)]
                        with m.If(first_resp[c] == 0):
                            m.d.sync += first_resp[c].eq(cycle)
            with m.Default():
                raise_fault(3, rx.cid, rx.index, ep.rx.payload)

        # -- the corrupt injection: response payload bit 0 on its way into the endpoint ------
        down = self.switch.o[self.radix]
        with m.If(down.valid & (layout(Value.cast(down.payload)).kind == Kind.RESP) & armed
                  & (inject == INJECT["corrupt"])):
            m.d.comb += ep.rx.payload.eq(Value.cast(down.payload) ^ 1)
            m.d.sync += injected.eq(1)

        # -- done watch ----------------------------------------------------------------------
        mode, watch_armed, done, done_at = Signal(), Signal(), Signal(), Signal(32)
        status = Mux(mode, self.engine_status, self.coll_status)[:2]
        m.d.comb += self.done.eq(done)
        with m.If(ins.coll_start | ins.engine_start):
            m.d.sync += [mode.eq(ins.engine_start), watch_armed.eq(0), done.eq(0)]
        with m.Elif(~done):
            with m.If(~watch_armed), m.If(status != 0b10):
                m.d.sync += watch_armed.eq(1)
            with m.Elif(status == 0b10):
                m.d.sync += [done.eq(1), done_at.eq(cycle)]

        with m.If(fault == 0):
            for i, (hit, code, a, b, flit) in enumerate(raised):
                with (m.If if i == 0 else m.Elif)(hit):
                    m.d.sync += [fault.eq(code), fault_a.eq(a), fault_b.eq(b),
                                 fault_flit.eq(flit), fault_cycle.eq(cycle)]

        # -- per-run clear -------------------------------------------------------------------
        with m.If(ins.clear):
            m.d.sync += [fault.eq(0), injected.eq(0), replay.eq(0), replay_go.eq(0)]
            m.d.sync += [s.eq(0) for s in (*first_req, *first_resp, *resp_count, *resp_sum)]

        # -- readout -------------------------------------------------------------------------
        ro = self.readout
        words = {READOUT["fault"]: fault, READOUT["fault_a"]: fault_a,
                 READOUT["fault_b"]: fault_b, READOUT["fault_cycle"]: fault_cycle,
                 READOUT["host_sent"]: host_sent, READOUT["host_got"]: host_got,
                 READOUT["done_at"]: done_at, READOUT["done"]: done}
        for i in range(3):
            words[READOUT[f"fault_flit{i}"]] = fault_flit[32 * i:32 * (i + 1)]
        for c in range(cids):
            words[ro["first_req_c"] + c] = first_req[c]
            words[ro["first_resp_c"] + c] = first_resp[c]
            words[ro["resp_count_c"] + c] = resp_count[c]
            words[ro["resp_sum_c"] + c] = resp_sum[c]
        addr = ins.rd_addr
        span_bits = (ro["chk_seq"] - ro["gen_seq"]).bit_length() - 1
        peer = addr[:span_bits] if span_bits else Const(0, 1)
        for port in (gen_out, chk_out, tx_out, rx_out):
            m.d.comb += port.addr.eq(peer)
        blocks = {"gen_seq": gen_out.data, "chk_seq": chk_out.data,
                  "tx_count": tx_out.data[:32], "tx_hash": tx_out.data[32:],
                  "rx_count": rx_out.data[:32], "rx_hash": rx_out.data[32:]}
        with m.Switch(addr):
            for at, value in words.items():
                with m.Case(at):
                    m.d.comb += self.rd_data.eq(value)
            for name, value in blocks.items():
                base = ro[name] >> span_bits if span_bits else ro[name]
                with m.Case(f"{base:0{len(addr) - span_bits}b}" + "-" * span_bits):
                    m.d.comb += self.rd_data.eq(value)

    def _host_fields(self, seq: Value) -> tuple[Value, Value]:
        """``(index, tag)`` of the host flit of sequence ``seq`` (as :func:`host_fields`)."""
        p = self.params
        mixed = (seq * _MIX_A)[:32]
        index = mixed[32 - p.index_width:] if p.index_width else Const(0, 1)
        tag = Cat(Const(0, 2), mixed[2:p.tag_width])
        return index, tag


class NetworkBench(Network):
    """The :class:`~innet.hw.network.Network` of :class:`BenchNode` s, with the test ports of
    the module docs.

    Parameters
    ----------
    topology, vector_depth, step_depth, **network_args
        As :class:`~innet.hw.network.Network`.
    boot_depth : int, optional
        Rows of each node's boot memory; default ``vector_depth`` (the vectors load in one
        fill).

    Raises
    ------
    TypeError, ValueError
        If ``boot_depth`` is not an integer of at least 1; as the network otherwise.
    """

    node_module = BENCH_NODE_MODULE
    verilog_modules = (BOOT_ROM,)

    def __init__(self, topology, *, vector_depth: int, step_depth: int,
                 boot_depth: int | None = None, **network_args) -> None:
        if boot_depth is not None:
            check_int("Boot memory depth", boot_depth, low=1)
        self.boot_depth = vector_depth if boot_depth is None else boot_depth
        super().__init__(topology, vector_depth=vector_depth, step_depth=step_depth,
                         **network_args)

    def _make_node(self, radix: int, **node_args) -> NetworkNode:
        return BenchNode(radix, boot_depth=self.boot_depth, **node_args)

    @property
    def readout(self) -> dict[str, int]:
        """The node's readout map (:func:`readout_map`)."""
        return self.node.readout

    def _members(self) -> dict:
        n, a = self.nodes, self.addr_width
        nw = self.params.node_width
        return super()._members() | {
            "stall_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "clear": In(1), "epoch": In(16),
            "host_rate": In(9), "host_perm": In(1), "host_perm_dst": In(n * nw),
            "host_rx_stall": In(8), "inject": In(3), "inject_node": In(nw),
            "lane_on": In(1), "lane_addr": In(2 * n * a), "lane_w_data": In(2 * n * 32),
            "lane_w_en": In(2 * n), "lane_r_data": Out(2 * n * 32),
            "boot_load": In(1), "boot_count": In(range(self.boot_depth + 1)),
            "boot_busy": Out(1),
            "rd_addr": In(self.node.readout["width"]), "rd_data": Out(n * 32),
            "tb_cycle": Out(32), "tb_start": Out(32), "tb_done": Out(1), "tb_idle": Out(1),
            "tb_fault": Out(1),
        }

    def elaborate(self, platform):
        m = super().elaborate(platform)
        n = self.nodes
        latency = self.control_latency
        cycle, start = Signal(32, init=1), Signal(32)
        mask = Signal(n)
        m.d.sync += cycle.eq(cycle + 1)
        # The nodes register their reset as their other inputs, so their cycle counts start
        # `latency` cycles later: this one starts with theirs.
        node_rst = ResetSignal()
        for stage in range(latency):
            reg = Signal(reset_less=True, name=f"node_rst_s{stage}")
            m.d.sync += reg.eq(node_rst)
            node_rst = reg
        with m.If(node_rst):
            m.d.sync += cycle.eq(1)
        # Commands and host traffic reach the nodes `latency` cycles after the ports: the
        # start cycle and the mask of a command are taken when the nodes see it, and neither
        # done nor idle is reported in between.
        cmd = self.cmd_coll_start | self.cmd_engine_start
        seen = delayed(m, cmd, latency, "cmd")
        with m.If(seen != 0):
            m.d.sync += [start.eq(cycle), mask.eq(seen)]
        with m.If(cmd != 0):
            m.d.sync += mask.eq(0)
        settling = Signal(range(latency + 1))
        with m.If(self.host_rate != 0):
            m.d.sync += settling.eq(latency)
        with m.Elif(settling != 0):
            m.d.sync += settling.eq(settling - 1)
        done = Cat(self._done)
        m.d.comb += [
            self.tb_cycle.eq(cycle), self.tb_start.eq(start),
            self.tb_done.eq((mask != 0) & ((done & mask) == mask)),
            self.tb_idle.eq(self.quiet.all() & ~Cat(self._busy).any() & (settling == 0)
                            & (self.host_rate == 0)),
            self.tb_fault.eq(Cat(self._fault).any()),
        ]
        return m

    def _wire_node(self, m: Module, k: int, net: dict[str, Signal]) -> None:
        n, a = self.nodes, self.addr_width
        nw = self.params.node_width
        if k == 0:
            self._done, self._busy, self._fault = [], [], []
            m.d.comb += self.boot_busy.eq(net["boot_busy"])
        self._done.append(net["done"])
        self._busy.append(net["gen_busy"])
        self._fault.append(net["fault"])
        m.d.comb += [
            net["stall_rate"].eq(self.stall_rate), net["rng_load"].eq(self.rng_load),
            # Every node's LFSRs run their own sequences.
            net["rng_seed"].eq(self.rng_seed ^ Const((0x6D2B79F5 * (k + 1)) & _M32, 32)),
            net["node_id"].eq(k), net["clear"].eq(self.clear), net["epoch"].eq(self.epoch),
            net["host_rate"].eq(self.host_rate), net["host_perm"].eq(self.host_perm),
            net["host_perm_dst"].eq(self.host_perm_dst.word_select(k, nw)),
            net["host_rx_stall"].eq(self.host_rx_stall),
            net["inject"].eq(Mux(self.inject_node == k, self.inject, 0)),
            net["lane_on"].eq(self.lane_on),
            net["lane_sw_addr"].eq(self.lane_addr.word_select(k, a)),
            net["lane_ep_addr"].eq(self.lane_addr.word_select(n + k, a)),
            net["lane_sw_data"].eq(self.lane_w_data.word_select(k, 32)),
            net["lane_ep_data"].eq(self.lane_w_data.word_select(n + k, 32)),
            net["lane_sw_w_en"].eq(self.lane_w_en[k]),
            net["lane_ep_w_en"].eq(self.lane_w_en[n + k]),
            net["boot_load"].eq(self.boot_load), net["boot_count"].eq(self.boot_count),
            self.lane_r_data.word_select(k, 32).eq(net["sw_r_data"]),
            self.lane_r_data.word_select(n + k, 32).eq(net["ep_r_data"]),
            net["rd_addr"].eq(self.rd_addr),
        ]
        m.d.sync += self.rd_data.word_select(k, 32).eq(net["rd_data"])
