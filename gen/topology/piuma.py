"""Multi-level PIUMA networks: a HyperX of nodes, all-to-all sockets, an on-chip mesh of cores.

PIUMA (Lakhotia et al., "Accelerating Allreduce with in-network reduction on Intel PIUMA",
"Network Overview"): nodes form a HyperX; the ``N_S`` sockets of a node are all-to-all
connected; inside a socket ``N_C`` cores sit on an on-chip mesh, one switch per core, and "the
remaining ports on these switches collectively enable the required inter-socket and inter-node
connectivity". One switch per core, so ``N = N_P · N_S · N_C`` switches.

Structure
---------
- **Node ids and labels.** Switch ids are row-major over ``(node coordinates..., socket,
  core)``; the label of a switch is exactly that tuple. Within a socket, core ``k`` sits at mesh
  position ``(k // cols, k % cols)`` of a ``rows x cols`` mesh (:func:`mesh_shape`: the most
  square factorisation of ``N_C``, ``rows <= cols``, unless given). A *slot* is
  ``socket · N_C + core``: the position of a switch inside its node.
- **Links.** Core level: the mesh links of every socket. Socket level: one link between every
  two sockets of a node. Node level: one link between every two nodes whose coordinates differ
  in exactly one dimension (HyperX; a size-1 dimension has none). The level of a link follows
  from the labels of its ends (:func:`link_level`, :func:`link_levels`).
- **Latencies** per level are construction parameters (ns, Table 1 by default: ``L_C = 5``,
  ``L_S = 25``, ``L_P = 50``) kept in ``params``; :func:`link_latency_array` and
  :func:`link_latencies` give them per link.

Placement of the inter-socket and inter-node links (``placement``)
-------------------------------------------------------------------
Every node is wired the same way, and so is every socket of a node, so the network is
symmetric under translations of the node coordinates (mod the HyperX sizes) and of the socket
index (mod ``N_S``): all nodes, and all sockets, look alike.

- A socket link is named by its *offset* ``o = (B - A) mod N_S`` from socket ``A`` to socket
  ``B``; at ``A`` it sits on core ``g(o)``, at ``B`` on core ``g(N_S - o)``.
- A node link in dimension ``d`` is named by its offset ``δ = (y_d - x_d) mod S_d`` from node
  ``x`` to node ``y``; at ``x`` it sits on slot ``h(d, δ)``, at ``y`` on slot ``h(d, S_d - δ)``.

``g`` and ``h`` depend on the placement:

``"spread"`` (default)
    Water filling: socket offsets ``o = 1 .. N_S-1`` in turn go to the core of least degree so
    far (mesh ports included; ties: lowest core). Node offsets in order (dimension ascending,
    then ``δ`` ascending) go round robin over the sockets (the ``i``-th to socket
    ``i mod N_S``) and within the socket to the core of least degree so far (ties: lowest
    core). So degrees within a socket differ by at most one port wherever water filling could
    level them, and no switch carries more than its share.
``"hub"``
    Core 0 (a mesh corner) of every socket carries all ``N_S - 1`` socket links; node links are
    water-filled as above (so they avoid the hub). This is the wiring the latency argument of
    PIUMA's "Analysis" describes: a path needs at most one mesh walk per inter-socket or
    inter-node hop, and the last inter-socket hop arrives at the root switch itself, so Eq. 1's
    bound holds (and is met with equality when the hub and the node ports sit ``d_max`` apart).

Port order (the same at every node)
-----------------------------------
Mesh ports first (by mesh dimension, the minus neighbour before the plus neighbour, as
:func:`innet.gen.topology.torus` with ``mesh=True``), then socket ports (ascending offset
``o``), then node ports (by dimension, then ascending offset ``δ``). So a port number means the
same thing at the same slot of every node.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from innet.gen.checks import parse_dims, spell_shape
from innet.gen.topology.core import MAX_PORT_ENTRIES, PortMap, Topology, check_topology

__all__ = [
    "CORE",
    "LEVELS",
    "MAX_NODES",
    "MAX_SWITCHES",
    "NODE",
    "PLACEMENTS",
    "SOCKET",
    "TABLE1_LATENCIES",
    "PiumaLayout",
    "check_latency",
    "check_nodes_shape",
    "intra_node",
    "is_piuma",
    "level_latencies",
    "link_cycles",
    "link_latencies",
    "link_latency_array",
    "link_level",
    "link_levels",
    "mesh_shape",
    "parse_nodes",
    "piuma",
    "piuma_layout",
    "piuma_plan",
]

#: Link levels, lowest first; :func:`link_levels` codes them by their index.
LEVELS = ("core", "socket", "node")
#: Level codes.
CORE, SOCKET, NODE = 0, 1, 2
#: Placement policies of the inter-socket and inter-node links (module documentation).
PLACEMENTS = ("spread", "hub")
#: PIUMA, Table 1: link latency per level in ns (``L_C``, ``L_S``, ``L_P``).
TABLE1_LATENCIES = {"core": 5.0, "socket": 25.0, "node": 50.0}
#: Most sockets per node and cores per socket (PIUMA, Table 1: 16 and 8).
MAX_SOCKETS = MAX_CORES = 4096
#: Most nodes of a wiring plan (:func:`piuma_plan`; a network built is bounded by its ports
#: and switches).
MAX_NODES = 1 << 20
#: Most switches of a PIUMA network built (:func:`piuma`): a million take about 6 s and a few
#: GB; the closed forms of :mod:`innet.gen.analysis.piuma` cover larger systems.
MAX_SWITCHES = 1 << 21

_KIND = "piuma"


def is_piuma(topo: Topology) -> bool:
    """True for a topology built by :func:`piuma`."""
    return isinstance(topo, Topology) and topo.kind == _KIND and "sockets" in topo.params


def _positive_int(name: str, value: object, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {value!r:.60}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
    if value > high:
        raise ValueError(f"{name} must be at most {high}, not {value}")
    return int(value)


def check_nodes_shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    """Validate the HyperX shape of the nodes (sizes at least 1; a single node is ``(1,)``).

    Raises
    ------
    TypeError
        If it is not an integer or a sequence of integers.
    ValueError
        If it is empty or a size is below 1.
    """
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if (isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence)
            or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                       for s in shape)):
        raise TypeError(f"Nodes must be a HyperX shape (a sequence of integers), not "
                        f"{shape!r:.60}")
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise ValueError("Nodes must have at least one dimension")
    for d, size in enumerate(shape):
        if size < 1:
            raise ValueError(f"Dimension {d} of nodes {spell_shape(shape)} must be at least 1, "
                             f"not {size}")
    return shape


def parse_nodes(text: str) -> tuple[int, ...]:
    """Parse a HyperX shape of nodes, ``"4x4"`` (also ``4,4``; ``"1"`` is a single node).

    Raises
    ------
    ValueError
        If the text is not sizes joined by ``x`` (:func:`~innet.gen.checks.parse_dims`) or a
        size is below 1.
    """
    return check_nodes_shape(parse_dims(text, "Nodes", "4x4"))


def mesh_shape(cores: int) -> tuple[int, int]:
    """The on-chip mesh of ``cores`` cores: the most square ``rows x cols`` with
    ``rows <= cols`` (8 -> 2x4, 16 -> 4x4, 7 -> 1x7).

    Raises
    ------
    TypeError, ValueError
        If ``cores`` is not a positive integer.
    """
    cores = _positive_int("Cores", cores, MAX_CORES)
    rows = max(r for r in range(1, math.isqrt(cores) + 1) if cores % r == 0)
    return rows, cores // rows


def _check_latency(level: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"Latency of the {level} level must be a number of ns, not "
                        f"{value!r:.60}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"Latency of the {level} level must be finite and > 0 ns, not {value}")
    return value


@dataclass(frozen=True)
class PiumaLayout:
    """The wiring plan of a PIUMA network (the same for every node; module documentation).

    Members
    -------
    nodes : tuple of int
        HyperX shape of the nodes.
    sockets, cores : int
        ``N_S`` and ``N_C``.
    mesh : (int, int)
        ``rows, cols`` of the on-chip mesh.
    placement : str
        One of :data:`PLACEMENTS`.
    socket_core : tuple of int
        ``socket_core[o]``: the core carrying the socket link of offset ``o`` (``[0]`` unused,
        ``-1``).
    node_slot : tuple of tuple of int
        ``node_slot[d][δ]``: the slot carrying the node link of dimension ``d`` and offset
        ``δ`` (``[d][0]`` is ``-1``).
    """

    nodes: tuple[int, ...]
    sockets: int
    cores: int
    mesh: tuple[int, int]
    placement: str
    socket_core: tuple[int, ...]
    node_slot: tuple[tuple[int, ...], ...]

    @property
    def slots(self) -> int:
        """Switches per node, ``N_S · N_C``."""
        return self.sockets * self.cores

    @property
    def node_count(self) -> int:
        """``N_P``, the number of nodes."""
        return math.prod(self.nodes)

    @property
    def switches(self) -> int:
        """``N_P · N_S · N_C``."""
        return self.node_count * self.slots

    @property
    def dimensions(self) -> int:
        """``D``: HyperX dimensions with more than one node (the node-level diameter)."""
        return sum(1 for s in self.nodes if s > 1)

    @property
    def d_max(self) -> int:
        """Diameter of the on-chip mesh, ``rows - 1 + cols - 1``."""
        return self.mesh[0] - 1 + self.mesh[1] - 1

    @cached_property
    def slot_ports(self) -> tuple[tuple[tuple[str, int, int], ...], ...]:
        """Per slot, its ports in port order as ``(level, a, b)``: ``("core", dim, ±1)`` for a
        mesh port, ``("socket", o, 0)`` for a socket link of offset ``o``, ``("node", d, δ)``
        for a node link."""
        rows, cols = self.mesh
        socket_ports: list[list[tuple[str, int, int]]] = [[] for _ in range(self.cores)]
        for o in range(1, self.sockets):
            socket_ports[self.socket_core[o]].append(("socket", o, 0))
        node_ports: dict[int, list[tuple[str, int, int]]] = {}
        for d, row in enumerate(self.node_slot):
            for delta in range(1, len(row)):
                node_ports.setdefault(row[delta], []).append(("node", d, delta))
        out = []
        for slot in range(self.slots):
            core = slot % self.cores
            r, c = divmod(core, cols)
            ports: list[tuple[str, int, int]] = []
            for dim, (x, size) in enumerate(((r, rows), (c, cols))):
                if x > 0:
                    ports.append(("core", dim, -1))
                if x < size - 1:
                    ports.append(("core", dim, 1))
            ports += socket_ports[core]
            ports += node_ports.get(slot, ())
            out.append(tuple(ports))
        return tuple(out)

    @cached_property
    def degrees(self) -> np.ndarray:
        """``(slots,)`` degree of each slot (the same at every node)."""
        return np.array([len(p) for p in self.slot_ports], dtype=np.int64)

    @cached_property
    def intra_degrees(self) -> np.ndarray:
        """``(slots,)`` mesh plus socket ports of each slot (they come first in port order)."""
        return np.array([sum(1 for level, _, _ in p if level != "node")
                         for p in self.slot_ports], dtype=np.int64)

    @cached_property
    def node_port(self) -> tuple[tuple[int, ...], ...]:
        """``node_port[d][δ]``: the port number of that node link at its slot."""
        out = [[-1] * len(row) for row in self.node_slot]
        for ports in self.slot_ports:
            for p, (level, d, delta) in enumerate(ports):
                if level == "node":
                    out[d][delta] = p
        return tuple(tuple(row) for row in out)

    def split(self, ids: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(node index, socket, core)`` of switch ids (arrays; node index row-major)."""
        ids = np.asarray(ids, dtype=np.int64)
        node, slot = np.divmod(ids, self.slots)
        socket, core = np.divmod(slot, self.cores)
        return node, socket, core

    def node_coordinates(self, node_index: Any) -> np.ndarray:
        """``(..., D)`` HyperX coordinates of node indices (row-major)."""
        index = np.asarray(node_index, dtype=np.int64)
        return np.stack(np.unravel_index(index, self.nodes), axis=-1).astype(np.int64)


