"""Test top level for endpoints: a small network of switches and endpoints with flat ports.

A test fixture, not the network generator (that is ``hw.network``): :class:`EndpointBench` puts
one :class:`~innet.hw.switch.Switch` and one :class:`~innet.hw.endpoint.Endpoint` on every node
of a :class:`~innet.gen.topology.Topology`, wires the switches by the topology's port map, and
(optionally) puts a :class:`~innet.hw.testing.CreditThrottle` on both links between each switch
and its endpoint (:func:`innet.sim.tb.networkbench.local_link`), so that a testbench can apply
random backpressure in both directions from on-chip LFSRs without touching the design every
cycle.

Every node is an instance of one module (:data:`NODE_MODULE`, an :class:`EndpointBenchNode`),
which a simulation builds as a Verilator hierarchical block (``hier_blocks=(NODE_MODULE,)`` in
:func:`innet.sim.runner.run`): its C++ is compiled once, not once per node. The node's two
throttles draw from LFSRs seeded with ``rng_seed`` plus a multiple of the node's number.

Ports (``N`` nodes, ``W`` flit bits, ``A`` bus address bits; target ``t < N`` is switch ``t``,
target ``N + n`` endpoint ``n``, as in :mod:`innet.gen.image`):

=====================  =========  =========================================================
``cfg_addr``           in 2N*A    one configuration bus per target: address of target ``t``
``cfg_w_data``         in 2N*32   ... write data
``cfg_w_en``           in 2N      ... write strobe
``cfg_r_data``         out 2N*32  ... read data (one cycle after the address)
``stall_rate``         in 8       a throttle holds back credits in a cycle with probability
                                  ``stall_rate / 256`` (each direction, each node)
``rng_seed``           in 32      LFSR seed, loaded while ``rng_load`` is high
``rng_load``           in 1
``host_tx_*``          N, N*W, N  host p2p flits into endpoint ``n`` (valid, payload, ready)
``host_rx_*``          N, N*W, N  host p2p flits out of endpoint ``n`` (valid, payload, ready)
``mon_tx_valid``       out N      endpoint ``n``'s own link toward its switch (flit monitor)
``mon_tx_payload``     out N*W
``mon_rx_valid``       out N      the link into endpoint ``n``
``mon_rx_payload``     out N*W
``coll_status``        out 3N     busy, done, error of each endpoint's intrinsic
``engine_status``      out 3N     ... of each step engine
``quiet``              out N      endpoint, its throttles and its switch hold nothing and
                                  every credit is home
``errors``             out N      any sticky error flag of node ``n``'s switch or endpoint
``all_engines_done``   out 1      every endpoint's ``engine_status.done``
``all_coll_done``      out 1      every endpoint's ``coll_status.done``
=====================  =========  =========================================================
"""

from __future__ import annotations

from amaranth import Cat, Const, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.hw.endpoint import Endpoint
from innet.hw.flit import link_signature
from innet.hw.network import (
    NODE_SLICES,
    local_quiet,
    node_instances,
    node_slices,
    wire_links,
)
from innet.hw.switch import CREDIT_ROUND_TRIP, Switch
from innet.sim.tb.networkbench import local_link

__all__ = ["NODE_MODULE", "EndpointBench", "EndpointBenchNode", "bench_design"]

#: Verilog name of the node module every node of an :class:`EndpointBench` instantiates.
NODE_MODULE = "innet_endpoint_bench_node"


