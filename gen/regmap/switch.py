"""The switch register map and the port encodings its registers use.

PIUMA ("Switch Architecture: Configuration Registers", "Multiple In-network Collectives"): the
configuration registers of a switch determine which input ports contribute to a collective, the
output port toward the root, the operation of the collective engine, and, for the response
(broadcast) direction, the input port and the set of output ports the result is multicast to.
The registers are replicated once per collective identifier. Point-to-point traffic is routed by
a table (destination node id -> output port).

Port numbering (cross-team contract): a switch has ``radix`` network ports ``0..radix-1`` and
the local (endpoint) port has index ``radix``; in a port mask bit ``i`` is network port ``i`` and
bit ``radix`` is the local port. Generator data spells the local port ``LOCAL = -1``
(:data:`innet.gen.topology.LOCAL`); :func:`port_code` and :func:`port_mask` translate.
"""

from __future__ import annotations

from collections.abc import Iterable

from innet.gen.ops import DType, Op
from innet.gen.regmap.addrmap import Map
from innet.gen.regmap.model import (
    FORMAT_VERSION,
    Access,
    Array,
    Cluster,
    Field,
    Register,
    Target,
    check_param,
)

__all__ = [
    "COLL_BURST",
    "COLL_TIMEOUT",
    "ERROR_FLAGS",
    "MAX_COLLECTIVE_IDS",
    "MAX_P2P_VCS",
    "MAX_RADIX",
    "MAX_ROUTING_DEPTH",
    "ident_register",
    "mask_ports",
    "node_id_bits",
    "param_register",
    "port_code",
    "port_mask",
    "port_width",
    "switch_map",
]

#: Largest number of collective ids a map supports: the switch's flits carry the id in at most
#: 8 bits (:class:`innet.hw.flit.FlitParams`).
MAX_COLLECTIVE_IDS = 256

#: Largest radix a map supports: a port mask of up to 33 words.
MAX_RADIX = 1024

#: Most routing-table entries a switch holds: its flits carry node ids of at most 16 bits
#: (:class:`innet.hw.flit.FlitParams`).
MAX_ROUTING_DEPTH = 1 << 16

#: Most hop-indexed p2p virtual channels a switch has (:class:`innet.hw.flit.FlitParams`):
#: deadlock-free minimal routing needs as many as the topology's diameter.
MAX_P2P_VCS = 16

#: The switch's sticky error flags, bit 0 upward: the fields of its ``errors`` register
#: (``RW1C``: the switch sets a flag when the error happens, software reads it and clears it by
#: writing 1).
ERROR_FLAGS = {
    "bad_vc": "a flit arrived whose kind, collective id or hop names no VC; it was dropped",
    "overflow": "a flit arrived for a full buffer (the sender ignored its credits); dropped",
    "no_route": "a p2p flit's routing-table entry names no port; it was discarded",
    "coll_drop": "a collective flit's registers name no output; it was discarded",
    "credit": "a credit came back beyond the downstream buffer depth",
    "coll_index": "request flits reduced together carried different element indices; the "
                  "element was discarded",
    "coll_op": "a collective id's operation is not defined on its data type (or is mul on "
               "a switch built without multipliers); the element was discarded",
    "coll_timeout": "a reducing collective id waited coll_timeout cycles for a contributor; "
                    "coll[c].status.timed_out names the id and coll[c].missing the ports",
    "coll_config": "a write to a collective id's registers was refused: the id was enabled and "
                   "busy, or the operation is not defined on the data type (or is mul on a "
                   "switch whose engine has no multiplier)",
}

#: Reset value of the ``coll_burst`` register: an output sends at most this many collective
#: flits in a row while a p2p flit waits for it, so p2p keeps at least one cycle in 8
#: (:mod:`innet.hw.switch`).
COLL_BURST = 7

#: Reset value of the ``coll_timeout`` register: the collective watchdog is off until software
#: sets it (a contributor may legitimately start long after the others).
COLL_TIMEOUT = 0

_LOCAL = -1  # innet.gen.topology.LOCAL; not imported so that the register model stands alone
RO = Access.RO


def port_width(radix: int) -> int:
    """Bits of a port-number field: ``clog2(radix + 1)``, enough for the local port ``radix``."""
    return check_param("Radix", radix, 1, MAX_RADIX).bit_length()


def port_code(port: int, radix: int) -> int:
    """The register code of a port: network ports are themselves, ``LOCAL`` (-1) is ``radix``.

    Raises
    ------
    ValueError
        If the port does not exist on a switch of this radix.
    """
    check_param("Radix", radix, 1, MAX_RADIX)
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"Port must be an integer, not {port!r}")
    if port == _LOCAL:
        return radix
    if not 0 <= port < radix:
        raise ValueError(f"Port {port} does not exist on a radix-{radix} switch "
                         f"(network ports 0..{radix - 1} and LOCAL = -1)")
    return port


