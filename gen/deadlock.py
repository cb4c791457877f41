"""Deadlock check of a configuration: its channel-dependency graph must be acyclic.

Dally and Seitz ("Deadlock-Free Message Routing in Multiprocessor Interconnection Networks",
IEEE Trans. Computers C-36(5), 1987, Theorem 1): a routing is free of deadlock when the graph
whose vertices are the channels and whose edges join a channel to every channel a packet
holding it may wait for is acyclic. Here a *channel* is one virtual channel (VC) of one
switch-to-switch link direction, :class:`Channel` ``(node, port, peer, vc)``: the input buffer
of that VC at ``peer``. Endpoint ports are sources and sinks and never close a cycle, so they
are not vertices.

VC numbering is the one of :class:`innet.hw.flit.FlitParams` (``P = p2p_vcs``,
``C = collective_ids``):

- **p2p, hop-indexed**: a flit crosses its ``k``-th switch-to-switch link (``k = 0, 1, ...``) on
  VC ``min(k, P - 1)``. While every route is at most ``P`` links long a flit on VC ``h`` only
  waits for VC ``h + 1`` and the graph is acyclic (Dally and Towles, *Principles and Practices
  of Interconnection Networks*, 2004, Section 14.2, "distance classes"); PolarFly's diameter 2
  is why two VCs suffice there (PolarFly, SC'22, Section IV-D). A longer route, such as a detour
  around a failed link, stays on VC ``P - 1`` for several hops and may close a cycle there. The
  edges come from following the routing tables from every switch toward every destination.
- **collective requests**, VC ``P + c`` for id ``c``: a request that arrived on one of a switch's
  ``req_in`` ports waits for its ``req_out`` channel; at the root it turns into the response
  and waits for the ``resp_out`` channels.
- **collective responses**, VC ``P + C``, shared by every id: a response that arrived on
  ``resp_in`` waits for every ``resp_out`` channel (a multicast forks: the response holds its
  input until its last copy has left). Each id's tree is acyclic, but the union of the trees
  of all ids enabled together need not be: three ids on a triangle ``u -> v -> w``,
  ``v -> w -> u``, ``w -> u -> v`` close a cycle.

:func:`channel_graph` builds the graph from a routing table and per-id switch configurations;
:func:`image_graph` from a decoded :class:`~innet.gen.image.Image`; :meth:`ChannelGraph.cycle`
finds a shortest cycle through the smallest channel on any cycle, and :func:`check` raises
:class:`DeadlockError` naming it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from innet.gen.checks import check_int
from innet.gen.regmap.switch import MAX_P2P_VCS
from innet.gen.topology import LOCAL

__all__ = [
    "Channel",
    "ChannelGraph",
    "DeadlockError",
    "channel_graph",
    "check",
    "check_diameter",
    "diameter",
    "image_collectives",
    "image_graph",
    "image_table",
]


@dataclass(frozen=True, order=True)
class Channel:
    """One VC of one link direction: switch ``node`` sends on its port ``port`` to ``peer``.

    Attributes
    ----------
    node, port : int
        The sending switch and its network port.
    peer : int
        The receiving switch (where the VC's input buffer is).
    vc : int
        The virtual channel (see the module documentation).
    """

    node: int
    port: int
    peer: int
    vc: int


class DeadlockError(ValueError):
    """A configuration's channel-dependency graph has a cycle.

    The message is one line naming the cycle (see :meth:`ChannelGraph.describe`).

    Attributes
    ----------
    cycle : list of Channel
        The channels of the cycle, each waiting for the next, the last for the first.
    """

    def __init__(self, message: str, cycle: list[Channel]) -> None:
        super().__init__(message)
        self.cycle = cycle


class ChannelGraph:
    """The channel-dependency graph of a configuration (build it with :func:`channel_graph`).

    Dependencies are kept as integer arrays, so that a network of a thousand switches (a million
    dependencies) checks in seconds; :attr:`edges` spells them out for inspection.

    Members
    -------
    p2p_vcs, collective_ids : int
        The VC numbering (see the module documentation).
    """

    def __init__(self, p2p_vcs: int, collective_ids: int, peer: np.ndarray,
                 rows: np.ndarray) -> None:
        self.p2p_vcs = p2p_vcs
        self.collective_ids = collective_ids
        self._peer = peer
        # rows: one per reason for a dependency, (node, port, vc) waiting for (node, port, vc),
        # then the reason: a destination d >= 0 (p2p), or -1 - c (collective id c).
        self._rows = rows.reshape(-1, 7).astype(np.int64)
        self._vcs = p2p_vcs + collective_ids + 1
        src, dst = self._code(self._rows[:, 0:3]), self._code(self._rows[:, 3:6])
        self._keys = src * self._space + dst
        pairs = np.unique(self._keys)
        self._src, self._dst = pairs // self._space, pairs % self._space

    @property
    def _space(self) -> int:
        return max(1, self._peer.size * self._vcs)

    def _code(self, triples: np.ndarray) -> np.ndarray:
        node, port, vc = triples.T
        return (node * self._peer.shape[1] + port) * self._vcs + vc

    def _channel(self, code: int) -> Channel:
        spot, vc = divmod(int(code), self._vcs)
        node, port = divmod(spot, self._peer.shape[1])
        return Channel(node, port, int(self._peer[node, port]), vc)

    def __len__(self) -> int:
        """The number of dependencies."""
        return len(self._src)

    @property
    def edges(self) -> dict[tuple[Channel, Channel], frozenset[str]]:
        """Each dependency ``(holds, waits_for)`` with what makes it: ``"route d"`` (p2p routes
        toward node ``d``), ``"id c"`` (collective id ``c``)."""
        out: dict[tuple[Channel, Channel], set[str]] = {}
        for row in self._rows.tolist():
            a = Channel(row[0], row[1], int(self._peer[row[0], row[1]]), row[2])
            b = Channel(row[3], row[4], int(self._peer[row[3], row[4]]), row[5])
            out.setdefault((a, b), set()).add(_cause(row[6]))
        return {edge: frozenset(causes) for edge, causes in out.items()}

    @property
    def channels(self) -> set[Channel]:
        """Every channel that takes part in a dependency."""
        return {self._channel(c) for c in np.unique(np.concatenate([self._src, self._dst]))}

    def vc_name(self, vc: int) -> str:
        """``"p2p hop 0"``, ``"p2p hops 1 and up"`` (the last p2p VC), ``"requests of id 2"``
        or ``"responses of every id"`` for a VC number."""
        p, c = self.p2p_vcs, self.collective_ids
        if vc < p:
            if p == 1:
                return "p2p, every hop"
            return f"p2p hops {vc} and up" if vc == p - 1 else f"p2p hop {vc}"
        if vc < p + c:
            return f"requests of id {vc - p}"
        return "responses of every id"

    def cycle(self) -> list[Channel] | None:
        """A cycle of the graph, or ``None`` when it is acyclic.

        Channels that wait for nothing, or that nothing waits for, are peeled off (Kahn's
        topological sort, from both ends) until none is left (acyclic) or only cycles and the
        paths between them remain. The cycle is then a shortest one through the smallest
        channel (in :class:`Channel` order) on any cycle, so the answer does not depend on the
        order the dependencies were found in.
        """
        src, dst = _peel(self._src, self._dst)
        for start in np.unique(src).tolist():  # code order is Channel order
            path = _shortest_cycle(src, dst, start)
            if path is not None:
                return [self._channel(c) for c in path]
        return None

    def causes(self, cycle: list[Channel]) -> set[str]:
        """What makes the dependencies of a cycle: ``"route d"`` and ``"id c"`` strings."""
        triples = np.array([(c.node, c.port, c.vc) for c in cycle], dtype=np.int64)
        codes = self._code(triples)
        wanted = codes * self._space + np.roll(codes, -1)
        return {_cause(x) for x in self._rows[np.isin(self._keys, wanted), 6].tolist()}

    def describe(self, cycle: list[Channel]) -> str:
        """One line naming a cycle: the switches and ports it passes, the VC of every channel
        and what makes the dependencies, e.g. ``cyclic channel dependency 0 -(port 1, VC 1)->
        3 -(port 0, VC 1)-> 5 -(port 2, VC 1)-> 0; VC 1 = p2p hops 1 and up; from routes
        toward nodes 2, 4``."""
        hops = " ".join(f"{c.node} -(port {c.port}, VC {c.vc})->" for c in cycle)
        vcs = sorted({c.vc for c in cycle})
        names = ", ".join(f"VC {v} = {self.vc_name(v)}" for v in vcs)
        causes = self.causes(cycle)
        routes = sorted(int(x[6:]) for x in causes if x.startswith("route "))
        ids = sorted(int(x[3:]) for x in causes if x.startswith("id "))
        made = []
        if routes:
            made.append("routes toward node" + _some(routes))
        if ids:
            made.append("collective id" + _some(ids))
        return (f"cyclic channel dependency {hops} {cycle[0].node}; {names}; from "
                f"{' and '.join(made)}")


def _cause(code: int) -> str:
    return f"route {code}" if code >= 0 else f"id {-1 - code}"


def _shortest_cycle(src: np.ndarray, dst: np.ndarray, start: int) -> list[int] | None:
    """A shortest cycle through ``start`` (breadth-first from it, the smallest parent first),
    or ``None`` if it is on none."""
    parent = {start: start}
    frontier = np.array([start])
    while len(frontier):
        step = np.isin(src, frontier)
        heads, tails = src[step], dst[step]
        if (tails == start).any():
            path = [int(heads[tails == start].min())]
            while path[-1] != start:
                path.append(parent[path[-1]])
            return path[::-1]
        order = np.lexsort((heads, tails))
        tails, first = np.unique(tails[order], return_index=True)
        heads = heads[order][first]
        fresh = [(t, h) for t, h in zip(tails.tolist(), heads.tolist(), strict=True)
                 if t not in parent]
        parent.update(fresh)
        frontier = np.array([t for t, _h in fresh], dtype=np.int64)
    return None


def _peel(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges left after repeatedly removing every edge out of a vertex nothing enters and
    into a vertex nothing leaves: none for an acyclic graph, else the cycles and what joins
    them."""
    if not len(src):
        return src, dst
    nodes, index = np.unique(np.concatenate([src, dst]), return_inverse=True)
    a, b = index[:len(src)], index[len(src):]
    alive = np.ones(len(a), dtype=bool)
    while True:
        indeg = np.bincount(b[alive], minlength=len(nodes))
        outdeg = np.bincount(a[alive], minlength=len(nodes))
        drop = alive & ((indeg[a] == 0) | (outdeg[b] == 0))
        if not drop.any():
            return src[alive], dst[alive]
        alive &= ~drop


def _some(values: list[int], shown: int = 6) -> str:
    """``" 3"``, ``"s 1, 2, 3"`` or ``"s 1, 2, 3, 4, 5, 6 and 9 more"``."""
    text = ", ".join(map(str, values[:shown]))
    more = f" and {len(values) - shown} more" if len(values) > shown else ""
    return ("s " if len(values) > 1 else " ") + text + more


@functools.lru_cache(maxsize=8)
def diameter(topology: Any) -> int:
    """Hops of the topology's longest shortest path: the p2p VCs a network gets by default,
    1 for a single node (remembered for the last few topologies: a simulation, its network
    and its image each ask)."""
    import networkx as nx

    return int(nx.diameter(topology.to_networkx())) if topology.nodes > 1 else 1


def check_diameter(topology: Any) -> int:
    """The topology's :func:`diameter`, refused when a switch cannot hold as many hop-indexed
    p2p VCs (:data:`~innet.gen.regmap.MAX_P2P_VCS`), which deadlock-free minimal routing
    needs.

    Raises
    ------
    ValueError
        Naming the topology, its diameter and the limit.
    """
    hops = diameter(topology)
    if hops > MAX_P2P_VCS:
        raise ValueError(f"The {topology.title} has diameter {hops}: minimal routing needs as "
                         f"many hop-indexed p2p VCs, and a switch has at most {MAX_P2P_VCS}")
    return hops


def channel_graph(topology: Any, *, routes: Any = None,
                  collectives: Mapping[int, Iterable[Any]] | None = None,
                  p2p_vcs: int | None = None, collective_ids: int = 1) -> ChannelGraph:
    """The channel-dependency graph of routing tables and collective trees on ``topology``.

    Parameters
    ----------
    topology : Topology
        The network (its port map names each port's peer).
    routes : array-like of int, shape (N, N), optional
        ``routes[u][d]``: the port switch ``u`` forwards a p2p flit for node ``d`` on, ``LOCAL``
        (-1) to deliver it, any other negative value for no route (a
        :class:`~innet.gen.routing.Routing`'s ``table()``).
    collectives : mapping of int to iterable, optional
        Per collective id, the configured switches: objects with ``node``, ``req_in``,
        ``req_out``, ``resp_in``, ``resp_out`` (:class:`innet.gen.embed.SwitchConfig`,
        :class:`innet.gen.image.CollectiveConfig`); every id in the mapping is taken as
        enabled together with the others.
    p2p_vcs : int, optional
        Hop-indexed p2p VCs; default the topology's :func:`diameter`.
    collective_ids : int
        Collective ids of the switches (the response VC is ``p2p_vcs + collective_ids``).

    Raises
    ------
    TypeError
        If a count is not an integer.
    ValueError
        If a count is out of range, the table has the wrong shape, a route or a collective
        names a port the switch does not have, or a collective id is out of range.
    """
    n = topology.nodes
    if p2p_vcs is None:
        p = check_diameter(topology)
    else:
        p = check_int("P2p VCs", p2p_vcs, 1, MAX_P2P_VCS)
    check_int("Collective ids", collective_ids, 1)
    peer = np.asarray(topology.ports.peer, dtype=np.int64).reshape(n, -1)
    peer_port = np.asarray(topology.ports.peer_port, dtype=np.int64).reshape(n, -1)
    degree = np.asarray(topology.ports.degree, dtype=np.int64)
    rows: list[np.ndarray] = []
    if routes is not None:
        _p2p_edges(np.asarray(routes), peer, degree, p, rows)
    for c, configs in sorted((collectives or {}).items()):
        check_int("Collective id", c, 0, collective_ids - 1)
        _collective_edges(c, list(configs), peer, peer_port, degree, p + c, p + collective_ids,
                          rows)
    return ChannelGraph(p, collective_ids, peer,
                        np.concatenate(rows) if rows else np.zeros((0, 7), dtype=np.int64))


def _p2p_edges(table: np.ndarray, peer: np.ndarray, degree: np.ndarray, vcs: int,
               rows: list[np.ndarray]) -> None:
    n = len(degree)
    if table.shape != (n, n):
        raise ValueError(f"Routing table must have shape ({n}, {n}), not {table.shape}")
    if table.size and not np.issubdtype(table.dtype, np.integer):
        raise TypeError(f"Routing table must hold integer ports, not {table.dtype}")
    table = table.astype(np.int64)
    forward = table >= 0
    bad = forward & (table >= degree[:, None])
    if bad.any():
        u, d = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"Routing table entry [{u}, {d}] names port {int(table[u, d])}, but "
                         f"node {u} has {int(degree[u])} ports")
    # Next switch of every (switch, destination) pair that forwards on a network port.
    nxt = np.where(forward, peer[np.arange(n)[:, None], np.where(forward, table, 0)], -1)
    # Pairs a flit can be at having crossed k links; at k >= vcs - 1 the VC no longer changes,
    # so the last class is closed under forwarding (a routing loop then loops inside it).
    state = forward.copy()
    for k in range(vcs):
        u, d = np.nonzero(state)
        v = nxt[u, d]
        onward = forward[v, d]
        u, d, v = u[onward], d[onward], v[onward]
        if k < vcs - 1:
            rows.append(_p2p_rows(table, u, d, v, k, k + 1))
            state = np.zeros_like(forward)
            state[v, d] = True
            continue
        closed = state.copy()
        while len(u):
            rows.append(_p2p_rows(table, u, d, v, k, k))
            fresh = ~closed[v, d]
            closed[v[fresh], d[fresh]] = True
            u, d = v[fresh], d[fresh]
            v = nxt[u, d]
            onward = forward[v, d]
            u, d, v = u[onward], d[onward], v[onward]


