"""Whole-network simulation: scenarios in, checked outcomes out.

The Python API over :mod:`innet.sim.tb.networkbench` (the Verilog of a whole network,
:mod:`innet.hw.network`, with credit throttles and monitors on its local links),
:mod:`innet.sim.tb.loader` (the image loader) and :mod:`innet.sim.tb.tb_network` (the cocotb
testbench). A :class:`Scenario` says what to run (an in-network collective, or a host schedule
through the endpoints' step tables, with optional background p2p traffic); :func:`simulate`
runs a list of them in ONE Verilator simulation and returns one :class:`Outcome` per scenario,
each checked bit-exactly against the golden models (:mod:`innet.sim.golden` for in-network
reduction orders, :mod:`innet.gen.swing`'s executor for step schedules).
"""

from __future__ import annotations

import functools
import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from innet.gen.regmap import MAX_VECTOR_DEPTH

__all__ = [
    "ALGOS",
    "ALGO_NAMES",
    "HOST_SCHEDULES",
    "KINDS",
    "LOADS",
    "MAX_ELEMENTS",
    "MAX_SEED",
    "PATTERNS",
    "Outcome",
    "Scenario",
    "built_network",
    "cached_network",
    "check_backpressure",
    "network_sizes",
    "simulate",
]

#: Algorithms a :class:`Scenario` may name.
ALGOS = ("innet", "swing-l", "swing-b", "recdoub", "ring")
#: The :mod:`innet.gen.swing` schedule each host-style algorithm name runs ("recdoub" is the
#: bandwidth-optimal recursive doubling, Rabenseifner's, Swing's baseline; "recdoub-l" and
#: "recdoub-b" may be named explicitly too).
HOST_SCHEDULES = {"swing-l": "swing-l", "swing-b": "swing-b", "recdoub": "recdoub-b",
                  "recdoub-l": "recdoub-l", "recdoub-b": "recdoub-b", "ring": "ring"}
#: Every algorithm name a :class:`Scenario` takes: :data:`ALGOS` and the explicit recursive
#: doublings.
ALGO_NAMES = ("innet", *HOST_SCHEDULES)
#: Collective kinds of an in-network scenario.
KINDS = ("allreduce", "reduce", "broadcast", "barrier")
#: Background traffic patterns.
PATTERNS = ("uniform", "permutation")
#: How :func:`simulate` loads images and vectors.
LOADS = ("backdoor", "lanes", "bus")
#: Largest seed of a simulation (cocotb's, 32 bits).
MAX_SEED = (1 << 32) - 1
#: The fewest cycles the testbench waits for a run to finish before it calls it a hang: it
#: waits the larger of these and eight times the run's prediction.
CYCLE_LIMIT = 400_000
#: The rates the testbench runs, in steps of 1/256: the lowest background load above none
#: (its traffic generators), and the most backpressure (the endpoints' throttle).
MIN_BACKGROUND = 1 / 256
MAX_BACKPRESSURE = 255 / 256
#: Most elements of a simulated vector: as many as an endpoint's vector memory holds.
MAX_ELEMENTS = MAX_VECTOR_DEPTH


@dataclass(frozen=True)
class Scenario:
    """One collective to run on the simulated network.

    Attributes
    ----------
    algo : str
        ``"innet"`` (the switches' collective engines over an embedding), or a host schedule
        run by the endpoints' step engines: ``"swing-l"``, ``"swing-b"`` (Swing, latency- and
        bandwidth-optimal), ``"recdoub"`` (recursive doubling), ``"ring"``.
    elements : int
        Vector length per node (>= 0; 0 only for a barrier).
    op, dtype : str
        :mod:`innet.gen.ops` names.
    kind : str
        In-network only: ``"allreduce"``, ``"reduce"``, ``"broadcast"`` or ``"barrier"``.
    participants : tuple of int or None
        In-network only; ``None`` means every node.
    root : int or None
        In-network only; ``None`` means the embedding's default root.
    collective_id : int
        In-network only: the switches' collective id.
    background : float
        Background p2p load per node, 0..1 (flits per cycle offered by each node's host), run
        in steps of 1/256 (a load above 0 is at least 1/256).
    pattern : str
        ``"uniform"`` (random destination per flit) or ``"permutation"`` (a fixed random
        derangement).
    name : str
        Free label for reports.
    backpressure : float or None
        Random backpressure at the endpoints during this run, 0 <= b <= 255/256 (as
        :func:`simulate`'s ``backpressure``); ``None``: :func:`simulate`'s.
    """

    algo: str
    elements: int
    op: str = "add"
    dtype: str = "int32"
    kind: str = "allreduce"
    participants: tuple[int, ...] | None = None
    root: int | None = None
    collective_id: int = 0
    background: float = 0.0
    pattern: str = "uniform"
    name: str = ""
    backpressure: float | None = None