def _water_fill(loads: np.ndarray, candidates: Sequence[int]) -> int:
    """The candidate of least load (ties: the lowest); its load grows by one."""
    best = min(candidates, key=lambda k: (loads[k], k))
    loads[best] += 1
    return best


def _plan(nodes: tuple[int, ...], sockets: int, cores: int, mesh: tuple[int, int],
          placement: str) -> PiumaLayout:
    rows, cols = mesh
    mesh_degree = np.array([(r > 0) + (r < rows - 1) + (c > 0) + (c < cols - 1)
                            for r in range(rows) for c in range(cols)], dtype=np.int64)
    core_load = mesh_degree.copy()
    socket_core = [-1]
    for _ in range(1, sockets):
        if placement == "hub":
            core_load[0] += 1
            socket_core.append(0)
        else:
            socket_core.append(_water_fill(core_load, range(cores)))
    loads = np.tile(core_load, sockets)  # per slot
    node_slot = []
    i = 0
    for size in nodes:
        row = [-1]
        for _ in range(1, size):
            socket = i % sockets
            slot = _water_fill(loads, range(socket * cores, (socket + 1) * cores))
            row.append(slot)
            i += 1
        node_slot.append(tuple(row))
    return PiumaLayout(nodes=nodes, sockets=sockets, cores=cores, mesh=mesh,
                       placement=placement, socket_core=tuple(socket_core),
                       node_slot=tuple(node_slot))


