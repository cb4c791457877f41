"""Test top level for endpoints: a small network of switches and endpoints with flat ports.

A test fixture, not the network generator (that is ``hw.network``): :class:`EndpointBench` puts
one :class:`~innet.hw.switch.Switch` and one :class:`~innet.hw.endpoint.Endpoint` on every node
of a :class:`~innet.gen.topology.Topology`, wires the switches by the topology's port map, and
(optionally) puts a :class:`~innet.hw.testing.CreditThrottle` on both links between each switch
and its endpoint (:func:`innet.sim.tb.networkbench.local_link`), so that a testbench can apply
random backpressure in both directions from on-chip LFSRs without touching the design every
cycle.

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

from amaranth import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.hw.endpoint import Endpoint
from innet.hw.network import local_quiet
from innet.hw.switch import CREDIT_ROUND_TRIP, Switch
from innet.sim.tb.networkbench import local_link

__all__ = ["EndpointBench", "bench_design"]


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
    """

    def __init__(self, topology, *, vector_depth: int, step_depth: int, throttle: bool = True,
                 **switch_args) -> None:
        self.topology = topology
        self.nodes = n = topology.nodes
        self.radix = topology.radix
        self.switches = [Switch(topology.radix, **switch_args) for _ in range(n)]
        self.endpoints = [Endpoint.for_switch(s, vector_depth=vector_depth,
                                              step_depth=step_depth) for s in self.switches]
        self.throttle = throttle
        s, e = self.switches[0], self.endpoints[0]
        self.params = p = s.params
        self.addr_width = max(s.regmap.address_width, e.address_width)
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

    def elaborate(self, platform):
        m = Module()
        n, radix, p = self.nodes, self.radix, self.params
        w, aw = p.width, self.addr_width
        targets = [*self.switches, *self.endpoints]
        for t, unit in enumerate(targets):
            bus = unit.cfg
            m.submodules[f"{'switch' if t < n else 'endpoint'}{t % n}"] = unit
            m.d.comb += [bus.addr.eq(self.cfg_addr.word_select(t, aw)),
                         bus.w_data.eq(self.cfg_w_data.word_select(t, 32)),
                         bus.w_en.eq(self.cfg_w_en[t]),
                         self.cfg_r_data.word_select(t, 32).eq(bus.r_data)]
        used = set()
        for link in self.topology.links():
            a, pa, b, pb = link.u, link.port_u, link.v, link.port_v
            wiring.connect(m, self.switches[a].o[pa], self.switches[b].i[pb])
            wiring.connect(m, self.switches[b].o[pb], self.switches[a].i[pa])
            used |= {(a, pa), (b, pb)}
        for k, (sw, ep) in enumerate(zip(self.switches, self.endpoints, strict=True)):
            for q in range(radix):
                if (k, q) not in used:
                    m.d.comb += [sw.i[q].valid.eq(0), sw.o[q].credit.eq(0)]
            quiet = local_link(m, sw, ep, throttle=self.throttle, stall_rate=self.stall_rate,
                               rng_seed=self.rng_seed, rng_load=self.rng_load,
                               salts=(2 * k + 1, 2 * k + 2), name=str(k)) & local_quiet(sw, ep)
            m.d.comb += [
                ep.p2p_tx.valid.eq(self.host_tx_valid[k]),
                ep.p2p_tx.payload.eq(self.host_tx_payload.word_select(k, w)),
                self.host_tx_ready[k].eq(ep.p2p_tx.ready),
                self.host_rx_valid[k].eq(ep.p2p_rx.valid),
                self.host_rx_payload.word_select(k, w).eq(ep.p2p_rx.payload),
                ep.p2p_rx.ready.eq(self.host_rx_ready[k]),
                self.mon_tx_valid[k].eq(ep.tx.valid),
                self.mon_tx_payload.word_select(k, w).eq(ep.tx.payload),
                self.mon_rx_valid[k].eq(ep.rx.valid),
                self.mon_rx_payload.word_select(k, w).eq(ep.rx.payload),
                self.coll_status.word_select(k, 3).eq(ep.coll_status),
                self.engine_status.word_select(k, 3).eq(ep.engine_status),
                self.quiet[k].eq(quiet),
                self.errors[k].eq(sw.errors.as_value().any() | ep.errors.as_value().any()),
            ]
        m.d.comb += [
            self.all_engines_done.eq(Cat(e.engine_status.done for e in self.endpoints).all()),
            self.all_coll_done.eq(Cat(e.coll_status.done for e in self.endpoints).all()),
        ]
        return m


def bench_design(nodes: int, *, vector_depth: int = 64, step_depth: int = 16,
                 throttle: bool = True, collective_ids: int = 4, p2p_vcs: int = 2,
                 buffer_depth: int = CREDIT_ROUND_TRIP):
    """A ring of ``nodes`` as an :class:`EndpointBench`, emitted: ``(Design, params)``, where
    ``params`` are the fixed parameters :mod:`innet.sim.tb.tb_endpoint` needs (``shape``,
    ``flit``, ``sizes``, ``addr_width``, ``memory_base``, ``endpoint_digest``)."""
    from innet.gen.topology import torus
    from innet.hw.verilog import emit

    top = EndpointBench(torus((nodes,)), vector_depth=vector_depth, step_depth=step_depth,
                        throttle=throttle, routing_depth=nodes, collective_ids=collective_ids,
                        p2p_vcs=p2p_vcs, buffer_depth=buffer_depth)
    p, ep = top.params, top.endpoints[0]
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
    return emit(top, name), params
