"""PIUMA's dynamic embedding of an in-network collective (PIUMA, "Allreduce Embedding").

Only the root is chosen up front (see :mod:`innet.gen.embed.root`); the rest of the tree is
built alongside the embedding: every participant's input follows its minimal path to the root
(the routing tables of :mod:`innet.gen.routing`: dimension order on HyperX, torus and mesh, the
unique minimal path on PolarFly), and a reduction happens wherever paths meet, because every
switch forwards everything it receives for the collective on one port. The response
(broadcast) tree is the inverse mapping: each switch's response arrives where its request left
and is multicast to the ports its requests came from.

With failed links or switches the paths are minimal on what remains: at each switch the
routing's usual port is kept when it is still alive and still one hop closer to the root,
otherwise the lowest-numbered live port one hop closer is taken. PIUMA does not treat
failures; this keeps the tree unchanged wherever the failures do not matter.

On a multi-level PIUMA network (without failures) paths and root are chosen by link latency:
see :mod:`innet.gen.embed.piuma`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from innet.gen.embed.root import select_root
from innet.gen.embed.types import KINDS, Embedding, SwitchConfig
from innet.gen.ops import DType, Op, check_supported
from innet.gen.regmap import MAX_COLLECTIVE_IDS
from innet.gen.routing import (
    Routing,
    alive_ports,
    bfs_distances,
    hop_distances,
    parse_failures,
    routing,
)
from innet.gen.topology import LOCAL, Topology, check_topology

__all__ = ["check_collective_id", "check_kind", "check_participants", "embed",
           "tree_ports"]

_ROUTINGS: dict[str, Routing] = {}


def _routing(topo: Topology) -> Routing:
    """The default routing of ``topo``, cached by fingerprint (a few recent topologies)."""
    key = topo.fingerprint
    if key not in _ROUTINGS:
        if len(_ROUTINGS) >= 4:
            _ROUTINGS.pop(next(iter(_ROUTINGS)))
        _ROUTINGS[key] = routing(topo)
    return _ROUTINGS[key]


def check_kind(kind: object) -> str:
    """Validate a collective kind.

    Raises
    ------
    ValueError
        If it is not one of :data:`KINDS`.
    """
    if kind not in KINDS:
        raise ValueError(f"Kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return str(kind)


def check_collective_id(value: object) -> int:
    """Validate a collective id (``0 <= id < MAX_COLLECTIVE_IDS``).

    Raises
    ------
    TypeError
        If it is not an integer.
    ValueError
        If it is out of range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"Collective id must be an integer, not {value!r:.60}")
    if not 0 <= value < MAX_COLLECTIVE_IDS:
        raise ValueError(f"Collective id must be between 0 and {MAX_COLLECTIVE_IDS - 1}, not "
                         f"{value}")
    return int(value)


def check_participants(topo: Topology, participants: Iterable[Any] | None,
                       dead: Iterable[int] = ()) -> np.ndarray:
    """Participants as a sorted int64 array; ``None`` means every switch that has not failed.

    Raises
    ------
    TypeError
        If a participant is not an integer.
    ValueError
        If the list is empty, names a node twice or out of range, or names a failed switch;
        or if every switch has failed.
    """
    dead = set(dead)
    if participants is None:
        alive = [u for u in range(topo.nodes) if u not in dead]
        if not alive:
            raise ValueError(f"All {topo.nodes} switches have failed: no participant is left")
        return np.array(alive, dtype=np.int64)
    if isinstance(participants, (str, bytes)):
        raise TypeError(f"Participants must be node ids, not {participants!r:.60}")
    values = list(participants)
    for p in values:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"A participant must be a node id, not {p!r:.60}")
        if not 0 <= p < topo.nodes:
            raise ValueError(f"Participant {p} is outside 0..{topo.nodes - 1}")
    if not values:
        raise ValueError("Participants must name at least one node")
    parts = np.array(values, dtype=np.int64)
    uniq, counts = np.unique(parts, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"Participant {uniq[counts > 1][0]} is listed twice")
    for p in uniq:
        if int(p) in dead:
            raise ValueError(f"Participant {p} is a failed switch")
    return uniq


