"""The whole network as one top level: a switch and an endpoint on every node of a Topology.

PIUMA, "Network Overview": every node is a switch with a port to its core's local memory (here
an :class:`~innet.hw.endpoint.Endpoint`); switches are joined by the topology's links. This
module generates that network for any :class:`~innet.gen.topology.Topology` and emits it to
Verilog:

- :class:`NetworkNode` is one node: a :class:`~innet.hw.switch.Switch` and its endpoint, joined
  by the local link. Everything node-specific (node id, routes, trees, step tables) is in
  registers, so all nodes are the same module.
- :class:`Network` instantiates the node module (:data:`NODE_MODULE`) once per node (an
  Amaranth ``Instance``), wires the links by the topology's port map with optional pipeline
  registers per link, and gives one configuration bus with a target select, per-node commands
  and status.
- :func:`emit_network` emits both: the node module once, then the top. A simulator may compile
  the node module once as a unit of its own however many nodes instantiate it
  (:func:`innet.sim.runner.build`'s ``hier_blocks``).

The network has the ports of a real one only. Simulation wrappers
(:mod:`innet.sim.tb.networkbench`) derive from :class:`NetworkNode` and :class:`Network`: a node
wires its local link in :meth:`NetworkNode._local_link` and declares its ports in
:meth:`NetworkNode._members`; the top declares its own in :meth:`Network._members`, builds its
node in :meth:`Network._make_node` and wires each node's further ports in
:meth:`Network._wire_node`.

Ports of :class:`Network` (``N`` nodes, ``W`` flit bits, ``A`` address bits; targets as in
:mod:`innet.gen.image`: ``t < N`` is switch ``t``, ``N + n`` is endpoint ``n``)

=======================  =========  ==========================================================
``cfg_sel``              in         target of the bus access; ``2N`` writes every switch,
                                    ``2N + 1`` every endpoint (broadcast writes)
``cfg_addr``             in A       word address
``cfg_w_data``           in 32      write data
``cfg_w_en``             in 1       write strobe
``cfg_r_data``           out 32     read data of the target and address
                                    :attr:`Network.control_latency` ``+ 1`` cycles earlier
                                    (the previous cycle, here)
``cmd_coll_start``       in N       a pulse on bit ``n`` writes ``coll.ctrl.start`` of endpoint
                                    ``n`` (any subset at once; a bus write to the same endpoint
                                    in that cycle is lost)
``cmd_engine_start``     in N       ... ``engine.ctrl.start``
``coll_status``          out 3N     busy, done, error of each endpoint's intrinsic
``engine_status``        out 3N     ... of each step engine
``host_tx_*``            N, NW, N   host p2p flits into endpoint ``n`` (valid, payload, ready)
``host_rx_*``            N, NW, N   host p2p flits out of endpoint ``n`` (valid, payload, ready)
``quiet``                out N      node ``n`` holds nothing, every credit is home, nothing runs
``errors``               out N      any sticky error flag of node ``n``'s switch or endpoint
=======================  =========  ==========================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace

from amaranth import Cat, ClockSignal, Const, Instance, Module, Mux, ResetSignal, Signal, Value
from amaranth.hdl import ClockDomain, ResetInserter
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.deadlock import check_diameter
from innet.gen.regmap import MAX_STEP_DEPTH, MAX_VECTOR_DEPTH, node_id_bits
from innet.gen.topology import check_topology
from innet.hw.endpoint import Endpoint
from innet.hw.flit import link_signature
from innet.hw.switch import CREDIT_ROUND_TRIP, Switch
from innet.hw.variants import switch_collective

__all__ = ["MAX_LINK_STAGES", "NODE_MODULE", "NODE_SLICES", "Network", "NetworkNode", "delayed",
           "emit_network", "flat_ports", "image_sizes", "link_stage_map", "local_quiet",
           "network_verilog", "node_instances", "node_slices", "wire_links"]

#: Verilog name of the node module.
NODE_MODULE = "innet_node"

#: Most pipeline stages a link may have (each is a register of the link's every wire).
MAX_LINK_STAGES = 1024


def delayed(m: Module, signal: Value, stages: int, name: str) -> Value:
    """``signal`` delayed by ``stages`` registers of ``m`` (named ``{name}_s0``, ...)."""
    for s in range(stages):
        reg = Signal.like(signal, name=f"{name}_s{s}")
        m.d.sync += reg.eq(signal)
        signal = reg
    return signal


def link_stage_map(topology, link_stages: int | Mapping[tuple[int, int], int] = 0
                   ) -> dict[tuple[int, int], int]:
    """Pipeline stages of every link of ``topology``: ``{(u, v): stages}`` with ``u < v``.

    ``link_stages`` is one count for every link or a mapping from node pairs (either order) to
    counts; links it does not name have no stage.

    Raises
    ------
    TypeError
        If ``link_stages`` or a count is not an integer, or a key is not a pair of integers.
    ValueError
        If a count is negative or above :data:`MAX_LINK_STAGES`, a pair is not a link of
        ``topology`` or is named twice.
    """
    links = {(min(link.u, link.v), max(link.u, link.v)) for link in topology.links()}
    if not isinstance(link_stages, Mapping):
        every = check_int("Link stages", link_stages, low=0, high=MAX_LINK_STAGES)
        return dict.fromkeys(sorted(links), every)
    out = dict.fromkeys(sorted(links), 0)
    named = set()
    for key, value in link_stages.items():
        if (not isinstance(key, tuple) or len(key) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in key)):
            raise TypeError(f"Link stages are keyed by node pairs (u, v), not {key!r:.60}")
        pair = (min(key), max(key))
        if pair not in links:
            raise ValueError(f"Link stages name {key}, which is not a link of the topology")
        if pair in named:
            raise ValueError(f"Link stages name the link {pair} twice")
        named.add(pair)
        out[pair] = check_int(f"Link stages of link {key}", value, low=0, high=MAX_LINK_STAGES)
    return out


def image_sizes(topology, *, vector_depth: int, step_depth: int,
                collective_ids: int = 2) -> dict[str, int]:
    """The image map parameters (:func:`innet.gen.image.build_image` keywords) of the
    :class:`Network` built with these arguments, without building it: images can be planned
    (and refused) before any hardware is elaborated."""
    return {"radix": topology.radix, "collective_ids": collective_ids,
            "routing_depth": topology.nodes, "step_depth": step_depth,
            "vector_depth": vector_depth, "node_id_width": node_id_bits(topology.nodes)}


def local_quiet(sw: Switch, ep: Endpoint) -> Value:
    """High when endpoint ``ep`` holds nothing and every credit of switch ``sw`` is home (a
    drained node)."""
    radix = sw.radix
    credits_home = Cat(count == (sw.local_depth if o == radix else sw.buffer_depth)
                       for o in range(radix + 1) for count in sw.credit_counts[o]).all()
    return ep.quiet & credits_home


class NetworkNode(wiring.Component):
    """One node: a switch and its endpoint, joined by the local link.

    Parameters
    ----------
    radix : int
        Network ports (the topology's maximum degree).
    vector_depth, step_depth : int
        Endpoint sizes.
    **switch_args
        :class:`~innet.hw.switch.Switch` parameters.

    Members
    -------
    i, o : link arrays of ``radix`` network ports
    cfg_addr, cfg_w_data : In
        The shared configuration bus.
    sw_w_en, ep_w_en : In(1)
        Write strobes of this node's switch and endpoint.
    sw_r_data, ep_r_data : Out(32)
    coll_start, engine_start : In(1)
        Commands (write the start register of the endpoint).
    host_tx_*, host_rx_* : host p2p flits into and out of the endpoint
    coll_status, engine_status : Out(3)
    quiet : Out(1)
        The node is drained (:func:`local_quiet` and whatever sits on the local link).
    errors : Out(1)
        Any sticky error flag of the switch or the endpoint.
    clk, rst : In(1)
        With :attr:`input_stages` only: the node's clock and reset (its clock domain is its
        own); otherwise the ports of the implicit ``sync`` domain.
    """

    #: The inputs that control the node (configuration bus and commands), as opposed to its
    #: links and host flits; a wrapper adds its own.
    control_inputs = ("cfg_addr", "cfg_w_data", "sw_w_en", "ep_w_en", "coll_start",
                      "engine_start")
    #: Registers on each control input, and on the reset, before the node's logic reads it
    #: (none here). With registers the node has its clock domain of its own (``clk`` and
    #: ``rst`` ports) and no logic depends on ``rst`` within a cycle.
    input_stages = 0
    #: The switch's link registers (flit and credit) sit at the far end of each network link
    #: instead: its network ports carry the values the registers load
    #: (:class:`~innet.hw.switch.SwitchCore`'s ``early_links``), and the node registers what
    #: arrives on its links. The same cycles from port to port, but the node's logic then
    #: depends on no input within a cycle (for a simulator that evaluates a node's input logic
    #: whenever it evaluates the node). Here off: the switch's outputs are registers.
    retimed_links = False

    def __init__(self, radix: int, *, vector_depth: int, step_depth: int,
                 **switch_args) -> None:
        self.switch = Switch(radix, early_links=self.retimed_links, **switch_args)
        self.endpoint = Endpoint.for_switch(self.switch, vector_depth=vector_depth,
                                            step_depth=step_depth)
        self.radix = radix
        self.params = self.switch.params
        self.addr_width = max(self.switch.regmap.address_width, self.endpoint.address_width)
        super().__init__(self._members())

    def _members(self) -> dict:
        """The node's signature members; a wrapper adds its own."""
        p, radix, w = self.params, self.radix, self.params.width
        clock = {"clk": In(1), "rst": In(1)} if self.input_stages else {}
        return clock | {
            "i": In(link_signature(p)).array(radix), "o": Out(link_signature(p)).array(radix),
            "cfg_addr": In(self.addr_width), "cfg_w_data": In(32),
            "sw_w_en": In(1), "ep_w_en": In(1), "sw_r_data": Out(32), "ep_r_data": Out(32),
            "coll_start": In(1), "engine_start": In(1),
            "host_tx_valid": In(1), "host_tx_payload": In(w), "host_tx_ready": Out(1),
            "host_rx_valid": Out(1), "host_rx_payload": Out(w), "host_rx_ready": In(1),
            "coll_status": Out(3), "engine_status": Out(3), "quiet": Out(1), "errors": Out(1),
        }

    def _inputs(self, m: Module) -> SimpleNamespace:
        """Every input of :attr:`control_inputs` as the node's logic reads it: the port delayed
        by :attr:`input_stages` registers."""
        return SimpleNamespace(**{name: delayed(m, getattr(self, name), self.input_stages,
                                                f"{name}_in")
                                  for name in self.control_inputs})

    def _local_link(self, m: Module, ins: SimpleNamespace) -> Value:
        """Wire the endpoint to the switch's local port; return the quiet flag of whatever sits
        between them (here nothing: a constant 1). ``ins``: as :meth:`_inputs`."""
        wiring.connect(m, self.endpoint.tx, self.switch.i[self.radix])
        wiring.connect(m, self.switch.o[self.radix], self.endpoint.rx)
        return Const(1, 1)

    def _wrap(self, m: Module, ins: SimpleNamespace) -> None:
        """A wrapper's own logic, added to the node's module (here nothing). ``ins``: as
        :meth:`_inputs`."""

    def elaborate(self, platform):
        m = Module()
        sw, ep, radix = self.switch, self.endpoint, self.radix
        m.submodules.switch, m.submodules.endpoint = sw, ep
        emap = ep.regmap
        ins = self._inputs(m)
        m.d.comb += [sw.cfg.addr.eq(ins.cfg_addr), sw.cfg.w_data.eq(ins.cfg_w_data),
                     sw.cfg.w_en.eq(ins.sw_w_en), self.sw_r_data.eq(sw.cfg.r_data),
                     self.ep_r_data.eq(ep.cfg.r_data)]
        with m.If(ins.coll_start):
            reg = emap["coll.ctrl"]
            m.d.comb += [ep.cfg.addr.eq(reg.address), ep.cfg.w_data.eq(reg.encode({"start": 1})),
                         ep.cfg.w_en.eq(1)]
        with m.Elif(ins.engine_start):
            reg = emap["engine.ctrl"]
            m.d.comb += [ep.cfg.addr.eq(reg.address), ep.cfg.w_data.eq(reg.encode({"start": 1})),
                         ep.cfg.w_en.eq(1)]
        with m.Else():
            m.d.comb += [ep.cfg.addr.eq(ins.cfg_addr), ep.cfg.w_data.eq(ins.cfg_w_data),
                         ep.cfg.w_en.eq(ins.ep_w_en)]
        stages = int(self.retimed_links)
        for q in range(radix):
            m.d.comb += [
                sw.i[q].valid.eq(delayed(m, self.i[q].valid, stages, f"i{q}_valid")),
                sw.i[q].payload.eq(delayed(m, self.i[q].payload, stages, f"i{q}_payload")),
                self.i[q].credit.eq(sw.i[q].credit),
                self.o[q].valid.eq(sw.o[q].valid), self.o[q].payload.eq(sw.o[q].payload),
                sw.o[q].credit.eq(delayed(m, self.o[q].credit, stages, f"o{q}_credit")),
            ]
        link_quiet = self._local_link(m, ins)
        m.d.comb += [
            ep.p2p_tx.valid.eq(self.host_tx_valid), ep.p2p_tx.payload.eq(self.host_tx_payload),
            self.host_tx_ready.eq(ep.p2p_tx.ready),
            self.host_rx_valid.eq(ep.p2p_rx.valid), self.host_rx_payload.eq(ep.p2p_rx.payload),
            ep.p2p_rx.ready.eq(self.host_rx_ready),
            self.coll_status.eq(ep.coll_status), self.engine_status.eq(ep.engine_status),
            self.quiet.eq(link_quiet & local_quiet(sw, ep)),
            self.errors.eq(sw.errors.as_value().any() | ep.errors.as_value().any()),
        ]
        self._wrap(m, ins)
        if not self.input_stages:
            return m
        outer = Module()
        outer.domains.sync = ClockDomain("sync", reset_less=True)
        outer.d.comb += ClockSignal("sync").eq(self.clk)
        outer.submodules.node = ResetInserter(
            {"sync": delayed(outer, self.rst, self.input_stages, "rst_in")})(m)
        return outer