def _p2p_rows(table: np.ndarray, u: np.ndarray, d: np.ndarray, v: np.ndarray, vc_in: int,
              vc_out: int) -> np.ndarray:
    """The dependencies of flits toward ``d`` that cross ``u -> v`` on ``vc_in`` and then leave
    ``v`` on ``vc_out`` (rows of :class:`ChannelGraph`)."""
    return np.stack([u, table[u, d], np.full_like(u, vc_in), v, table[v, d],
                     np.full_like(u, vc_out), d], axis=1)


def _collective_edges(c: int, configs: list[Any], peer: np.ndarray, peer_port: np.ndarray,
                      degree: np.ndarray, req_vc: int, resp_vc: int,
                      rows: list[np.ndarray]) -> None:
    def out(u: int, port: int, vc: int, what: str) -> tuple[int, int, int]:
        if not 0 <= port < degree[u]:
            raise ValueError(f"Collective id {c}: switch {u} {what} names port {port}, but "
                             f"node {u} has {int(degree[u])} ports")
        return (u, port, vc)

    def into(u: int, port: int, vc: int, what: str) -> tuple[int, int, int]:
        out(u, port, vc, what)  # the link arriving on `port` leaves the peer on its port
        return (int(peer[u, port]), int(peer_port[u, port]), vc)

    found: list[tuple[int, ...]] = []
    for x in configs:
        u = int(x.node)
        ins = [into(u, q, req_vc, "req_in") for q in sorted(x.req_in) if q != LOCAL]
        if x.req_out is not None:
            waits = [out(u, x.req_out, req_vc, "req_out")]
        elif x.resp_in is None:  # the root: the reduced requests become the response
            waits = [out(u, q, resp_vc, "resp_out") for q in sorted(x.resp_out) if q != LOCAL]
        else:
            waits = []
        found += [(*a, *b, -1 - c) for a in ins for b in waits]
        if x.resp_in is not None and x.resp_in != LOCAL:
            a = into(u, x.resp_in, resp_vc, "resp_in")
            found += [(*a, *out(u, q, resp_vc, "resp_out"), -1 - c)
                      for q in sorted(x.resp_out) if q != LOCAL]
    rows.append(np.array(found, dtype=np.int64).reshape(-1, 7))


