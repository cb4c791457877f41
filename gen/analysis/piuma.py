"""PIUMA's allreduce analysis reproduced on generated multi-level networks (Lakhotia et al.,
"Accelerating Allreduce with in-network reduction on Intel PIUMA": "Analysis", Eq. 1 and 2,
"Evaluation", Table 1, Figure 4).

Units: time in ns, sizes in bytes, bandwidth in Gbit/s (``b`` bytes take ``8·b / G`` ns at
``G`` Gbit/s), throughput in GB/s (bytes per ns).

In-network allreduce (PIUMA, "Analysis: Model")
-----------------------------------------------
Hockney's ``T(m) = alpha + β·m`` for ``m`` elements of ``s`` bytes:

- **alpha** from the actual embedding (:func:`innet.gen.embed.embed` on the network of
  :func:`innet.gen.topology.piuma`): twice the longest leaf-to-root latency of the reduction tree
  (the broadcast returns on the same links), link latencies only, as in Table 1. Checked
  against Eq. 1, ``alpha ≤ 2(L_P·D + L_S·(D+1) + L_C·d_max·(2D+1))`` (:func:`eq1_bound`), and
  against the bound that holds for every wiring, :func:`wiring_bound` (one more mesh walk per
  path: the paper's count stops at the last inter-socket hop, which reaches the root switch
  itself only when that switch carries the socket links, as with ``placement="hub"``).
- **β** from Eq. 2: ``max(2s / BW_link, 2s / BW_mem)`` with ``BW_link`` bidirectional
  (twice Table 1's unidirectional 64 Gbit/s: requests and responses use the two directions)
  and ``BW_mem`` the memory bandwidth of a core (every element is read once and written once).

Host-based allreduce (PIUMA, "Evaluation: Setup")
-------------------------------------------------
Recursive doubling (latency baseline) and Rabenseifner (throughput baseline), ``n = N_P·N_S·N_C``
ranks, rank ``r`` on switch ``r``. "We individually determine the latency in each round as a
function of the shortest path between communicating PIUMA cores": round ``k`` pairs ``r`` with
``r XOR 2^k`` and its latency ``λ_k`` is the largest latency of a route between partners (the
network's ``"piuma"`` routing: shortest inside nodes, dimension order between them;
:attr:`Point.shortest_rounds` gives true latency-shortest paths too). "Each pair of
communicating cores exchange a flag ... to indicate validity of data": a round costs
``(1 + flags)·λ_k`` (the flag, then the data; ``flags = 1``), plus ``round_overhead`` (0 by
default: Table 1 lists none), plus its data at the slower of memory and link:

- recursive doubling: all ``m`` elements every round; per element the memory serves 5 accesses
  (read to send, write the received, read both operands, write the sum), the link carries 1;
- Rabenseifner: reduce-scatter by recursive halving (``m/2, m/4, ..., m/n``; 5 memory
  accesses per element) then allgather by recursive doubling (2 accesses: read to send, write
  the received); congestion is ignored, as in the paper.

So the host-based Rabenseifner moves ``7·m·(1 - 1/n)`` element accesses through each core's
memory against ``2·m`` in-network: the 3.5x of the paper.

Figure 4 from 1 to 16K nodes
----------------------------
:func:`sweep` builds the real network and embeds it up to ``generate_up_to`` nodes, and uses the
closed form beyond: :func:`closed_form` needs only one node's wiring (every node is wired alike):
alpha from the max-plus recursion of :func:`innet.gen.embed.piuma.slot_eccentricity` and each
``λ_k`` from the intra-node distances and the link offsets. Where both exist they must agree
exactly (:func:`generated` raises otherwise). :func:`claims` compares the paper's claims with
ours, :func:`figure` draws Figure 4.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from innet.gen.checks import check_int, spell_shape
from innet.gen.topology import Topology
from innet.gen.topology.piuma import (
    MAX_SWITCHES,
    PiumaLayout,
    check_latency,
    link_latency_array,
    piuma,
    piuma_plan,
)

__all__ = [
    "AGREEMENT",
    "DEFAULT_VECTOR_BYTES",
    "DIAMETER_BUDGET",
    "MAX_ELEMENT_BYTES",
    "MAX_FLAGS",
    "TABLE1",
    "Claim",
    "Point",
    "SystemParams",
    "claims",
    "closed_form",
    "embedding_latencies",
    "eq1_bound",
    "figure",
    "generated",
    "implied_overheads",
    "innet_beta",
    "routed_latencies",
    "structure",
    "sweep",
    "sweep_shape",
    "wiring_bound",
    "with_overhead",
]

#: The "moderately long" vector of the throughput claims: 128 KB.
DEFAULT_VECTOR_BYTES = 128 * 1024

#: Largest element and flag count of :class:`SystemParams`.
MAX_ELEMENT_BYTES = 1 << 20
MAX_FLAGS = 1024


def _number(name: str, value: object, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {value!r:.60}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, not {value}")
    return value


@dataclass(frozen=True)
class SystemParams:
    """The system and the host model (defaults: PIUMA's Table 1).

    Parameters
    ----------
    sockets, cores : int
        ``N_S`` (16) and ``N_C`` (8).
    mesh : (int, int), optional
        On-chip mesh (default the most square, 2x4 for 8 cores: ``d_max = 4``).
    placement : str
        Which switches carry the socket and node links (:mod:`innet.gen.topology.piuma`).
    latency_core, latency_socket, latency_node : float
        ``L_C`` (5 ns), ``L_S`` (25 ns), ``L_P`` (50 ns).
    bw_mem : float
        Memory bandwidth per core, Gbit/s (51.2).
    bw_link : float
        Unidirectional link bandwidth, Gbit/s (64).
    element_bytes : int
        ``s`` (4).
    flags : int
        One-way latencies a host round spends on its flag exchange (1).
    round_overhead : float
        ns every host round costs beyond the network and memory (0: not in Table 1).

    Raises
    ------
    TypeError, ValueError
        If a value has the wrong type or is out of range.
    """

    sockets: int = 16
    cores: int = 8
    mesh: tuple[int, int] | None = None
    placement: str = "spread"
    latency_core: float = 5.0
    latency_socket: float = 25.0
    latency_node: float = 50.0
    bw_mem: float = 51.2
    bw_link: float = 64.0
    element_bytes: int = 4
    flags: int = 1
    round_overhead: float = 0.0

    def __post_init__(self) -> None:
        layout = piuma_plan(1, self.sockets, self.cores, mesh=self.mesh,
                            placement=self.placement)  # validates the wiring parameters
        object.__setattr__(self, "mesh", layout.mesh)
        for level in ("core", "socket", "node"):
            name = f"latency_{level}"
            object.__setattr__(self, name, check_latency(level, getattr(self, name)))
        object.__setattr__(self, "bw_mem", _number("Memory bandwidth", self.bw_mem))
        object.__setattr__(self, "bw_link", _number("Link bandwidth", self.bw_link))
        object.__setattr__(self, "round_overhead",
                           _number("Round overhead", self.round_overhead, allow_zero=True))
        for name, label, low, high in (("element_bytes", "Element bytes", 1, MAX_ELEMENT_BYTES),
                                       ("flags", "Flags", 0, MAX_FLAGS)):
            object.__setattr__(self, name, check_int(label, getattr(self, name), low, high))

    @property
    def latencies(self) -> dict[str, float]:
        """``{"core": L_C, "socket": L_S, "node": L_P}``, ns."""
        return {"core": self.latency_core, "socket": self.latency_socket,
                "node": self.latency_node}

    def plan(self, nodes: Sequence[int] | int) -> PiumaLayout:
        """The wiring plan for a HyperX shape of nodes."""
        return piuma_plan(nodes, self.sockets, self.cores, mesh=self.mesh,
                          placement=self.placement)

    def topology(self, nodes: Sequence[int] | int) -> Topology:
        """The network itself."""
        return piuma(nodes, self.sockets, self.cores, mesh=self.mesh, placement=self.placement,
                     latency_core=self.latency_core, latency_socket=self.latency_socket,
                     latency_node=self.latency_node)

    def to_dict(self) -> dict[str, Any]:
        return {"sockets": self.sockets, "cores": self.cores, "mesh": list(self.mesh or ()),
                "placement": self.placement, "latency_core_ns": self.latency_core,
                "latency_socket_ns": self.latency_socket, "latency_node_ns": self.latency_node,
                "bw_mem_gbps": self.bw_mem, "bw_link_gbps": self.bw_link,
                "element_bytes": self.element_bytes, "flags": self.flags,
                "round_overhead_ns": self.round_overhead}


#: PIUMA's Table 1 (and the host model's defaults).
TABLE1 = SystemParams()


def _ns(nbytes: float, gbps: float) -> float:
    """ns to move ``nbytes`` at ``gbps`` Gbit/s."""
    return 8.0 * nbytes / gbps


def eq1_bound(dimensions: int, d_max: int, params: SystemParams = TABLE1) -> float:
    """PIUMA Eq. 1: ``2(L_P·D + L_S·(D+1) + L_C·d_max·(2D+1))``, ns."""
    d = dimensions
    return 2 * (params.latency_node * d + params.latency_socket * (d + 1)
                + params.latency_core * d_max * (2 * d + 1))


def wiring_bound(dimensions: int, d_max: int, params: SystemParams = TABLE1) -> float:
    """The bound for any placement of the socket and node links: ``D + 1`` nodes on a path,
    each crossed by at most a mesh walk, a socket link and a mesh walk, so
    ``2(L_P·D + L_S·(D+1) + L_C·d_max·(2D+2))``, ns."""
    return eq1_bound(dimensions, d_max, params) + 2 * params.latency_core * d_max


def innet_beta(params: SystemParams = TABLE1) -> float:
    """PIUMA Eq. 2, ns per element: ``max(2s / BW_link, 2s / BW_mem)``, ``BW_link``
    bidirectional (2 x the unidirectional bandwidth)."""
    s = params.element_bytes
    return max(_ns(2 * s, 2 * params.bw_link), _ns(2 * s, params.bw_mem))


def _host_element(params: SystemParams, accesses: int) -> float:
    """ns per element of a host round: ``accesses`` memory accesses against one link crossing."""
    s = params.element_bytes
    return max(_ns(accesses * s, params.bw_mem), _ns(s, params.bw_link))


@dataclass(frozen=True)
class Point:
    """One network size of the analysis.

    Members
    -------
    nodes : tuple of int
        HyperX shape of the nodes.
    params : SystemParams
    dimensions : int
        ``D`` (dimensions with more than one node).
    d_max : int
        Mesh diameter.
    ranks : int
        ``n = N_P·N_S·N_C`` cores (switches).
    source : str
        ``"generated"`` (the network was built, embedded and verified) or ``"closed form"``.
    alpha : float
        In-network alpha, ns.
    root : int or None
        The root switch (generated networks).
    rounds : tuple of float or None
        ``λ_k`` of every host round (routed), ns; ``None`` unless ``n`` is a power of two.
    shortest_rounds : tuple of float or None
        The same over latency-shortest paths (generated networks).
    spt_alpha : float or None
        alpha of a latency-shortest-path tree into the same root (generated networks): what a tree
        that ignores PIUMA's single-leader, dimension-ordered structure would reach.
    """

    nodes: tuple[int, ...]
    params: SystemParams
    dimensions: int
    d_max: int
    ranks: int
    source: str
    alpha: float
    root: int | None = None
    rounds: tuple[float, ...] | None = None
    shortest_rounds: tuple[float, ...] | None = None
    spt_alpha: float | None = None
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def node_count(self) -> int:
        return math.prod(self.nodes)

    @property
    def bound(self) -> float:
        """Eq. 1, ns."""
        return eq1_bound(self.dimensions, self.d_max, self.params)

    @property
    def any_wiring_bound(self) -> float:
        """:func:`wiring_bound`, ns."""
        return wiring_bound(self.dimensions, self.d_max, self.params)

    @property
    def beta(self) -> float:
        """In-network β, ns per element."""
        return innet_beta(self.params)

    def innet_time(self, elements: float) -> float:
        """``alpha + β·m``, ns."""
        return self.alpha + self.beta * elements

    def _round_alpha(self, lam: float) -> float:
        return (1 + self.params.flags) * lam + self.params.round_overhead

    def rd_time(self, elements: float) -> float | None:
        """Host recursive doubling, ns (``None`` without rounds)."""
        if self.rounds is None:
            return None
        k = len(self.rounds)
        return (math.fsum(self._round_alpha(lam) for lam in self.rounds)
                + k * elements * _host_element(self.params, 5))

    def rab_time(self, elements: float) -> float | None:
        """Host Rabenseifner, ns (``None`` without rounds)."""
        if self.rounds is None:
            return None
        n = self.ranks
        share = elements * (1 - 1 / n)
        return (2 * math.fsum(self._round_alpha(lam) for lam in self.rounds)
                + share * (_host_element(self.params, 5) + _host_element(self.params, 2)))

    def throughput(self, algorithm: str, nbytes: float) -> float | None:
        """Vector bytes per ns (GB/s) of ``"innet"`` or ``"rabenseifner"``."""
        elements = nbytes / self.params.element_bytes
        time = self.innet_time(elements) if algorithm == "innet" else self.rab_time(elements)
        return None if time is None else nbytes / time

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the numbers above plus single-element and 128 KB times."""
        one = self.innet_time(1)
        rd = self.rd_time(1)
        vec = DEFAULT_VECTOR_BYTES / self.params.element_bytes
        out = {"nodes": list(self.nodes), "node_count": self.node_count,
               "dimensions": self.dimensions, "d_max": self.d_max, "ranks": self.ranks,
               "source": self.source, "root": self.root, "alpha_ns": self.alpha,
               "eq1_bound_ns": self.bound, "any_wiring_bound_ns": self.any_wiring_bound,
               "beta_ns_per_element": self.beta, "innet_1_element_ns": one,
               "rd_1_element_ns": rd, "latency_ratio": None if rd is None else rd / one,
               "innet_128k_gbs": self.throughput("innet", DEFAULT_VECTOR_BYTES),
               "rabenseifner_128k_gbs": self.throughput("rabenseifner", DEFAULT_VECTOR_BYTES),
               "round_latencies_ns": None if self.rounds is None else list(self.rounds),
               "shortest_round_latencies_ns": (None if self.shortest_rounds is None
                                               else list(self.shortest_rounds)),
               "spt_alpha_ns": self.spt_alpha}
        rab = self.rab_time(vec)
        out["rabenseifner_128k_ns"] = rab
        out["innet_128k_ns"] = self.innet_time(vec)
        out.update(self.extra)
        return out


def _power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


def _model(layout: PiumaLayout, params: SystemParams):
    from innet.gen.routing.piuma import Hierarchical

    return Hierarchical(layout, params.latencies)


def _closed_rounds(route: Any) -> tuple[float, ...] | None:
    """``λ_k`` of every recursive-doubling round from one node's wiring (module docstring):
    intra-node rounds pair slots ``a`` and ``a XOR 2^k``; a node round flips one bit of one
    coordinate, an offset of ``±2^b`` in that dimension, crossed between equal slots."""
    layout = route.layout
    slots = layout.slots
    if not (_power_of_two(slots) and all(_power_of_two(s) for s in layout.nodes)):
        return None
    w = route.intra.distance
    a = np.arange(slots)
    rounds = [float(w[a, a ^ (1 << k)].max()) for k in range(slots.bit_length() - 1)]
    for d in reversed(range(len(layout.nodes))):  # row-major: the last dimension is lowest
        size = layout.nodes[d]
        for b in range(size.bit_length() - 1):
            worst = 0.0
            for delta in {1 << b, size - (1 << b)}:
                exit_slot = route.exit_slot[d, delta]
                arrival = route.exit_slot[d, size - delta]
                worst = max(worst, float((w[a, exit_slot] + route.node_latency
                                          + w[arrival, a]).max()))
            rounds.append(worst)
    return tuple(rounds)


def closed_form(nodes: Sequence[int] | int, params: SystemParams = TABLE1) -> Point:
    """The analysis of a network from one node's wiring, without building it.

    Raises
    ------
    TypeError, ValueError
        If the shape or the parameters are invalid.
    """
    from innet.gen.embed.piuma import slot_eccentricity

    layout = params.plan(nodes)
    route = _model(layout, params)
    ecc, _ = slot_eccentricity(route)
    return Point(nodes=layout.nodes, params=params, dimensions=layout.dimensions,
                 d_max=layout.d_max, ranks=layout.switches, source="closed form",
                 alpha=2 * float(ecc.min()), rounds=_closed_rounds(route))


def embedding_latencies(embedding: Any, topo: Topology, weights: np.ndarray) -> np.ndarray:
    """Leaf-to-root latency of every participant along the embedding's recorded request links
    (``weights[u, port]`` per link), in participant order: the tree as configured, independent
    of how it was built."""
    n = topo.nodes
    parent = np.arange(n, dtype=np.int64)
    step = np.zeros(n)
    if embedding.links:
        links = np.asarray(embedding.links, dtype=np.int64)
        parent[links[:, 0]] = links[:, 2]
        step[links[:, 0]] = weights[links[:, 0], links[:, 1]]
    ptr, acc = parent.copy(), step.copy()
    root = embedding.root
    for _ in range(64):
        if (ptr[ptr] == ptr).all():
            break
        acc = acc + np.where(ptr == root, 0.0, acc[ptr])
        ptr = ptr[ptr]
    return acc[np.asarray(embedding.participants, dtype=np.int64)]


def routed_latencies(route: Any, weights: np.ndarray, src: np.ndarray,
                     dst: np.ndarray) -> np.ndarray:
    """Latency of every routed path ``src[i] -> dst[i]`` on the network: follows the routing
    hop by hop on the topology's port map, adding ``weights[node, port]``.

    Raises
    ------
    RuntimeError
        If a path does not arrive within ``N`` hops.
    """
    topo = route.topology
    peer = topo.ports.peer
    cur = np.asarray(src, dtype=np.int64).copy()
    dst = np.asarray(dst, dtype=np.int64)
    total = np.zeros(len(cur))
    active = np.flatnonzero(cur != dst)
    for _ in range(topo.nodes):
        if not len(active):
            return total
        here = cur[active]
        port = np.asarray(route.next_port(here, dst[active]), dtype=np.int64)
        total[active] += weights[here, port]
        cur[active] = peer[here, port]
        active = active[cur[active] != dst[active]]
    raise RuntimeError("A routed path did not arrive within N hops")


def generated(nodes: Sequence[int] | int, params: SystemParams = TABLE1, *,
              check: bool = True, progress: Callable[[str], None] | None = None) -> Point:
    """The analysis on the real network: build it, embed the allreduce
    (:func:`innet.gen.embed.embed`), verify the embedding, measure alpha on its recorded tree and
    every host round on the routed paths, and (``check``) demand that the closed form agrees.

    Raises
    ------
    TypeError, ValueError
        If the shape or the parameters are invalid.
    RuntimeError
        If the closed form disagrees with the generated network.
    """
    from innet.gen.embed import embed, verify
    from innet.gen.routing import routing
    from innet.gen.routing.latency import latency_distances

    def say(what: str) -> None:
        if progress is not None:
            progress(what)

    layout = params.plan(nodes)
    say("build")
    topo = params.topology(layout.nodes)
    say("embed")
    emb = embed(topo)
    say("verify")
    verify(emb, topo)
    weights = link_latency_array(topo)
    alpha = 2 * float(embedding_latencies(emb, topo, weights).max())
    say("shortest-path tree")
    from_root = latency_distances(topo, weights, emb.root)
    spt_alpha = 2 * float(from_root.max())
    rounds = shortest = None
    closed = closed_form(layout.nodes, params)
    if closed.rounds is not None:
        say("host rounds")
        route = routing(topo)
        n = topo.nodes
        src = np.arange(n, dtype=np.int64)
        rounds = tuple(float(routed_latencies(route, weights, src, src ^ (1 << k)).max())
                       for k in range(n.bit_length() - 1))
        shortest = _shortest_rounds(topo, layout, weights)
    point = Point(nodes=layout.nodes, params=params, dimensions=layout.dimensions,
                  d_max=layout.d_max, ranks=topo.nodes, source="generated", alpha=alpha,
                  root=emb.root, rounds=rounds, shortest_rounds=shortest, spt_alpha=spt_alpha,
                  extra={"links": topo.num_links, "radix": topo.radix})
    if check:
        _agree(point, closed)
    return point


def _shortest_rounds(topo: Topology, layout: PiumaLayout, weights: np.ndarray
                     ) -> tuple[float, ...]:
    """``λ_k`` over latency-shortest paths. Every node is wired alike, so Dijkstra from the
    switches of node 0 gives the distance of every partner pair: ``r`` and ``r XOR 2^k`` differ
    by an offset that depends only on the bit ``r`` has at ``k``."""
    from innet.gen.routing.latency import latency_distances

    slots = layout.slots
    dist = latency_distances(topo, weights, np.arange(slots))  # (slots, N)
    a = np.arange(slots)
    out = []
    for k in range(topo.nodes.bit_length() - 1):
        bit = 1 << k
        if bit < slots:
            out.append(float(dist[a, a ^ bit].max()))
            continue
        # node 0 -> node of index bit (offset +), node of index bit -> node 0 (offset -),
        # which by translation is node 0 -> the node at the opposite offset.
        node = bit // slots
        coords = layout.node_coordinates(node)
        back = layout.node_coordinates(0) - coords
        back_index = int(np.ravel_multi_index(tuple(np.mod(back, layout.nodes)), layout.nodes))
        worst = max(float(dist[a, node * slots + a].max()),
                    float(dist[a, back_index * slots + a].max()))
        out.append(worst)
    return tuple(out)


def _agree(point: Point, closed: Point) -> None:
    from innet.gen.routing.latency import same_latency

    if not same_latency(point.alpha, closed.alpha):
        raise RuntimeError(f"Closed-form alpha {closed.alpha} ns differs from the generated "
                           f"network's {point.alpha} ns at {spell_shape(point.nodes)} nodes")
    if (point.rounds is None) != (closed.rounds is None) or (
            point.rounds is not None and not bool(np.all(same_latency(
                np.array(point.rounds), np.array(closed.rounds))))):
        raise RuntimeError(f"Closed-form host round latencies {closed.rounds} differ from the "
                           f"generated network's {point.rounds} at "
                           f"{spell_shape(point.nodes)} nodes")


def sweep_shape(count: int, dims: int) -> tuple[int, ...]:
    """The HyperX shape of a power-of-two node count: at most ``dims`` dimensions of powers of
    two as equal as possible, larger first (``16384, 2 -> (128, 128)``; ``8, 2 -> (4, 2)``;
    ``1 -> (1,)``).

    Raises
    ------
    ValueError
        If ``count`` is not a power of two or ``dims`` is below 1.
    """
    if isinstance(count, bool) or not isinstance(count, int) or not _power_of_two(count):
        raise ValueError(f"Node count must be a power of two, not {count!r}")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise ValueError(f"Dimensions must be at least 1, not {dims!r}")
    exponent = count.bit_length() - 1
    parts = min(dims, exponent)
    if parts == 0:
        return (1,)
    base, extra = divmod(exponent, parts)
    return tuple(1 << (base + (1 if i < extra else 0)) for i in range(parts))


def sweep(params: SystemParams = TABLE1, *, max_nodes: int = 16384, dims: int = 2,
          generate_up_to: int = 64,
          progress: Callable[[str], None] | None = None) -> list[Point]:
    """Figure 4's x axis: 1, 2, 4, ... ``max_nodes`` nodes (:func:`sweep_shape`), generated up
    to ``generate_up_to`` nodes and in closed form beyond.

    Raises
    ------
    ValueError
        If ``max_nodes`` is not a power of two, ``dims`` / ``generate_up_to`` are invalid, or
        the largest network generated would have more than
        :data:`~innet.gen.topology.piuma.MAX_SWITCHES` switches (checked before any is built).
    """
    sweep_shape(max_nodes, dims)  # validates
    if isinstance(generate_up_to, bool) or not isinstance(generate_up_to, int) \
            or generate_up_to < 0:
        raise ValueError(f"Generate up to must be a node count >= 0, not {generate_up_to!r}")
    largest = 1 << (min(max_nodes, max(generate_up_to, 1)).bit_length() - 1)
    if generate_up_to and largest * params.sockets * params.cores > MAX_SWITCHES:
        raise ValueError(f"Generate up to {generate_up_to:,} nodes builds {largest:,} nodes of "
                         f"{params.sockets * params.cores} switches; at most {MAX_SWITCHES:,} "
                         f"switches are built")
    points = []
    count = 1
    while count <= max_nodes:
        shape = sweep_shape(count, dims)
        if progress is not None:
            progress(f"{count} nodes ({spell_shape(shape)})")
        if count <= generate_up_to:
            points.append(generated(shape, params))
        else:
            points.append(closed_form(shape, params))
        count *= 2
    return points


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and our number for it.

    Members
    -------
    key : str
    claim : str
        What the paper says.
    paper : float
        The paper's figure.
    ours : float or None
        Ours (``None`` where it cannot be computed).
    unit : str
    agrees : bool or None
    note : str
        Where and why.
    """

    key: str
    claim: str
    paper: float
    ours: float | None
    unit: str
    agrees: bool | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "claim": self.claim, "paper": self.paper, "ours": self.ours,
                "unit": self.unit, "agrees": self.agrees, "note": self.note}


def _pick(points: Sequence[Point], count: int) -> Point | None:
    return next((p for p in points if p.node_count == count), None)


#: Relative tolerance within which a number "agrees" with the paper's.
AGREEMENT = 0.10


def _close(ours: float | None, paper: float) -> bool | None:
    return None if ours is None else abs(ours - paper) <= AGREEMENT * abs(paper)


def claims(points: Sequence[Point], *, vector_bytes: int = DEFAULT_VECTOR_BYTES,
           throughput_nodes: int = 16) -> list[Claim]:
    """The paper's claims ("Abstract", "Evaluation: Results") against ``points``: the largest
    sweep point stands for "16K nodes", the 1-node point for "a single node".

    Raises
    ------
    ValueError
        If ``points`` is empty.
    """
    if not points:
        raise ValueError("Claims need at least one analysed network")
    big = max(points, key=lambda p: p.node_count)
    one = _pick(points, 1)
    mid = _pick(points, throughput_nodes)
    vec = vector_bytes / big.params.element_bytes
    out = []
    t1 = big.innet_time(1)
    out.append(Claim("latency", f"single-element in-network latency on {big.node_count} nodes "
                     "below 1 µs", 1000.0, t1, "ns", t1 < 1000.0,
                     f"alpha = {big.alpha:g} ns ({big.source}, D = {big.dimensions}), Eq. 1 bound "
                     f"{big.bound:g} ns"))
    rd = big.rd_time(1)
    ratio = None if rd is None else rd / t1
    out.append(Claim("latency-ratio", "in-network latency more than 40x below host recursive "
                     f"doubling ({big.node_count} nodes)", 40.0, ratio, "x",
                     None if ratio is None else ratio >= 40.0,
                     f"{len(big.rounds or ())} rounds of (1 + {big.params.flags} flag) x "
                     f"latency + {big.params.round_overhead:g} ns overhead"))
    if mid is not None and mid.rounds is not None:
        gain = _host_element(mid.params, 5) + _host_element(mid.params, 2)
        peak = gain * (1 - 1 / mid.ranks) / mid.beta
    else:
        peak = None
    out.append(Claim("throughput-ratio", f"maximum throughput 3.5x Rabenseifner on "
                     f"{throughput_nodes} nodes", 3.5, peak, "x", _close(peak, 3.5),
                     "large-vector limit: 7 m (1 - 1/n) memory accesses per core against 2 m"))
    if mid is not None:
        best = mid.throughput("innet", 1 << 30)
        optimum = big.params.element_bytes / mid.beta
        out.append(Claim("near-optimal", f"near-optimal in-network bandwidth on large vectors "
                         f"({throughput_nodes} nodes)", 100.0, 100 * best / optimum, "%",
                         best / optimum > 0.99, f"1 GiB vector against the Eq. 2 limit "
                         f"{optimum:g} GB/s"))
    if one is not None and one.rounds is not None:
        r1 = one.rab_time(vec) / one.innet_time(vec)
    else:
        r1 = None
    out.append(Claim("128k-one-node", f"{vector_bytes // 1024} KB vector on one node: in-network "
                     "3.9x faster than host", 3.9, r1, "x", _close(r1, 3.9),
                     "Rabenseifner against in-network"))
    if one is not None:
        drop = 100 * (1 - one.innet_time(vec) / big.innet_time(vec))
        out.append(Claim("drop-innet", f"{vector_bytes // 1024} KB in-network throughput drop, "
                         f"1 to {big.node_count} nodes", 1.4, drop, "%",
                         abs(drop - 1.4) <= 0.5, "the change of alpha against β·m"))
        if one.rounds is not None and big.rounds is not None:
            hdrop = 100 * (1 - one.rab_time(vec) / big.rab_time(vec))
        else:
            hdrop = None
        out.append(Claim("drop-host", f"{vector_bytes // 1024} KB host throughput drop, 1 to "
                         f"{big.node_count} nodes", 26.0, hdrop, "%", _close(hdrop, 26.0),
                         f"{len(one.rounds or ())} to {len(big.rounds or ())} rounds of "
                         f"Rabenseifner"))
    return out


def implied_overheads(points: Sequence[Point], *,
                      vector_bytes: int = DEFAULT_VECTOR_BYTES) -> dict[str, float | None]:
    """The host round overhead (ns, on top of ``params.round_overhead``) that would make each
    latency-sensitive claim exact: ``"latency-ratio"`` (40x), ``"128k-one-node"`` (3.9x) and
    ``"drop-host"`` (26 %). Each is linear in the overhead, so this solves for it; ``None``
    where the claim cannot be met (or there are no host rounds)."""
    big = max(points, key=lambda p: p.node_count)
    one = _pick(points, 1)
    vec = vector_bytes / big.params.element_bytes
    out: dict[str, float | None] = {}

    def solve(value: float | None) -> float | None:
        return None if value is None or not math.isfinite(value) or value < 0 else value

    if big.rounds is not None:
        k = len(big.rounds)
        out["latency-ratio"] = solve((40.0 * big.innet_time(1) - big.rd_time(1)) / k)
    else:
        out["latency-ratio"] = None
    if one is not None and one.rounds is not None:
        k1 = len(one.rounds)
        out["128k-one-node"] = solve((3.9 * one.innet_time(vec) - one.rab_time(vec)) / (2 * k1))
    else:
        out["128k-one-node"] = None
    if one is not None and one.rounds is not None and big.rounds is not None:
        r = 1 / (1 - 0.26)
        a1, a16 = one.rab_time(vec), big.rab_time(vec)
        k1, k16 = 2 * len(one.rounds), 2 * len(big.rounds)
        denom = k16 - r * k1
        out["drop-host"] = solve((r * a1 - a16) / denom) if denom else None
    else:
        out["drop-host"] = None
    return out


def with_overhead(points: Sequence[Point], overhead: float) -> list[Point]:
    """The same points with another host round overhead (ns)."""
    return [replace(p, params=replace(p.params, round_overhead=overhead)) for p in points]


def figure(points: Sequence[Point], *, vector_bytes: int = DEFAULT_VECTOR_BYTES,
           throughput_nodes: int = 16) -> bytes:
    """Figure 4 as a PNG: (a) single-element latency against nodes, in-network (with Eq. 1)
    and host recursive doubling; (b) throughput against vector size on ``throughput_nodes``
    nodes; (c) ``vector_bytes`` throughput against nodes. Filled markers: generated networks;
    hollow: closed form.

    Raises
    ------
    ValueError
        If ``points`` is empty.
    """
    import io

    from matplotlib.figure import Figure

    if not points:
        raise ValueError("A figure needs at least one analysed network")
    fig = Figure(figsize=(15, 4.6), dpi=100)
    axes = fig.subplots(1, 3)
    counts = [p.node_count for p in points]
    gen = [p.source == "generated" for p in points]

    def plot(ax, xs, ys, label, color, marker):
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        ax.plot(xs, ys, color=color, label=label)
        mask = np.asarray(gen)
        ax.scatter(xs[mask], ys[mask], color=color, marker=marker, zorder=3)
        ax.scatter(xs[~mask], ys[~mask], facecolors="none", edgecolors=color, marker=marker,
                   zorder=3)

    ax = axes[0]
    plot(ax, counts, [p.innet_time(1) / 1000 for p in points], "in-network", "tab:blue", "o")
    ax.plot(counts, [p.bound / 1000 for p in points], color="tab:blue", linestyle=":",
            label="in-network, Eq. 1 bound")
    if all(p.rounds is not None for p in points):
        plot(ax, counts, [p.rd_time(1) / 1000 for p in points], "host recursive doubling",
             "tab:red", "s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("single-element allreduce latency (µs)")
    ax.set_title("(a) latency")
    ax.legend(fontsize=8)

    ax = axes[1]
    mid = _pick(points, throughput_nodes) or points[-1]
    sizes = np.array([4.0 ** k for k in range(1, 15)])  # 4 B .. 256 MiB
    ax.plot(sizes, [mid.throughput("innet", s) for s in sizes], color="tab:blue",
            marker="o", label="in-network")
    if mid.rounds is not None:
        ax.plot(sizes, [mid.throughput("rabenseifner", s) for s in sizes], color="tab:red",
                marker="s", label="host Rabenseifner")
    ax.axhline(mid.params.element_bytes / mid.beta, color="grey", linestyle=":",
               label="Eq. 2 limit")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("vector size (bytes)")
    ax.set_ylabel("throughput (GB/s per core)")
    ax.set_title(f"(b) throughput, {mid.node_count} nodes")
    ax.legend(fontsize=8)

    ax = axes[2]
    plot(ax, counts, [p.throughput("innet", vector_bytes) for p in points], "in-network",
         "tab:blue", "o")
    if all(p.rounds is not None for p in points):
        plot(ax, counts, [p.throughput("rabenseifner", vector_bytes) for p in points],
             "host Rabenseifner", "tab:red", "s")
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("nodes")
    ax.set_ylabel("throughput (GB/s per core)")
    ax.set_title(f"(c) {vector_bytes // 1024} KB vector")
    ax.legend(fontsize=8)
    fig.suptitle(f"PIUMA allreduce: {points[0].params.sockets} sockets x "
                 f"{points[0].params.cores} cores per node, {points[0].params.placement} "
                 "placement (filled: generated network, hollow: closed form)", fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


#: Dijkstra work (sources x switches) :func:`structure` spends on the latency diameter.
DIAMETER_BUDGET = 50_000_000


def structure(topo: Topology) -> dict[str, Any]:
    """The multi-level structure of a PIUMA network, JSON-ready: shape, mesh, placement,
    latencies, links and ports per level, the diameter of each level (mesh ``d_max``, sockets
    1, nodes ``D``), the latency diameter and the levels of the links on one diametral path
    (Dijkstra from the switches of one node: every node is wired alike; skipped, ``None``,
    beyond :data:`DIAMETER_BUDGET`), and Eq. 1 for this network.

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a PIUMA network.
    """
    from innet.gen.routing.latency import latency_distances, same_latency
    from innet.gen.topology.piuma import LEVELS, level_latencies, link_levels, piuma_layout

    layout = piuma_layout(topo)
    latencies = level_latencies(topo)
    levels = link_levels(topo)
    links = {name: int((levels == code).sum()) // 2 for code, name in enumerate(LEVELS)}
    ports = {}
    for code, name in enumerate(LEVELS):
        per_switch = np.bincount((levels == code).sum(axis=1))
        ports[name] = {str(k): int(v) for k, v in enumerate(per_switch) if v}
    out: dict[str, Any] = {
        "nodes": list(layout.nodes), "node_count": layout.node_count,
        "dimensions": layout.dimensions, "sockets": layout.sockets, "cores": layout.cores,
        "mesh": list(layout.mesh), "d_max": layout.d_max, "placement": layout.placement,
        "latency_ns": latencies, "links_by_level": links, "ports_by_level": ports,
        "level_diameters": {"core": layout.d_max, "socket": int(layout.sockets > 1),
                            "node": layout.dimensions},
        "latency_diameter_ns": None, "latency_diameter_path": None,
    }
    params = SystemParams(sockets=layout.sockets, cores=layout.cores, mesh=layout.mesh,
                          placement=layout.placement, latency_core=latencies["core"],
                          latency_socket=latencies["socket"], latency_node=latencies["node"])
    out["eq1_bound_ns"] = eq1_bound(layout.dimensions, layout.d_max, params)
    if layout.slots * topo.nodes > DIAMETER_BUDGET:
        return out
    weights = link_latency_array(topo)
    dist = latency_distances(topo, weights, np.arange(layout.slots))
    src, dst = np.unravel_index(int(np.argmax(dist)), dist.shape)
    out["latency_diameter_ns"] = float(dist[src, dst])
    # Walk one latency-shortest path back from dst to src and count its links per level.
    peer = topo.ports.peer
    count = dict.fromkeys(LEVELS, 0)
    here = int(dst)
    while here != src:
        row = peer[here]
        ok = (row >= 0) & same_latency(dist[src, np.maximum(row, 0)] + weights[here],
                                       dist[src, here])
        port = int(np.argmax(ok))
        count[LEVELS[int(levels[here, port])]] += 1
        here = int(row[port])
    out["latency_diameter_path"] = count
    return out