def node_instances(m: Module, module: str, node, count: int) -> list[dict[str, Signal]]:
    """``count`` instances (``node0``, ...) in ``m`` of the Verilog module ``module``, which is
    ``node`` emitted, on the ``sync`` clock and reset; returns each instance's port signals by
    their :func:`flat_ports` names (``n{k}__{name}`` in the Verilog)."""
    ports = [port for port in flat_ports(node) if port[0] not in ("clk", "rst")]
    nets = []
    for k in range(count):
        net = {name: Signal(width, name=f"n{k}__{name}") for name, _d, width in ports}
        args = {f"{d}_{name}": net[name] for name, d, _w in ports}
        m.submodules[f"node{k}"] = Instance(module, i_clk=ClockSignal(), i_rst=ResetSignal(),
                                            **args)
        nets.append(net)
    return nets


def wire_links(m: Module, topology, nets: list[dict[str, Signal]], radix: int,
               stages: Mapping[tuple[int, int], int] | None = None) -> None:
    """Join the network ports of the node instances ``nets`` (:func:`node_instances`) along
    ``topology``'s links, each direction through the link's ``stages`` registers (keyed by
    ``(u, v)``, ``u < v``; none by default), and tie off every port of the ``radix`` with no
    link."""
    used = set()
    for link in topology.links():
        count = stages[min(link.u, link.v), max(link.u, link.v)] if stages else 0
        for a, pa, b, pb in ((link.u, link.port_u, link.v, link.port_v),
                             (link.v, link.port_v, link.u, link.port_u)):
            src, dst = nets[a], nets[b]
            tag = f"l{a}p{pa}"
            m.d.comb += [
                dst[f"i__{pb}__valid"].eq(delayed(m, src[f"o__{pa}__valid"], count,
                                                  f"{tag}_valid")),
                dst[f"i__{pb}__payload"].eq(delayed(m, src[f"o__{pa}__payload"], count,
                                                    f"{tag}_payload")),
                src[f"o__{pa}__credit"].eq(delayed(m, dst[f"i__{pb}__credit"], count,
                                                   f"{tag}_credit")),
            ]
            used.add((a, pa))
    for k, net in enumerate(nets):
        for q in range(radix):
            if (k, q) not in used:
                m.d.comb += [net[f"i__{q}__valid"].eq(0), net[f"o__{q}__credit"].eq(0)]


