"""The alpha-beta cost of an in-network collective (PIUMA, "Analysis", Eq. 1 and 2).

PIUMA models an in-network Allreduce of ``m`` elements as one pipelined round trip,
Hockney's ``T(m) = alpha + beta * m``:

- alpha is twice the latency of the longest leaf-to-root path of the reduction tree (up through
  the reduction tree, back down the broadcast tree): Eq. 1 bounds it by twice the maximum
  point-to-point latency. Here it is computed exactly on the embedding: for every
  participant, its local-port latency, the latency of every link on its path and the pipeline
  latency of every switch it crosses (``hops + 1`` switches); alpha is twice the largest for an
  allreduce or barrier, and the largest plus one more local-port latency for a reduce (up
  only) or a broadcast (down only).
- beta is the time per element at the slowest stage of the pipeline (Eq. 2): a network channel,
  the local (endpoint) port, and optionally the collective engine of a switch. Requests and
  responses use the two directions of each link, so they do not compete.

Several trees striped over one vector (:mod:`innet.gen.embed.stripe`) share channels, so beta
grows with the largest fraction of the vector one channel carries.

Host-style algorithms (Swing, recursive doubling, ring) have their own alpha-beta model in
``innet.gen.swing``; :func:`crossover` compares any set of ``T(m)`` functions size by size, so
an in-network :class:`Cost` and the host-style costs can be put side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from innet.gen.embed.types import Embedding
from innet.gen.topology import Topology

__all__ = ["Cost", "CostModel", "crossover", "embedding_cost", "path_latencies"]


def _positive(name: str, value: Any, allow_none: bool = False, allow_zero: bool = False
              ) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {value!r:.60}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, not {value}")
    return value


@dataclass(frozen=True)
class CostModel:
    """Latency and bandwidth parameters, in clock cycles.

    Parameters
    ----------
    link_latency : float
        Cycles for a flit to cross one link (default 1).
    switch_latency : float
        Pipeline latency of a switch, collective engine included (default 4).
    local_latency : float
        Cycles between an endpoint and its switch, each way (default 1).
    link_latencies : mapping of (u, v) to float, optional
        Per-link overrides of ``link_latency`` (either orientation of the pair), e.g. PIUMA's
        different latencies per network level.
    element_bytes : int
        Bytes per element (default 4: one 32-bit element).
    link_bandwidth : float
        Bytes per cycle a channel carries in each direction (default 4).
    local_bandwidth : float, optional
        Bytes per cycle between an endpoint and its switch; ``None`` (default) treats the
        endpoint as never the bottleneck (PIUMA's memory bandwidth per node exceeds one link).
    engine_bandwidth : float, optional
        Bytes per cycle a switch's collective engine reduces over all collective ids together;
        ``None`` (default): one engine per id, never the bottleneck.
    """

    link_latency: float = 1.0
    switch_latency: float = 4.0
    local_latency: float = 1.0
    link_latencies: Mapping[tuple[int, int], float] = field(default_factory=dict)
    element_bytes: int = 4
    link_bandwidth: float = 4.0
    local_bandwidth: float | None = None
    engine_bandwidth: float | None = None

    def __post_init__(self) -> None:
        _positive("Link latency", self.link_latency, allow_zero=True)
        _positive("Switch latency", self.switch_latency, allow_zero=True)
        _positive("Local latency", self.local_latency, allow_zero=True)
        _positive("Element bytes", self.element_bytes)
        _positive("Link bandwidth", self.link_bandwidth)
        _positive("Local bandwidth", self.local_bandwidth, allow_none=True)
        _positive("Engine bandwidth", self.engine_bandwidth, allow_none=True)
        if not isinstance(self.link_latencies, Mapping):
            raise TypeError(f"Link latencies must be a mapping of (u, v) to cycles, not "
                            f"{self.link_latencies!r:.60}")
        frozen = {}
        for key, value in self.link_latencies.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise TypeError(f"Link latency keys must be (u, v) pairs, not {key!r}")
            frozen[(min(key), max(key))] = _positive(f"Latency of link {key[0]}-{key[1]}",
                                                     value, allow_zero=True)
        object.__setattr__(self, "link_latencies", frozen)

    def __hash__(self) -> int:
        return hash((self.link_latency, self.switch_latency, self.local_latency,
                     tuple(sorted(self.link_latencies.items())), self.element_bytes,
                     self.link_bandwidth, self.local_bandwidth, self.engine_bandwidth))

    def beta(self, link_load: float = 1.0, engine_load: float = 1.0) -> float:
        """Cycles per element when the busiest channel carries ``link_load`` times the vector
        and the busiest engine reduces ``engine_load`` times it."""
        rates = [self.link_bandwidth / max(link_load, 1e-300)]
        if self.local_bandwidth is not None:
            rates.append(self.local_bandwidth)
        if self.engine_bandwidth is not None:
            rates.append(self.engine_bandwidth / max(engine_load, 1e-300))
        return self.element_bytes / min(rates)


@dataclass(frozen=True)
class Cost:
    """Hockney's ``T(m) = alpha + beta * m`` in cycles (PIUMA, "Analysis: Model").

    Members
    -------
    alpha : float
        Single-element latency.
    beta : float
        Cycles per element.
    """

    alpha: float
    beta: float

    def time(self, elements: Any) -> Any:
        """``alpha + beta * elements`` (scalar or array)."""
        if np.ndim(elements):
            return self.alpha + self.beta * np.asarray(elements, dtype=float)
        return self.alpha + self.beta * float(elements)


def path_latencies(embedding: Embedding, topo: Topology, model: CostModel | None = None
                   ) -> dict[int, float]:
    """Latency from each participant's endpoint to the root's collective engine along the
    tree: ``local_latency + sum(link latencies) + (hops + 1) * switch_latency``."""
    model = model if model is not None else CostModel()
    peer = topo.ports.peer
    up = {u: p for u, p, _, _ in embedding.links}
    parent = {u: v for u, _, v, _ in embedding.links}
    memo: dict[int, float] = {embedding.root: model.switch_latency}
    special = model.link_latencies

    def climb(u: int) -> float:
        chain = []
        while u not in memo:
            chain.append(u)
            u = parent[u]
        for w in reversed(chain):
            v = int(peer[w, up[w]])
            link = special.get((min(w, v), max(w, v)), model.link_latency)
            memo[w] = memo[v] + link + model.switch_latency
        return memo[chain[0]] if chain else memo[u]

    return {p: climb(p) + model.local_latency for p in embedding.participants}


def embedding_cost(embedding: Embedding, topo: Topology, model: CostModel | None = None
                   ) -> Cost:
    """alpha and beta of one embedding (see the module docstring).

    Raises
    ------
    ValueError
        If the embedding was made for another topology.
    """
    if embedding.topology != topo.fingerprint:
        raise ValueError(f"Embedding was made for topology {embedding.topology[:16]}, not "
                         f"{topo.fingerprint[:16]}")
    model = model if model is not None else CostModel()
    longest = max(path_latencies(embedding, topo, model).values())
    if embedding.kind in ("allreduce", "barrier"):
        alpha = 2 * longest  # up the reduction tree and back down the broadcast tree
    else:
        alpha = longest + model.local_latency  # one way, then out to the endpoint
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