@dataclass(frozen=True)
class Outcome:
    """What a :class:`Scenario` did on the RTL network.

    Attributes
    ----------
    scenario : Scenario
    correct : bool
        Every node's result bit-exact against the golden model.
    latency_cycles : int
        From the first start command to the last ``done``.
    throughput_elems_per_cycle : float
        ``elements / latency_cycles``.
    predicted_cycles : float or None
        The :mod:`innet.gen.cost` prediction for the same run.
    p2p_sent, p2p_received : int
        Background flits injected and delivered (equal when nothing was lost).
    detail : str
        The first mismatch or another note; ``""`` when correct.
    backpressure : float
        The endpoints' random backpressure during the run (the scenario's, else
        :func:`simulate`'s).
    arrivals : dict of int to int or None
        In-network only: by receiving node, the cycles from the first request flit on an
        endpoint's link to the first response flit on this endpoint's link.
    predicted_arrivals : dict of int to int or None
        In-network only: the same from :func:`innet.sim.golden.idle_latency` (with the link
        stages): equal to ``arrivals`` on an idle network without backpressure.
    run_seconds : float
        Wall-clock seconds the simulator took from the start command to the last ``done``
        (the cycles of the collective itself, no loading).
    """

    scenario: Scenario
    correct: bool
    latency_cycles: int
    throughput_elems_per_cycle: float
    predicted_cycles: float | None
    p2p_sent: int
    p2p_received: int
    detail: str = ""
    backpressure: float = 0.0
    arrivals: dict[int, int] | None = None
    predicted_arrivals: dict[int, int] | None = None
    run_seconds: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready form: the scenario's fields under ``"scenario"`` and every result key
        but ``run_seconds`` (the machine's speed, not the design's)."""
        out = asdict(self)
        del out["run_seconds"]
        sc = out["scenario"]
        if sc["participants"] is not None:
            sc["participants"] = list(sc["participants"])
        return out


def _host_schedule(topology, algo: str):
    from innet.gen.compare import host_shape
    from innet.gen.swing import build_schedule

    return build_schedule(HOST_SCHEDULES[algo], host_shape(topology))


def network_sizes(topology, max_elements: int = 1024) -> dict[str, int]:
    """The hardware sizes :func:`simulate` builds for ``topology``: ``vector_depth``
    (``max_elements``), ``step_depth`` (the longest step table of every host-style algorithm
    on this topology) and ``collective_ids`` (2, or the most collectives a multiport schedule
    runs at once), so that every scenario of a topology shares one build."""
    schedules = [_host_schedule(topology, a) for a in ("swing-l", "swing-b", "recdoub", "ring")]
    return {"vector_depth": max_elements,
            "step_depth": max(s.steps * s.collectives for s in schedules),
            "collective_ids": max([2] + [s.collectives for s in schedules])}


@functools.lru_cache(maxsize=8)
def _built(topology, vector_depth: int, step_depth: int, collective_ids: int,
           link_stages: tuple[tuple[tuple[int, int], int], ...], mul: bool):
    from innet.sim.tb.networkbench import NetworkBench

    return cached_network(NetworkBench, topology, f"innet_netbench_{topology.kind}{topology.nodes}",
                          vector_depth=vector_depth, step_depth=step_depth,
                          collective_ids=collective_ids, link_stages=dict(link_stages), mul=mul)


def cached_network(cls, topology, name: str, **args):
    """``(Design, top)``: the network ``cls(topology, **args)`` (a
    :class:`~innet.hw.network.Network` or a wrapper of it) and its Verilog with top module
    ``name`` (:func:`innet.hw.network.network_verilog`), from the design cache
    (:mod:`innet.sim.designcache`) when it holds it: building the top is quick, converting it
    is not."""
    from innet.hw.network import network_verilog
    from innet.sim.designcache import cached_design

    top = cls(topology, **args)
    params = {"class": f"{cls.__module__}.{cls.__qualname__}", "topology": topology.fingerprint,
              **{k: sorted(v.items()) if isinstance(v, Mapping) else v for k, v in args.items()}}
    design = cached_design(name, params, lambda: network_verilog(top, name))
    _mark_used(top)  # (a conversion already did; a design from the cache did not elaborate it)
    return design, top


def _mark_used(top) -> None:
    """Mark ``top`` and the components it holds as elaborated, as a conversion does: a network
    served from the design cache is never elaborated, and Amaranth would warn about each of its
    components when they are collected."""
    from amaranth import Elaboratable

    seen, stack = set(), [top]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        obj._MustUse__used = True  # what amaranth.hdl.Fragment.get sets
        for value in vars(obj).values():
            items = value if isinstance(value, (list, tuple)) else [value]
            stack.extend(v for v in items if isinstance(v, Elaboratable))


def built_network(topology, max_elements: int = 1024,
                  link_stages: int | Mapping[tuple[int, int], int] = 0, *, mul: bool = False):
    """``(Design, NetworkBench)``: the network :func:`simulate` runs for ``topology``
    (:class:`innet.sim.tb.networkbench.NetworkBench` with :func:`network_sizes`,
    ``link_stages`` and ``mul``, the switches' multipliers), built once per process, its
    Verilog from the design cache (:func:`cached_network`); the Verilator build is cached by
    the design's digest."""
    from innet.hw.network import link_stage_map

    stages = tuple(sorted(link_stage_map(topology, link_stages).items()))
    return _built(topology, **network_sizes(topology, max_elements), link_stages=stages,
                  mul=mul)


def _check(scenario: Scenario, topology, depth: int) -> None:
    """Check one of :func:`simulate`'s scenarios, which has checked that it is a Scenario with
    an integer number of elements."""
    from innet.gen.checks import check_int
    from innet.gen.ops import DType, Op, check_supported
    from innet.gen.regmap import MAX_COLLECTIVE_IDS

    if not isinstance(scenario.algo, str) or scenario.algo not in ALGO_NAMES:
        raise ValueError(f"Algorithm must be one of {', '.join(ALGO_NAMES)}, not "
                         f"{scenario.algo!r:.60}")
    if not isinstance(scenario.name, str):
        raise TypeError(f"Name must be a string, not {scenario.name!r:.60}")
    last = topology.nodes - 1
    if scenario.participants is not None:
        if not isinstance(scenario.participants, tuple):
            raise TypeError(f"Participants must be a tuple of node ids, not "
                            f"{scenario.participants!r:.60}")
        for node in scenario.participants:
            check_int("Participant", node, low=0, high=last)
    if scenario.root is not None:
        check_int("Root", scenario.root, low=0, high=last)
    check_int("Collective id", scenario.collective_id, low=0, high=MAX_COLLECTIVE_IDS - 1)
    n = scenario.elements
    if n < 0 or (n == 0 and scenario.kind != "barrier"):
        raise ValueError(f"Elements must be at least 1 (0 only for a barrier), not {n}")
    if n > depth:
        raise ValueError(f"A vector of {n} elements does not fit in the endpoints' memory of "
                         f"{depth} elements")
    check_supported(Op.parse(scenario.op), DType.parse(scenario.dtype))
    if scenario.kind not in KINDS:
        raise ValueError(f"Kind must be one of {', '.join(KINDS)}, not {scenario.kind!r}")
    if scenario.algo != "innet" and (scenario.kind != "allreduce"
                                     or scenario.participants is not None
                                     or scenario.root is not None):
        raise ValueError(f"Algorithm {scenario.algo} runs an allreduce on every node only")
    if isinstance(scenario.background, bool) or not isinstance(scenario.background,
                                                                numbers.Real):
        raise TypeError(f"Background load must be a number, not {scenario.background!r:.60}")
    if not 0 <= scenario.background <= 1:
        raise ValueError(f"Background load must be between 0 and 1, not {scenario.background}")
    if 0 < scenario.background < MIN_BACKGROUND:
        raise ValueError(f"Background load {scenario.background} is below the traffic "
                         f"generators' finest rate, 1/256 of the cycles")
    if scenario.pattern not in PATTERNS:
        raise ValueError(f"Pattern must be one of {', '.join(PATTERNS)}, not "
                         f"{scenario.pattern!r}")
    if scenario.backpressure is not None:
        check_backpressure(scenario.backpressure)


def _check_inject(kind: str, node: int, scenarios: list[Scenario]) -> None:
    """Refuse a fault injection that no scenario gives a chance to act: the host-flit faults
    act on background traffic, ``corrupt`` on the in-network responses ``node`` receives."""
    if kind in ("drop", "duplicate", "reorder") and not any(s.background for s in scenarios):
        raise ValueError(f"The {kind} injection acts on background traffic, and no scenario "
                         f"has any")

    def receives(s: Scenario) -> bool:
        if s.kind == "reduce":  # the root only (the embedding's own when not given)
            return s.root is None or s.root == node
        return s.participants is None or node in s.participants

    if kind == "corrupt" and not any(s.algo == "innet" and s.elements and receives(s)
                                     for s in scenarios):
        raise ValueError(f"The corrupt injection acts on the in-network responses node {node} "
                         f"receives, and no scenario sends it any")


def check_backpressure(backpressure: float) -> None:
    """Refuse a backpressure that is not a number in [0, 1), or that the endpoints' throttle
    (steps of 1/256) would run as another rate above 255/256 (TypeError, ValueError)."""
    if isinstance(backpressure, bool) or not isinstance(backpressure, numbers.Real):
        raise TypeError(f"Backpressure must be a number, not {backpressure!r:.60}")
    if not 0 <= backpressure < 1:
        raise ValueError(f"Backpressure must be at least 0 and below 1, not {backpressure}")
    if backpressure > MAX_BACKPRESSURE:
        raise ValueError(f"Backpressure must be at most 255/256 (0.996), the most the "
                         f"endpoints' throttle holds back, not {backpressure}")


def _stall_rate(backpressure: float) -> int:
    """The local links' throttle setting: held back ``stall_rate / 256`` of the cycles."""
    return round(backpressure * 256)


def _host_rate(background: float) -> int:
    """The traffic generators' setting: a host flit offered in ``host_rate / 256`` of the
    cycles."""
    return round(background * 256)


def _plan(group: tuple[Scenario, ...], topology, routes, sizes: dict, backpressure: float,
          label: int, model, stages: dict) -> tuple[dict, list[float], list]:
    """The testbench parameters of one run (a group of concurrent scenarios), the cost
    model's predictions (with the local bandwidth the backpressure leaves, one less the rate
    the throttle runs, :func:`_stall_rate` / 256) and the idle-network arrivals of in-network ones
    (:func:`innet.sim.golden.idle_latency` with ``stages`` as link latencies)."""
    from innet.gen.compare import host_prediction, host_shape
    from innet.gen.embed import embed, embedding_cost
    from innet.gen.image import build_image, encode
    from innet.gen.swing import build_schedule
    from innet.sim.golden import idle_latency

    model = replace(model, local_bandwidth=1 - _stall_rate(backpressure) / 256)
    first = group[0]
    hosts = [s for s in group if s.algo != "innet"]
    if hosts and len(group) > 1:
        raise ValueError("A host-style schedule runs alone, not concurrently with another "
                         "collective")
    keys = {(s.elements, s.dtype, s.background, s.pattern, s.backpressure) for s in group}
    if len(keys) > 1:
        raise ValueError("Concurrent scenarios must share elements, dtype, background, "
                         "pattern and backpressure")
    spec: dict[str, Any] = {"elements": int(first.elements), "op": first.op,
                            "dtype": first.dtype, "host_rate": _host_rate(first.background),
                            "pattern": first.pattern,
                            "stall_rate": _stall_rate(backpressure), "label": label,
                            "scenarios": list(range(len(group)))}
    image_args: dict[str, Any] = {"elements": max(first.elements, 1), "op": first.op,
                                  "dtype": first.dtype}
    if hosts:
        algorithm = HOST_SCHEDULES[first.algo]
        shape = host_shape(topology)
        schedule = build_schedule(algorithm, shape)
        spec["schedule"] = [algorithm, list(shape)]
        image_args["schedule"] = schedule
        predictions = [host_prediction(topology, algorithm, model,
                                       route=routes).cycles(first.elements)]
        arrivals = [None]
    else:
        embeddings, used, ids = [], set(), set()
        for s in group:
            if s.collective_id in ids:
                raise ValueError(f"Concurrent collectives need different ids, not "
                                 f"{s.collective_id} twice")
            ids.add(s.collective_id)
            e = embed(topology, s.participants, root="auto" if s.root is None else s.root,
                      kind=s.kind, op=s.op, dtype=s.dtype, collective_id=s.collective_id)
            nodes = set(e.participants) | {e.root}
            if nodes & used:
                raise ValueError(f"Concurrent collectives share endpoints {sorted(nodes & used)}"
                                 f"; an endpoint runs one collective at a time")
            used |= nodes
            embeddings.append(e)
        spec["embeddings"] = [e.to_dict() for e in embeddings]
        image_args["embeddings"] = embeddings
        predictions = [float(embedding_cost(e, topology, model).time(s.elements))
                       for e, s in zip(embeddings, group, strict=True)]
        arrivals = [idle_latency(e, radix=topology.radix, link_latency=stages)
                    for e in embeddings]
    image = build_image(topology, routes=routes, **sizes, **image_args)
    spec["image"] = encode(image, "hex")
    # How long the testbench waits for the run's last endpoint: the slowest prediction many
    # times over (background traffic and a deep throttle stretch a run), and never less than
    # a fixed floor, so that only a run that has stopped is called a hang.
    spec["cycle_limit"] = max(CYCLE_LIMIT, 8 * math.ceil(max(predictions)))
    return spec, predictions, arrivals


def simulate(topology, runs: Sequence[Scenario | tuple[Scenario, ...]], *, seed: int = 0,
             waves: bool = False, workdir: str | Path | None = None,
             progress: Callable[[int, int], None] | None = None, backpressure: float = 0.25,
             max_elements: int | None = None,
             link_stages: int | Mapping[tuple[int, int], int] = 0, load: str = "backdoor",
             check_load: bool = False, inject: tuple[str, int] | None = None,
             threads: int = 1) -> list[Outcome]:
    """Run scenarios on the RTL network of ``topology``, all in ONE Verilator simulation.

    The bench generates the background traffic and the backpressure and checks every flit in
    the simulated design (:mod:`innet.sim.tb.networkbench`); the testbench reads its counters
    after each run.

    Parameters
    ----------
    topology : innet.gen.topology.Topology
    runs : sequence
        Each item a :class:`Scenario` (run alone) or a tuple of scenarios run concurrently
        (in-network collectives on different ids and disjoint endpoints).
    seed : int
        Seeds inputs, backpressure, background traffic and delays (0..:data:`MAX_SEED`).
    waves : bool
        Record a VCD (kept in ``workdir``).
    workdir : path, optional
        Keep the simulation directory there.
    progress : callable, optional
        ``progress(done, total)``: called with 0 before the simulation and with every count
        after it (the simulation is one process).
    backpressure : float
        Probability (0 <= b <= 255/256) that a local-link credit is held back in a cycle, per
        direction, in every run whose scenario does not set its own; the endpoints' throttle
        runs it in steps of 1/256 (``b`` rounded to one). The cost model's predictions take
        that rate as the endpoints' local bandwidth: a credit comes back in ``1 - b`` of the
        cycles, so a local link carries at most ``1 - b`` elements a cycle.
    max_elements : int, optional
        The endpoints' vector memory (default 1024, or the largest scenario if larger): one
        build per topology and memory size.
    link_stages : int or mapping of (int, int) to int
        Pipeline stages of the switch-to-switch links (:class:`innet.hw.network.Network`):
        one count for every link or a count per link (PIUMA's levels:
        :func:`innet.gen.topology.piuma.link_cycles`); the cost model's predictions take them
        as link latencies.
    load : str
        How images and vectors are loaded: ``"backdoor"`` (each node's boot memory, which the
        simulator fills from a file per node and which drives the node's switch and endpoint,
        every node at once, with no testbench step per word), ``"lanes"`` (the bench's
        parallel load port, every switch and endpoint at once) or ``"bus"`` (the network's
        configuration bus, one target after another, as a host would). The lanes and the bus
        read every word of the image back.
    check_load : bool
        Read every word the backdoor loads (image, vectors, commands) back through the lanes
        and compare it; for the backdoor only.
    inject : (str, int), optional
        A fault to inject at a node in every run, to show that the checks catch it:
        ``"drop"``, ``"duplicate"`` or ``"reorder"`` a host flit delivered there,
        ``"corrupt"`` a response element on its way into the endpoint, or ``"load"``: the
        backdoor writes the endpoint's first vector element with bit 0 flipped.
    threads : int
        Threads of the Verilated model (:func:`innet.sim.runner.build`; another build).

    Returns
    -------
    list of Outcome
        One per scenario, in order (tuples flattened).

    Raises
    ------
    TypeError
        If a scenario, or a field of one, has the wrong type (a one-line message).
    ValueError
        For anything the topology cannot host (a one-line message), before simulating.
    innet.sim.runner.SimulationError
        If the testbench finds a protocol error (a lost or duplicated flit, a hang, an error
        flag).
    """
    from innet.gen.checks import check_int
    from innet.gen.cost import CostModel
    from innet.gen.deadlock import check_diameter
    from innet.gen.routing import routing
    from innet.gen.topology import check_topology
    from innet.hw.network import image_sizes, link_stage_map
    from innet.sim.runner import run

    check_topology(topology)
    check_diameter(topology)  # before routing and planning, which take long on a large one
    check_int("Seed", seed, low=0, high=MAX_SEED)
    check_int("Threads", threads, low=1, high=os.cpu_count() or 1)
    for name, flag in (("Waves", waves), ("Check load", check_load)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, not {flag!r:.60}")
    if workdir is not None and not isinstance(workdir, str | os.PathLike):
        raise TypeError(f"Workdir must be a path, not {workdir!r:.60}")
    if progress is not None and not callable(progress):
        raise TypeError(f"Progress must be a callable, not {progress!r:.60}")
    if load not in LOADS:
        raise ValueError(f"Load must be one of {', '.join(LOADS)}, not {load!r}")
    if check_load and load != "backdoor":
        raise ValueError(f"Check load applies to the backdoor load, not {load!r} (which reads "
                         f"back every word of the image anyway)")
    from innet.sim.tb.networkbench import INJECT

    kinds = (*INJECT, "load")
    if inject is not None and (
            not isinstance(inject, tuple) or len(inject) != 2 or inject[0] not in kinds
            or isinstance(inject[1], bool) or not isinstance(inject[1], int)
            or not 0 <= inject[1] < topology.nodes):
        raise ValueError(f"Inject must be (kind, node) with a kind of {', '.join(kinds)} "
                         f"and a node of the topology, not {inject!r}")
    if inject is not None and inject[0] == "load" and load != "backdoor":
        raise ValueError(f"The load injection applies to the backdoor load, not {load!r}")
    if isinstance(runs, str | bytes) or not isinstance(runs, Iterable):
        raise TypeError(f"Runs must be a sequence of Scenarios (or tuples of them), not "
                        f"{runs!r:.60}")
    groups = [tuple(r) if isinstance(r, tuple | list) else (r,) for r in runs]
    if not groups or any(not g for g in groups):
        raise ValueError("Simulate needs at least one scenario per run")
    for g in groups:
        for s in g:
            if not isinstance(s, Scenario):
                raise TypeError(f"A run must be a Scenario or a tuple of Scenarios, not "
                                f"{s!r:.60}")
            check_int("Elements", s.elements)
    largest = max(s.elements for g in groups for s in g)
    if max_elements is None and largest > MAX_ELEMENTS:
        raise ValueError(f"A vector of {largest} elements does not fit in an endpoint's "
                         f"memory, {MAX_ELEMENTS} elements at the most")
    depth = max_elements if max_elements is not None else max(1024, largest)
    check_int("Max elements", depth, low=1, high=MAX_ELEMENTS)
    check_backpressure(backpressure)
    for g in groups:
        for s in g:
            _check(s, topology, depth)
    if inject is not None:
        _check_inject(*inject, [s for g in groups for s in g])
    stages = link_stage_map(topology, link_stages)
    if isinstance(link_stages, Mapping):
        model = CostModel(link_latencies={pair: float(n) for pair, n in stages.items()})
    else:
        model = CostModel(link_latency=float(link_stages))
    sizes = image_sizes(topology, **network_sizes(topology, depth))
    routes = routing(topology)
    stalls = [backpressure if g[0].backpressure is None else g[0].backpressure for g in groups]
    specs, predicted, modelled = [], [], []
    planned: dict[tuple, tuple] = {}  # a group run again reuses its plan (a soak)
    for i, g in enumerate(groups):
        key = (g, stalls[i])
        if key not in planned:
            planned[key] = _plan(g, topology, routes, sizes, stalls[i], i, model, stages)
        spec, pred, arrivals = planned[key]
        specs.append(dict(spec, label=i))
        predicted.append(pred)
        modelled.append(arrivals)
    # The switches get multipliers only for an in-network mul.
    from innet.gen.ops import Op

    mul = any(s.algo == "innet" and Op.parse(s.op) == Op.MUL for g in groups for s in g)
    design, top = built_network(topology, depth, stages, mul=mul)
    total = sum(len(g) for g in groups)
    if progress is not None:
        progress(0, total)
    p, ep = top.params, top.endpoint
    params = {
        "topology": topology.to_json(), "seed": seed, "runs": specs,
        "flit": {"payload_width": p.payload_width, "routing_depth": p.routing_depth,
                 "collective_ids": p.collective_ids, "p2p_vcs": p.p2p_vcs,
                 "index_width": p.index_width, "tag_width": p.tag_width},
        "memory_base": ep.memory_base, "endpoint_digest": ep.regmap.digest,
        "switch_digest": top.switch.regmap.digest, "readout": top.readout,
        "addr_width": top.addr_width, "read_latency": top.control_latency + 1, "load": load,
        "check_load": check_load, "boot_depth": top.boot_depth,
        "inject": None if inject is None or inject[0] == "load" else
        [INJECT[inject[0]], inject[1]],
        "inject_load": inject[1] if inject is not None and inject[0] == "load" else None,
    }
    result = run(design, "innet.sim.tb.tb_network", params=params, seed=seed, waves=waves,
                 workdir=workdir, internals=False, hier_blocks=(top.node_module,),
                 threads=threads)
    reported = result.output["runs"]
    outcomes, at = [], 0
    for g, stall, preds, models in zip(groups, stalls, predicted, modelled, strict=True):
        for s, pred, model_arrivals in zip(g, preds, models, strict=True):
            r = reported[at]
            at += 1
            latency = int(r["latency"])
            outcomes.append(Outcome(
                scenario=s, correct=bool(r["correct"]), latency_cycles=latency,
                throughput_elems_per_cycle=s.elements / latency if latency else 0.0,
                predicted_cycles=pred, p2p_sent=int(r["p2p_sent"]),
                p2p_received=int(r["p2p_received"]), detail=r["detail"], backpressure=stall,
                arrivals=None if r["arrivals"] is None else
                {int(u): int(c) for u, c in r["arrivals"].items()},
                predicted_arrivals=model_arrivals, run_seconds=float(r["seconds"])))
            if progress is not None:
                progress(at, total)
    return outcomes
