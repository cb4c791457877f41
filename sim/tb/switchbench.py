"""Test top levels for switches: one switch, or several wired into a ring, with flat ports.

cocotb pays per handle access, so :class:`SwitchBench` concatenates the links a testbench
drives into a few wide vectors and exposes every credit counter of every switch (so that the
testbench can assert that none goes below zero or above the buffer depth). It is a test
fixture, not the network generator (that is ``hw.network``): :func:`ring` wires switches with
ports 0 (clockwise) and 1 (counter-clockwise), as a ring of a torus would.

Ports of the top level (``E`` external links, ``N`` switches, ``P = radix + 1`` ports per
switch, ``V`` VCs, ``W`` flit bits, ``B`` bits per credit count):

==================  =========  ==========================================================
``in_valid``        in  E      external input links, link ``e`` at bit ``e``
``in_payload``      in  E*W    flit of link ``e`` at bits ``e*W ...``
``in_credit``       out E*V    credits the switches return on them
``out_valid``       out E      external output links
``out_payload``     out E*W
``out_credit``      in  E*V    credits the testbench returns
``credits``         out N*P*V*B  counter of switch ``n``, output ``o``, VC ``v`` at index
                               ``(n*P + o)*V + v``
``errors``          out N*F    sticky error flags of switch ``n`` at bits ``n*F ...``
``cfg_addr``        in         configuration bus, shared address and data ...
``cfg_w_data``      in  32
``cfg_w_en``        in  N      ... with one write strobe per switch
``cfg_r_data``      out N*32   read data of switch ``n`` at bits ``n*32 ...``
==================  =========  ==========================================================
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.hw.flit import bits_for
from innet.hw.switch import ERROR_FIELDS, Switch

__all__ = ["SwitchBench", "ring", "single"]


class SwitchBench(wiring.Component):
    """Switches, the links between them, and their remaining links as flat ports.

    Parameters
    ----------
    switches : list of Switch
        Same parameters for all (one flit format, one register map).
    links : list of (int, int, int, int)
        ``(a, pa, b, pb)``: output ``pa`` of switch ``a`` drives input ``pb`` of switch ``b``.
    external : list of (int, int)
        ``(n, port)``: links of switch ``n`` the testbench drives (input ``port``) and
        receives (output ``port``), in this order.
    """

    def __init__(self, switches: list[Switch], links: list[tuple[int, int, int, int]],
                 external: list[tuple[int, int]]) -> None:
        first = switches[0]
        for s in switches:
            if (s.radix, s.params, s.buffer_depth, s.local_depth) != (
                    first.radix, first.params, first.buffer_depth, first.local_depth):
                raise ValueError("Every switch of a bench must have the same parameters")
        self.switches = switches
        self.links = list(links)
        self.external = list(external)
        p = first.params
        e, n, ports = len(external), len(switches), first.radix + 1
        self.count_width = bits_for(max(first.buffer_depth, first.local_depth) + 1)
        super().__init__({
            "in_valid": In(e), "in_payload": In(e * p.width), "in_credit": Out(e * p.vcs),
            "out_valid": Out(e), "out_payload": Out(e * p.width), "out_credit": In(e * p.vcs),
            "credits": Out(n * ports * p.vcs * self.count_width),
            "errors": Out(n * len(ERROR_FIELDS)),
            "cfg_addr": In(first.regmap.address_width), "cfg_w_data": In(32),
            "cfg_w_en": In(n), "cfg_r_data": Out(n * 32),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.switches[0].params
        w, vcs = p.width, p.vcs
        driven = set()
        for k, s in enumerate(self.switches):
            m.submodules[f"switch{k}"] = s
            m.d.comb += [s.cfg.addr.eq(self.cfg_addr), s.cfg.w_data.eq(self.cfg_w_data),
                         s.cfg.w_en.eq(self.cfg_w_en[k]),
                         self.cfg_r_data[32 * k:32 * (k + 1)].eq(s.cfg.r_data),
                         self.errors.word_select(k, len(ERROR_FIELDS)).eq(s.errors)]
        for a, pa, b, pb in self.links:
            src, dst = self.switches[a].o[pa], self.switches[b].i[pb]
            m.d.comb += [dst.valid.eq(src.valid), dst.payload.eq(src.payload),
                         src.credit.eq(dst.credit)]
            driven.add(("i", b, pb))
            driven.add(("o", a, pa))
        for e, (k, port) in enumerate(self.external):
            s = self.switches[k]
            m.d.comb += [
                s.i[port].valid.eq(self.in_valid[e]),
                s.i[port].payload.eq(self.in_payload.word_select(e, w)),
                self.in_credit.word_select(e, vcs).eq(s.i[port].credit),
                self.out_valid[e].eq(s.o[port].valid),
                self.out_payload.word_select(e, w).eq(s.o[port].payload),
                s.o[port].credit.eq(self.out_credit.word_select(e, vcs)),
            ]
            driven.add(("i", k, port))
            driven.add(("o", k, port))
        counts = []
        for k, s in enumerate(self.switches):
            for o in range(s.radix + 1):
                # Unused ports stay idle: no flits in, no credits back.
                if ("i", k, o) not in driven:
                    m.d.comb += s.i[o].valid.eq(0)
                if ("o", k, o) not in driven:
                    m.d.comb += s.o[o].credit.eq(0)
                for v in range(vcs):
                    count = Signal(self.count_width, name=f"count_{k}_{o}_{v}")
                    m.d.comb += count.eq(s.credit_counts[o][v])
                    counts.append(count)
        m.d.comb += self.credits.eq(Cat(*counts))
        return m


def single(radix: int, **kwargs) -> SwitchBench:
    """One switch with every port external (port ``q`` is external link ``q``)."""
    s = Switch(radix, **kwargs)
    return SwitchBench([s], [], [(0, q) for q in range(radix + 1)])


def ring(count: int, **kwargs) -> SwitchBench:
    """``count`` radix-2 switches in a ring: port 0 of switch ``k`` goes to port 1 of switch
    ``k + 1`` (clockwise) and back; the local ports are external (link ``k``: switch ``k``)."""
    switches = [Switch(2, **kwargs) for _ in range(count)]
    links = []
    for k in range(count):
        nxt = (k + 1) % count
        links += [(k, 0, nxt, 1), (nxt, 1, k, 0)]
    return SwitchBench(switches, links, [(k, 2) for k in range(count)])
