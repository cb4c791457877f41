"""Which allreduce wins at which size on a given network: in-network against host-style.

Every algorithm is priced by the one cost model of :mod:`innet.gen.cost` (cycles and elements)
on the real topology with the project's routing:

- ``innet``: PIUMA's in-network allreduce, :func:`innet.gen.embed.embedding_cost` of the dynamic
  embedding (or of a striping over several trees);
- ``swing-l``, ``swing-b``, ``recdoub-l``, ``recdoub-b``, ``ring``, ``bucket``: the host-style
  schedules of :mod:`innet.gen.swing` with rank ``r`` on node ``r``, every message routed by
  :func:`innet.gen.routing.routing` (:func:`innet.gen.swing.cost.congestion`), priced step by
  step (:meth:`innet.gen.swing.cost.Congestion.cost`, Swing Eq. 1).

Each is one line ``T(m) = alpha + beta · m``, exact for the in-network allreduce at every length
and for a host-style schedule from the length on that gives every block of every collective an
element (:attr:`Prediction.exact_from`); a shorter vector leaves more step-table entries empty,
which cost less, and is priced on its own. :func:`compare` evaluates them at the requested
sizes and gives the exact runs of lengths where each one is fastest
(:meth:`Comparison.intervals`).

Limits of the model
-------------------
- Message sizes are fractions of the vector (Swing's model). Below a schedule's block count a
  message would be a fraction of an element, while the hardware moves whole flits: the
  bandwidth term of such tiny vectors is approximate (the latency term, which dominates there,
  prices the entries that hold elements apart from the empty ones).
- A step's latency (its slowest rank's entries) and its bandwidth term (its busiest channel or
  port) are added even when they belong to different messages, as in Swing's Eq. 1.
- The endpoints' step tables are priced step by step, each step as long as its slowest rank's
  entries, though ranks drift apart within a step and overlap across steps: on long links
  (PIUMA's) the host-style predictions come out about 15 % high.
- An entry after empty ones is priced as if its clear-to-send had left during a drain, which
  the step engine does only after an entry that moves data: short vectors of schedules with
  several collectives come out optimistic (one element of Swing-L on the 8x8 torus: 1.39
  times the prediction, docs/routing-embeddings.md).
- With per-link latencies (``link_latencies``, e.g. PIUMA's levels) every route is priced by
  its own links.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

import numpy as np

from innet.gen.checks import check_type, shown
from innet.gen.cost import Cost, CostModel, envelope
from innet.gen.topology import Topology, check_topology

__all__ = [
    "ALGORITHMS",
    "DEFAULT_SIZES",
    "HOST_ALGORITHMS",
    "MAX_SIZE",
    "Comparison",
    "Prediction",
    "compare",
    "host_prediction",
    "host_shape",
]

#: The host-style algorithms (:data:`innet.gen.swing.ALGORITHMS`), latency-optimal first.
HOST_ALGORITHMS = ("swing-l", "swing-b", "recdoub-l", "recdoub-b", "ring", "bucket")
#: Everything :func:`compare` prices, in table order.
ALGORITHMS = ("innet", *HOST_ALGORITHMS)
#: Vector sizes in elements: 1, 4, 16, ..., 1,048,576.
DEFAULT_SIZES = tuple(4**k for k in range(11))
#: Largest vector size priced: element counts stay exact as floats.
MAX_SIZE = 1 << 53


@dataclass(frozen=True)
class Prediction:
    """One algorithm's predicted cost on a network.

    Members
    -------
    algorithm : str
    cost : Cost
        ``T(m) = alpha + beta · m`` in cycles, exact for every vector of at least
        ``exact_from`` elements.
    steps : int
        Communication steps (1 for the in-network round trip).
    max_hops : int
        Longest route a message takes (the tree depth for in-network).
    congestion_deficiency : float
        Swing's Ξ on this network's routing (1 for in-network: no two flows share a channel).
    exact_from : int
        Below this length some of a host-style schedule's entries hold no elements and cost
        less (:meth:`innet.gen.swing.cost.Congestion.cost`), and :meth:`cycles` prices the
        length itself; 0 when ``cost`` is exact at every length.
    least : Cost, optional
        A lower bound of :meth:`cycles` at every length of at least ``least_from`` below
        ``exact_from`` (:meth:`innet.gen.swing.cost.Congestion.least_cost`); ``None``: ``cost``.
    least_from : int
        The length from which ``least`` bounds (0 below that is its only bound).
    """

    algorithm: str
    cost: Cost
    steps: int
    max_hops: int
    congestion_deficiency: float
    exact_from: int = 0
    least: Cost | None = None
    least_from: int = 0
    price: Callable[[int], Cost] | None = field(default=None, repr=False, compare=False)

    def cycles(self, elements: int) -> float:
        """Predicted cycles for a vector of ``elements``."""
        if self.price is None or elements >= self.exact_from:
            return float(self.cost.time(elements))
        return float(self.price(elements).time(elements))

    def bounds(self, elements: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of :meth:`cycles` at each of ``elements``, without pricing
        each length."""
        m = np.asarray(elements, dtype=np.float64)
        upper = self.cost.alpha + self.cost.beta * m
        if self.least is None:
            return upper, upper
        least = self.least.alpha + self.least.beta * m
        lower = np.where(m >= self.least_from, least, self.cost.beta * m)
        return np.where(m >= self.exact_from, upper, lower), upper

    def to_dict(self) -> dict[str, Any]:
        return {"alpha_cycles": self.cost.alpha, "beta_cycles_per_element": self.cost.beta,
                "exact_from_elements": self.exact_from, "steps": self.steps,
                "max_hops": self.max_hops, "congestion_deficiency": self.congestion_deficiency}