def piuma_plan(nodes: Sequence[int] | int, sockets: int = 16, cores: int = 8, *,
               mesh: Sequence[int] | None = None, placement: str = "spread") -> PiumaLayout:
    """The wiring plan of :func:`piuma` without building the network (closed-form analyses of
    networks too large to build use it).

    Raises
    ------
    TypeError, ValueError
        As :func:`piuma` for these parameters.
    """
    return _plan(*_check_plan(nodes, sockets, cores, mesh, placement))


def _check_plan(nodes: object, sockets: object, cores: object, mesh: object,
                placement: object) -> tuple:
    """The arguments of :func:`_plan`, checked."""
    shape = check_nodes_shape(nodes)
    if math.prod(shape) > MAX_NODES:
        raise ValueError(f"A PIUMA network of {math.prod(shape)} nodes ({spell_shape(shape)}) is "
                         f"too large; at most {MAX_NODES} nodes are supported")
    sockets = _positive_int("Sockets", sockets, MAX_SOCKETS)
    cores = _positive_int("Cores", cores, MAX_CORES)
    rows, cols = _check_mesh(mesh, cores)
    if placement not in PLACEMENTS:
        raise ValueError(f"Placement must be one of {', '.join(PLACEMENTS)}, not "
                         f"{placement!r}")
    return shape, sockets, cores, (rows, cols), placement


