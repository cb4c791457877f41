"""The :class:`Topology` type: nodes, labels and a numbered port map.

A topology is an undirected simple graph whose links end on numbered ports. Node ids are
``0..N-1``; the network ports of node ``u`` are numbered ``0..deg(u)-1`` in the order its
constructor documents, and ``ports[u][p] == (v, p2)`` means that port ``p`` of node ``u`` is
wired to port ``p2`` of node ``v``. The map is an involution: ``ports[v][p2] == (u, p)``.

The local (endpoint) port of a switch is not part of the port map; generator data that needs to
name it uses :data:`LOCAL` (``-1``, spelt ``"local"`` in JSON).

The port map is stored as two ``(N, radix)`` integer arrays (peer node and peer port, padded with
``-1``) so that a PolarFly with 63,253 nodes of radix 252 costs 128 MB rather than gigabytes of
Python tuples; :class:`PortMap` presents them as the nested sequence the contract names.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from innet.gen.checks import check_type, spell_shape
from innet.gen.jsonio import load_json

__all__ = ["LOCAL", "Link", "PortMap", "Topology", "check_topology", "port_map_from_edges",
           "port_map_from_rows", "title"]

#: The local (endpoint) port in generator data; hardware gives it index ``radix``.
LOCAL = -1

#: Format name and version written by :meth:`Topology.to_json`.
JSON_FORMAT = "innet-topology"
JSON_VERSION = 1

#: Upper bound on ``N * radix`` (port-map entries) a topology may have: 2**28 entries are 2 GiB.
MAX_PORT_ENTRIES = 1 << 28


def title(kind: str, params: Mapping[str, Any]) -> str:
    """The name every command shows for a network of ``kind`` and ``params`` (a
    :attr:`Topology.params`, or its JSON form with lists for tuples): ``PolarFly q=3``,
    ``PolarFly q=3 r0=1 r1=0``, ``HyperX 4x4``, ``torus 4x4``, ``mesh 4x4``, ``PIUMA 2x2 nodes x
    16 sockets x 8 cores``; another kind as ``kind (key=value, ...)``."""
    def dims(value: Any) -> str:
        if isinstance(value, Sequence) and not isinstance(value, str):
            return spell_shape(value)
        return str(value)

    p = dict(params)
    if kind == "polarfly" and "q" in p:
        extra = ""
        if p.get("r0") or p.get("r1"):
            extra = f" r0={p.get('r0', 0)} r1={p.get('r1', 0)}"
        return f"PolarFly q={p['q']}{extra}"
    if kind == "hyperx" and "shape" in p:
        return f"HyperX {dims(p['shape'])}"
    if kind == "torus" and "shape" in p:
        return f"{'mesh' if p.get('mesh') else 'torus'} {dims(p['shape'])}"
    if kind == "piuma" and {"nodes", "sockets", "cores"} <= set(p):
        return (f"PIUMA {dims(p['nodes'])} nodes x {p['sockets']} sockets x {p['cores']} "
                f"cores")
    return f"{kind} ({', '.join(f'{k}={dims(v)}' for k, v in p.items())})"


class Link(NamedTuple):
    """One link: port ``port_u`` of node ``u`` is wired to port ``port_v`` of node ``v``."""

    u: int
    port_u: int
    v: int
    port_v: int


def _frozen_array(array: np.ndarray, dtype: type) -> np.ndarray:
    out = np.ascontiguousarray(array, dtype=dtype)
    out.flags.writeable = False
    return out


class PortMap(Sequence):
    """A read-only port map: ``ports[u]`` is a tuple of ``(v, p2)`` pairs in port order.

    Parameters
    ----------
    peer : array of int, shape (N, R)
        ``peer[u, p]`` is the node port ``p`` of ``u`` is wired to; ``-1`` past ``deg(u)``.
    peer_port : array of int, shape (N, R)
        ``peer_port[u, p]`` is the port of that node; ``-1`` past ``deg(u)``.

    Raises
    ------
    ValueError
        If the arrays do not describe an involutive, loop-free, simple port map with ports
        numbered contiguously from 0.
    """

    __slots__ = ("_degree", "_peer", "_peer_port")

    def __init__(self, peer: Any, peer_port: Any) -> None:
        peer = np.asarray(peer)
        peer_port = np.asarray(peer_port)
        _check_arrays(peer, peer_port)
        self._set(peer, peer_port)

    def _set(self, peer: np.ndarray, peer_port: np.ndarray) -> None:
        self._peer = _frozen_array(peer, np.int32)
        self._peer_port = _frozen_array(peer_port, np.int32)
        self._degree = _frozen_array((self._peer >= 0).sum(axis=1), np.int32)

    @classmethod
    def _trusted(cls, peer: np.ndarray, peer_port: np.ndarray) -> PortMap:
        """A port map from arrays a constructor in this package built and knows to be valid."""
        self = cls.__new__(cls)
        self._set(peer, peer_port)
        return self

    @classmethod
    def from_lists(cls, ports: Sequence[Sequence[Sequence[int]]]) -> PortMap:
        """Build from nested lists: ``ports[u][p] == (v, p2)``; checks everything.

        Raises
        ------
        TypeError
            If ``ports`` is not a sequence of sequences of ``(v, p2)`` integer pairs.
        ValueError
            As for the constructor.
        """
        if isinstance(ports, PortMap):
            return ports
        if isinstance(ports, (str, bytes)) or not isinstance(ports, Sequence):
            raise TypeError(f"Ports must be a sequence of port lists, not {ports!r:.60}")
        n = len(ports)
        rows = [list(row) for row in ports]
        fast = cls._from_uniform_rows(rows)
        if fast is not None:
            return fast
        radix = max((len(row) for row in rows), default=0)
        peer = np.full((n, radix), -1, dtype=np.int64)
        peer_port = np.full((n, radix), -1, dtype=np.int64)
        for u, row in enumerate(rows):
            for p, pair in enumerate(row):
                if (isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence)
                        or len(pair) != 2
                        or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                                   for x in pair)):
                    raise TypeError(f"Port {p} of node {u} must be a (node, port) pair of "
                                    f"integers, not {pair!r:.60}")
                peer[u, p], peer_port[u, p] = pair
                if peer[u, p] < 0 or peer_port[u, p] < 0:
                    raise ValueError(f"Port {p} of node {u} names ({pair[0]}, {pair[1]}); "
                                     f"nodes and ports are non-negative")
        return cls(peer, peer_port)

    @classmethod
    def _from_uniform_rows(cls, rows: list[list[Any]]) -> PortMap | None:
        """The vectorised path of :meth:`from_lists` for well-formed input, else None (then
        the element-by-element path finds and names the problem)."""
        degree = np.array([len(row) for row in rows], dtype=np.int64)
        flat = [pair for row in rows for pair in row]
        try:
            pairs = np.array(flat) if flat else np.zeros((0, 2), dtype=np.int64)
        except (ValueError, TypeError, OverflowError):
            return None
        if pairs.shape != (len(flat), 2) or pairs.dtype.kind not in "iu":
            return None
        pairs = pairs.astype(np.int64)
        if (pairs < 0).any():
            return None
        radix = int(degree.max(initial=0))
        peer = np.full((len(rows), radix), -1, dtype=np.int64)
        peer_port = np.full((len(rows), radix), -1, dtype=np.int64)
        us = np.repeat(np.arange(len(rows)), degree)
        ps = np.arange(len(flat)) - np.repeat(np.cumsum(degree) - degree, degree)
        peer[us, ps] = pairs[:, 0]
        peer_port[us, ps] = pairs[:, 1]
        return cls(peer, peer_port)

    # -- the Sequence protocol ----------------------------------------------------------------
    def __len__(self) -> int:
        return self._peer.shape[0]

    def __getitem__(self, u):  # type: ignore[override]
        if isinstance(u, slice):
            return tuple(self[i] for i in range(*u.indices(len(self))))
        if isinstance(u, bool) or not isinstance(u, (int, np.integer)):
            raise TypeError(f"Node must be an integer, not {u!r:.60}")
        n = len(self)
        if not -n <= u < n:
            raise IndexError(f"Node {u} is out of range; there are {n} nodes")
        u = int(u) % n
        d = int(self._degree[u])
        return tuple(zip(self._peer[u, :d].tolist(), self._peer_port[u, :d].tolist(),
                         strict=True))

    def __iter__(self) -> Iterator[tuple[tuple[int, int], ...]]:
        for u in range(len(self)):
            yield self[u]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PortMap):
            return (self._peer.shape == other._peer.shape
                    and np.array_equal(self._peer, other._peer)
                    and np.array_equal(self._peer_port, other._peer_port))
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and all(
                tuple(tuple(pair) for pair in row) == self[u] for u, row in enumerate(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._peer.shape, self._peer.tobytes(), self._peer_port.tobytes()))

    def __repr__(self) -> str:
        return f"PortMap(nodes={len(self)}, radix={self._peer.shape[1]})"

    # -- arrays for vectorised users ----------------------------------------------------------
    @property
    def peer(self) -> np.ndarray:
        """``(N, radix)`` read-only int32 array of peer nodes, ``-1`` where a port is absent."""
        return self._peer

    @property
    def peer_port(self) -> np.ndarray:
        """``(N, radix)`` read-only int32 array of peer ports, ``-1`` where a port is absent."""
        return self._peer_port

    @property
    def degree(self) -> np.ndarray:
        """``(N,)`` read-only int32 array of node degrees."""
        return self._degree


def _check_arrays(peer: np.ndarray, peer_port: np.ndarray) -> None:
    """Raise ValueError unless the arrays are a valid port map (see :class:`PortMap`)."""
    if peer.ndim != 2 or peer.shape != peer_port.shape:
        raise ValueError(f"Peer arrays must both have shape (N, radix), not {peer.shape} and "
                         f"{peer_port.shape}")
    if not (np.issubdtype(peer.dtype, np.integer) and np.issubdtype(peer_port.dtype, np.integer)):
        raise TypeError(f"Peer arrays must hold integers, not {peer.dtype} and "
                        f"{peer_port.dtype}")
    n, radix = peer.shape
    if n * radix > MAX_PORT_ENTRIES:
        raise ValueError(f"A port map of {n} nodes of radix {radix} is too large; at most "
                         f"{MAX_PORT_ENTRIES} port entries are supported")
    peer = peer.astype(np.int64)
    peer_port = peer_port.astype(np.int64)
    present = peer >= 0
    degree = present.sum(axis=1)
    contiguous = np.arange(radix)[None, :] < degree[:, None]
    bad = np.argwhere(present != contiguous)
    if len(bad):
        u, p = bad[0]
        raise ValueError(f"Ports of node {u} must be numbered 0..deg-1 without gaps; port {p} "
                         f"is out of place")
    bad = np.argwhere(present != (peer_port >= 0))
    if len(bad):
        u, p = bad[0]
        raise ValueError(f"Port {p} of node {u} has a peer node but no peer port, or the reverse")
    us, ps = np.nonzero(present)
    vs, qs = peer[us, ps], peer_port[us, ps]
    bad = np.nonzero(vs >= n)[0]
    if len(bad):
        i = bad[0]
        raise ValueError(f"Port {ps[i]} of node {us[i]} names node {vs[i]}, but there are {n} "
                         f"nodes")
    bad = np.nonzero(qs >= degree[vs])[0]
    if len(bad):
        i = bad[0]
        raise ValueError(f"Port {ps[i]} of node {us[i]} names port {qs[i]} of node {vs[i]}, "
                         f"which has only {degree[vs[i]]} ports")
    bad = np.nonzero(vs == us)[0]
    if len(bad):
        i = bad[0]
        raise ValueError(f"Port {ps[i]} of node {us[i]} is wired to node {us[i]} itself")
    back_u, back_p = peer[vs, qs], peer_port[vs, qs]
    bad = np.nonzero((back_u != us) | (back_p != ps))[0]
    if len(bad):
        i = bad[0]
        raise ValueError(f"Port {ps[i]} of node {us[i]} is wired to port {qs[i]} of node "
                         f"{vs[i]}, but that port is wired to port {back_p[i]} of node "
                         f"{back_u[i]}")
    rows = np.sort(np.where(present, peer, -1 - np.arange(radix)[None, :]), axis=1)
    dup = np.argwhere((rows[:, 1:] == rows[:, :-1]) & (rows[:, 1:] >= 0))
    if len(dup):
        u, i = dup[0]
        raise ValueError(f"Nodes {u} and {rows[u, i]} are wired by more than one link")


def port_map_from_rows(nbr: np.ndarray) -> PortMap:
    """The port map of a graph given as sorted neighbour rows; port order = ascending peer id.

    ``nbr`` is ``(N, R)``: row ``u`` lists the neighbours of ``u`` in ascending order, padded
    with ``-1`` at the end. The graph must be symmetric, loop-free and simple (not checked;
    callers in this package build such rows).

    Rows are sorted, so visiting ``u`` in ascending order meets the entries of every row ``v``
    in ascending order too: the port of ``v`` facing ``u`` is how many times ``v`` was met
    before. One pass over the rows, O(N*R).
    """
    n = nbr.shape[0]
    seen = np.zeros(n + 1, dtype=np.int32)  # slot n absorbs the -1 padding
    out = np.empty(nbr.shape, dtype=np.int32)
    rows = np.where(nbr >= 0, nbr, n)
    for u in range(n):
        row = rows[u]
        out[u] = seen[row]
        seen[row] += 1
    out[nbr < 0] = -1
    return PortMap._trusted(nbr, out)


def port_map_from_edges(n: int, edges: Any) -> PortMap:
    """The port map of the graph on nodes ``0..n-1`` with the given ``(E, 2)`` edges, ports in
    ascending order of the peer id.

    Raises
    ------
    ValueError
        If an edge is a self-loop, repeats another, or names a node outside ``0..n-1``.
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    bad = np.flatnonzero((edges < 0).any(axis=1) | (edges >= n).any(axis=1))
    if len(bad):
        raise ValueError(f"Edge {tuple(edges[bad[0]].tolist())} names a node outside 0..{n - 1}")
    bad = np.flatnonzero(edges[:, 0] == edges[:, 1])
    if len(bad):
        raise ValueError(f"Edge {tuple(edges[bad[0]].tolist())} is a self-loop")
    a = np.concatenate([edges[:, 0], edges[:, 1]])
    b = np.concatenate([edges[:, 1], edges[:, 0]])
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    dup = np.flatnonzero((a[1:] == a[:-1]) & (b[1:] == b[:-1]))
    if len(dup):
        raise ValueError(f"Edge {tuple(sorted((int(a[dup[0]]), int(b[dup[0]]))))} is listed "
                         f"more than once")
    degree = np.bincount(a, minlength=n)
    radix = int(degree.max(initial=0))
    if n * radix > MAX_PORT_ENTRIES:
        raise ValueError(f"A port map of {n} nodes of radix {radix} is too large; at most "
                         f"{MAX_PORT_ENTRIES} port entries are supported")
    start = np.concatenate([[0], np.cumsum(degree)[:-1]])
    nbr = np.full((n, radix), -1, dtype=np.int32)
    nbr[a, np.arange(len(a)) - start[a]] = b
    return port_map_from_rows(nbr)


