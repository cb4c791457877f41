"""Several collectives at once: disjointness on a collective id, and an id planner.

PIUMA ("Multiple In-network Collectives"): configuration registers are replicated per
collective id, so embeddings on *different* ids may overlap; several embeddings can share one
id "provided their embeddings do not share physical links or reduction engines at switches".
So on one id:

- every directed link carries at most one embedding's requests and at most one embedding's
  responses (the two direction classes: requests travel child to parent, responses parent to
  child; a reduce has no responses, a broadcast no requests), and
- every switch is configured by at most one embedding (a switch holds one register copy per
  id; two trees through one switch would need two).

:func:`check_disjoint` raises on the first violation, naming the link (or switch);
:func:`assign_collective_ids` gives each embedding the lowest id on which it is disjoint from
those already placed there (first fit, in the order given).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from innet.gen.embed.dynamic import check_collective_id
from innet.gen.embed.types import Embedding, check_embedding

__all__ = ["assign_collective_ids", "check_disjoint", "conflict"]


def _channels(e: Embedding) -> tuple[dict[tuple[int, int], str], dict[tuple[int, int], str]]:
    """Directed channels ``(node, port) -> "u->v"`` used by requests and by responses."""
    req = {} if e.kind == "broadcast" else {(u, p): f"{u}->{v}" for u, p, v, _ in e.links}
    resp = {} if e.kind == "reduce" else {(v, q): f"{v}->{u}" for u, _, v, q in e.links}
    return req, resp


def conflict(a: Embedding, b: Embedding) -> str | None:
    """Why ``a`` and ``b`` cannot share a collective id (a shared link or switch), or None.

    Raises
    ------
    TypeError
        If ``a`` or ``b`` is not an Embedding.
    """
    check_embedding(a)
    check_embedding(b)
    (req_a, resp_a), (req_b, resp_b) = _channels(a), _channels(b)
    for mine, theirs, name in ((req_a, req_b, "requests"), (resp_a, resp_b, "responses")):
        shared = sorted(mine.keys() & theirs.keys())
        if shared:
            u, p = shared[0]
            return f"link {mine[shared[0]]} (port {p} of node {u}) for {name}"
    switches = sorted(a.nodes & b.nodes)
    return f"switch {switches[0]}" if switches else None


def check_disjoint(embeddings: Sequence[Embedding]) -> None:
    """Raise unless embeddings on the same collective id share no link (per direction class)
    and no switch.

    Raises
    ------
    TypeError
        If an item is not an Embedding.
    ValueError
        ``"Embeddings 0 and 2 on collective id 1 share link 4->9 (port 3 of node 4) for
        requests"`` (or ``... share switch 5``), or if they were made for different topologies.
    """
    items = list(embeddings)
    for e in items:
        if not isinstance(e, Embedding):
            raise TypeError(f"Expected Embeddings, not {type(e).__name__}")
    if len({e.topology for e in items}) > 1:
        raise ValueError("Embeddings were made for different topologies")
    by_id: dict[int, list[int]] = {}
    for i, e in enumerate(items):
        by_id.setdefault(e.collective_id, []).append(i)
    for cid, members in sorted(by_id.items()):
        owner_req: dict[tuple[int, int], int] = {}
        owner_resp: dict[tuple[int, int], int] = {}
        owner_switch: dict[int, int] = {}
        for i in members:
            req, resp = _channels(items[i])
            for owner, used, name in ((owner_req, req, "requests"),
                                      (owner_resp, resp, "responses")):
                for key in sorted(used):
                    if key in owner:
                        raise ValueError(f"Embeddings {owner[key]} and {i} on collective id "
                                         f"{cid} share link {used[key]} (port {key[1]} of node "
                                         f"{key[0]}) for {name}")
                for key in used:
                    owner[key] = i
        for i in members:
            for u in sorted(items[i].nodes):
                if u in owner_switch:
                    raise ValueError(f"Embeddings {owner_switch[u]} and {i} on collective id "
                                     f"{cid} share switch {u}")
                owner_switch[u] = i


def assign_collective_ids(embeddings: Sequence[Embedding], *, max_ids: int | None = None,
                          first_id: int = 0) -> tuple[Embedding, ...]:
    """Give every embedding a collective id so that embeddings sharing an id are disjoint.

    First fit in the order given: each takes the lowest id (from ``first_id``) whose embeddings
    share no switch with it (sharing no switch implies sharing no link). Returns copies with
    ``collective_id`` set.

    Parameters
    ----------
    embeddings : sequence of Embedding
        Collectives that run concurrently.
    max_ids : int, optional
        How many ids the hardware has (ids ``first_id .. first_id + max_ids - 1``).
    first_id : int
        The lowest id to use.

    Raises
    ------
    TypeError
        If an item is not an Embedding.
    ValueError
        If more than ``max_ids`` ids would be needed, naming the collective that does not fit.
    """
    items = list(embeddings)
    for e in items:
        if not isinstance(e, Embedding):
            raise TypeError(f"Expected Embeddings, not {type(e).__name__}")
    first_id = check_collective_id(first_id)
    if max_ids is not None and (isinstance(max_ids, bool) or not isinstance(max_ids, int)
                                or max_ids < 1):
        raise ValueError(f"Max ids must be a positive integer, not {max_ids!r}")
    used: list[set[int]] = []
    out = []
    for i, e in enumerate(items):
        slot = next((k for k, nodes in enumerate(used) if not nodes & e.nodes), len(used))
        if slot == len(used):
            if max_ids is not None and slot >= max_ids:
                raise ValueError(f"Collective {i} overlaps every id in use; it needs collective "
                                 f"id {first_id + slot}, but only {max_ids} ids "
                                 f"({first_id}..{first_id + max_ids - 1}) are available")
            used.append(set())
        used[slot] |= e.nodes
        out.append(replace(e, collective_id=check_collective_id(first_id + slot)))
    return tuple(out)