def _check_ports(shape: tuple[int, ...], sockets: int, cores: int,
                 mesh: tuple[int, int]) -> None:
    """Refuse a network of more switches or port entries than supported before wiring it
    (:data:`MAX_SWITCHES`, :data:`MAX_PORT_ENTRIES`): every socket has the links of its mesh
    and one to every other socket of its node, every node one to each node whose coordinates
    differ from its own in one dimension."""
    rows, cols = mesh
    nodes = math.prod(shape)
    chips = nodes * sockets
    if chips * cores > MAX_SWITCHES:
        raise ValueError(f"A PIUMA network of {chips * cores:,} switches is too large; at most "
                         f"{MAX_SWITCHES:,} are built")
    ports = (chips * (2 * (rows * (cols - 1) + cols * (rows - 1)) + sockets - 1)
             + nodes * sum(size - 1 for size in shape))
    if ports > MAX_PORT_ENTRIES:
        raise ValueError(f"A PIUMA network of {chips * cores:,} switches and {ports:,} ports is "
                         f"too large; at most {MAX_PORT_ENTRIES:,} port entries are supported")


def check_latency(level: str, value: object) -> float:
    """A link latency in ns, checked: finite and positive.

    Raises
    ------
    TypeError
        If it is not a number.
    ValueError
        If it is not finite and positive.
    """
    return _check_latency(level, value)