class EndpointBenchNode(wiring.Component):
    """One node of an :class:`EndpointBench`: a switch, its endpoint, the link between them
    (with throttles) and the node's share of the bench's flat ports.

    Parameters
    ----------
    radix : int
        Network ports.
    vector_depth, step_depth : int
        Endpoint sizes.
    throttle : bool
        Throttles on the local link (:func:`innet.sim.tb.networkbench.local_link`).
    **switch_args
        :class:`~innet.hw.switch.Switch` parameters.

    Members
    -------
    i, o : link arrays of ``radix`` network ports
    sw_addr, sw_w_data, sw_w_en, sw_r_data, ep_addr, ep_w_data, ep_w_en, ep_r_data
        The switch's and the endpoint's configuration buses.
    stall_rate, rng_seed, rng_load, host_tx_*, host_rx_*, mon_tx_*, mon_rx_*, coll_status,
    engine_status, quiet, errors
        This node's bit or word of the :class:`EndpointBench` port of the same name
        (``rng_seed`` plus a multiple of the node's number).
    """

    def __init__(self, radix: int, *, vector_depth: int, step_depth: int, throttle: bool = True,
                 **switch_args) -> None:
        self.switch = Switch(radix, **switch_args)
        self.endpoint = Endpoint.for_switch(self.switch, vector_depth=vector_depth,
                                            step_depth=step_depth)
        self.radix = radix
        self.throttle = throttle
        self.params = p = self.switch.params
        self.addr_width = aw = max(self.switch.regmap.address_width, self.endpoint.address_width)
        w = p.width
        super().__init__({
            "i": In(link_signature(p)).array(radix), "o": Out(link_signature(p)).array(radix),
            "sw_addr": In(aw), "sw_w_data": In(32), "sw_w_en": In(1), "sw_r_data": Out(32),
            "ep_addr": In(aw), "ep_w_data": In(32), "ep_w_en": In(1), "ep_r_data": Out(32),
            "stall_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "host_tx_valid": In(1), "host_tx_payload": In(w), "host_tx_ready": Out(1),
            "host_rx_valid": Out(1), "host_rx_payload": Out(w), "host_rx_ready": In(1),
            "mon_tx_valid": Out(1), "mon_tx_payload": Out(w),
            "mon_rx_valid": Out(1), "mon_rx_payload": Out(w),
            "coll_status": Out(3), "engine_status": Out(3), "quiet": Out(1), "errors": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        sw, ep = self.switch, self.endpoint
        m.submodules.switch, m.submodules.endpoint = sw, ep
        for prefix, bus in (("sw", sw.cfg), ("ep", ep.cfg)):
            m.d.comb += [bus.addr.eq(getattr(self, f"{prefix}_addr")),
                         bus.w_data.eq(getattr(self, f"{prefix}_w_data")),
                         bus.w_en.eq(getattr(self, f"{prefix}_w_en")),
                         getattr(self, f"{prefix}_r_data").eq(bus.r_data)]
        for q in range(self.radix):
            wiring.connect(m, wiring.flipped(self.i[q]), sw.i[q])
            wiring.connect(m, sw.o[q], wiring.flipped(self.o[q]))
        quiet = local_link(m, sw, ep, throttle=self.throttle, stall_rate=self.stall_rate,
                           rng_seed=self.rng_seed, rng_load=self.rng_load, salts=(1, 2))
        m.d.comb += [
            ep.p2p_tx.valid.eq(self.host_tx_valid), ep.p2p_tx.payload.eq(self.host_tx_payload),
            self.host_tx_ready.eq(ep.p2p_tx.ready),
            self.host_rx_valid.eq(ep.p2p_rx.valid), self.host_rx_payload.eq(ep.p2p_rx.payload),
            ep.p2p_rx.ready.eq(self.host_rx_ready),
            self.mon_tx_valid.eq(ep.tx.valid), self.mon_tx_payload.eq(ep.tx.payload),
            self.mon_rx_valid.eq(ep.rx.valid), self.mon_rx_payload.eq(ep.rx.payload),
            self.coll_status.eq(ep.coll_status), self.engine_status.eq(ep.engine_status),
            self.quiet.eq(quiet & local_quiet(sw, ep)),
            self.errors.eq(sw.errors.as_value().any() | ep.errors.as_value().any()),
        ]
        return m


class EndpointBench(wiring.Component):
    """Switches and endpoints on every node of ``topology``, with flat test ports.

    Parameters
    ----------
    topology : innet.gen.topology.Topology
    vector_depth, step_depth : int
        Endpoint sizes.
    throttle : bool
        Put a :class:`~innet.hw.testing.CreditThrottle` on each link between a switch and
        its endpoint (:func:`innet.sim.tb.networkbench.local_link`).
    **switch_args
        :class:`~innet.hw.switch.Switch` parameters (besides the radix, taken from the
        topology).

    Members
    -------
    node : EndpointBenchNode
        The node every instance is (its switch and endpoint).
    """

    def __init__(self, topology, *, vector_depth: int, step_depth: int, throttle: bool = True,
                 **switch_args) -> None:
        self.topology = topology
        self.nodes = n = topology.nodes
        self.radix = topology.radix
        self.node = EndpointBenchNode(topology.radix, vector_depth=vector_depth,
                                      step_depth=step_depth, throttle=throttle, **switch_args)
        self.throttle = throttle
        self.params = p = self.node.params
        self.addr_width = self.node.addr_width
        w = p.width
        super().__init__({
            "cfg_addr": In(2 * n * self.addr_width), "cfg_w_data": In(2 * n * 32),
            "cfg_w_en": In(2 * n), "cfg_r_data": Out(2 * n * 32),
            "stall_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "host_tx_valid": In(n), "host_tx_payload": In(n * w), "host_tx_ready": Out(n),
            "host_rx_valid": Out(n), "host_rx_payload": Out(n * w), "host_rx_ready": In(n),
            "mon_tx_valid": Out(n), "mon_tx_payload": Out(n * w),
            "mon_rx_valid": Out(n), "mon_rx_payload": Out(n * w),
            "coll_status": Out(3 * n), "engine_status": Out(3 * n),
            "quiet": Out(n), "errors": Out(n),
            "all_engines_done": Out(1), "all_coll_done": Out(1),
        })

    @property
    def endpoint(self) -> Endpoint:
        """The endpoint every node holds (its register map, memory base)."""
        return self.node.endpoint

    def elaborate(self, platform):
        m = Module()
        n, aw = self.nodes, self.addr_width
        nets = node_instances(m, NODE_MODULE, self.node, n)
        wire_links(m, self.topology, nets, self.radix)
        for k, net in enumerate(nets):
            for prefix, t in (("sw", k), ("ep", n + k)):
                m.d.comb += [net[f"{prefix}_addr"].eq(self.cfg_addr.word_select(t, aw)),
                             net[f"{prefix}_w_data"].eq(self.cfg_w_data.word_select(t, 32)),
                             net[f"{prefix}_w_en"].eq(self.cfg_w_en[t]),
                             self.cfg_r_data.word_select(t, 32).eq(net[f"{prefix}_r_data"])]
            m.d.comb += [
                net["stall_rate"].eq(self.stall_rate),
                net["rng_seed"].eq((self.rng_seed + Const(0x85EBCA6B * k & 0xFFFFFFFF, 32))[:32]),
                net["rng_load"].eq(self.rng_load),
                *node_slices(self, net, k, (*NODE_SLICES, "mon_tx_valid", "mon_tx_payload",
                                            "mon_rx_valid", "mon_rx_payload")),
            ]
        m.d.comb += [
            self.all_engines_done.eq(Cat(net["engine_status"][1] for net in nets).all()),
            self.all_coll_done.eq(Cat(net["coll_status"][1] for net in nets).all()),
        ]
        return m


def bench_design(nodes: int, *, vector_depth: int = 64, step_depth: int = 16,
                 throttle: bool = True, collective_ids: int = 4, p2p_vcs: int = 2,
                 buffer_depth: int = CREDIT_ROUND_TRIP):
    """A ring of ``nodes`` as an :class:`EndpointBench`, emitted: ``(Design, params)``, where
    ``params`` are the fixed parameters :mod:`innet.sim.tb.tb_endpoint` needs (``shape``,
    ``flit``, ``sizes``, ``addr_width``, ``memory_base``, ``endpoint_digest``). Simulate it with
    ``hier_blocks=(NODE_MODULE,)``. The switches' local ports have their default depth
    (:data:`~innet.hw.credit.LOCAL_EXTRA` entries beyond ``buffer_depth``): a root's results
    then reach its endpoint at one a cycle."""
    from innet.gen.topology import torus
    from innet.hw.verilog import Design, emit

    top = EndpointBench(torus((nodes,)), vector_depth=vector_depth, step_depth=step_depth,
                        throttle=throttle, routing_depth=nodes, collective_ids=collective_ids,
                        p2p_vcs=p2p_vcs, buffer_depth=buffer_depth)
    p, ep = top.params, top.endpoint
    params = {
        "shape": [nodes],
        "flit": {"payload_width": p.payload_width, "routing_depth": p.routing_depth,
                 "collective_ids": p.collective_ids, "p2p_vcs": p.p2p_vcs,
                 "index_width": p.index_width, "tag_width": p.tag_width},
        "sizes": {"radix": top.radix, "collective_ids": p.collective_ids,
                  "routing_depth": p.routing_depth, "step_depth": step_depth,
                  "vector_depth": vector_depth, "node_id_width": p.node_width},
        "addr_width": top.addr_width, "memory_base": ep.memory_base,
        "endpoint_digest": ep.regmap.digest,
    }
    name = f"endpoint_bench_{nodes}{'' if throttle else '_direct'}_{vector_depth}"
    node = emit(top.node, NODE_MODULE).verilog
    design = emit(top, name)
    return Design(node + design.verilog, name, design.ports), params
