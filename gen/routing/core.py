"""The :class:`Routing` type: a deterministic next-hop function with its full table.

A routing answers "on which port does switch ``u`` forward a packet for ``dest``?" for any
arrays of ``(u, dest)`` pairs (:meth:`Routing.next_port`), and materialises the whole
``N x N`` table (:meth:`Routing.table`) in the smallest integer dtype.

Conventions (the cross-team port contract):

- entries are the topology's port numbers ``0..deg(u)-1``;
- ``table[u, u] == LOCAL`` (``-1``): a packet at its destination leaves on the local port;
- :meth:`Routing.hardware_table` is the register form, where the local port is ``radix``
  (``route[d].port`` of the switch register map).

Algorithms (chosen by :func:`routing`):

- ``"cross-product"``: PolarFly ER_q, PolarFly (SC'22) Section IV-D, Eq. 2;
- ``"dimension-order"``: HyperX, torus and mesh, lowest dimension first
  (see :mod:`innet.gen.routing.grid` for the torus tie-break);
- ``"shortest-path"``: any topology, optionally with failed links or switches: breadth-first
  distances, then at each switch the lowest-numbered port one hop closer
  (see :mod:`innet.gen.routing.generic`);
- ``"piuma"``: multi-level PIUMA networks: dimension order between nodes, latency-shortest
  paths inside them (see :mod:`innet.gen.routing.piuma`);
- ``"shortest-latency"``: any topology with link latencies (a PIUMA network's own, or given),
  optionally with failures: the lowest-numbered port on a latency-shortest path
  (see :mod:`innet.gen.routing.latency`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from innet.gen.topology import LOCAL, Topology, check_topology

__all__ = [
    "ALGORITHMS",
    "MAX_TABLE_ENTRIES",
    "UNREACHABLE",
    "Routing",
    "check_nodes",
    "check_pairs",
    "check_table_size",
    "hardware_dtype",
    "port_dtype",
    "routing",
    "routing_from_table",
]

#: Routing algorithms :func:`routing` accepts (``"auto"`` picks by topology kind).
ALGORITHMS = ("auto", "cross-product", "dimension-order", "shortest-path", "piuma",
              "shortest-latency")

#: Table entry for a destination that cannot be reached (only with failures).
UNREACHABLE = -2

#: Most entries of a full routing table (:meth:`Routing.table`; 2 GiB of int8, about 46,000
#: nodes).
MAX_TABLE_ENTRIES = 1 << 31

#: Sources per block when a table is materialised (bounds temporaries to ~block * N entries).
_BLOCK_ENTRIES = 1 << 22


def port_dtype(radix: int) -> np.dtype:
    """The smallest signed integer dtype holding ports ``0..radix-1`` and ``LOCAL`` (-1)."""
    for dtype in (np.int8, np.int16, np.int32):
        if radix - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)  # pragma: no cover - radix beyond 2**31 cannot be built


def hardware_dtype(radix: int) -> np.dtype:
    """The smallest unsigned dtype holding hardware port codes ``0..radix`` (local = radix)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if radix <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)  # pragma: no cover