def _check_mesh(mesh: object, cores: int) -> tuple[int, int]:
    if mesh is None:
        return mesh_shape(cores)
    if (isinstance(mesh, (str, bytes)) or not isinstance(mesh, Sequence) or len(mesh) != 2
            or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                       for x in mesh)):
        raise TypeError(f"Mesh must be a (rows, cols) pair of integers, not {mesh!r:.60}")
    rows, cols = int(mesh[0]), int(mesh[1])
    if rows < 1 or cols < 1 or rows * cols != cores:
        raise ValueError(f"Mesh {rows}x{cols} has {rows * cols} places, not one for each of "
                         f"the {cores} cores")
    return rows, cols


def piuma(nodes: Sequence[int] | int, sockets: int = 16, cores: int = 8, *,
          mesh: Sequence[int] | None = None, placement: str = "spread",
          latency_core: float = TABLE1_LATENCIES["core"],
          latency_socket: float = TABLE1_LATENCIES["socket"],
          latency_node: float = TABLE1_LATENCIES["node"]) -> Topology:
    """A multi-level PIUMA network (module documentation; PIUMA, "Network Overview").

    Parameters
    ----------
    nodes : int or sequence of int
        HyperX shape of the nodes (``(4, 4)``; ``1`` or ``(1,)`` is a single node).
    sockets : int
        ``N_S``, sockets per node (Table 1: 16), all-to-all connected.
    cores : int
        ``N_C``, cores (switches) per socket (Table 1: 8), on an on-chip mesh.
    mesh : (int, int), optional
        ``rows, cols`` of the mesh (default :func:`mesh_shape`).
    placement : str
        Which switches carry the socket and node links: ``"spread"`` or ``"hub"``.
    latency_core, latency_socket, latency_node : float
        Link latency per level in ns (``L_C``, ``L_S``, ``L_P``; Table 1: 5, 25, 50).

    Returns
    -------
    Topology
        ``kind="piuma"``; ``params`` holds ``nodes, sockets, cores, mesh, placement`` and the
        three latencies; labels are ``(node coordinates..., socket, core)``.

    Raises
    ------
    TypeError
        If a parameter has the wrong type.
    ValueError
        If a size is below 1, the mesh does not hold ``cores`` cores, the placement is
        unknown, a latency is not positive, the network has fewer than 2 switches or is too
        large.
    """
    checked = _check_plan(nodes, sockets, cores, mesh, placement)
    _check_ports(*checked[:4])
    layout = _plan(*checked)
    shape, sockets, cores = layout.nodes, layout.sockets, layout.cores
    rows, cols = layout.mesh
    lat = {"core": _check_latency("core", latency_core),
           "socket": _check_latency("socket", latency_socket),
           "node": _check_latency("node", latency_node)}
    total = layout.switches
    if total < 2:
        raise ValueError(f"A PIUMA network needs at least 2 switches, not {total}")
    radix = int(layout.degrees.max())
    if total * radix > MAX_PORT_ENTRIES:
        raise ValueError(f"A PIUMA network of {total} switches of radix {radix} is too large; "
                         f"at most {MAX_PORT_ENTRIES} port entries are supported")
    peer, peer_port = _wire(layout)
    ids = np.arange(total, dtype=np.int64)
    node, socket, core = layout.split(ids)
    labels = np.concatenate([layout.node_coordinates(node), socket[:, None], core[:, None]],
                            axis=1)
    params = {"nodes": shape, "sockets": sockets, "cores": cores, "mesh": (rows, cols),
              "placement": placement, "latency_core": lat["core"],
              "latency_socket": lat["socket"], "latency_node": lat["node"]}
    return Topology(kind=_KIND, params=params, labels=tuple(map(tuple, labels.tolist())),
                    ports=PortMap._trusted(peer, peer_port))


