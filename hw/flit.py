"""Flits, virtual channels and the link protocol shared by every switch, endpoint and testbench.

This module is the only place that defines bit positions. RTL builds its ports from
:meth:`FlitParams.layout`, :func:`stream_signature` and :func:`link_signature`; testbenches and
golden models build and read flits with :class:`Flit`, :meth:`FlitParams.pack` and
:meth:`FlitParams.unpack`.

A flit is a whole packet: one payload word plus its header (PIUMA, "Switch Architecture for
In-network Computing": request packets carry inputs and partial results toward the root,
response packets carry the result back; both travel on collective virtual channels of higher
priority than point-to-point traffic).

Flit layout
-----------
Fields are packed from bit 0 upward in this order (widths for :class:`FlitParams` defaults,
``routing_depth=64, collective_ids=4, p2p_vcs=2``; 73 bits in all):

============  =====================  =====================================================
field         width                  meaning
============  =====================  =====================================================
``payload``   ``payload_width`` (32) one element: a uint32 bit pattern of :mod:`innet.gen.ops`
``index``     ``index_width`` (16)   element index in the vector (collectives and p2p blocks)
``tag``       ``tag_width`` (8)      p2p only: sender's tag; the endpoint's step engine puts
                                     the step number here so a receiver can tell steps apart
``src``       ``node_width`` (6)     p2p only: source node id
``dst``       ``node_width`` (6)     p2p only: destination node id (the routing-table index)
``cid``       ``cid_width`` (2)      collectives only: collective id
``hop``       ``hop_width`` (1)      p2p only: the p2p virtual channel (see below)
``kind``      2                      :class:`Kind`: P2P, REQ (collective request) or RESP
============  =====================  =====================================================

Fields a kind does not use travel as zero. ``node_width``, ``cid_width`` and ``hop_width`` are
``max(1, bits(n - 1))`` of ``routing_depth``, ``collective_ids`` and ``p2p_vcs``.

Virtual channels
----------------
The virtual channel (VC) is not a separate field: it is a function of ``kind``, ``cid`` and
``hop`` (:meth:`FlitParams.vc`), so a flit can never travel on a VC that contradicts its header.
With ``P = p2p_vcs`` and ``C = collective_ids`` the VCs are numbered

- ``0 .. P-1``: point-to-point, VC = ``hop``;
- ``P + c``: collective requests of collective id ``c`` (one VC per id, so that a reduction that
  waits for the head flit of its id on every contributing port never waits behind another id);
- ``P + C``: collective responses of every id (responses never join, so they can share a VC).

p2p virtual channels are hop-indexed: a flit injected by an endpoint carries ``hop = 0``; a
switch forwarding a flit that arrived on a network port to another network port increments
``hop`` (saturating at ``P - 1``); a flit delivered to the local port always leaves on ``hop = 0``.
A flit on VC ``h`` only ever waits for VC ``h + 1`` or for the endpoint, so minimal routing is
deadlock-free when ``p2p_vcs`` is at least the network diameter (in switch-to-switch hops).

Link protocol
-------------
See :func:`link_signature`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

from amaranth import Const, Mux, Value
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int, shown
from innet.gen.regmap import MAX_COLLECTIVE_IDS, MAX_P2P_VCS, MAX_ROUTING_DEPTH, node_id_bits

__all__ = [
    "Flit",
    "FlitParams",
    "Kind",
    "bits_for",
    "link_signature",
    "stream_signature",
]


class Kind(enum.Enum, shape=2):
    """Packet class; the value is the 2-bit ``kind`` field."""

    P2P = 0
    REQ = 1
    RESP = 2


def bits_for(count: int) -> int:
    """Bits needed to number ``count`` things ``0 .. count - 1`` (at least 1)."""
    return max(1, (count - 1).bit_length())


def _check_range(name: str, value, low: int, high: int) -> int:
    """``value`` as an int if it is an integer in ``low..high``; the range is named as
    "between"."""
    value = check_int(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {shown(value)}")
    return value


#: Field names in packing order (bit 0 upward).
_ORDER = ("payload", "index", "tag", "src", "dst", "cid", "hop", "kind")


@dataclass(frozen=True)
class Flit:
    """One flit as Python values, for testbenches and golden models.

    Use the constructors :meth:`p2p`, :meth:`request` and :meth:`response`; convert with
    :meth:`FlitParams.pack` / :meth:`FlitParams.unpack`.
    """

    kind: Kind
    payload: int = 0
    index: int = 0
    tag: int = 0
    src: int = 0
    dst: int = 0
    cid: int = 0
    hop: int = 0

    @classmethod
    def p2p(cls, dst: int, src: int, payload: int, *, tag: int = 0, index: int = 0,
            hop: int = 0) -> Flit:
        """A point-to-point flit from node ``src`` to node ``dst``."""
        return cls(Kind.P2P, payload=payload, index=index, tag=tag, src=src, dst=dst, hop=hop)

    @classmethod
    def request(cls, cid: int, index: int, payload: int) -> Flit:
        """A collective request flit (an input or partial result of element ``index``)."""
        return cls(Kind.REQ, payload=payload, index=index, cid=cid)

    @classmethod
    def response(cls, cid: int, index: int, payload: int) -> Flit:
        """A collective response flit (the result for element ``index``)."""
        return cls(Kind.RESP, payload=payload, index=index, cid=cid)

    def replace(self, **changes) -> Flit:
        """A copy with some fields changed."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Flit(**values)


