"""Congestion and alpha-beta cost of a schedule on a real network (Swing, Sections 2.2 and 4.1).

Every message of every step is routed hop by hop with the network's routing function, and the
bytes crossing each directed link in each step are added up. With message sizes as fractions
of the vector (``n = 1``):

- ``bandwidth_term`` ``W = sum over steps of the largest load on any link``: the time one step
  takes is set by its most loaded link, so an allreduce of ``n`` bytes spends ``W * n * beta``
  transmitting;
- ``contention_free_term`` ``W0 = sum over steps of the largest single message``: the same
  time if no two messages ever shared a link;
- the congestion deficiency ``Ξ = W / W0`` (1 when no link carries two messages of a step at
  once; Swing, Table 2: about 1.19, 1.03 and 1.008 for large square 2-, 3- and 4-D tori);
- the bandwidth deficiency ``Ψ = W0·D`` against the optimum ``n/D`` of Eq. 1 (``D`` the
  number of dimensions), and the latency deficiency ``Λ = steps / log2(p)``.

The alpha-beta time of Eq. 1, step by step, is :meth:`Congestion.cost`: with the project's one
cost model (:class:`innet.gen.cost.CostModel`, cycles and elements, shared with the in-network
embeddings) a step that moves data costs

    alpha_s + m * beta_s,  alpha_s = e_s * (step_overhead + latency(h_s)),
                           beta_s = max(load_s / link_bandwidth, port_s / local_bandwidth)

cycles for a vector of ``m`` elements, with ``e_s`` the most step-table entries one rank runs in
the step (its collectives that send or receive in it: an endpoint runs them one after another
over its one port, each with its own clear-to-send, data and drain; 1 when the endpoints are
never the bottleneck, ``local_bandwidth`` None, as Swing's hosts that use every port at once),
``h_s`` the step's largest hop count (with
per-link latencies, ``CostModel.link_latencies``, ``latency(h_s)`` is instead the latency of the
step's slowest route, each priced by its own links), ``load_s`` its largest link load and
``port_s`` the largest fraction of the vector one endpoint injects or
ejects in it (all collectives of the step together). :meth:`Congestion.time` is the same model
in the seconds and bytes of the Swing paper (``CostModel.from_seconds``): per step
``alpha + h * hop_latency + n * beta * load`` with ``alpha`` the per-message overhead,
``hop_latency`` the latency of one hop (link plus switch) and ``n`` bytes.

Routing
-------
The model takes the network's routing as a vectorised next-hop function
``next_port(nodes, destinations) -> ports``: for arrays of current nodes and destinations
(never equal), the output port at each node toward its destination, in the topology's port
numbering.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from innet.gen.checks import check_int
from innet.gen.cost import Cost, CostModel
from innet.gen.swing.schedule import Schedule

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "DEFAULT_HOP_LATENCY",
    "Congestion",
    "NextPort",
    "busy_entries",
    "congestion",
    "covered_steps",
    "latency_key",
    "model_table",
]

#: Next-hop routing: ``next_port(nodes, destinations) -> ports`` (integer arrays).
NextPort = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: Per-message overhead in seconds (an assumption: a NIC and a light software stack).
DEFAULT_ALPHA = 1e-6
#: Seconds per byte on one link: 400 Gb/s, as in the paper's simulations (Section 5).
DEFAULT_BETA = 8 / 400e9
#: Seconds per hop: 100 ns of link and 300 ns of switch latency (Section 5).
DEFAULT_HOP_LATENCY = 400e-9


@dataclass(frozen=True)
class Congestion:
    """Link loads of a schedule on a network (module documentation).

    Attributes
    ----------
    algorithm : str
    ranks, dimensions : int
        Number of ranks and of torus dimensions ``D`` used for ``Ψ``.
    steps : int
        Steps in which anything moves.
    max_hops : int
        The longest route any message takes.
    bandwidth_term, contention_free_term : float
        ``W`` and ``W0``, in vectors.
    step_hops : tuple of int
        Largest hop count of each schedule step (0 when nothing moves).
    step_load : tuple of float
        Largest link load of each schedule step, in vectors.
    step_inject, step_eject : tuple of float
        Largest fraction of the vector one rank sends (receives) in each schedule step, all
        collectives together: what its one local port carries.
    step_entries : tuple of int
        The most step-table entries one rank runs in each schedule step (:func:`busy_entries`
        of a vector that fills every block).
    step_latency : tuple of float, optional
        Only when routed with a cost model that has per-link latencies
        (``congestion(..., model=)``): the one-way latency in cycles of the slowest route of
        each schedule step (0 when nothing moves), each route priced by its own links.
    latency_model : tuple, optional
        The latency parameters of that model (:func:`latency_key`); :meth:`step_costs` prices
        ``step_latency`` only with a model that has the same.
    schedule : Schedule, optional
        The schedule routed, for :meth:`step_costs` of a given vector length.
    """

    algorithm: str
    ranks: int
    dimensions: int
    steps: int
    max_hops: int
    bandwidth_term: float
    contention_free_term: float
    step_hops: tuple[int, ...]
    step_load: tuple[float, ...]
    step_inject: tuple[float, ...]
    step_eject: tuple[float, ...]
    step_entries: tuple[int, ...]
    step_latency: tuple[float, ...] | None = None
    latency_model: tuple | None = None
    schedule: Schedule | None = field(default=None, repr=False, compare=False)

    @property
    def congestion_deficiency(self) -> float:
        """Ξ = W / W0."""
        if self.contention_free_term == 0:
            return 1.0
        return self.bandwidth_term / self.contention_free_term

    @property
    def bandwidth_deficiency(self) -> float:
        """Ψ = W0 / (1/D): data each port carries against Eq. 1's optimum ``n/D``."""
        return self.contention_free_term * self.dimensions

    @property
    def latency_deficiency(self) -> float:
        """Λ = steps / log2(p)."""
        return self.steps / math.log2(self.ranks)

    def step_costs(self, model: CostModel | None = None, elements: int | None = None
                   ) -> tuple[Cost, ...]:
        """alpha and beta of every schedule step, in cycles and cycles per element of the whole
        vector (module documentation); ``Cost(0, 0)`` for a step that moves nothing.

        A model with per-link latencies (``link_latencies``) takes each step's latency from
        its slowest route as :func:`congestion` priced it with the same model; otherwise the
        latency is that of the step's longest route in hops.

        With an endpoint port (a finite ``local_bandwidth``) a step's alpha is paid once per
        entry the busiest rank runs in it (``step_entries``); without one, once per step.
        ``elements`` prices the steps of a vector of that length: only the entries whose
        blocks hold elements count (:func:`busy_entries`), so a vector shorter than the
        schedule's blocks pays for fewer; by default every block holds some.

        Raises
        ------
        ValueError
            If the model has per-link latencies and these loads were not routed with a model
            of the same latencies (``congestion(..., model=model)``), or ``elements`` is given
            for loads without their schedule.
        """
        model = model if model is not None else CostModel()
        return tuple(Cost(alpha=a, beta=b)
                     for a, b in self._priced(model, self._entries(model, elements)))

    def exact_from(self, model: CostModel | None = None) -> int:
        """The shortest vector from which on :meth:`cost` of ``model`` prices every longer
        vector exactly: ``collectives * blocks``, where every block holds an element (0 when
        the model has no endpoint port, so that a step's alpha is paid once whatever the
        length).

        Raises
        ------
        ValueError
            If the model has an endpoint port and these loads have no schedule.
        """
        model = model if model is not None else CostModel()
        if not _one_port(model):
            return 0
        schedule = self._routed_schedule()
        return schedule.collectives * max(schedule.blocks)

    def least_cost(self, model: CostModel | None = None) -> Cost:
        """A lower bound of ``cost(model, elements)`` for every vector of at least
        ``collectives`` elements: its alpha pays one entry in each step whose entries cover
        every block of some collective (a vector that gives every collective an element keeps
        one of them busy), and none in the others; its beta is :meth:`cost`'s.

        Raises
        ------
        ValueError
            As :meth:`step_costs`.
        """
        model = model if model is not None else CostModel()
        if not _one_port(model):
            return self.cost(model)
        covered = covered_steps(self._routed_schedule())
        return _summed(self._priced(model, tuple(int(c) for c in covered)))

    def _entries(self, model: CostModel, elements: int | None) -> tuple[int, ...]:
        if _one_port(model) and elements is not None:
            return tuple(busy_entries(self._routed_schedule(), elements).tolist())
        return self.step_entries

    def _routed_schedule(self) -> Schedule:
        if self.schedule is None:
            raise ValueError("Pricing a vector length needs the loads' schedule: route it "
                             "with congestion()")
        return self.schedule

    def _priced(self, model: CostModel, entries: tuple[int, ...]
                ) -> list[tuple[float, float]]:
        """(alpha, beta) of every step, with ``entries`` entries in each."""
        latencies = None
        if model.link_latencies:
            if self.latency_model != latency_key(model):
                raise ValueError("A cost model with per-link latencies prices the routes "
                                 "congestion() priced with it: pass it as "
                                 "congestion(..., model=model)")
            latencies = self.step_latency
        if not _one_port(model):  # every port at once: one alpha per step
            entries = (1,) * len(entries)
        out = []
        for step, (hops, load, inject, eject, busy) in enumerate(zip(
                self.step_hops, self.step_load, self.step_inject, self.step_eject, entries,
                strict=True)):
            if not hops:
                out.append((0.0, 0.0))
                continue
            latency = model.latency(hops) if latencies is None else latencies[step]
            out.append((busy * (model.step_overhead + latency),
                        model.beta(link_load=load, local_load=max(inject, eject))))
        return out

    def cost(self, model: CostModel | None = None, elements: int | None = None) -> Cost:
        """The whole allreduce as one ``T(m) = alpha + beta * m`` in cycles: the sum of
        :meth:`step_costs` (Swing, Eq. 1 step by step), for vectors that fill every block or,
        with ``elements``, for a vector of that length.

        Raises
        ------
        ValueError
            As :meth:`step_costs`.
        """
        model = model if model is not None else CostModel()
        return _summed(self._priced(model, self._entries(model, elements)))

    def time(self, size: float, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA,
             hop_latency: float = DEFAULT_HOP_LATENCY) -> float:
        """Predicted allreduce time in seconds for a vector of ``size`` bytes (Eq. 1): the
        cycle model :meth:`cost` with ``CostModel.from_seconds(alpha, beta, hop_latency)``."""
        model = CostModel.from_seconds(alpha, beta, hop_latency)
        return float(model.seconds(self.cost(model).time(size / model.element_bytes)))