def _check_root(topo: Topology, root: object, dead: set[int]) -> int | None:
    if root is None or (isinstance(root, str) and root == "auto"):
        return None
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
        raise TypeError(f"Root must be a node id or 'auto', not {root!r:.60}")
    if not 0 <= root < topo.nodes:
        raise ValueError(f"Root {root} is outside 0..{topo.nodes - 1}")
    if int(root) in dead:
        raise ValueError(f"Root {root} is a failed switch")
    return int(root)


def tree_ports(topo: Topology, root: int, dist: np.ndarray, alive: np.ndarray | None = None,
               preferred: np.ndarray | None = None) -> np.ndarray:
    """Every node's port toward ``root`` on a minimal path (``LOCAL`` at the root, ``-2`` where
    unreachable), given hop distances ``dist`` from the root.

    Without ``alive`` this is ``preferred`` (the routing's column). With it, ``preferred`` is
    kept where it is alive and one hop closer, else the lowest such live port is taken.
    """
    peer = topo.ports.peer
    n = topo.nodes
    if alive is None:
        return preferred
    nbr_dist = dist[np.where(peer >= 0, peer, 0)]
    closer = alive & (nbr_dist == (dist - 1)[:, None]) & (dist > 0)[:, None]
    lowest = np.where(closer.any(axis=1), closer.argmax(axis=1), -2)
    if preferred is not None:
        pref = np.asarray(preferred, dtype=np.int64)
        usable = pref >= 0
        rows = np.flatnonzero(usable)
        usable[rows] = closer[rows, pref[rows]]
        lowest = np.where(usable, pref, lowest)
    out = np.where(np.arange(n) == root, LOCAL, lowest)
    return out


def embed(topo: Topology, participants: Iterable[int] | None = None, *,
          root: int | str | None = "auto", kind: str = "allreduce", op: Op | str = "add",
          dtype: DType | str = "int32", collective_id: int = 0,
          failed_links: Iterable[Any] | None = None,
          failed_switches: Iterable[int] | None = None) -> Embedding:
    """Embed an in-network collective by PIUMA's dynamic embedding (see the module docstring).

    Parameters
    ----------
    topo : Topology
        The network.
    participants : iterable of int, optional
        Participating nodes (default: every switch that has not failed).
    root : int or "auto"
        The root switch; ``"auto"`` (default) picks the minimum-eccentricity participant with
        the tie-break of :mod:`innet.gen.embed.root` (on a PIUMA network: by latency,
        :mod:`innet.gen.embed.piuma`). A reduce or broadcast root must be a
        participant.
    kind : str
        ``"allreduce"`` (default), ``"reduce"``, ``"broadcast"`` or ``"barrier"``.
    op, dtype : Op/DType or str
        Reduction operation and element type (:mod:`innet.gen.ops`).
    collective_id : int
        The collective id (register copy) to configure.
    failed_links : iterable of (u, v) or "u-v", optional
        Links that must not be used.
    failed_switches : iterable of int, optional
        Switches that must not be used.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range, the operation is not defined on the type, a failure
        names something that does not exist, or a participant cannot be reached from the root
        on what remains ("Participant 7 cannot reach root 0 ...").
    """
    check_topology(topo)
    kind = check_kind(kind)
    op, dtype = Op.parse(op), DType.parse(dtype)
    check_supported(op, dtype)
    cid = check_collective_id(collective_id)
    links, dead = parse_failures(topo, failed_links, failed_switches)
    parts = check_participants(topo, participants, dead)
    fixed = _check_root(topo, root, set(dead))
    alive = alive_ports(topo, links, dead) if (links or dead) else None
    if fixed is not None and kind in ("reduce", "broadcast") and fixed not in set(parts.tolist()):
        raise ValueError(f"Root {fixed} of a {kind} must be a participant")

    route = _routing(topo)
    if alive is None and route.algorithm == "piuma":  # by latency (gen.embed.piuma)
        from innet.gen.embed.piuma import piuma_root, tree_levels

        root_node = fixed if fixed is not None else piuma_root(topo, parts)
        ports = route.column(root_node)
        dist = tree_levels(topo, ports, root_node)
        return _assemble(topo, kind, op, dtype, cid, root_node, parts, ports,
                         int(dist[parts].max(initial=0)), links, dead)
    if fixed is None:
        root_node, dist = select_root(topo, parts, alive)
    else:
        root_node = fixed
        dist = (bfs_distances(topo, root_node, alive) if alive is not None
                else hop_distances(topo, root_node, np.arange(topo.nodes)).astype(np.int32))
    missing = parts[dist[parts] < 0]
    if len(missing):
        raise ValueError(f"Participant {missing[0]} cannot reach root {root_node}: the failed "
                         f"links and switches cut it off")
    ports = tree_ports(topo, root_node, dist, alive, route.column(root_node))
    return _assemble(topo, kind, op, dtype, cid, root_node, parts, ports,
                     int(dist[parts].max(initial=0)), links, dead)


