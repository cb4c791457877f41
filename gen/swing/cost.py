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
embeddings) a step costs

    alpha_s + m * beta_s,
    alpha_s = max over ranks r of the sum over its entries of the step of
              max(max(o, R) + R, max(o, S))   for an entry that moves data,
              EMPTY_ENTRY                     for one that moves none (none for an
                                              entry in no table),
    beta_s  = max(load_s / link_bandwidth, port_s / local_bandwidth)

cycles for a vector of ``m`` elements, with ``o`` the ``step_overhead``, ``R`` and ``S`` the
latencies (:meth:`~innet.gen.cost.CostModel.latency` of the route's hops, or with per-link
latencies, ``CostModel.link_latencies``, of its links) of the entry's receive route (from its
receive peer) and send route (0 for none), ``load_s`` the step's largest link load and
``port_s`` the largest fraction of the vector one endpoint injects or ejects in it (all
collectives of the step together). That is the project's endpoint
(:class:`innet.hw.endpoint.engine.StepEngine`), which runs its entries one after another over
its one port, every rank one entry of each collective in every step: an entry that moves data
sends its clear-to-send to its receive peer during the drain of the entry before it (``o``:
the reduction pipeline, then the next entry's load), then the data comes back; its send waits
for the clear-to-send of its send peer, sent during the same drain. An entry that moves nothing
takes :data:`EMPTY_ENTRY` cycles, and one at a step and collective where no rank moves data is
in no table (:meth:`~innet.gen.swing.schedule.Schedule.table` of the vector's length) and takes
none. When the endpoints are never the bottleneck
(``local_bandwidth`` None, as Swing's hosts that use every port at once) a step that moves data
costs ``o + latency(h_s)`` once, ``h_s`` its longest route (with per-link latencies, its
slowest), Swing's Eq. 1, and one that moves none nothing.

:meth:`Congestion.time` is that model in the seconds and bytes of the Swing paper
(``CostModel.from_seconds``, no endpoint port): per step
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
    "EMPTY_ENTRY",
    "Congestion",
    "NextPort",
    "busy_entries",
    "busy_matrix",
    "congestion",
    "covered_steps",
    "latency_key",
    "model_table",
]

#: Cycles the endpoint's step engine takes for a step-table entry that moves no data
#: (:class:`innet.hw.endpoint.engine.StepEngine`).
EMPTY_ENTRY = 2
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
    step_latency : tuple of float, optional
        Only when routed with a cost model that has per-link latencies
        (``congestion(..., model=)``): the one-way latency in cycles of the slowest route of
        each schedule step (0 when nothing moves), each route priced by its own links.
    latency_model : tuple, optional
        The latency parameters of that model (:func:`latency_key`); :meth:`step_costs` prices
        ``step_latency`` only with a model that has the same.
    schedule : Schedule, optional
        The schedule routed: an endpoint port prices its entries.
    entry_hops : numpy.ndarray, optional
        Hops of the route each entry ``(collective, step, rank)`` sends over (0: it sends
        nothing).
    entry_cycles : numpy.ndarray, optional
        Only when routed with a cost model that has per-link latencies: what the links of
        each entry's route add, in cycles.
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
    step_latency: tuple[float, ...] | None = None
    latency_model: tuple | None = None
    schedule: Schedule | None = field(default=None, repr=False, compare=False)
    entry_hops: np.ndarray | None = field(default=None, repr=False, compare=False)
    entry_cycles: np.ndarray | None = field(default=None, repr=False, compare=False)
    _moving_cycles: dict = field(default_factory=dict, init=False, repr=False, compare=False)

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
        vector (module documentation).

        With an endpoint port (a finite ``local_bandwidth``) a step's alpha is that of the
        rank whose entries of the step take longest, each entry priced by its own routes
        (module documentation); ``elements`` prices a vector of that length, whose entries
        move data only where their blocks hold elements (:func:`busy_matrix`), by default a
        vector that fills every block. Without an endpoint port a step that moves data costs
        one alpha, with the latency of its longest route in hops (with per-link latencies,
        ``link_latencies``, of its slowest route), and a step that moves nothing costs nothing.

        Raises
        ------
        ValueError
            If the model has per-link latencies and these loads were not routed with a model
            of the same latencies (``congestion(..., model=model)``), or it has an endpoint
            port and these loads have no schedule.
        """
        model = model if model is not None else CostModel()
        return tuple(Cost(alpha=a, beta=b) for a, b in zip(
            self._alphas(model, elements), self._betas(model), strict=True))

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
        return Cost(alpha=math.fsum(self._alphas(model, elements)),
                    beta=math.fsum(self._betas(model)))

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
        ``collectives`` elements, and its beta: in a step whose entries cover every block of a
        collective (:func:`covered_steps`) one of that collective's entries moves data, so its
        entries are in every table and each costs at least the cheaper of moving data and
        moving none; the other entries may be left out of the tables and cost nothing.

        Raises
        ------
        ValueError
            As :meth:`step_costs`.
        """
        model = model if model is not None else CostModel()
        if not _one_port(model):
            return self.cost(model)
        schedule = self._routed_schedule()
        moving = self._moving(model)
        # Only the entries of a covering collective are in every such vector's tables.
        covering = _covering(schedule)[:, :, None]
        base = np.where(covering, np.minimum(moving, EMPTY_ENTRY), 0.0).sum(axis=0)
        held = busy_matrix(schedule) & covering
        extra = np.where(held, np.maximum(moving - EMPTY_ENTRY, 0.0), np.inf)
        busiest = (base[None] + extra).min(axis=(0, 2), initial=np.inf)
        alphas = np.maximum(base.max(axis=1, initial=0.0),
                            np.where(np.isfinite(busiest), busiest, 0.0))
        return Cost(alpha=math.fsum(alphas.tolist()), beta=math.fsum(self._betas(model)))

    def _routed_schedule(self) -> Schedule:
        if self.schedule is None or self.entry_hops is None:
            raise ValueError("Pricing the entries of an endpoint port needs the loads' "
                             "schedule: route it with congestion()")
        return self.schedule

    def _alphas(self, model: CostModel, elements: int | None) -> list[float]:
        if not _one_port(model):  # every port at once: Swing's one alpha per step
            return [model.step_overhead + latency if hops else 0.0
                    for hops, latency in zip(self.step_hops, self._step_latencies(model),
                                             strict=True)]
        busy = busy_matrix(self._routed_schedule(), elements)
        # An entry at a step and collective where no rank moves data is in no table
        # (Schedule.table with the vector's length).
        empty = np.where(busy.any(axis=2, keepdims=True), float(EMPTY_ENTRY), 0.0)
        per_rank = np.where(busy, self._moving(model), empty).sum(axis=0)
        return per_rank.max(axis=1, initial=0.0).tolist()

    def _betas(self, model: CostModel) -> list[float]:
        return [model.beta(link_load=load, local_load=max(inject, eject)) if hops else 0.0
                for hops, load, inject, eject in zip(self.step_hops, self.step_load,
                                                     self.step_inject, self.step_eject,
                                                     strict=True)]

    def _link_cycles(self, model: CostModel) -> bool:
        """Whether ``model`` prices links by their own latencies, checked against the model
        these loads were routed with."""
        if not model.link_latencies:
            return False
        if self.latency_model != latency_key(model):
            raise ValueError("A cost model with per-link latencies prices the routes "
                             "congestion() priced with it: pass it as "
                             "congestion(..., model=model)")
        return True

    def _step_latencies(self, model: CostModel) -> list[float]:
        if self._link_cycles(model):
            return list(self.step_latency)
        return [model.latency(hops) for hops in self.step_hops]

    def _moving(self, model: CostModel) -> np.ndarray:
        """Cycles of every entry ``(collective, step, rank)`` if it moves data: ``max(o, L) +
        L``, ``L`` the latency of the slower of its send and receive routes."""
        schedule = self._routed_schedule()
        key = (latency_key(model), model.step_overhead)
        if key in self._moving_cycles:
            return self._moving_cycles[key]
        hops = self.entry_hops
        cycles = self.entry_cycles if self._link_cycles(model) else None
        latency = np.where(hops > 0, model.latency(hops, cycles), 0.0)
        recv_peer = schedule.arrays()["recv_peer"]
        collective = np.arange(hops.shape[0])[:, None, None]
        step = np.arange(hops.shape[1])[None, :, None]
        received = np.where(recv_peer >= 0,
                            latency[collective, step, np.maximum(recv_peer, 0)], 0.0)
        overhead = model.step_overhead
        moving = np.maximum(np.maximum(overhead, received) + received,
                            np.maximum(overhead, latency))
        self._moving_cycles[key] = moving
        return moving

    def time(self, size: float, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA,
             hop_latency: float = DEFAULT_HOP_LATENCY) -> float:
        """Predicted allreduce time in seconds for a vector of ``size`` bytes (Eq. 1): the
        cycle model :meth:`cost` with ``CostModel.from_seconds(alpha, beta, hop_latency)``."""
        model = CostModel.from_seconds(alpha, beta, hop_latency)
        return float(model.seconds(self.cost(model).time(size / model.element_bytes)))


def busy_matrix(schedule: Schedule, elements: int | None = None) -> np.ndarray:
    """Whether each step-table entry ``(collective, step, rank)`` of ``schedule`` moves data:
    it sends or receives a block range that holds elements of a vector of ``elements``
    (:meth:`Schedule.moving`; by default, a nonempty block range).

    Returns
    -------
    numpy.ndarray of bool, shape (collectives, steps, ranks)
    """
    if elements is not None:
        check_int("Vector length", elements, low=0)
    return schedule.moving(elements)


def busy_entries(schedule: Schedule, elements: int | None = None) -> np.ndarray:
    """The most step-table entries one rank runs in each step of ``schedule`` that move data
    (:func:`busy_matrix`).

    Returns
    -------
    numpy.ndarray of int, shape (steps,)
    """
    return busy_matrix(schedule, elements).sum(axis=0).max(axis=1, initial=0)


def covered_steps(schedule: Schedule) -> np.ndarray:
    """Per step of ``schedule``: whether the entries of one of its collectives cover every
    block of that collective between them (their send and receive block ranges, over all
    ranks), so that any element of that collective keeps an entry of the step busy.

    Returns
    -------
    numpy.ndarray of bool, shape (steps,)
    """
    return _covering(schedule).any(axis=0)


def _covering(schedule: Schedule) -> np.ndarray:
    """``covering[c, s]``: whether collective ``c``'s entries of step ``s`` cover its
    blocks (:func:`covered_steps`)."""
    arrays = schedule.arrays()
    steps = arrays["send"].shape[1]
    out = np.zeros((schedule.collectives, steps), dtype=bool)
    for c, blocks in enumerate(schedule.blocks):
        depth = np.zeros(steps * (blocks + 1), dtype=np.int64)  # ranges open at each block
        for ranges in (arrays["send"][c], arrays["recv"][c]):
            lo, hi = ranges[..., 0], ranges[..., 1]
            held = hi > lo
            row = np.nonzero(held)[0] * (blocks + 1)
            depth += np.bincount(row + lo[held], minlength=depth.size)
            depth -= np.bincount(row + hi[held], minlength=depth.size)
        depth = np.cumsum(depth.reshape(steps, blocks + 1), axis=1)
        out[c] = (depth[:, :blocks] > 0).all(axis=1)
    return out


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
                size: np.ndarray, port_latency: np.ndarray | None
                ) -> tuple[float, np.ndarray, np.ndarray]:
    """Route one step's messages hop by hop: its heaviest link load, and each message's hops
    and (with ``port_latency``) the cycles its links add."""
    nodes, radix = peer.shape
    load = np.zeros(nodes * radix)
    hops = np.zeros(len(dst), dtype=np.int64)
    cycles = np.zeros(len(dst))  # what each route's links added so far
    left = np.arange(len(dst))  # the messages still on their way
    cur = origin
    hop = 0
    while len(cur):
        if hop >= nodes:
            raise ValueError(f"Routing from node {int(origin[left[0]])} to node "
                             f"{int(dst[left[0]])} does not arrive within {nodes} hops")
        port = np.asarray(next_port(cur, dst[left]), dtype=np.int64)
        bad = (port < 0) | (port >= radix)
        if not bad.any():
            bad = peer[cur, port] < 0
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"Routing at node {int(cur[i])} toward node {int(dst[left[i]])} "
                             f"chose port {int(port[i])}, which the node does not have")
        load += np.bincount(cur * radix + port, weights=size[left], minlength=load.size)
        if port_latency is not None:
            cycles[left] += port_latency[cur, port]
        cur = peer[cur, port].astype(np.int64)
        hop += 1
        arrived = cur == dst[left]
        hops[left[arrived]] = hop
        left, cur = left[~arrived], cur[~arrived]
    return float(load.max(initial=0.0)), hops, cycles


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
    route_hops = np.zeros(len(origin), dtype=np.int64)
    route_cycles = np.zeros(len(origin))
    for k in range(len(distinct)):
        mine = np.nonzero(row == k)[0]
        slot_load[k], route_hops[mine], route_cycles[mine] = _route_step(
            peer, next_port, origin[mine], dst[mine], size[mine], port_latency)
    step_load = slot_load[slot[same_as]]
    # Every message's route, looked up by its ends among the routed ones.
    pairs, first = np.unique(origin * nodes + dst, return_index=True)
    found = np.searchsorted(pairs, src * nodes + send_peer[c, s, src])
    entry_hops = np.zeros(send_peer.shape, dtype=np.int64)
    entry_hops[c, s, src] = route_hops[first][found]
    entry_cycles = None
    if priced:
        entry_cycles = np.zeros(send_peer.shape)
        entry_cycles[c, s, src] = route_cycles[first][found]
    step_hops = entry_hops.max(axis=(0, 2), initial=0)
    step_latency = np.zeros(steps)
    if priced:
        latency = np.where(entry_hops > 0, model.latency(entry_hops, entry_cycles), 0.0)
        step_latency = latency.max(axis=(0, 2), initial=0.0)
    return Congestion(algorithm=schedule.algorithm, ranks=schedule.ranks, dimensions=dimensions,
                      steps=int((step_hops > 0).sum()),
                      max_hops=int(step_hops.max()) if steps else 0,
                      bandwidth_term=float(step_load.sum()),
                      contention_free_term=float(step_message.sum()),
                      step_hops=tuple(step_hops.tolist()),
                      step_load=tuple(step_load.tolist()),
                      step_inject=tuple(local["send"].tolist()),
                      step_eject=tuple(local["recv"].tolist()),
                      step_latency=tuple(step_latency.tolist()) if priced else None,
                      latency_model=latency_key(model) if priced else None,
                      schedule=schedule, entry_hops=entry_hops, entry_cycles=entry_cycles)


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