def busy_entries(schedule: Schedule, elements: int | None = None) -> np.ndarray:
    """The most step-table entries one rank runs in each step of ``schedule``: those of its
    collectives that send or receive in the step (``elements``: whose block ranges hold
    elements of a vector of that length, :meth:`Schedule.elements`; by default, every nonempty
    block range).

    Returns
    -------
    numpy.ndarray of int, shape (steps,)
    """
    arrays = schedule.arrays()
    ranges = (arrays["send"], arrays["recv"])
    if elements is None:
        busy = [r[..., 1] > r[..., 0] for r in ranges]
    else:
        n = check_int("Vector length", elements, low=0)
        count = schedule.collectives
        busy = [np.zeros(r.shape[:3], dtype=bool) for r in ranges]
        for c, blocks in enumerate(schedule.blocks):
            size = (c + 1) * n // count - c * n // count  # its share, as Schedule.share
            first = np.arange(blocks + 1) * size // blocks  # each block's first element
            for held, r in zip(busy, ranges, strict=True):
                held[c] = first[r[c, ..., 1]] > first[r[c, ..., 0]]
    return (busy[0] | busy[1]).sum(axis=0).max(axis=1, initial=0)


def covered_steps(schedule: Schedule) -> np.ndarray:
    """Per step of ``schedule``: whether the entries of one of its collectives cover every
    block of that collective between them (their send and receive block ranges, over all
    ranks), so that any element of that collective keeps an entry of the step busy.

    Returns
    -------
    numpy.ndarray of bool, shape (steps,)
    """
    arrays = schedule.arrays()
    steps = arrays["send"].shape[1]
    out = np.zeros(steps, dtype=bool)
    for c, blocks in enumerate(schedule.blocks):
        depth = np.zeros(steps * (blocks + 1), dtype=np.int64)  # ranges open at each block
        for ranges in (arrays["send"][c], arrays["recv"][c]):
            lo, hi = ranges[..., 0], ranges[..., 1]
            held = hi > lo
            row = np.nonzero(held)[0] * (blocks + 1)
            depth += np.bincount(row + lo[held], minlength=depth.size)
            depth -= np.bincount(row + hi[held], minlength=depth.size)
        depth = np.cumsum(depth.reshape(steps, blocks + 1), axis=1)
        out |= (depth[:, :blocks] > 0).all(axis=1)
    return out