def _tree_nodes(topo: Topology, root: int, parts: np.ndarray, ports: np.ndarray) -> np.ndarray:
    """The switches on the participants' paths to the root, ascending."""
    peer = topo.ports.peer
    member = np.zeros(topo.nodes, dtype=bool)
    member[root] = True
    cur = parts
    while len(cur):
        member[cur] = True
        cur = cur[cur != root]
        nxt = peer[cur, ports[cur]].astype(np.int64)
        cur = np.unique(nxt[~member[nxt]])
    return np.flatnonzero(member)


def _assemble(topo: Topology, kind: str, op: Op, dtype: DType, cid: int, root: int,
              parts: np.ndarray, ports: np.ndarray, depth: int,
              failed_links: tuple, failed_switches: tuple) -> Embedding:
    peer, peer_port = topo.ports.peer, topo.ports.peer_port
    nodes = _tree_nodes(topo, root, parts, ports)
    child = nodes[nodes != root]
    up = ports[child].astype(np.int64)
    parent = peer[child, up].astype(np.int64)
    parent_port = peer_port[child, up].astype(np.int64)
    order = np.lexsort((parent_port, parent))
    heads, starts = np.unique(parent[order], return_index=True)
    groups = np.split(parent_port[order], starts[1:]) if len(order) else []
    below = {h: g.tolist() for h, g in zip(heads.tolist(), groups, strict=True)}
    member = set(parts.tolist())
    out_port = dict(zip(child.tolist(), up.tolist(), strict=True))
    switches = []
    for u in nodes.tolist():
        down = below.get(u, [])
        here = [LOCAL] if u in member else []
        toward = out_port.get(u)  # None at the root
        if kind in ("allreduce", "barrier"):
            req_in = resp_out = frozenset(down + here)
            req_out = resp_in = toward
        elif kind == "reduce":
            req_in, req_out = frozenset(down + here), toward
            resp_in, resp_out = None, frozenset([LOCAL] if u == root else [])
        else:  # broadcast: the root's input goes down the response tree
            req_in = frozenset([LOCAL] if u == root else [])
            req_out = None
            resp_in, resp_out = toward, frozenset(down + here)
        switches.append(SwitchConfig(u, req_in, req_out, resp_in, resp_out))
    links = tuple(zip(child.tolist(), up.tolist(), parent.tolist(), parent_port.tolist(),
                      strict=True))
    return Embedding(kind=kind, op=op, dtype=dtype, root=root,
                     participants=tuple(parts.tolist()), collective_id=cid,
                     switches=tuple(switches), depth=depth, links=links,
                     topology=topo.fingerprint, failed_links=tuple(failed_links),
                     failed_switches=tuple(failed_switches))