@dataclass(frozen=True)
class FlitParams:
    """The parameters every block and testbench builds the same flit layout from.

    Parameters
    ----------
    payload_width : int
        Bits of one element (32 for the uint32 patterns of :mod:`innet.gen.ops`).
    routing_depth : int
        Number of node ids (routing-table entries); sets ``node_width``.
    collective_ids : int
        Number of collective ids (register copies); sets ``cid_width`` and the VC count.
    p2p_vcs : int
        Number of hop-indexed p2p virtual channels (at least the network diameter for
        deadlock-free minimal routing).
    index_width : int
        Bits of the element index.
    tag_width : int
        Bits of the p2p tag (the endpoint's step number).

    Raises
    ------
    TypeError
        If a parameter is not an integer.
    ValueError
        If a parameter is out of range (every width and count is at least 1;
        ``routing_depth`` at least 1, ``payload_width`` at most 1024).
    """

    payload_width: int = 32
    routing_depth: int = 64
    collective_ids: int = 4
    p2p_vcs: int = 2
    index_width: int = 16
    tag_width: int = 8

    def __post_init__(self) -> None:
        for name, label, low, high in (
                ("payload_width", "Payload width", 1, 1024),
                ("routing_depth", "Routing depth", 1, MAX_ROUTING_DEPTH),
                ("collective_ids", "Collective ids", 1, MAX_COLLECTIVE_IDS),
                ("p2p_vcs", "p2p virtual channels", 1, MAX_P2P_VCS),
                ("index_width", "Index width", 1, 32),
                ("tag_width", "Tag width", 1, 32)):
            # A numpy integer is kept as the int it equals (the widths are used as Python ints).
            object.__setattr__(self, name, _check_range(label, getattr(self, name), low, high))

    # Derived widths ------------------------------------------------------------------------

    @property
    def node_width(self) -> int:
        """Bits of a node id (``src``, ``dst``): :func:`innet.gen.regmap.node_id_bits`."""
        return node_id_bits(self.routing_depth)

    @property
    def cid_width(self) -> int:
        """Bits of a collective id."""
        return bits_for(self.collective_ids)

    @property
    def hop_width(self) -> int:
        """Bits of the p2p VC field ``hop``."""
        return bits_for(self.p2p_vcs)

    @functools.cached_property
    def _fields(self) -> tuple[tuple[str, int, int], ...]:
        # (name, offset, width) in packing order, computed once: pack and unpack run for
        # every flit a testbench sees.
        widths = {"payload": self.payload_width, "index": self.index_width,
                  "tag": self.tag_width, "src": self.node_width, "dst": self.node_width,
                  "cid": self.cid_width, "hop": self.hop_width, "kind": 2}
        found, at = [], 0
        for name, width in widths.items():
            found.append((name, at, width))
            at += width
        return tuple(found)

    @property
    def widths(self) -> dict[str, int]:
        """Field widths in packing order (bit 0 upward)."""
        return {name: width for name, _at, width in self._fields}

    @property
    def offsets(self) -> dict[str, int]:
        """Bit offset of each field."""
        return {name: at for name, at, _width in self._fields}

    @property
    def width(self) -> int:
        """Bits of a whole flit."""
        _name, at, width = self._fields[-1]
        return at + width

    @property
    def layout(self) -> data.StructLayout:
        """The flit as an Amaranth ``data.StructLayout`` (``kind`` is a :class:`Kind`)."""
        members = dict(self.widths)
        members["kind"] = Kind
        return data.StructLayout(members)

    # Virtual channels ----------------------------------------------------------------------

    @property
    def vcs(self) -> int:
        """Number of virtual channels: ``p2p_vcs + collective_ids + 1``."""
        return self.p2p_vcs + self.collective_ids + 1

    def req_vc(self, cid: int) -> int:
        """VC of collective requests of id ``cid``."""
        return self.p2p_vcs + cid

    @property
    def resp_vc(self) -> int:
        """VC of collective responses (all ids)."""
        return self.p2p_vcs + self.collective_ids

    def vc(self, flit: Flit) -> int:
        """The virtual channel ``flit`` travels on (see the module docstring)."""
        if flit.kind is Kind.P2P:
            return flit.hop
        if flit.kind is Kind.REQ:
            return self.req_vc(flit.cid)
        return self.resp_vc

    def vc_kind(self, vc: int) -> Kind:
        """The packet class carried by virtual channel ``vc``."""
        _check_range("Virtual channel", vc, 0, self.vcs - 1)
        if vc < self.p2p_vcs:
            return Kind.P2P
        return Kind.REQ if vc < self.resp_vc else Kind.RESP

    def vc_of(self, view) -> Value:
        """Amaranth value: the VC of the flit ``view`` (a ``View`` of :attr:`layout`)."""
        width = bits_for(self.vcs)
        hop = Value.cast(view.hop)
        req = (Const(self.p2p_vcs, width) + Value.cast(view.cid))[:width]
        return Mux(view.kind == Kind.P2P, hop,
                   Mux(view.kind == Kind.REQ, req, Const(self.resp_vc, width)))

    def vc_valid(self, view) -> Value:
        """Amaranth value: the flit ``view`` names an existing VC (known kind; REQ id and hop in
        range; every RESP flit travels on the response VC whatever its id)."""
        return (((view.kind == Kind.P2P) & (Value.cast(view.hop) < self.p2p_vcs))
                | ((view.kind == Kind.REQ) & (Value.cast(view.cid) < self.collective_ids))
                | (view.kind == Kind.RESP))

    # Python pack/unpack --------------------------------------------------------------------

    def pack(self, flit: Flit) -> int:
        """The flit as an integer (bit 0 = payload bit 0), as it appears on a port.

        Raises
        ------
        ValueError
            If a field does not fit its width or names a collective id or VC that does not
            exist.
        """
        if not isinstance(flit, Flit):
            raise TypeError(f"Expected a Flit, not {flit!r:.60}")
        # Every field an integer first: the checks below compare them.
        values = {name: check_int(f"Flit field {name}", getattr(flit, name))
                  for name, _, _ in self._fields if name != "kind"}
        kind = Kind(flit.kind)
        if kind in (Kind.REQ, Kind.RESP) and not 0 <= values["cid"] < self.collective_ids:
            raise ValueError(f"Collective id must be between 0 and {self.collective_ids - 1}, "
                             f"not {shown(values['cid'])}")
        if kind is Kind.P2P and not 0 <= values["hop"] < self.p2p_vcs:
            raise ValueError(f"Hop must be between 0 and {self.p2p_vcs - 1}, not "
                             f"{shown(values['hop'])}")
        word = 0
        for name, at, width in self._fields:
            value = kind.value if name == "kind" else values[name]
            if not 0 <= value < (1 << width):
                raise ValueError(f"Flit field {name} must be between 0 and {(1 << width) - 1}, "
                                 f"not {shown(value)}")
            word |= value << at
        return word

    def unpack(self, word: int) -> Flit:
        """The :class:`Flit` of an integer read from a port.

        Raises
        ------
        ValueError
            If ``word`` is negative, wider than a flit, or has an unknown ``kind``.
        """
        if isinstance(word, bool) or not isinstance(word, int):
            raise TypeError(f"Expected an integer flit, not {word!r}")
        if word < 0 or word >> self.width:
            raise ValueError(f"Flit word must be between 0 and 2**{self.width} - 1, not {word}")
        values = {name: (word >> at) & ((1 << width) - 1) for name, at, width in self._fields}
        try:
            values["kind"] = Kind(values["kind"])
        except ValueError:
            raise ValueError(f"Flit kind {values['kind']} is not a packet class") from None
        return Flit(**values)