def _target(layout: PiumaLayout, slot: int, key: tuple[str, int, int]
            ) -> tuple[int, tuple[str, int, int]]:
    """Where port ``key`` of ``slot`` leads: the slot at the far end (in the same node for mesh
    and socket links, in the neighbour node for node links) and the key of the port there."""
    level, a, b = key
    socket, core = divmod(slot, layout.cores)
    cols = layout.mesh[1]
    if level == "core":
        r, c = divmod(core, cols)
        dr, dc = (b, 0) if a == 0 else (0, b)
        return socket * layout.cores + (r + dr) * cols + (c + dc), ("core", a, -b)
    if level == "socket":
        back = layout.sockets - a
        other = (socket + a) % layout.sockets
        return other * layout.cores + layout.socket_core[back], ("socket", back, 0)
    back = layout.nodes[a] - b
    return layout.node_slot[a][back], ("node", a, back)


def _port_numbers(layout: PiumaLayout) -> dict[tuple[int, tuple[str, int, int]], int]:
    return {(slot, key): p for slot, ports in enumerate(layout.slot_ports)
            for p, key in enumerate(ports)}


def intra_node(layout: PiumaLayout) -> tuple[np.ndarray, np.ndarray]:
    """One node's mesh and socket links as ``(slots, R)`` arrays of the peer slot and the level
    code behind each port (``-1`` past the slot's intra-node ports, which come first in port
    order, so these are the slot's port numbers in every node)."""
    width = int(layout.intra_degrees.max(initial=0))
    peer = np.full((layout.slots, max(width, 1)), -1, dtype=np.int64)
    level = np.full((layout.slots, max(width, 1)), -1, dtype=np.int64)
    for slot, ports in enumerate(layout.slot_ports):
        for p, key in enumerate(ports):
            if key[0] != "node":
                peer[slot, p] = _target(layout, slot, key)[0]
                level[slot, p] = LEVELS.index(key[0])
    return peer, level


def _wire(layout: PiumaLayout) -> tuple[np.ndarray, np.ndarray]:
    """The ``(N, radix)`` peer and peer-port arrays: one slot template, repeated per node."""
    slots = layout.slots
    shape = layout.nodes
    n_nodes = layout.node_count
    radix = int(layout.degrees.max())
    port_of = _port_numbers(layout)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    coords = layout.node_coordinates(np.arange(n_nodes))
    nodes = np.arange(n_nodes, dtype=np.int64)
    peer = np.full((n_nodes, slots, radix), -1, dtype=np.int32)
    peer_port = np.full((n_nodes, slots, radix), -1, dtype=np.int32)
    for slot, ports in enumerate(layout.slot_ports):
        for p, key in enumerate(ports):
            target, back = _target(layout, slot, key)
            other = nodes
            if key[0] == "node":
                d, delta = key[1], key[2]
                x = coords[:, d]
                other = nodes + (((x + delta) % shape[d]) - x) * strides[d]
            peer[:, slot, p] = other * slots + target
            peer_port[:, slot, p] = port_of[(target, back)]
    return peer.reshape(-1, radix), peer_port.reshape(-1, radix)


def piuma_layout(topo: Topology) -> PiumaLayout:
    """The wiring plan of a PIUMA topology, from its ``params``.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology.
    ValueError
        If it is not a PIUMA network.
    """
    check_topology(topo)
    if not is_piuma(topo):
        raise ValueError(f"Topology must be a PIUMA network, not {topo.kind}")
    key = topo.fingerprint
    cached = _LAYOUTS.get(key)
    if cached is None:
        p = topo.params
        cached = _plan(tuple(p["nodes"]), int(p["sockets"]), int(p["cores"]),
                       (int(p["mesh"][0]), int(p["mesh"][1])), str(p["placement"]))
        if len(_LAYOUTS) >= 8:
            _LAYOUTS.pop(next(iter(_LAYOUTS)))
        _LAYOUTS[key] = cached
    return cached


_LAYOUTS: dict[str, PiumaLayout] = {}


def level_latencies(topo: Topology) -> dict[str, float]:
    """``{"core": L_C, "socket": L_S, "node": L_P}`` in ns, from the topology's params.

    Raises
    ------
    TypeError, ValueError
        As :func:`piuma_layout`.
    """
    piuma_layout(topo)
    p = topo.params
    return {"core": float(p["latency_core"]), "socket": float(p["latency_socket"]),
            "node": float(p["latency_node"])}