def image_table(image: Any) -> np.ndarray:
    """The ``(N, N)`` p2p routing table an image's ``route[d]`` registers program (``LOCAL`` for
    the local port, -2 where no entry is valid)."""
    n, radix = image.nodes, image.params.radix
    table = np.full((n, n), -2, dtype=np.int64)
    for u in image.switches():
        if u in image.failed_switches:
            continue
        for name, entry in image.values(u).items():
            if name.startswith("route[") and entry["valid"]:
                d = int(name[6:-1])
                if d < n:
                    table[u, d] = LOCAL if entry["port"] == radix else entry["port"]
    return table


def image_collectives(image: Any) -> dict[int, list[Any]]:
    """Per enabled collective id, the switch configurations an image's ``coll[c]`` registers
    program (:class:`innet.gen.image.CollectiveConfig`)."""
    from innet.gen.image.validate import CollectiveConfig
    from innet.gen.ops import DType, Op
    from innet.gen.regmap import mask_ports

    radix = image.params.radix
    out: dict[int, list[Any]] = {}
    for u in image.switches():
        values = image.values(u)
        for c in range(image.params.collective_ids):
            ctrl = values.get(f"coll[{c}].ctrl")
            if not ctrl or not ctrl["enable"]:
                continue
            reg = {name: values.get(f"coll[{c}].{name}", {})
                   for name in ("req_in", "req_out", "resp_in", "resp_out")}
            root = bool(reg["req_out"].get("root", 0))
            req_in = frozenset(mask_ports(reg["req_in"].get("ports", 0), radix))
            resp_out = frozenset(mask_ports(reg["resp_out"].get("ports", 0), radix))
            out.setdefault(c, []).append(CollectiveConfig(
                node=u, root=root, req_in=req_in,
                req_out=None if root or not req_in else reg["req_out"].get("port", 0),
                resp_in=None if root or not resp_out else reg["resp_in"].get("port", 0),
                resp_out=resp_out, op=Op(ctrl["op"]), dtype=DType(ctrl["dtype"])))
    return out


def image_graph(image: Any, p2p_vcs: int | None = None) -> ChannelGraph:
    """The channel-dependency graph of a decoded image: its routing tables and every
    collective id it enables (see :func:`channel_graph`)."""
    return channel_graph(image.topology, routes=image_table(image),
                         collectives=image_collectives(image), p2p_vcs=p2p_vcs,
                         collective_ids=image.params.collective_ids)


def check(graph: ChannelGraph) -> None:
    """Raise :class:`DeadlockError` if the graph has a cycle.

    Raises
    ------
    DeadlockError
        Naming the cycle: ``Deadlock: cyclic channel dependency 0 -(port 1, VC 1)-> 3 ...``.
    """
    cycle = graph.cycle()
    if cycle is not None:
        raise DeadlockError(f"Deadlock: {graph.describe(cycle)}", cycle)