@dataclass(frozen=True)
class Comparison:
    """Predicted allreduce times of several algorithms on one network.

    Members
    -------
    topology : str
        The network's fingerprint.
    model : CostModel
    sizes : tuple of int
        Vector sizes in elements.
    predictions : dict of str to Prediction
        In table order.
    skipped : dict of str to str
        Algorithms that could not run on this network, and why.
    """

    topology: str
    model: CostModel
    sizes: tuple[int, ...]
    predictions: dict[str, Prediction]
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def costs(self) -> dict[str, Cost]:
        """Every algorithm's line (exact from its ``exact_from`` on)."""
        return {name: p.cost for name, p in self.predictions.items()}

    def cycles(self, algorithm: str, elements: int) -> float:
        """Predicted cycles of ``algorithm`` for ``elements``."""
        return self.predictions[algorithm].cycles(elements)

    def winner(self, elements: int) -> str:
        """The fastest algorithm for ``elements`` (ties go to the algorithm listed first)."""
        cycles = {name: p.cycles(elements) for name, p in self.predictions.items()}
        return min(cycles, key=cycles.get)  # min keeps the first of equal values

    def rows(self) -> list[dict[str, Any]]:
        """One per size: ``{"elements", "cycles": {name: cycles}, "winner"}`` (ties go to the
        algorithm listed first)."""
        out = []
        for m in self.sizes:
            cycles = {name: self.cycles(name, m) for name in self.predictions}
            winner = min(cycles, key=cycles.get)
            out.append({"elements": m, "cycles": cycles, "winner": winner})
        return out

    def intervals(self) -> list[tuple[int, int | None, str]]:
        """Exact ``(start, stop, winner)`` runs of vector lengths ``start <= m < stop`` from
        1 element on (``stop`` ``None``: unbounded), with :meth:`winner`'s ties.

        Below the longest ``exact_from`` a length is priced on its own wherever the bounds
        of :meth:`Prediction.bounds` leave more than one algorithm able to win; from it on
        the lines are exact and their envelope (:func:`innet.gen.cost.envelope`) gives the
        lengths where the winner can change.
        """
        predictions = self.predictions
        names = list(predictions)
        exact = max(1, *(p.exact_from for p in predictions.values()))
        winners: list[tuple[int, str]] = []
        if exact > 1:
            m = np.arange(1, exact)
            bounds = [predictions[n].bounds(m) for n in names]
            best = np.min([upper for _, upper in bounds], axis=0)
            able = np.array([lower <= best for lower, _ in bounds])
            for i in range(len(m)):
                contenders = np.flatnonzero(able[:, i])
                if len(contenders) == 1:
                    winners.append((int(m[i]), names[contenders[0]]))
                else:
                    cycles = {names[j]: predictions[names[j]].cycles(int(m[i]))
                              for j in contenders}
                    winners.append((int(m[i]), min(cycles, key=cycles.get)))
        keys = {exact}
        for start, _, _ in envelope(self.costs)[1:]:
            low = math.floor(start)
            keys.update(k for k in (low, low + 1) if k > exact)
        winners.extend((k, self.winner(k)) for k in sorted(keys))
        out: list[tuple[int, int | None, str]] = []
        for m, name in winners:
            if out and out[-1][2] == name:
                continue
            if out:
                out[-1] = (out[-1][0], m, out[-1][2])
            out.append((m, None, name))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``innet embed --compare --json``)."""
        rows = self.rows()
        if self.model.clock_hz is not None:
            for row in rows:
                row["seconds"] = {n: float(self.model.seconds(c))
                                  for n, c in row["cycles"].items()}
        return {"unit": "cycles", "size_unit": "elements", "topology": self.topology,
                "model": self.model.to_dict(),
                "algorithms": {n: p.to_dict() for n, p in self.predictions.items()},
                "skipped": dict(self.skipped), "sizes": rows,
                "winners": [{"from": start, "to": stop, "algorithm": name}
                            for start, stop, name in self.intervals()]}


def host_shape(topo: Topology) -> tuple[int, ...]:
    """The rank layout host-style schedules use on ``topo``: its shape on a torus, mesh or
    HyperX (rank ``r`` on node ``r``, row-major), a ring of all nodes otherwise.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology.
    """
    check_topology(topo)
    shape = topo.params.get("shape") if topo.kind in ("torus", "hyperx") else None
    return tuple(int(d) for d in shape) if shape else (topo.nodes,)


def host_prediction(topo: Topology, algorithm: str, model: CostModel | None = None, *,
                    route: Any = None, nonpow2: str = "auto") -> Prediction:
    """Price one host-style algorithm on ``topo`` with the project's routing.

    Parameters
    ----------
    topo : Topology
    algorithm : str
        One of :data:`HOST_ALGORITHMS`.
    model : CostModel, optional
        Default ``CostModel()``.
    route : Routing, optional
        The routing (default :func:`innet.gen.routing.routing` of ``topo``).
    nonpow2 : str
        As :func:`innet.gen.swing.build_schedule`.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology or ``model`` not a CostModel.
    ValueError
        If the schedule cannot be built for this network (e.g. too many entries).
    """
    from innet.gen.swing import build_schedule

    if model is not None:
        check_type("Model", model, CostModel)
    schedule = build_schedule(algorithm, host_shape(topo), nonpow2=nonpow2)
    return _host(schedule, topo, model, route)


def _host(schedule: Any, topo: Topology, model: CostModel | None, route: Any) -> Prediction:
    from innet.gen.routing import routing
    from innet.gen.swing.cost import congestion

    route = route if route is not None else routing(topo)
    loads = congestion(schedule, topo.ports.peer, route.next_port, model=model)
    exact = loads.exact_from(model)
    return Prediction(algorithm=schedule.algorithm, cost=loads.cost(model),
                      steps=loads.steps, max_hops=loads.max_hops,
                      congestion_deficiency=loads.congestion_deficiency, exact_from=exact,
                      least=loads.least_cost(model) if exact else None,
                      least_from=schedule.collectives,
                      price=cache(partial(loads.cost, model)) if exact else None)


def _innet_prediction(topo: Topology, model: CostModel, innet: Any,
                      failed_links: Any) -> Prediction:
    from innet.gen.embed import Embedding, Striping, embed, embedding_cost

    if innet is None:
        innet = embed(topo, failed_links=failed_links)
    if isinstance(innet, Striping):
        trees = innet.embeddings
        cost = innet.cost
    elif isinstance(innet, Embedding):
        trees = (innet,)
        cost = embedding_cost(innet, topo, model)
    else:
        raise TypeError(f"In-network collective must be an Embedding or a Striping, not "
                        f"{type(innet).__name__}")
    for tree in trees:
        if tree.kind != "allreduce":
            raise ValueError(f"Compare prices allreduces, not a {tree.kind}")
        if len(tree.participants) != topo.nodes:
            raise ValueError(f"Host-style schedules run on every node, so compare needs an "
                             f"allreduce over all {topo.nodes} nodes, not "
                             f"{len(tree.participants)}")
    return Prediction(algorithm="innet", cost=cost, steps=1,
                      max_hops=max(t.depth for t in trees), congestion_deficiency=1.0)


def compare(topo: Topology, sizes: Iterable[int] = DEFAULT_SIZES,
            model: CostModel | None = None, *, algorithms: Sequence[str] = ALGORITHMS,
            innet: Any = None, failed_links: Iterable[Any] | None = None,
            nonpow2: str = "auto") -> Comparison:
    """Predict every algorithm's allreduce time on ``topo`` at every size.

    Parameters
    ----------
    topo : Topology
    sizes : iterable of int
        Vector sizes in elements.
    model : CostModel, optional
        Default ``CostModel()`` (the project's network, :mod:`innet.gen.cost`).
    algorithms : sequence of str
        A subset of :data:`ALGORITHMS`, in the order wanted.
    innet : Embedding or Striping, optional
        The in-network allreduce to price (default: :func:`innet.gen.embed.embed` of
        ``topo``); with several trees, the :class:`~innet.gen.embed.Striping`. It must include
        every node, as the host-style schedules do.
    failed_links : iterable of (int, int), optional
        Links the host-style messages route around, and the default embedding too (a given
        ``innet`` should have been embedded around them).
    nonpow2 : str
        As :func:`innet.gen.swing.build_schedule`.

    Returns
    -------
    Comparison
        Host-style algorithms whose schedule cannot be built on this network (e.g. a ring with
        too many entries) are listed in ``skipped`` with the reason.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology or ``innet`` not an Embedding or Striping.
    ValueError
        If an algorithm is unknown or repeated, a size is not a non-negative integer, or the
        in-network collective is not an allreduce over every node.
    """
    from innet.gen.routing import routing
    from innet.gen.swing import build_schedule
    from innet.gen.swing.butterfly import NONPOW2_MODES

    check_topology(topo)
    if nonpow2 not in NONPOW2_MODES:  # else every host algorithm would be skipped for it
        raise ValueError(f"Non-power-of-two mode must be one of {', '.join(NONPOW2_MODES)}, "
                         f"not {nonpow2!r}")
    sizes = tuple(sizes)
    for m in sizes:
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise ValueError(f"Sizes must be non-negative element counts, not {m!r:.60}")
        if m > MAX_SIZE:
            raise ValueError(f"Sizes must be at most {MAX_SIZE} elements, not {shown(m)}")
    algorithms = tuple(algorithms)
    for name in algorithms:
        if name not in ALGORITHMS:
            raise ValueError(f"Algorithm must be one of {', '.join(ALGORITHMS)}, not {name!r}")
    if not algorithms or len(set(algorithms)) != len(algorithms):
        raise ValueError(f"Algorithms must be distinct and at least one, not {algorithms!r}")
    model = model if model is not None else CostModel()
    predictions: dict[str, Prediction] = {}
    skipped: dict[str, str] = {}
    route = None
    for name in algorithms:
        if name == "innet":
            predictions[name] = _innet_prediction(topo, model, innet, failed_links)
            continue
        try:
            schedule = build_schedule(name, host_shape(topo), nonpow2=nonpow2)
        except ValueError as error:  # e.g. a ring with more entries than a schedule may hold
            skipped[name] = str(error)
            continue
        if route is None:
            route = routing(topo, failed_links=failed_links)
        predictions[name] = _host(schedule, topo, model, route)
    if not predictions:
        raise ValueError(f"No algorithm could be priced on this network: "
                         f"{'; '.join(f'{k}: {v}' for k, v in skipped.items())}")
    return Comparison(topology=topo.fingerprint, model=model, sizes=sizes,
                      predictions=predictions, skipped=skipped)