def node_slices(top, net: dict[str, Value], k: int, names) -> list:
    """The assignments that join each port ``name`` of a node instance (``net[name]``, as
    :func:`flat_ports` names it) to slice ``k`` of the top level's port of the same name (a
    bit or word per node): the top drives an input of the node, the node drives the top's
    output."""
    assigns = []
    for name in names:
        port, width = getattr(top, name), len(net[name])
        if top.signature.members[name].flow == In:
            assigns.append(net[name].eq(port.word_select(k, width)))
        else:
            assigns.append(port.word_select(k, width).eq(net[name]))
    return assigns


#: The node ports every network top level has a slice of per node.
NODE_SLICES = ("host_tx_valid", "host_tx_payload", "host_tx_ready", "host_rx_valid",
               "host_rx_payload", "host_rx_ready", "coll_status", "engine_status", "quiet",
               "errors")


def flat_ports(component) -> list[tuple[str, str, int]]:
    """``(verilog name, "i"/"o", width)`` of every port of a component, as ``emit`` names them."""
    out = []
    for path, member, _value in component.signature.flatten(component):
        name = "__".join(str(part) for part in path)
        out.append((name, "i" if member.flow == In else "o", len(Value.cast(_value))))
    return out


class Network(wiring.Component):
    """Every node of ``topology`` as an instance of :data:`NODE_MODULE` (see the module docs).

    Parameters
    ----------
    topology : innet.gen.topology.Topology
    vector_depth : int
        Elements of each endpoint's vector memory.
    step_depth : int
        Step-table entries per endpoint.
    collective_ids : int
        Collective ids of switches and endpoints.
    p2p_vcs : int, optional
        Hop-indexed p2p VCs; default (and minimum) the topology's diameter.
    link_stages : int or mapping of (int, int) to int
        Pipeline registers on each direction of a switch-to-switch link (long links): one
        count for every link, or a count per link keyed by its two nodes ``(u, v)`` in either
        order (links not named have none), as :func:`innet.gen.topology.piuma.link_cycles`
        gives for a multi-level network.
    buffer_depth : int, optional
        Input buffer per port and VC; default the credit round trip of the longest link
        (``CREDIT_ROUND_TRIP + 2 * stages``), the least for full throughput on every link.
        The endpoints' receive buffers hold :data:`~innet.hw.credit.LOCAL_EXTRA` more (the
        switch's default).
    tag_width : int
        Bits of a p2p flit's tag.
    mul : bool
        Build the switches' collective engines with multipliers (in-network ``mul``); the
        endpoints have theirs either way.

    Members
    -------
    node : NetworkNode
        The node every instance is (its switch, endpoint and parameters).

    Raises
    ------
    TypeError
        If ``link_stages`` is neither an integer nor a mapping of node pairs to integers.
    ValueError
        If the topology's diameter is beyond a switch's p2p VCs
        (:func:`innet.gen.deadlock.check_diameter`), ``p2p_vcs`` is below it, a size is out of
        range, or ``link_stages`` names a pair of nodes that is not a link or a negative
        count.
    """

    #: Verilog name of the module :meth:`_make_node` builds.
    node_module = NODE_MODULE
    #: Verilog source of the modules the design instantiates (in the node or the top) that
    #: Amaranth does not generate (a wrapper's own); :func:`network_verilog` adds them.
    verilog_modules: tuple[str, ...] = ()

    def __init__(self, topology, *, vector_depth: int, step_depth: int,
                 collective_ids: int = 2, p2p_vcs: int | None = None,
                 link_stages: int | Mapping[tuple[int, int], int] = 0,
                 buffer_depth: int | None = None, tag_width: int = 8,
                 mul: bool = False) -> None:
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        check_topology(topology)
        # The index width is derived from the depths: a depth is named before a width is.
        vector_depth = check_int("Vector depth", vector_depth, low=1, high=MAX_VECTOR_DEPTH)
        step_depth = check_int("Step depth", step_depth, low=1, high=MAX_STEP_DEPTH)
        self.link_stages = stages = link_stage_map(topology, link_stages)
        diameter = check_diameter(topology)
        if p2p_vcs is None:
            p2p_vcs = diameter
        p2p_vcs = check_int("P2p VCs", p2p_vcs, low=1)
        if p2p_vcs < diameter:
            raise ValueError(f"P2p VCs must be at least the topology's diameter {diameter} "
                             f"(deadlock-free minimal routing), not {p2p_vcs}")
        if buffer_depth is None:
            buffer_depth = CREDIT_ROUND_TRIP + 2 * max(stages.values(), default=0)
        buffer_depth = check_int("Buffer depth", buffer_depth, low=1)
        self.topology = topology
        self.nodes = n = topology.nodes
        self.radix = topology.radix
        index_width = max(1, (max(vector_depth, step_depth) - 1).bit_length())
        self.node = self._make_node(
            topology.radix, vector_depth=vector_depth, step_depth=step_depth,
            routing_depth=n, collective_ids=collective_ids, p2p_vcs=p2p_vcs,
            buffer_depth=buffer_depth,
            index_width=index_width, tag_width=tag_width,
            collective=switch_collective("engine", mul=mul))
        self.params = self.node.params
        self.addr_width = self.node.addr_width
        self.sel_width = (2 * n + 1).bit_length()
        super().__init__(self._members())

    def _make_node(self, radix: int, **node_args) -> NetworkNode:
        """The node every instance is (:data:`node_module`); a wrapper builds its own."""
        return NetworkNode(radix, **node_args)

    def _members(self) -> dict:
        """The top level's signature members; a wrapper adds its own."""
        n, w = self.nodes, self.params.width
        return {
            "cfg_sel": In(self.sel_width), "cfg_addr": In(self.addr_width), "cfg_w_data": In(32),
            "cfg_w_en": In(1), "cfg_r_data": Out(32),
            "cmd_coll_start": In(n), "cmd_engine_start": In(n),
            "coll_status": Out(3 * n), "engine_status": Out(3 * n),
            "host_tx_valid": In(n), "host_tx_payload": In(n * w), "host_tx_ready": Out(n),
            "host_rx_valid": Out(n), "host_rx_payload": Out(n * w), "host_rx_ready": In(n),
            "quiet": Out(n), "errors": Out(n),
        }

    def _wire_node(self, m: Module, k: int, net: dict[str, Signal]) -> None:
        """Wire the ports of node ``k`` (``net``: its port signals by Verilog name) that the
        network does not know; a wrapper with a node of its own wires them here."""

    @property
    def endpoint(self) -> Endpoint:
        """The endpoint every node holds (its register map, memory base)."""
        return self.node.endpoint

    @property
    def switch(self) -> Switch:
        """The switch every node holds."""
        return self.node.switch

    def sizes(self) -> dict[str, int]:
        """The image map parameters (:func:`innet.gen.image.build_image` keywords) this
        network's registers were built with."""
        p, ep = self.params, self.endpoint
        return image_sizes(self.topology, vector_depth=ep.vector_depth,
                           step_depth=ep.step_depth, collective_ids=p.collective_ids)

    @property
    def control_latency(self) -> int:
        """Cycles from a control input of the top level (configuration bus, commands) to the
        nodes' logic (the node's :attr:`~NetworkNode.input_stages`). Read data comes one cycle
        later still."""
        return self.node.input_stages

    def elaborate(self, platform):
        m = Module()
        n = self.nodes
        nets = node_instances(m, self.node_module, self.node, n)
        wire_links(m, self.topology, nets, self.radix, self.link_stages)
        sel = self.cfg_sel
        read_sel = delayed(m, sel, self.control_latency + 1, "read_sel")
        r_data = Const(0, 32)
        for k, net in enumerate(nets):
            m.d.comb += [
                net["cfg_addr"].eq(self.cfg_addr), net["cfg_w_data"].eq(self.cfg_w_data),
                net["sw_w_en"].eq(self.cfg_w_en & ((sel == k) | (sel == 2 * n))),
                net["ep_w_en"].eq(self.cfg_w_en & ((sel == n + k) | (sel == 2 * n + 1))),
                net["coll_start"].eq(self.cmd_coll_start[k]),
                net["engine_start"].eq(self.cmd_engine_start[k]),
                *node_slices(self, net, k, NODE_SLICES),
            ]
            self._wire_node(m, k, net)
            r_data = Mux(read_sel == k, net["sw_r_data"],
                         Mux(read_sel == n + k, net["ep_r_data"], r_data))
        m.d.comb += self.cfg_r_data.eq(r_data)
        return m


def network_verilog(top: Network, name: str):
    """The Verilog of ``top`` (a :class:`Network` or a wrapper of it) as a
    :class:`~innet.hw.verilog.Design` named ``name``: the node module (``top.node_module``)
    once, the modules of ``top.verilog_modules``, then the top level, whose port metadata the
    design carries."""
    from innet.hw.verilog import Design, emit

    node = emit(top.node, top.node_module).verilog
    top_design = emit(top, name)
    return Design("".join((node, *top.verilog_modules, top_design.verilog)), name,
                  top_design.ports)


def emit_network(topology, *, vector_depth: int, step_depth: int, name: str | None = None,
                 **network_args):
    """The Verilog of the :class:`Network` of ``topology``: ``(Design, Network)``.

    ``network_args`` are the further :class:`Network` parameters; the top level's name defaults
    to ``innet_network_<kind><nodes>``. The design holds the node module (:data:`NODE_MODULE`)
    once, then the top (:func:`network_verilog`).
    """
    top = Network(topology, vector_depth=vector_depth, step_depth=step_depth, **network_args)
    name = name or f"innet_network_{topology.kind}{topology.nodes}"
    return network_verilog(top, name), top