def _freeze(value: Any) -> Any:
    """Lists become tuples and mappings read-only, recursively (params are immutable)."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _thaw(value: Any) -> Any:
    """The JSON-ready form of a frozen value."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


#: The params each generator's kind records, which the analyses and the routing read.
_PARAMS = {"polarfly": ("q", "r0", "r1"), "hyperx": ("shape",), "torus": ("shape", "mesh"),
           "piuma": ("nodes", "sockets", "cores", "mesh", "placement", "latency_core",
                     "latency_socket", "latency_node")}


@dataclass(frozen=True, eq=True)
class Topology:
    """A network topology: nodes with labels and a numbered port map.

    Parameters
    ----------
    kind : str
        The family: ``"polarfly"``, ``"hyperx"``, ``"torus"``, or anything for a custom graph.
    params : mapping
        The construction parameters (``{"q": 7, ...}``, ``{"shape": (4, 4), ...}``); kept as
        a read-only mapping whose lists become tuples.
    labels : sequence of tuple of int
        One label per node: the left-normalised vector for PolarFly, the coordinates (row-major
        order matches the node id) for HyperX and torus.
    ports : PortMap or nested sequence
        ``ports[u][p] == (v, p2)``: port ``p`` of node ``u`` is wired to port ``p2`` of node
        ``v``. A nested sequence is converted to a :class:`PortMap` and checked.
    classes : sequence of str, optional
        A class name per node where the family has them (PolarFly: ``"quadric"``, ``"v1"``,
        ``"v2"``), else empty.

    Raises
    ------
    TypeError
        If a field has the wrong type.
    ValueError
        If labels or classes do not have one entry per node, or the port map is not an
        involution of a simple loop-free graph with ports numbered ``0..deg-1``.
    """

    kind: str
    params: Mapping[str, Any]
    labels: tuple[tuple[int, ...], ...]
    ports: PortMap
    classes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind:
            raise TypeError(f"Kind must be a non-empty string, not {self.kind!r}")
        if not isinstance(self.params, Mapping):
            raise TypeError(f"Params must be a mapping, not {self.params!r:.60}")
        object.__setattr__(self, "params", _freeze(self.params))
        ports = self.ports if isinstance(self.ports, PortMap) else PortMap.from_lists(self.ports)
        object.__setattr__(self, "ports", ports)
        labels = tuple(tuple(int(x) for x in label) for label in self.labels)
        if len(labels) != len(ports):
            raise ValueError(f"Labels must have one entry per node ({len(ports)}), not "
                             f"{len(labels)}")
        object.__setattr__(self, "labels", labels)
        classes = tuple(str(c) for c in self.classes)
        if classes and len(classes) != len(ports):
            raise ValueError(f"Classes must be empty or have one entry per node ({len(ports)}), "
                             f"not {len(classes)}")
        object.__setattr__(self, "classes", classes)

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    @property
    def title(self) -> str:
        """The network's name as every command shows it (:func:`title`): ``PolarFly q=3``."""
        return title(self.kind, self.params)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={_thaw(v)!r}" for k, v in self.params.items())
        return (f"Topology({self.kind}({params}), nodes={self.nodes}, links={self.num_links}, "
                f"radix={self.radix})")

    @classmethod
    def from_edges(cls, kind: str, params: Mapping[str, Any], labels: Sequence[Sequence[int]],
                   edges: Any, classes: Sequence[str] = ()) -> Topology:
        """A topology from an edge list; every node's ports go in ascending order of peer id.

        Raises
        ------
        ValueError
            As :func:`port_map_from_edges`, or as the constructor.
        """
        return cls(kind=kind, params=params, labels=tuple(map(tuple, labels)),
                   ports=port_map_from_edges(len(labels), edges), classes=tuple(classes))

    # -- size and degrees ---------------------------------------------------------------------
    @property
    def nodes(self) -> int:
        """The number of nodes N; node ids are ``range(topo.nodes)``."""
        return len(self.ports)

    @property
    def radix(self) -> int:
        """The maximum degree: the number of network ports a switch of this network needs."""
        return int(self.ports.degree.max(initial=0))

    @property
    def min_degree(self) -> int:
        """The minimum degree."""
        degree = self.ports.degree
        return int(degree.min()) if len(degree) else 0

    @property
    def degrees(self) -> np.ndarray:
        """``(N,)`` read-only array of node degrees."""
        return self.ports.degree

    @property
    def num_links(self) -> int:
        """The number of (bidirectional) links."""
        return int(self.ports.degree.sum()) // 2

    def degree(self, u: int) -> int:
        """The number of network ports of node ``u``."""
        self._check_node(u)
        return int(self.ports.degree[u])

    def neighbors(self, u: int) -> tuple[int, ...]:
        """The neighbours of ``u`` in port order: ``neighbors(u)[p]`` is behind port ``p``."""
        self._check_node(u)
        return tuple(self.ports.peer[u, : self.ports.degree[u]].tolist())

    def port_to(self, u: int, v: int) -> int:
        """The port of ``u`` wired to ``v``.

        Raises
        ------
        ValueError
            If ``u`` and ``v`` are not adjacent.
        """
        self._check_node(u)
        self._check_node(v)
        hits = np.flatnonzero(self.ports.peer[u, : self.ports.degree[u]] == v)
        if not len(hits):
            raise ValueError(f"Node {u} is not adjacent to node {v}")
        return int(hits[0])

    def links(self) -> tuple[Link, ...]:
        """Every link once, as ``Link(u, port_u, v, port_v)`` with ``u < v``, sorted."""
        return tuple(Link(*row) for row in self.link_array().tolist())

    def link_array(self) -> np.ndarray:
        """Every link once as an ``(E, 4)`` int array of ``u, port_u, v, port_v`` (``u < v``)."""
        peer = self.ports.peer
        us, ps = np.nonzero(peer > np.arange(self.nodes, dtype=np.int32)[:, None])
        return np.stack([us, ps, peer[us, ps], self.ports.peer_port[us, ps]], axis=1)

    def node_of(self, label: Sequence[int]) -> int:
        """The node id whose label is ``label``.

        Raises
        ------
        ValueError
            If no node has that label.
        """
        key = tuple(int(x) for x in label)
        try:
            return self._label_index[key]
        except KeyError:
            raise ValueError(f"No node has label {key}") from None

    @cached_property
    def _label_index(self) -> dict[tuple[int, ...], int]:
        return {label: u for u, label in enumerate(self.labels)}

    def _check_node(self, u: int) -> None:
        if isinstance(u, bool) or not isinstance(u, (int, np.integer)):
            raise TypeError(f"Node must be an integer, not {u!r:.60}")
        if not 0 <= u < self.nodes:
            raise ValueError(f"Node {u} is out of range 0..{self.nodes - 1}")

    # -- identity -----------------------------------------------------------------------------
    @cached_property
    def fingerprint(self) -> str:
        """Hex SHA-256 of the canonical form; images store it to name their network.

        The canonical form is the UTF-8 bytes of the compact JSON header
        ``{"classes": [...], "kind": ..., "labels": [...], "params": {...}}`` (keys sorted,
        separators ``,`` and ``:``), a newline, then ``N`` and ``radix`` as little-endian
        uint32, then the peer and peer-port arrays as little-endian int32 in row-major order
        (``-1`` where a port is absent).
        """
        header = json.dumps({"kind": self.kind, "params": _thaw(self.params),
                             "labels": [list(label) for label in self.labels],
                             "classes": list(self.classes)},
                            sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(header.encode())
        digest.update(b"\n")
        digest.update(np.array([self.nodes, self.ports.peer.shape[1]], dtype="<u4").tobytes())
        digest.update(self.ports.peer.astype("<i4").tobytes())
        digest.update(self.ports.peer_port.astype("<i4").tobytes())
        return digest.hexdigest()

    # -- conversions --------------------------------------------------------------------------
    def to_networkx(self):
        """A :class:`networkx.Graph`: node attributes ``label`` (and ``cls``), edge attribute
        ``ports`` (``{u: port_u, v: port_v}``), graph attributes ``kind`` and ``params``."""
        import networkx as nx

        graph = nx.Graph(kind=self.kind, params=_thaw(self.params))
        for u, label in enumerate(self.labels):
            graph.add_node(u, label=label)
            if self.classes:
                graph.nodes[u]["cls"] = self.classes[u]
        graph.add_edges_from((u, v, {"ports": {u: pu, v: pv}})
                             for u, pu, v, pv in self.link_array().tolist())
        return graph

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (see :meth:`to_json`)."""
        return {"format": JSON_FORMAT, "version": JSON_VERSION, "kind": self.kind,
                "params": _thaw(self.params), "nodes": self.nodes,
                "labels": [list(label) for label in self.labels],
                "classes": list(self.classes),
                "ports": [[list(pair) for pair in row] for row in self.ports]}

    def to_json(self) -> str:
        """JSON text: ``{"format": "innet-topology", "version": 1, "kind", "params", "nodes",
        "labels", "classes", "ports": [[[v, p2], ...], ...]}`` with ``ports[u][p] = [v, p2]``.

        Byte-stable: one line per node's port list, no timestamps.
        """
        head = {k: v for k, v in self.to_dict().items() if k != "ports"}
        lines = [json.dumps([list(pair) for pair in row], separators=(",", ":"))
                 for row in self.ports]
        body = json.dumps(head, sort_keys=True, separators=(", ", ": "))[:-1]
        return body + ', "ports": [\n' + ",\n".join(lines) + "\n]}\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Topology:
        """Rebuild from :meth:`to_dict` output; checks the port map.

        Raises
        ------
        ValueError
            If the format, version or node count is wrong, a generator's kind lacks a
            parameter it records, or the port map is invalid.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"Topology JSON must be an object, not {type(data).__name__}")
        if data.get("format") != JSON_FORMAT:
            raise ValueError(f"Not an innet topology: format is {data.get('format')!r}, "
                             f"expected {JSON_FORMAT!r}")
        if data.get("version") != JSON_VERSION:
            raise ValueError(f"Topology JSON version {data.get('version')!r} is not supported; "
                             f"expected {JSON_VERSION}")
        missing = [k for k in ("kind", "params", "nodes", "labels", "ports") if k not in data]
        if missing:
            raise ValueError(f"Topology JSON lacks {', '.join(missing)}")
        params = data["params"]
        if not isinstance(params, Mapping):
            raise ValueError(f"Topology JSON params must be an object, not {params!r:.60}")
        lacking = [k for k in _PARAMS.get(data["kind"], ()) if k not in params]
        if lacking:
            raise ValueError(f"Topology JSON of kind {data['kind']!r} lacks the params "
                             f"{', '.join(lacking)}")
        if data["nodes"] != len(data["ports"]):
            raise ValueError(f"Topology JSON says {data['nodes']} nodes but lists ports for "
                             f"{len(data['ports'])}")
        return cls(kind=data["kind"], params=data["params"],
                   labels=tuple(tuple(label) for label in data["labels"]),
                   ports=PortMap.from_lists(data["ports"]),
                   classes=tuple(data.get("classes", ())))

    @classmethod
    def from_json(cls, text: str | bytes) -> Topology:
        """Parse :meth:`to_json` output back into an equal :class:`Topology`."""
        try:
            data = load_json(text)
        except ValueError as error:
            raise ValueError(f"Topology JSON is malformed: {error}") from None
        return cls.from_dict(data)


def check_topology(topo: object) -> Topology:
    """``topo`` if it is a :class:`Topology`.

    Raises
    ------
    TypeError
        ``Topology must be a Topology, not {type name}``.
    """
    return check_type("Topology", topo, Topology)
