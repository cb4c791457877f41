"""The embedding verifier: one clear ``ValueError`` for the first property an embedding breaks.

Used by the tests and by the configuration-image decoder (which rebuilds embeddings from the
switch registers with :func:`innet.gen.embed.reconstruct`). Checked, per embedding:

1. it belongs to this topology (fingerprint), its kind, op/dtype pair, collective id, root and
   participants are valid, its switches are distinct nodes, every port it names exists on its
   switch and none is a failed switch or on a failed link;
2. **every participant contributes exactly once**: the local port is a request input exactly
   at the participants' switches (at the root only, for a broadcast), and the result is
   delivered locally exactly where the kind says;
3. **request edges form a tree into the root**: every configured switch but the root points
   toward the root on one port, the switch behind it is configured and lists the arriving port
   as an input, every input it lists is fed by such a switch, and following the pointers never
   loops (for a broadcast the tree is the response tree, ``resp_in`` pointing up);
4. **every directed link is used at most once per collective id in each direction class**
   (request, response): within one tree this follows from 3; across several embeddings on one
   id :func:`innet.gen.embed.check_disjoint` checks it (``verify`` does, given a list);
5. **depth = the root's eccentricity over the participants** (hop distances on the network
   without the embedding's failed links and switches), and the recorded depth matches; on a
   multi-level PIUMA network (no failures) a tree whose depth is not the hop eccentricity
   must instead be PIUMA's latency tree (:func:`innet.gen.embed.piuma.hierarchy_violation`:
   one node link out of every node, each a HyperX hop closer to the root's node,
   latency-shortest paths inside the nodes) or reach the root on latency-shortest paths
   (:func:`innet.gen.embed.piuma.latency_minimal`);
6. **no switch is configured that has no participant below it**;
7. the response configuration is the inverse of the request tree (``resp_in == req_out``,
   ``resp_out == req_in``; for a reduce only the root delivers; for a broadcast the response
   tree's multicast sets are its children plus the local port of participants), and the
   recorded ``links`` are the tree's request links.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from innet.gen.embed.types import KINDS, Embedding
from innet.gen.ops import DType, Op, is_supported
from innet.gen.regmap import MAX_COLLECTIVE_IDS
from innet.gen.routing import alive_ports, bfs_distances, parse_failures
from innet.gen.topology import LOCAL, Topology, check_topology

__all__ = ["verify"]


def _fmt(ports) -> str:
    if ports is None:
        return "None"
    if isinstance(ports, int):
        return "local" if ports == LOCAL else str(ports)
    items = [str(p) for p in sorted(p for p in ports if p != LOCAL)]
    if LOCAL in ports:
        items.append("local")
    return "{" + ", ".join(items) + "}"


def _check_header(e: Embedding, topo: Topology) -> None:
    if e.topology != topo.fingerprint:
        raise ValueError(f"Embedding was made for topology {e.topology[:16]}, not "
                         f"{topo.fingerprint[:16]}")
    if e.kind not in KINDS:
        raise ValueError(f"Kind must be one of {', '.join(KINDS)}, not {e.kind!r}")
    if not isinstance(e.op, Op) or not isinstance(e.dtype, DType):
        raise ValueError(f"Op and dtype must be Op and DType codes, not {e.op!r} and "
                         f"{e.dtype!r}")
    if not is_supported(e.op, e.dtype):
        raise ValueError(f"Operation {e.op.name.lower()} is not defined on "
                         f"{e.dtype.name.lower()}")
    if not 0 <= e.collective_id < MAX_COLLECTIVE_IDS:
        raise ValueError(f"Collective id {e.collective_id} is outside "
                         f"0..{MAX_COLLECTIVE_IDS - 1}")
    n = topo.nodes
    if not e.participants:
        raise ValueError("Embedding has no participants")
    parts = list(e.participants)
    if any(b <= a for a, b in itertools.pairwise(parts)):
        raise ValueError("Participants must be listed once each, in ascending order")
    if parts[0] < 0 or parts[-1] >= n:
        bad = parts[0] if parts[0] < 0 else parts[-1]
        raise ValueError(f"Participant {bad} is outside 0..{n - 1}")
    if not 0 <= e.root < n:
        raise ValueError(f"Root {e.root} is outside 0..{n - 1}")
    if e.kind in ("reduce", "broadcast") and e.root not in set(parts):
        raise ValueError(f"Root {e.root} of a {e.kind} must be a participant")


def _check_ports(e: Embedding, topo: Topology, alive: np.ndarray, dead: set[int]) -> None:
    peer = topo.ports.peer
    prev = -1
    for s in e.switches:
        u = s.node
        if not 0 <= u < topo.nodes:
            raise ValueError(f"Switch {u} is outside 0..{topo.nodes - 1}")
        if u <= prev:
            raise ValueError(f"Switch {u} is configured twice or out of order")
        prev = u
        if u in dead:
            raise ValueError(f"Switch {u} is configured but has failed")
        deg = int(topo.ports.degree[u])
        fields = [("req_in", p) for p in s.req_in] + [("resp_out", p) for p in s.resp_out]
        fields += [(name, p) for name, p in (("req_out", s.req_out), ("resp_in", s.resp_in))
                   if p is not None]
        for name, p in fields:
            local_ok = name in ("req_in", "resp_out")
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not (
                    0 <= p < deg or (local_ok and p == LOCAL)):
                extra = " and local" if local_ok else ""
                raise ValueError(f"Switch {u}: {name} names port {p!r}, which does not exist "
                                 f"(ports 0..{deg - 1}{extra})")
            if p != LOCAL and not alive[u, p]:
                raise ValueError(f"Switch {u}: {name} port {p} is on failed link "
                                 f"{min(u, peer[u, p])}-{max(u, peer[u, p])}")


def _verify_one(e: Embedding, topo: Topology) -> None:
    if not isinstance(e, Embedding):
        raise TypeError(f"Expected an Embedding, not {type(e).__name__}")
    _check_header(e, topo)
    failed_links, dead_list = parse_failures(topo, e.failed_links, e.failed_switches)
    dead = set(dead_list)
    alive = alive_ports(topo, failed_links, dead_list)
    _check_ports(e, topo, alive, dead)
    peer, peer_port = topo.ports.peer, topo.ports.peer_port
    config = {s.node: s for s in e.switches}
    parts = set(e.participants)
    root = e.root
    bcast = e.kind == "broadcast"
    up_name = "resp_in" if bcast else "req_out"
    what = "responses" if bcast else "requests"

    def up(u: int) -> int | None:
        return config[u].resp_in if bcast else config[u].req_out

    def down(u: int) -> frozenset[int]:
        return config[u].resp_out if bcast else config[u].req_in

    # 3. a tree into the root.
    if root not in config:
        raise ValueError(f"Root {root} is not configured")
    if up(root) is not None:
        raise ValueError(f"Root {root} must have {up_name} None, not {up(root)}")
    parent: dict[int, int] = {}
    for u, s in config.items():
        if bcast and u != root and (s.req_out is not None or s.req_in):
            raise ValueError(f"Switch {u} of a broadcast must not take or send requests "
                             f"(req_in {_fmt(s.req_in)}, req_out {_fmt(s.req_out)})")
        if bcast and u == root and (s.req_in != {LOCAL} or s.req_out is not None):
            raise ValueError(f"Root {u} of a broadcast must take its local input only "
                             f"(req_in {_fmt(s.req_in)}, req_out {_fmt(s.req_out)})")
        if u == root:
            continue
        p = up(u)
        if p is None:
            raise ValueError(f"Switch {u} has no port toward the root ({up_name} is None)")
        v, q = int(peer[u, p]), int(peer_port[u, p])
        if v not in config:
            raise ValueError(f"Switch {u} sends {what} on port {p} to switch {v}, which is not "
                             f"configured")
        if q not in down(v):
            raise ValueError(f"Switch {v} does not take {what} from switch {u} on its port {q}")
        parent[u] = v
    for v in config:
        for q in down(v):
            if q == LOCAL:
                continue
            w, p = int(peer[v, q]), int(peer_port[v, q])
            if w not in config or w == root or up(w) != p:
                raise ValueError(f"Switch {v} expects {what} on port {q} from switch {w}, which "
                                 f"does not send them there")
    level: dict[int, int] = {root: 0}
    for start in config:
        chain = []
        u = start
        while u not in level:
            chain.append(u)
            if len(chain) > len(config):
                raise ValueError(f"The tree has a cycle through switch {start}: its {what} "
                                 f"never reach the root")
            u = parent[u]
        for i, w in enumerate(reversed(chain)):
            level[w] = level[u] + i + 1

    # 2. contributions and deliveries.
    for p in e.participants:
        if p not in config:
            raise ValueError(f"Participant {p} is not configured")
    for u, s in config.items():
        contributes = LOCAL in s.req_in
        should = (u == root) if bcast else (u in parts)
        if contributes and not should:
            raise ValueError(f"Switch {u} contributes a local input but "
                             + ("is not the root of the broadcast" if bcast
                                else "is not a participant"))
        if should and not contributes:
            raise ValueError(f"Participant {u} does not contribute: switch {u} has no local "
                             f"port in req_in")

    # 7. responses are the inverse of the requests.
    for u, s in config.items():
        if e.kind in ("allreduce", "barrier"):
            if s.resp_in != s.req_out:
                raise ValueError(f"Switch {u}: resp_in {_fmt(s.resp_in)} must equal req_out "
                                 f"{_fmt(s.req_out)} (the response returns on the request's "
                                 f"link)")
            if s.resp_out != s.req_in:
                raise ValueError(f"Switch {u}: resp_out {_fmt(s.resp_out)} must equal req_in "
                                 f"{_fmt(s.req_in)} (the inverse of the request tree)")
        elif e.kind == "reduce":
            want = frozenset([LOCAL]) if u == root else frozenset()
            if s.resp_in is not None or s.resp_out != want:
                raise ValueError(f"Switch {u} of a reduce must have resp_in None and resp_out "
                                 f"{_fmt(want)}, not {_fmt(s.resp_in)} and {_fmt(s.resp_out)}")
        else:
            if (LOCAL in s.resp_out) != (u in parts):
                raise ValueError(f"Switch {u}: the broadcast result must be delivered locally "
                                 f"exactly at participants (resp_out {_fmt(s.resp_out)})")

    links = sorted((u, up(u), v, int(peer_port[u, up(u)])) for u, v in parent.items())
    recorded = sorted(tuple(link) for link in e.links)
    if recorded != links:
        extra = sorted(set(recorded) - set(links))
        if extra:
            raise ValueError(f"Link {extra[0]} in links is not a request link of the tree")
        lost = sorted(set(links) - set(recorded))
        raise ValueError(f"Request link {lost[0] if lost else links[0]} is missing from links")

    # 6. every configured switch has a participant below it.
    below = dict.fromkeys(config, 0)
    for u in sorted(config, key=level.__getitem__, reverse=True):
        below[u] += u in parts
        if u != root:
            below[parent[u]] += below[u]
    for u in config:
        if below[u] == 0:
            raise ValueError(f"Switch {u} is configured but has no participant below it")

    # 5. depth = the root's eccentricity over the participants.
    depth = max(level[p] for p in e.participants)
    if depth != e.depth:
        raise ValueError(f"Depth {e.depth} does not match the tree, whose longest participant "
                         f"path has {depth} hops")
    dist = bfs_distances(topo, root, alive)
    ecc = int(dist[list(e.participants)].max())
    if depth == ecc:
        return
    if topo.kind == "piuma" and not failed_links and not dead:
        # Latency-shortest paths (PIUMA's multi-level networks) need not be hop-shortest.
        from innet.gen.embed.piuma import hierarchy_violation, latency_minimal

        reason = hierarchy_violation(topo, root, parent)
        if reason is None or latency_minimal(topo, root, parent, e.participants):
            return
        raise ValueError(reason)
    raise ValueError(f"Depth {depth} differs from the root's eccentricity {ecc} over the "
                     f"participants")


def verify(embeddings: Embedding | Sequence[Embedding], topo: Topology) -> None:
    """Check one embedding, or several that are configured together (see the module docstring).

    Several embeddings are each checked, then checked pairwise disjoint on each collective id
    (:func:`innet.gen.embed.check_disjoint`).

    Raises
    ------
    TypeError
        If an argument is not an Embedding (or a sequence of them) and a Topology.
    ValueError
        Naming the switch, port or link and the property broken.
    """
    check_topology(topo)
    if isinstance(embeddings, Embedding):
        _verify_one(embeddings, topo)
        return
    if isinstance(embeddings, (str, bytes)) or not isinstance(embeddings, Sequence):
        raise TypeError(f"Expected an Embedding or a sequence of them, not "
                        f"{type(embeddings).__name__}")
    for e in embeddings:
        _verify_one(e, topo)
    from innet.gen.embed.plan import check_disjoint

    check_disjoint(embeddings)