def link_level(topo: Topology, u: int, v: int) -> str:
    """The level of the link between switches ``u`` and ``v``: ``"core"`` (same socket),
    ``"socket"`` (same node, different sockets) or ``"node"`` (different nodes).

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a PIUMA network or ``u`` and ``v`` are not adjacent.
    """
    layout = piuma_layout(topo)
    topo.port_to(u, v)  # raises unless adjacent
    (nu, nv), (su, sv), _ = layout.split([u, v])
    if nu != nv:
        return "node"
    return "socket" if su != sv else "core"


def link_levels(topo: Topology) -> np.ndarray:
    """``(N, radix)`` int8: the level code (:data:`CORE`, :data:`SOCKET`, :data:`NODE`) of the
    link behind every port, ``-1`` where a port is absent.

    Raises
    ------
    TypeError, ValueError
        As :func:`piuma_layout`.
    """
    layout = piuma_layout(topo)
    peer = topo.ports.peer
    present = peer >= 0
    node, socket, _ = layout.split(np.arange(topo.nodes))
    safe = np.where(present, peer, 0)
    pnode, psocket, _ = layout.split(safe)
    level = np.where(pnode != node[:, None], NODE,
                     np.where(psocket != socket[:, None], SOCKET, CORE))
    return np.where(present, level, -1).astype(np.int8)


def link_latency_array(topo: Topology, latencies: Mapping[str, float] | None = None
                       ) -> np.ndarray:
    """``(N, radix)`` float64: the latency (ns) of the link behind every port, ``nan`` where a
    port is absent.

    Parameters
    ----------
    latencies : mapping, optional
        ``{"core": ..., "socket": ..., "node": ...}`` overriding the topology's own.

    Raises
    ------
    TypeError, ValueError
        As :func:`piuma_layout`, or if an override is not a positive number or names an
        unknown level.
    """
    values = level_latencies(topo)
    for level, value in (latencies or {}).items():
        if level not in LEVELS:
            raise ValueError(f"Latency level must be one of {', '.join(LEVELS)}, not "
                             f"{level!r}")
        values[level] = _check_latency(level, value)
    table = np.array([values[level] for level in LEVELS] + [np.nan])
    return table[link_levels(topo).astype(np.int64)]


def link_latencies(topo: Topology, latencies: Mapping[str, float] | None = None
                   ) -> dict[tuple[int, int], float]:
    """``{(u, v): ns}`` for every link (``u < v``), for
    :class:`innet.gen.cost.CostModel` ``(link_latencies=...)`` on small networks.

    Raises
    ------
    TypeError, ValueError
        As :func:`link_latency_array`.
    """
    array = link_latency_array(topo, latencies)
    links = topo.link_array()
    return {(int(u), int(v)): float(array[u, p])
            for u, p, v, _ in links.tolist()}


def link_cycles(topo: Topology, cycle_ns: float = TABLE1_LATENCIES["core"],
                latencies: Mapping[str, float] | None = None) -> dict[tuple[int, int], int]:
    """``{(u, v): cycles}`` for every link (``u < v``): its latency in clock cycles of
    ``cycle_ns``, rounded up (a link of 25 ns takes 3 cycles of 10 ns).

    These are the pipeline stages that model the links of a multi-level network in RTL
    (:class:`innet.hw.network.Network` ``(link_stages=...)``) and the per-link latencies of the
    timing model (:func:`innet.sim.golden.idle_latency`). The default cycle is ``L_C``, so
    Table 1's levels take 1, 5 and 10 cycles.

    Raises
    ------
    TypeError, ValueError
        As :func:`link_latency_array`, or if ``cycle_ns`` is not a finite number > 0.
    """
    if isinstance(cycle_ns, bool) or not isinstance(cycle_ns, numbers.Real):
        raise TypeError(f"Clock cycle must be a number of ns, not {cycle_ns!r:.60}")
    cycle = float(cycle_ns)
    if not (math.isfinite(cycle) and cycle > 0):
        raise ValueError(f"Clock cycle must be finite and > 0 ns, not {cycle_ns}")
    return {pair: math.ceil(ns / cycle - 1e-9)
            for pair, ns in link_latencies(topo, latencies).items()}

