"""The alpha-beta cost of an in-network collective (PIUMA, "Analysis", Eq. 1 and 2).

PIUMA models an in-network Allreduce of ``m`` elements as one pipelined round trip,
Hockney's ``T(m) = alpha + beta * m`` (cycles and elements; the parameters and their defaults
are :class:`innet.gen.cost.CostModel`'s, shared with the host-style algorithms):

- alpha is the latency of the round trip: up the reduction tree to the root's collective engine
  (:func:`path_latencies`), then back down the broadcast tree (:func:`response_latencies`).
  Eq. 1 bounds it by twice the longest leaf-root path latency. Here it is computed exactly on
  the embedding: every participant's path crosses its local port, the links of its path and
  ``hops + 1`` switches; on the way up each switch also runs its collective engine: its front
  end (``front_latency``) and, for ``k >= 2`` contributing ports, its reduction
  (``reduce_latency``, by default the reduction unit's latency at the topology's radix, and
  for ``mul`` the multipliers' tree over the ``k`` ports: :meth:`CostModel.reduction`). The
  root's result
  is ready when the slowest input has arrived (the largest up-path latency), and the last
  participant has it after the slowest down path: alpha is the sum of the two for an
  allreduce or barrier, the up path plus one local port for a reduce (result at the root's
  endpoint), one local port plus the down path for a broadcast. With ``reduce_latency = 0``
  and ``front_latency = 0`` the two paths are equal and alpha is exactly twice the longest
  leaf-root path, PIUMA's bound met with equality; in general alpha <= 2 x the longest path
  counting each switch at its worst (``switch_latency + front_latency`` and its reduction).
- beta is the time per element at the slowest stage of the pipeline (Eq. 2): a network channel,
  the local (endpoint) port, and optionally the collective engine of a switch. Requests and
  responses use the two directions of each link, so they do not compete.

Several trees striped over one vector (:mod:`innet.gen.embed.stripe`) share channels, so beta
grows with the largest fraction of the vector one channel carries.

Host-style algorithms (Swing, recursive doubling, ring, bucket) get a :class:`Cost` in the same
units from :meth:`innet.gen.swing.cost.Congestion.cost`; :mod:`innet.gen.compare` puts them side
by side, and :func:`crossover` compares any set of ``T(m)`` functions size by size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from innet.gen.cost import Cost, CostModel
from innet.gen.embed.types import Embedding, check_embedding
from innet.gen.topology import Topology, check_topology

__all__ = ["Cost", "CostModel", "crossover", "embedding_cost", "path_latencies",
           "response_latencies"]


def _check(embedding: Embedding, topo: Topology) -> None:
    """Refuse arguments of the wrong type or an embedding made for another topology."""
    check_embedding(embedding)
    check_topology(topo)
    if embedding.topology != topo.fingerprint:
        raise ValueError(f"Embedding was made for topology {embedding.topology[:16]}, not "
                         f"{topo.fingerprint[:16]}")


def _model(model: CostModel | None) -> CostModel:
    if model is None:
        return CostModel()
    if not isinstance(model, CostModel):
        raise TypeError(f"Model must be a CostModel, not {model!r:.60}")
    return model


def _climb(embedding: Embedding, topo: Topology, root_cost: float,
           step: Callable[[int, int], float]) -> dict[int, float]:
    """Latency from every participant's switch to the root along the request tree: the root
    costs ``root_cost``, every other switch ``w`` with parent ``v`` adds ``step(w, v)``."""
    peer = topo.ports.peer
    up = {u: p for u, p, _, _ in embedding.links}
    memo: dict[int, float] = {embedding.root: root_cost}

    def climb(u: int) -> float:
        chain = []
        while u not in memo:
            chain.append(u)
            u = int(peer[u, up[u]])
        for w in reversed(chain):
            v = int(peer[w, up[w]])
            memo[w] = memo[v] + step(w, v)
        return memo[chain[0]] if chain else memo[u]

    return {p: climb(p) for p in embedding.participants}


def path_latencies(embedding: Embedding, topo: Topology, model: CostModel | None = None
                   ) -> dict[int, float]:
    """Latency of each participant's input up the reduction tree to the root's result:
    ``local_latency + sum(link latencies) + sum over the hops + 1 switches of
    (switch_latency + front_latency + the reduction if k >= 2)``, ``k`` the switch's
    contributing ports and the reduction :meth:`CostModel.reduction` of ``k`` ports with the
    embedding's operation at the topology's radix (PIUMA, "Analysis: Latency")."""
    _check(embedding, topo)
    model = _model(model)
    reduction = {s.node: model.reduction(topo.radix, len(s.req_in), embedding.op)
                 for s in embedding.switches if len(s.req_in) >= 2}

    def switch(u: int) -> float:
        return model.switch_latency + model.front_latency + reduction.get(u, 0.0)

    up = _climb(embedding, topo, switch(embedding.root),
                lambda w, v: model.link_latency_of(w, v) + switch(w))
    return {p: lat + model.local_latency for p, lat in up.items()}


def response_latencies(embedding: Embedding, topo: Topology, model: CostModel | None = None
                       ) -> dict[int, float]:
    """Latency of the result from the root's collective engine down the broadcast tree to
    each participant's endpoint: ``sum(link latencies) + (hops + 1)·switch_latency +
    local_latency``."""
    _check(embedding, topo)
    model = _model(model)
    down = _climb(embedding, topo, model.switch_latency,
                  lambda w, v: model.link_latency_of(w, v) + model.switch_latency)
    return {p: lat + model.local_latency for p, lat in down.items()}


def embedding_cost(embedding: Embedding, topo: Topology, model: CostModel | None = None
                   ) -> Cost:
    """alpha and beta of one embedding, in cycles (see the module docstring).

    Raises
    ------
    ValueError
        If the embedding was made for another topology.
    """
    _check(embedding, topo)
    model = _model(model)
    if embedding.kind == "broadcast":
        down = max(response_latencies(embedding, topo, model).values())
        alpha = model.local_latency + down  # the root's endpoint injects, then down the tree
    else:
        up = max(path_latencies(embedding, topo, model).values())
        if embedding.kind == "reduce":
            alpha = up + model.local_latency  # out of the root's switch to its endpoint
        else:  # allreduce, barrier: up the reduction tree and back down the broadcast tree
            alpha = up + max(response_latencies(embedding, topo, model).values())
    return Cost(alpha=alpha, beta=model.beta())


def crossover(costs: Mapping[str, Callable[[float], float]], sizes: Sequence[float]
              ) -> list[tuple[float, str, dict[str, float]]]:
    """Which cost function wins at each size: ``[(size, winner, {name: time}), ...]``.

    ``costs`` maps a name to any ``T(m)``: :meth:`Cost.time` of an in-network embedding, or
    the alpha-beta model of a host-style schedule. Ties go to the name listed first.

    Raises
    ------
    ValueError
        If ``costs`` is empty.
    """
    if not costs:
        raise ValueError("Crossover needs at least one cost function")
    rows = []
    for m in sizes:
        times = {name: float(fn(m)) for name, fn in costs.items()}
        winner = min(times, key=lambda name: (times[name], list(costs).index(name)))
        rows.append((m, winner, times))
    return rows
