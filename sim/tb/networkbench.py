"""Test top level for whole networks: the :class:`~innet.hw.network.Network` with test ports.

A test fixture, not the network generator (that is :mod:`innet.hw.network`): :class:`BenchNode`
is a :class:`~innet.hw.network.NetworkNode` whose local link carries a
:class:`~innet.hw.testing.CreditThrottle` on each direction (random backpressure at the
endpoint, from on-chip LFSRs, so that a testbench need not touch the design every cycle) and
brings both directions of the link out for a flit monitor; :class:`NetworkBench` is the
:class:`~innet.hw.network.Network` of such nodes with the test ports below beside the network's
own. :func:`local_link` wires a throttled local link (the endpoint bench,
:mod:`innet.sim.tb.endpointbench`, uses it too).

Ports beyond :class:`~innet.hw.network.Network`'s (``N`` nodes, ``W`` flit bits):

=======================  =========  ==========================================================
``stall_rate``           in 8       a local-link credit is held back in a cycle with
                                    probability ``stall_rate / 256`` (each direction, each
                                    node)
``rng_seed``             in 32      LFSR seed of the throttles, loaded while ``rng_load`` is
``rng_load``             in 1       high (every throttle mixes in its own constant)
``mon_tx_valid``         out N      endpoint ``n``'s link toward its switch (flit monitor)
``mon_tx_payload``       out N*W
``mon_rx_valid``         out N      the link into endpoint ``n``
``mon_rx_payload``       out N*W
=======================  =========  ==========================================================

``quiet`` also waits for the throttles to hold nothing back.
"""

from __future__ import annotations

from amaranth import Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.hw.endpoint import Endpoint
from innet.hw.network import Network, NetworkNode, network_verilog
from innet.hw.switch import Switch
from innet.hw.testing import CreditThrottle, xorshift32

__all__ = ["BENCH_NODE_MODULE", "BenchNode", "NetworkBench", "bench_design", "local_link"]

#: Verilog name of the bench's node module.
BENCH_NODE_MODULE = "innet_bench_node"


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
        state = Signal(32, init=salt, name=f"lfsr{name}_{salt}")
        with m.If(rng_load):
            mix = Const(0x9E3779B9 * salt & 0xFFFF_FFFF, 32)
            m.d.sync += state.eq((rng_seed ^ mix) | 1)
        with m.Else():
            m.d.sync += state.eq(xorshift32(state))
        m.d.comb += unit.go.eq(state[8:16] >= stall_rate)
    return up.quiet & down.quiet


class BenchNode(NetworkNode):
    """A :class:`~innet.hw.network.NetworkNode` with credit throttles on its local link and
    the link brought out for a monitor (ports ``stall_rate``, ``rng_seed``, ``rng_load``,
    ``mon_tx_*``, ``mon_rx_*``, one node's share of :class:`NetworkBench`'s)."""

    def _members(self) -> dict:
        w = self.params.width
        return super()._members() | {
            "stall_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "mon_tx_valid": Out(1), "mon_tx_payload": Out(w),
            "mon_rx_valid": Out(1), "mon_rx_payload": Out(w),
        }

    def _local_link(self, m: Module) -> Value:
        sw, ep = self.switch, self.endpoint
        quiet = local_link(m, sw, ep, throttle=True, stall_rate=self.stall_rate,
                           rng_seed=self.rng_seed, rng_load=self.rng_load, salts=(1, 2))
        m.d.comb += [
            self.mon_tx_valid.eq(ep.tx.valid), self.mon_tx_payload.eq(ep.tx.payload),
            self.mon_rx_valid.eq(ep.rx.valid), self.mon_rx_payload.eq(ep.rx.payload),
        ]
        return quiet


class NetworkBench(Network):
    """The :class:`~innet.hw.network.Network` of :class:`BenchNode` s, with the test ports of
    the module docs; same parameters as the network."""

    node_module = BENCH_NODE_MODULE

    def _make_node(self, radix: int, **node_args) -> NetworkNode:
        return BenchNode(radix, **node_args)

    def _members(self) -> dict:
        n, w = self.nodes, self.params.width
        return super()._members() | {
            "stall_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "mon_tx_valid": Out(n), "mon_tx_payload": Out(n * w),
            "mon_rx_valid": Out(n), "mon_rx_payload": Out(n * w),
        }

    def _wire_node(self, m: Module, k: int, net: dict[str, Signal]) -> None:
        w = self.params.width
        m.d.comb += [
            net["stall_rate"].eq(self.stall_rate), net["rng_load"].eq(self.rng_load),
            # Every node's throttles run their own sequences.
            net["rng_seed"].eq(self.rng_seed ^ Const((0x6D2B79F5 * (k + 1)) & 0xFFFF_FFFF, 32)),
            self.mon_tx_valid[k].eq(net["mon_tx_valid"]),
            self.mon_tx_payload.word_select(k, w).eq(net["mon_tx_payload"]),
            self.mon_rx_valid[k].eq(net["mon_rx_valid"]),
            self.mon_rx_payload.word_select(k, w).eq(net["mon_rx_payload"]),
        ]


def bench_design(topology, *, vector_depth: int, step_depth: int, name: str | None = None,
                 **network_args):
    """The Verilog of the :class:`NetworkBench` of ``topology``: ``(Design, NetworkBench)``.

    ``network_args`` are the further :class:`~innet.hw.network.Network` parameters; the top
    level's name defaults to ``innet_netbench_<kind><nodes>``. The node module
    (:data:`BENCH_NODE_MODULE`) comes first, once.
    """
    top = NetworkBench(topology, vector_depth=vector_depth, step_depth=step_depth,
                       **network_args)
    name = name or f"innet_netbench_{topology.kind}{topology.nodes}"
    return network_verilog(top, name), top