def _summed(steps: list[tuple[float, float]]) -> Cost:
    return Cost(alpha=math.fsum(a for a, _ in steps), beta=math.fsum(b for _, b in steps))


def _one_port(model: CostModel) -> bool:
    """Whether the endpoints run a step's entries one after another over one port."""
    return model.local_bandwidth is not None and model.local_bandwidth != math.inf


def latency_key(model: CostModel) -> tuple:
    """The parameters of ``model`` a route's latency depends on (links, switches, endpoints)."""
    return (model.link_latency, model.switch_latency, model.local_latency,
            tuple(sorted(model.link_latencies.items())))


def _port_latency(peer: np.ndarray, model: CostModel) -> np.ndarray:
    """``latency[u, port]``: cycles the link on ``port`` of node ``u`` adds
    (:meth:`CostModel.link_latency_of`)."""
    latency = np.full(peer.shape, model.link_latency)
    for u, port in zip(*np.nonzero(peer >= 0), strict=True):
        latency[u, port] = model.link_latency_of(int(u), int(peer[u, port]))
    return latency


def _route_step(peer: np.ndarray, next_port: NextPort, origin: np.ndarray, dst: np.ndarray,
                size: np.ndarray, port_latency: np.ndarray | None, model: CostModel | None
                ) -> tuple[float, int, float]:
    """Route one step's messages hop by hop: its heaviest link load, its longest route in
    hops and (with ``port_latency``) its slowest route's latency by ``model``."""
    nodes, radix = peer.shape
    load = np.zeros(nodes * radix)
    cycles = np.zeros(len(dst))  # what each route's links added so far
    cur = origin
    hop = hops = 0
    latency = 0.0
    while len(cur):
        if hop >= nodes:
            raise ValueError(f"Routing from node {int(origin[0])} to node {int(dst[0])} does "
                             f"not arrive within {nodes} hops")
        port = np.asarray(next_port(cur, dst), dtype=np.int64)
        bad = (port < 0) | (port >= radix)
        if not bad.any():
            bad = peer[cur, port] < 0
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"Routing at node {int(cur[i])} toward node {int(dst[i])} chose "
                             f"port {int(port[i])}, which the node does not have")
        load += np.bincount(cur * radix + port, weights=size, minlength=load.size)
        if port_latency is not None:
            cycles += port_latency[cur, port]
        cur = peer[cur, port].astype(np.int64)
        hop += 1
        arrived = cur == dst
        if arrived.any():
            hops = hop
            if port_latency is not None:
                latency = max(latency, float(np.max(model.latency(hop, cycles[arrived]))))
        keep = ~arrived
        origin, cur, dst, size, cycles = (origin[keep], cur[keep], dst[keep], size[keep],
                                          cycles[keep])
    return float(load.max(initial=0.0)), hops, latency