def stream_signature(params: FlitParams) -> stream.Signature:
    """A ready/valid stream of flits, for connections inside a block (buffers, arbiters).

    Members (from the source's point of view): ``payload`` Out(:attr:`FlitParams.layout`),
    ``valid`` Out(1), ``ready`` In(1). A flit moves on a rising edge where both are high;
    ``valid`` never depends on ``ready``.
    """
    return stream.Signature(params.layout)


def link_signature(params: FlitParams) -> wiring.Signature:
    """One unidirectional channel between two switches, or a switch and an endpoint.

    Members (from the sender's point of view):

    ``valid`` : Out(1)
        A flit is on the link this cycle. There is no ``ready``: the receiver always takes it.
    ``payload`` : Out(:attr:`FlitParams.layout`)
        The flit; its VC is :meth:`FlitParams.vc` of it.
    ``credit`` : In(:attr:`FlitParams.vcs`)
        Bit ``v`` high for one cycle returns one credit of VC ``v`` (several VCs may return a
        credit in the same cycle).

    Protocol (PIUMA, "Pipelined Reduction": credits track the neighbour's buffer space): the
    sender keeps one counter per VC, starting at the receiver's buffer depth for that VC. It
    sends a flit of VC ``v`` only when counter ``v`` is positive and decrements it; it
    increments the counter for every ``credit[v]`` pulse. The receiver buffers the flit and
    pulses ``credit[v]`` when the flit leaves its buffer. Nothing is ever dropped. Both
    ``valid``/``payload`` and ``credit`` are driven from registers by the switch.

    Wiring: ``wiring.connect(m, sender.o[p], receiver.i[q])`` connects both directions (the
    receiver's port is ``In(link_signature(...))``).
    """
    return wiring.Signature({
        "valid": Out(1),
        "payload": Out(params.layout),
        "credit": In(params.vcs),
    })