def check_nodes(topo: Topology, name: str, values: Any) -> np.ndarray:
    """``values`` as an int64 array of node ids of ``topo``.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology or the values are not integers.
    ValueError
        If a value is not a node of ``topo``.
    """
    check_topology(topo)
    array = np.asarray(values)
    if array.dtype == object or array.dtype == bool or not (
            array.size == 0 or np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{name} must be node ids (integers), not {values!r:.60}")
    array = array.astype(np.int64, copy=False)
    bad = np.flatnonzero((array < 0) | (array >= topo.nodes))
    if len(bad):
        raise ValueError(f"{name} names node {array.flat[bad[0]]}, outside 0..{topo.nodes - 1}")
    return array


def check_table_size(nodes: int) -> None:
    """Refuse a full routing table of ``nodes x nodes`` entries above
    :data:`MAX_TABLE_ENTRIES`."""
    if nodes * nodes > MAX_TABLE_ENTRIES:
        raise ValueError(f"A routing table of {nodes:,} x {nodes:,} entries is too large; at "
                         f"most {MAX_TABLE_ENTRIES:,} are supported")


def check_pairs(topo: Topology, src: Any, dst: Any, names: tuple[str, str] = (
        "Source", "Destination")) -> tuple[np.ndarray, np.ndarray]:
    """``src`` and ``dst`` as node ids of ``topo`` (:func:`check_nodes`), broadcast against
    each other; ``names`` name them in errors.

    Raises
    ------
    TypeError
        As :func:`check_nodes`.
    ValueError
        As :func:`check_nodes`, or if the two shapes do not broadcast together.
    """
    s = check_nodes(topo, names[0], src)
    d = check_nodes(topo, names[1], dst)
    try:
        s, d = np.broadcast_arrays(s, d)
    except ValueError:
        raise ValueError(f"{names[0]} and {names[1].lower()} must broadcast together, not "
                         f"shapes {s.shape} and {d.shape}") from None
    return s, d


@dataclass(frozen=True, eq=False)
class Routing:
    """A deterministic minimal routing on a topology.

    Build one with :func:`routing`. Instances are immutable; the full table is computed on
    first use of :meth:`table` and cached.

    Members
    -------
    topology : Topology
        The network.
    algorithm : str
        ``"cross-product"``, ``"dimension-order"``, ``"shortest-path"``, ``"piuma"`` or
        ``"shortest-latency"``.
    failed_links : tuple of (int, int)
        Links (``u < v``) the routing avoids (``"shortest-path"`` only).
    failed_switches : tuple of int
        Switches the routing avoids (``"shortest-path"`` and ``"shortest-latency"`` only).
    """

    topology: Topology
    algorithm: str
    failed_links: tuple[tuple[int, int], ...] = ()
    failed_switches: tuple[int, ...] = ()
    _impl: Any = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        extra = ""
        if self.failed_links or self.failed_switches:
            extra = (f", failed_links={len(self.failed_links)}, "
                     f"failed_switches={len(self.failed_switches)}")
        return f"Routing({self.algorithm}, {self.topology!r}{extra})"

    @property
    def nodes(self) -> int:
        """The number of nodes (and of table rows and columns)."""
        return self.topology.nodes

    @property
    def dtype(self) -> np.dtype:
        """The dtype of :meth:`table`: the smallest signed type for ``LOCAL..radix-1``."""
        return port_dtype(self.topology.radix)

    def next_port(self, node: Any, dest: Any) -> Any:
        """The output port at ``node`` toward ``dest`` (``LOCAL`` where ``node == dest``).

        ``node`` and ``dest`` are integers or broadcastable integer arrays; the result has
        their broadcast shape (a plain ``int`` for scalar inputs). :data:`UNREACHABLE` (-2)
        marks a destination that cannot be reached (only possible with failures).

        Raises
        ------
        TypeError, ValueError
            If an argument is not a node id of the topology, or the two shapes do not
            broadcast together.
        """
        scalar = np.ndim(node) == 0 and np.ndim(dest) == 0
        u, d = check_pairs(self.topology, node, dest, ("Node", "Destination"))
        out = self._impl.next_port(u.reshape(-1), d.reshape(-1)).reshape(u.shape)
        return int(out) if scalar else out

    def column(self, dest: int) -> np.ndarray:
        """``table[:, dest]``: every node's output port toward ``dest`` (read-only)."""
        d = int(check_nodes(self.topology, "Destination", dest))
        key = ("column", d)
        if key not in self._cache:
            if "table" in self._cache:
                col = np.ascontiguousarray(self._cache["table"][:, d])
            elif hasattr(self._impl, "column"):
                col = self._impl.column(d).astype(self.dtype)
            else:
                n = self.nodes
                col = self._impl.next_port(np.arange(n), np.full(n, d)).astype(self.dtype)
            col.flags.writeable = False
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = col
        return self._cache[key]

    def table(self) -> np.ndarray:
        """The full routing table: ``table[u, dest]`` = output port, ``LOCAL`` on the diagonal.

        An ``N x N`` read-only array of :attr:`dtype` (``int8`` up to radix 128).

        Raises
        ------
        ValueError
            If ``N x N`` exceeds :data:`MAX_TABLE_ENTRIES`.
        """
        if "table" not in self._cache:
            n = self.nodes
            check_table_size(n)
            out = np.empty((n, n), dtype=self.dtype)
            fill = getattr(self._impl, "fill_rows", None)
            block = max(1, _BLOCK_ENTRIES // max(n, 1))
            dests = np.arange(n)
            for start in range(0, n, block):
                stop = min(n, start + block)
                if fill is not None:
                    fill(start, stop, out[start:stop])
                else:
                    u = np.repeat(np.arange(start, stop), n)
                    out[start:stop] = self._impl.next_port(
                        u, np.tile(dests, stop - start)).reshape(stop - start, n)
            out.flags.writeable = False
            self._cache["table"] = out
        return self._cache["table"]

    def hardware_table(self) -> np.ndarray:
        """The table in register form: ``LOCAL`` becomes ``radix`` (the switch's local port).

        Unsigned, the smallest dtype holding ``0..radix``.

        Raises
        ------
        ValueError
            If some destination is unreachable from some switch (a failure split the network).
        """
        table = self.table()
        bad = np.argwhere(table < LOCAL)
        if len(bad):
            u, d = bad[0]
            raise ValueError(f"Node {d} cannot be reached from node {u}; the table has no "
                             f"register form")
        radix = self.topology.radix
        return np.where(table == LOCAL, radix, table).astype(hardware_dtype(radix))


def _normalise_failures(topo: Topology, failed_links: Iterable[Any] | None,
                        failed_switches: Iterable[Any] | None
                        ) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    from innet.gen.routing.generic import parse_failures

    return parse_failures(topo, failed_links, failed_switches)


def routing(topo: Topology, algorithm: str = "auto", *,
            failed_links: Iterable[Any] | None = None,
            failed_switches: Iterable[Any] | None = None,
            latencies: Any = None) -> Routing:
    """The deterministic minimal routing of a topology.

    Parameters
    ----------
    topo : Topology
        The network.
    algorithm : str
        ``"auto"`` (default): cross product on an unexpanded PolarFly, dimension order on
        HyperX, torus and mesh, ``"piuma"`` on a PIUMA network, shortest path otherwise and
        whenever failures are given. Or name one of ``"cross-product"``,
        ``"dimension-order"``, ``"shortest-path"``, ``"piuma"``, ``"shortest-latency"``.
    failed_links : iterable of (int, int), optional
        Links to avoid, as node pairs; forces ``"shortest-path"``.
    failed_switches : iterable of int, optional
        Switches to avoid; forces ``"shortest-path"`` (unless ``"shortest-latency"`` is
        named). Packets to a failed switch are unreachable (``-2``).
    latencies : array or mapping, optional
        Link latencies for ``"shortest-latency"``: an ``(N, radix)`` array or ``{(u, v):
        latency}`` for every link (:func:`innet.gen.routing.latency.check_weights`); default
        the topology's own (PIUMA networks).

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology or ``algorithm`` is not a string.
    ValueError
        If the algorithm is unknown or does not apply to the topology, a failure names
        a link or node that does not exist, or latencies are missing or invalid.
    """
    check_topology(topo)
    if not isinstance(algorithm, str):
        raise TypeError(f"Algorithm must be a string, not {algorithm!r:.60}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"Routing algorithm must be one of {', '.join(ALGORITHMS)}, not "
                         f"{algorithm!r}")
    links, switches = _normalise_failures(topo, failed_links, failed_switches)
    failed = bool(links or switches)
    from innet.gen.topology.piuma import is_piuma

    if latencies is not None and algorithm != "shortest-latency":
        raise ValueError(f"Latencies apply to the 'shortest-latency' routing, not "
                         f"{algorithm!r}")
    if algorithm == "auto":
        from innet.gen.routing.grid import is_grid
        from innet.gen.routing.polarfly import is_er_graph

        if failed:
            algorithm = "shortest-path"
        elif is_er_graph(topo):
            algorithm = "cross-product"
        elif is_grid(topo):
            algorithm = "dimension-order"
        elif is_piuma(topo):
            algorithm = "piuma"
        else:
            algorithm = "shortest-path"
    elif failed and algorithm not in ("shortest-path", "shortest-latency"):
        raise ValueError(f"Routing algorithm {algorithm!r} cannot avoid failures; use "
                         f"'shortest-path' or 'auto'")
    if algorithm == "piuma":
        from innet.gen.routing.piuma import hierarchical

        if not is_piuma(topo):
            raise ValueError(f"PIUMA routing needs a PIUMA network, not {topo.kind}")
        impl: Any = hierarchical(topo)
    elif algorithm == "shortest-latency":
        from innet.gen.routing.generic import alive_ports
        from innet.gen.routing.latency import ShortestLatency, check_weights

        if latencies is None:
            if not is_piuma(topo):
                raise ValueError(f"Routing 'shortest-latency' needs link latencies "
                                 f"(latencies=...) on a {topo.kind} network")
            from innet.gen.topology.piuma import link_latency_array

            latencies = link_latency_array(topo)
        weights = check_weights(topo, latencies)
        alive = alive_ports(topo, links, switches) if failed else None
        impl = ShortestLatency(topo, weights, alive)
    elif algorithm == "cross-product":
        from innet.gen.routing.polarfly import CrossProduct

        impl = CrossProduct(topo)
    elif algorithm == "dimension-order":
        from innet.gen.routing.grid import DimensionOrder

        impl = DimensionOrder(topo)
    else:
        from innet.gen.routing.generic import ShortestPath

        impl = ShortestPath(topo, links, switches)
    return Routing(topology=topo, algorithm=algorithm, failed_links=links,
                   failed_switches=switches, _impl=impl)


class _Table:
    """Next-hop function read from an explicit table."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table

    def next_port(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        return self.table[u, d].astype(np.int64)

    def fill_rows(self, start: int, stop: int, out: np.ndarray) -> None:
        out[:] = self.table[start:stop]


def routing_from_table(topo: Topology, table: Any) -> Routing:
    """A :class:`Routing` that follows an explicit ``N x N`` table (algorithm ``"table"``).

    Use it for tables decoded from switch registers or loaded from a file. Hardware codes
    (local port = ``radix``) are accepted too and converted to ``LOCAL``.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology or the table does not hold integers.
    ValueError
        If the table is not ``N x N``, an entry names a port its switch does not have, the
        diagonal is not the local port, or an off-diagonal entry is.
    """
    check_topology(topo)
    array = np.asarray(table)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"A routing table must hold integers, not {array.dtype}")
    n, radix = topo.nodes, topo.radix
    if array.shape != (n, n):
        raise ValueError(f"A routing table of {n} nodes must have shape ({n}, {n}), not "
                         f"{array.shape}")
    array = array.astype(np.int64)
    array = np.where(array == radix, LOCAL, array)
    degree = topo.ports.degree.astype(np.int64)[:, None]
    diagonal = np.eye(n, dtype=bool)
    bad = np.argwhere(~diagonal & ~(((array >= 0) & (array < degree))
                                    | (array == UNREACHABLE)))
    if len(bad):
        u, d = bad[0]
        raise ValueError(f"Routing table entry [{u}, {d}] = {array[u, d]} is not a network "
                         f"port of node {u} (0..{degree[u, 0] - 1})")
    bad = np.flatnonzero(np.diagonal(array) != LOCAL)
    if len(bad):
        u = bad[0]
        raise ValueError(f"Routing table entry [{u}, {u}] = {array[u, u]} must be the local "
                         f"port")
    out = array.astype(port_dtype(radix))
    out.flags.writeable = False
    result = Routing(topology=topo, algorithm="table", _impl=_Table(out))
    result._cache["table"] = out
    return result
