"""Rebuild an :class:`Embedding` from per-switch configurations (e.g. decoded registers).

The configuration-image decoder reads, per collective id, every switch's ``req_in``,
``req_out``, ``resp_in`` and ``resp_out``; :func:`reconstruct` turns them back into an
:class:`Embedding` (root, participants, kind, links, depth) so that
:func:`innet.gen.embed.verify` can check it. It is deliberately lenient: whatever it cannot
make sense of is left for the verifier to report with its precise message.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from innet.gen.embed.dynamic import check_collective_id, check_kind
from innet.gen.embed.types import Embedding, SwitchConfig
from innet.gen.ops import DType, Op
from innet.gen.routing import parse_failures
from innet.gen.topology import LOCAL, Topology, check_topology

__all__ = ["reconstruct"]


def reconstruct(topo: Topology, switches: Iterable[SwitchConfig], *, op: Op | str,
                dtype: DType | str, collective_id: int, kind: str | None = None,
                failed_links: Iterable[Any] = (), failed_switches: Iterable[int] = ()
                ) -> Embedding:
    """An :class:`Embedding` from the switch configurations of one collective id.

    Parameters
    ----------
    topo : Topology
        The network the configurations belong to.
    switches : iterable of SwitchConfig
        Every configured switch (any order).
    op, dtype : Op/DType or str
        The operation and type registers.
    collective_id : int
        The id the configurations were read from.
    kind : str, optional
        Default: inferred. Several switches of which none sends requests are a
        ``"broadcast"``; several with no response configuration below the root are a
        ``"reduce"``; anything else is an ``"allreduce"``. The registers cannot tell a barrier
        from an allreduce, nor the kinds apart on a single switch: pass ``kind`` for those.
    failed_links, failed_switches
        Failures the embedding was made around (for the verifier's depth check).

    Raises
    ------
    TypeError
        If an item is not a SwitchConfig.
    ValueError
        If there is no switch, a node is configured twice, or the root cannot be told.
    """
    check_topology(topo)
    items = sorted(switches, key=lambda s: s.node if isinstance(s, SwitchConfig) else -1)
    for s in items:
        if not isinstance(s, SwitchConfig):
            raise TypeError(f"Expected SwitchConfig items, not {type(s).__name__}")
    if not items:
        raise ValueError("No switch is configured")
    nodes = [s.node for s in items]
    dup = next((a for a, b in itertools.pairwise(nodes) if a == b), None)
    if dup is not None:
        raise ValueError(f"Switch {dup} is configured twice")
    cid = check_collective_id(collective_id)
    links, dead = parse_failures(topo, failed_links, failed_switches)
    no_req_out = [s.node for s in items if s.req_out is None]
    bcast = len(no_req_out) == len(items) and len(items) > 1
    if bcast:
        roots = [s.node for s in items if s.resp_in is None]
    else:
        roots = no_req_out
    if len(roots) != 1:
        shown = ", ".join(map(str, roots[:4])) or "none"
        raise ValueError(f"Cannot tell the root: {len(roots)} switches look like one ({shown})")
    root = roots[0]
    if kind is None:
        if bcast:
            kind = "broadcast"
        elif len(items) > 1 and all(s.resp_in is None for s in items):
            kind = "reduce"
        else:
            kind = "allreduce"
    kind = check_kind(kind)
    bcast = kind == "broadcast"
    parts = sorted(s.node for s in items
                   if LOCAL in (s.resp_out if bcast else s.req_in))
    peer, peer_port, degree = topo.ports.peer, topo.ports.peer_port, topo.ports.degree
    tree_links = []
    parent: dict[int, int] = {}
    for s in items:
        p = s.resp_in if bcast else s.req_out
        if s.node == root or p is None or not (0 <= s.node < topo.nodes) \
                or not (isinstance(p, int) and 0 <= p < degree[s.node]):
            continue
        v, q = int(peer[s.node, p]), int(peer_port[s.node, p])
        tree_links.append((s.node, p, v, q))
        parent[s.node] = v
    depth = -1
    levels = []
    for u in parts:
        hops, w = 0, u
        while w != root and w in parent and hops <= len(items):
            w, hops = parent[w], hops + 1
        if w != root:
            levels = []
            break
        levels.append(hops)
    if levels:
        depth = max(levels)
    return Embedding(kind=kind, op=Op.parse(op), dtype=DType.parse(dtype), root=root,
                     participants=tuple(parts), collective_id=cid, switches=tuple(items),
                     depth=depth, links=tuple(sorted(tree_links)), topology=topo.fingerprint,
                     failed_links=links, failed_switches=dead)