def port_mask(ports: Iterable[int], radix: int) -> int:
    """The port-mask code of a set of ports (``LOCAL`` = -1 sets bit ``radix``)."""
    mask = 0
    for port in ports:
        mask |= 1 << port_code(port, radix)
    return mask


def mask_ports(mask: int, radix: int) -> list[int]:
    """The ports of a port-mask code, network ports ascending, then ``LOCAL`` (-1) if set.

    Raises
    ------
    ValueError
        If the mask sets a bit beyond the local port ``radix``.
    """
    check_param("Radix", radix, 1, MAX_RADIX)
    if isinstance(mask, bool) or not isinstance(mask, int):
        raise TypeError(f"Port mask must be an integer, not {mask!r}")
    if not 0 <= mask < 1 << (radix + 1):
        raise ValueError(f"Port mask {mask:#x} names ports beyond the local port {radix} of a "
                         f"radix-{radix} switch")
    ports = [p for p in range(radix) if mask >> p & 1]
    return [*ports, _LOCAL] if mask >> radix & 1 else ports


def ident_register(target: Target) -> Register:
    """Address 0 of every map: the format version and the kind of target (read-only)."""
    return Register("ident", [
        Field("version", 8, RO, reset=FORMAT_VERSION, desc="register-map format version"),
        Field("kind", 8, RO, reset=int(target), enum=Target,
              desc="kind of target: 1 switch, 2 endpoint"),
    ], desc="identification (read-only, constant)")


def param_register(name: str, value: int, desc: str) -> Register:
    """A read-only register reporting one build parameter."""
    return Register(name, [Field("value", 32, RO, reset=value, desc=desc)],
                    desc=f"{desc} (read-only, build parameter)")


def _mask(name: str, radix: int, desc: str) -> Register:
    return Register(name, [Field("ports", radix + 1, desc=f"{desc}: bit i = network port i, "
                                 f"bit {radix} = local port")], desc=desc)


def node_id_bits(routing_depth: int) -> int:
    """The bits of the node ids of ``routing_depth`` destinations (``0 .. routing_depth - 1``,
    at least 1): the node-id width of the hardware (:attr:`innet.hw.flit.FlitParams.node_width`)
    and the default of the maps and images built for it."""
    return max(1, (routing_depth - 1).bit_length())