def congestion(schedule: Schedule, peer: np.ndarray, next_port: NextPort,
               dimensions: int | None = None, *, model: CostModel | None = None
               ) -> Congestion:
    """Route every message of ``schedule`` and measure the link loads.

    Parameters
    ----------
    schedule : Schedule
        Rank ``r`` runs on node ``r``.
    peer : numpy.ndarray, shape (nodes, radix)
        ``peer[u, port]`` is the node port ``port`` of ``u`` leads to (``Topology.ports.peer``).
    next_port : NextPort
        The routing (module documentation).
    dimensions : int, optional
        ``D`` for ``Ψ``; by default the number of sides of the schedule's shape longer than 1.
    model : CostModel, optional
        With per-link latencies (``link_latencies``, e.g. PIUMA's levels), every route is also
        priced by its own links (``CostModel.latency(hops, link_cycles)``) and each step keeps
        its slowest (``step_latency``), which :meth:`Congestion.cost` needs for that model.

    Raises
    ------
    ValueError
        If the network has a different number of nodes than the schedule has ranks, or the
        routing returns a port a node does not have or does not reach a destination.
    """
    peer = np.asarray(peer)
    nodes, _ = peer.shape
    if nodes != schedule.ranks:
        raise ValueError(f"The schedule has {schedule.ranks} ranks but the network has "
                         f"{nodes} nodes")
    if dimensions is None:
        dimensions = max(1, sum(1 for d in schedule.shape if d > 1))
    arrays = schedule.arrays()
    send_peer, send = arrays["send_peer"], arrays["send"]
    steps = schedule.steps
    # Messages ordered by step: (step, collective, rank) order of np.nonzero on (S, C, P).
    s, c, src = np.nonzero(np.swapaxes(send_peer, 0, 1) >= 0)
    dst = send_peer[c, s, src].astype(np.int64)
    weight = 1.0 / (np.asarray(schedule.blocks, dtype=np.float64) * schedule.collectives)
    size = (send[c, s, src, 1] - send[c, s, src, 0]) * weight[c]
    step_message = np.zeros(steps)
    np.maximum.at(step_message, s, size)
    # What each rank's local port carries per step (all collectives of the step together).
    local = {}
    for name in ("send", "recv"):
        ranges = arrays[name]
        total = np.zeros((steps, schedule.ranks))
        for col in range(schedule.collectives):
            total += (ranges[col, :, :, 1] - ranges[col, :, :, 0]) * weight[col]
        local[name] = total.max(axis=1)

    # Steps that move the same messages (an allgather step retraces a reduce-scatter step)
    # load the links the same way: route each distinct step once.
    bounds = np.searchsorted(s, np.arange(steps + 1))
    same_as = np.arange(steps)
    seen: dict[bytes, int] = {}
    for step in range(steps):
        lo, hi = bounds[step], bounds[step + 1]
        order = np.lexsort((size[lo:hi], dst[lo:hi], src[lo:hi]))
        key = b"".join(a[lo:hi][order].tobytes() for a in (src, dst, size))
        same_as[step] = seen.setdefault(key, step)
    distinct = np.nonzero(same_as == np.arange(steps))[0]
    slot = np.full(steps, -1)
    slot[distinct] = np.arange(len(distinct))
    routed = slot[s] >= 0

    priced = model is not None and bool(model.link_latencies)
    port_latency = _port_latency(peer, model) if priced else None
    row = slot[s[routed]]
    origin, dst, size = src[routed].astype(np.int64), dst[routed], size[routed]
    # One distinct step at a time: the link loads of one step are nodes x radix numbers.
    slot_load = np.zeros(len(distinct))
    slot_hops = np.zeros(len(distinct), dtype=np.int64)
    slot_latency = np.zeros(len(distinct))
    for k in range(len(distinct)):
        mine = row == k
        load, hops, latency = _route_step(peer, next_port, origin[mine], dst[mine], size[mine],
                                          port_latency, model)
        slot_load[k], slot_hops[k], slot_latency[k] = load, hops, latency
    step_load = slot_load[slot[same_as]]
    step_hops = slot_hops[slot[same_as]]
    step_latency = slot_latency[slot[same_as]]
    return Congestion(algorithm=schedule.algorithm, ranks=schedule.ranks, dimensions=dimensions,
                      steps=int((step_hops > 0).sum()),
                      max_hops=int(step_hops.max()) if steps else 0,
                      bandwidth_term=float(step_load.sum()),
                      contention_free_term=float(step_message.sum()),
                      step_hops=tuple(step_hops.tolist()),
                      step_load=tuple(step_load.tolist()),
                      step_inject=tuple(local["send"].tolist()),
                      step_eject=tuple(local["recv"].tolist()),
                      step_entries=tuple(busy_entries(schedule).tolist()),
                      step_latency=tuple(step_latency.tolist()) if priced else None,
                      latency_model=latency_key(model) if priced else None,
                      schedule=schedule)


# -- the "which algorithm wins" table ---------------------------------------------------------

def model_table(models: Mapping[str, Congestion], sizes: Iterable[int],
                alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA,
                hop_latency: float = DEFAULT_HOP_LATENCY) -> list[dict]:
    """Predicted time of every algorithm at every size, and the fastest.

    Returns
    -------
    list of dict
        One per size: ``{"size": bytes, "times": {name: seconds}, "best": name}``.
    """
    rows = []
    for size in sizes:
        times = {name: model.time(size, alpha, beta, hop_latency)
                 for name, model in models.items()}
        rows.append({"size": int(size), "times": times, "best": min(times, key=times.get)})
    return rows