def switch_map(radix: int, collective_ids: int, routing_depth: int, *,
               node_id_width: int | None = None) -> Map:
    """The register map of a switch (PIUMA, "Configuration Registers").

    Layout (word addresses, every block naturally aligned, see :mod:`innet.gen.regmap.model`):

    - ``ident`` (0), then read-only build parameters ``radix``, ``collective_ids``,
      ``routing_depth``, ``node_id_width``; then ``node_id`` (RW). The node id is writable, not
      a build parameter: every switch of a network is the same RTL, and the image tells each
      one who it is (the image decoder checks it against the target id). Then ``errors``
      (``RW1C``): one sticky flag per :data:`ERROR_FLAGS` entry, set by the switch, cleared by
      writing 1. Then ``coll_burst`` (``cycles``, reset :data:`COLL_BURST`): the p2p
      bandwidth floor; an output sends at most ``cycles`` collective flits in a row while a p2p
      flit waits for it, so p2p keeps one cycle in ``cycles + 1`` (0: no limit, collective
      flits have strict priority). Then ``coll_timeout`` (``cycles``, reset
      :data:`COLL_TIMEOUT`): the collective watchdog; a reducing id that waits this many
      cycles with some but not all of its contributors present raises ``errors.coll_timeout``
      (0: off).
    - ``coll[c]`` for each collective id ``c`` ("Multiple In-network Collectives": one register
      copy per identifier): ``ctrl`` (``enable``, ``op``, ``dtype``), ``req_in`` (request input
      mask, local included), ``req_out`` (``port`` toward the root, and ``root``: this switch
      is the root, where ``port`` must be 0 and ``resp_in`` is unused), ``resp_in`` (``port``
      the response arrives on), ``resp_out`` (response multicast mask, local included; a
      response is never sent back on the network port it arrived on);
      ``abort`` (``drain``: while 1 every flit of the id reaching the switch is discarded and
      its watchdog cleared), ``status`` (read-only: ``busy``, a flit of the id is in the
      switch; ``timed_out``, its watchdog fired) and ``missing`` (read-only: the contributing
      ports missing when it fired). While an id is enabled and busy, writes to its ``ctrl``,
      ``req_in``, ``req_out``, ``resp_in`` and ``resp_out`` are refused (``errors.coll_config``),
      and so is a ``ctrl`` write that enables an operation the data type does not define (or
      ``mul`` on a switch whose engine is built without the multiplier).
    - ``route[d]`` for each destination node id ``d < routing_depth``: ``port`` (``radix`` =
      deliver to the local port) and ``valid``; a flit whose route names the network port it
      arrived on is discarded as having no route (``errors.no_route``).

    A port mask of ``radix + 1`` bits takes ``ceil((radix + 1) / 32)`` words.

    Parameters
    ----------
    radix : int
        Network ports (the topology's maximum degree), 1..:data:`MAX_RADIX`.
    collective_ids : int
        Collective identifiers, 1..256.
    routing_depth : int
        Routing-table entries (destinations ``0..routing_depth-1``),
        1..:data:`MAX_ROUTING_DEPTH` and at most ``2**node_id_width``.
    node_id_width : int, optional
        Bits of a node id, 1..32. Default: those of the routing depth's node ids
        (:func:`node_id_bits`), as the switch's RTL has them.

    Raises
    ------
    TypeError, ValueError
        On a parameter that is not an integer or out of range.
    """
    radix = check_param("Radix", radix, 1, MAX_RADIX)
    collective_ids = check_param("Collective ids", collective_ids, 1, MAX_COLLECTIVE_IDS)
    routing_depth = check_param("Routing depth", routing_depth, 1, MAX_ROUTING_DEPTH)
    if node_id_width is None:
        node_id_width = node_id_bits(routing_depth)
    node_id_width = check_param("Node id width", node_id_width, 1, 32)
    if routing_depth > 1 << node_id_width:
        raise ValueError(f"Routing depth must be at most {1 << node_id_width} (the node ids of "
                         f"{node_id_width} bits), not {routing_depth}")
    pw = port_width(radix)
    coll = Cluster("coll", [
        Register("ctrl", [
            Field("enable", 1, desc="the collective id is configured on this switch"),
            Field("op", 4, offset=4, enum=Op, desc="reduction operation (innet.gen.ops.Op)"),
            Field("dtype", 2, offset=8, enum=DType, desc="element data type (innet.gen.ops.DType)"),
        ], desc="enable, operation and data type"),
        _mask("req_in", radix, "request input ports that contribute"),
        Register("req_out", [
            Field("port", pw, max=radix,
                  desc="request output port toward the root (0 at the root)"),
            Field("root", 1, offset=31, desc="this switch is the root: the reduced value turns "
                  "into the response here"),
        ], desc="request output port, or root"),
        Register("resp_in", [
            Field("port", pw, max=radix,
                  desc="port the response arrives on (0 at the root, unused)"),
        ], desc="response input port"),
        _mask("resp_out", radix, "response multicast ports"),
        Register("abort", [
            Field("drain", 1, desc="discard every flit of the id that reaches the switch and "
                  "clear its watchdog, while 1"),
        ], desc="abort: drain the id"),
        Register("status", [
            Field("busy", 1, RO, volatile=True, desc="a flit of the id is in the switch"),
            Field("timed_out", 1, RO, offset=1, volatile=True,
                  desc="the watchdog fired; cleared by abort only (until then it stays set and "
                       "the id's watchdog off, even if the missing contributor comes later)"),
        ], desc="collective id status (read-only)"),
        Register("missing", [
            Field("ports", radix + 1, RO, volatile=True,
                  desc=f"contributing ports missing when the watchdog fired: bit i = network "
                       f"port i, bit {radix} = local port"),
        ], desc="ports the watchdog found missing (read-only)"),
    ], desc="per collective id configuration")
    route = Register("route", [
        Field("port", pw, max=radix,
              desc=f"output port toward the destination ({radix} = local port)"),
        Field("valid", 1, offset=31, desc="the entry is configured"),
    ], desc="p2p routing-table entry for one destination node id")
    return Map("switch", [
        ident_register(Target.SWITCH),
        param_register("radix", radix, "network ports"),
        param_register("collective_ids", collective_ids, "collective identifiers"),
        param_register("routing_depth", routing_depth, "routing-table entries"),
        param_register("node_id_width", node_id_width, "bits of a node id"),
        Register("node_id", [Field("id", node_id_width, max=routing_depth - 1,
                                           desc="this switch's node id")],
                 desc="node id of this switch (set by the image)"),
        Register("errors", [Field(name, 1, Access.RW1C, desc=desc)
                            for name, desc in ERROR_FLAGS.items()],
                 desc="sticky error flags (read; write 1 to clear)"),
        Register("coll_burst", [Field("cycles", 4, reset=COLL_BURST,
                                      desc="collective flits an output sends in a row while a "
                                           "p2p flit waits, at most; 0: no limit")],
                 desc="p2p bandwidth floor at every output"),
        Register("coll_timeout", [Field("cycles", 16, reset=COLL_TIMEOUT,
                                        desc="cycles a reducing collective id waits for a "
                                             "missing contributor before the watchdog fires "
                                             "(a value written during a wait counts from the "
                                             "write); 0: off")],
                 desc="collective watchdog"),
        Array(coll, collective_ids, desc="one configuration per collective id"),
        Array(route, routing_depth, desc="p2p routing table, indexed by destination node id"),
    ], params={"radix": radix, "collective_ids": collective_ids,
               "routing_depth": routing_depth, "node_id_width": node_id_width},
        desc="PIUMA-style switch: collective configuration and p2p routing table")
