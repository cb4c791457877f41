"""The Swing-B against recursive-doubling-B study on the RTL network (``innet demo --study``).

The Swing paper (De Sensi et al., NSDI'24, Sections 3 and 5) predicts that on a torus Swing's
bandwidth-optimal allreduce beats recursive doubling's (Rabenseifner's reduce-scatter +
allgather, Section 2.3.3) because Swing's peers are fewer hops away (Eq. 2: ``rho(s)`` hops
instead of ``2^s``), so its messages share fewer links (Table 2's congestion deficiency). This
module runs both on the ring of 8 and on the 4x4 torus for 64 to 4,096 elements through the
endpoints' step engines, and explains the measured numbers with three facts:

- **hop distances**: the longest route of each step of each schedule on the real routing
  (:func:`innet.gen.swing.cost.congestion`);
- **link congestion**: the busiest link's load of each step, in vectors, summed over the steps
  (``W``, the bandwidth term of Eq. 1);
- **the endpoint's fixed cost per step-table entry**: a least-squares fit
  ``latency = a + b * m`` of the measured cycles; ``a`` over the number of step-table entries
  is what one entry costs besides moving data (its clear-to-send handshake with the peer, the
  route latency both ways and the reduction pipeline), ``b`` the cycles per element.

:func:`analyse` turns measured outcomes into that comparison (no simulation);
:func:`run_study` simulates and analyses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "RECDOUB",
    "STUDY_FILES",
    "STUDY_SIZES",
    "SWING",
    "analyse",
    "fit_line",
    "run_study",
    "schedule_facts",
    "study_networks",
    "to_markdown",
]

#: Vector sizes of the study (elements per node).
STUDY_SIZES = (64, 256, 1024, 4096)
#: Files the study writes: its JSON report and its Markdown summary.
STUDY_FILES = ("study.json", "study.md")
#: The two algorithms compared, as :class:`innet.sim.network.Scenario` names.
SWING = "swing-b"
RECDOUB = "recdoub"
#: Their :func:`innet.gen.swing.build_schedule` names.
_SCHEDULES = {SWING: "swing-b", RECDOUB: "recdoub-b"}


def study_networks() -> list[tuple[str, Any]]:
    """The ring of 8 and the 4x4 torus, with their names."""
    from innet.gen.topology import torus

    return [("ring of 8", torus((8,))), ("4x4 torus", torus((4, 4)))]


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares ``y = a + b * x`` through ``points``: ``(a, b)``.

    Raises
    ------
    ValueError
        With fewer than two distinct ``x``.
    """
    xs = [float(x) for x, _ in points]
    if len(set(xs)) < 2:
        raise ValueError(f"A line needs at least two distinct sizes, not {sorted(set(xs))}")
    n = len(points)
    mx = math.fsum(xs) / n
    my = math.fsum(float(y) for _, y in points) / n
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    sxy = math.fsum((x - mx) * (float(y) - my) for x, (_, y) in zip(xs, points, strict=True))
    b = sxy / sxx
    return my - b * mx, b


def schedule_facts(topology: Any, algo: str) -> dict[str, Any]:
    """Step-table entries, per-step hop distances and link loads of ``algo`` on ``topology``.

    ``algo`` is :data:`SWING` or :data:`RECDOUB`; the schedule is the bandwidth-optimal one
    the endpoints run (rank ``r`` on node ``r``, the torus shape as the rank layout), routed by
    the network's own routing.
    """
    from innet.gen.compare import host_prediction, host_shape
    from innet.gen.routing import routing
    from innet.gen.swing import build_schedule
    from innet.gen.swing.cost import congestion

    schedule = build_schedule(_SCHEDULES[algo], host_shape(topology))
    route = routing(topology)
    loads = congestion(schedule, topology.ports.peer, route.next_port)
    cost = host_prediction(topology, _SCHEDULES[algo], route=route).cost
    moving = [i for i, h in enumerate(loads.step_hops) if h]
    return {"schedule": _SCHEDULES[algo], "collectives": schedule.collectives,
            "steps": loads.steps, "entries": len(schedule.table(0)),
            "step_hops": [loads.step_hops[i] for i in moving],
            "hops_total": int(sum(loads.step_hops)), "max_hops": loads.max_hops,
            "step_link_load": [round(loads.step_load[i], 4) for i in moving],
            "bandwidth_term": loads.bandwidth_term,
            "congestion_deficiency": loads.congestion_deficiency,
            "predicted_alpha": cost.alpha, "predicted_beta": cost.beta}


def _runs(outcomes: Iterable[Any], algo: str) -> dict[int, Any]:
    return {o.scenario.elements: o for o in outcomes if o.scenario.algo == algo
            and o.scenario.background == 0}


def analyse(name: str, topology: Any, outcomes: Iterable[Any]) -> dict[str, Any]:
    """Compare Swing-B and recursive doubling-B on one network from measured outcomes.

    Returns
    -------
    dict
        ``network``, ``sizes`` (per size: both latencies, ``speedup`` = recursive doubling /
        Swing, ``winner``), ``algorithms`` (per algorithm: :func:`schedule_facts`, the fit
        ``fixed_cycles`` / ``cycles_per_element``, ``fixed_cycles_per_entry``, ``correct``),
        ``agrees`` (Swing ahead at every size), ``swing_ahead_from`` (the smallest size from
        which Swing stays ahead, ``None`` if never) and ``explanation`` (sentences built from
        the numbers).

    Raises
    ------
    ValueError
        If a size was measured for one algorithm and not the other, or fewer than two sizes.
    """
    outcomes = list(outcomes)
    runs = {a: _runs(outcomes, a) for a in (SWING, RECDOUB)}
    if set(runs[SWING]) != set(runs[RECDOUB]):
        raise ValueError(f"{name}: Swing-B ran sizes {sorted(runs[SWING])} but recursive "
                         f"doubling {sorted(runs[RECDOUB])}")
    sizes = sorted(runs[SWING])
    algorithms: dict[str, dict[str, Any]] = {}
    for algo in (SWING, RECDOUB):
        facts = schedule_facts(topology, algo)
        a, b = fit_line([(m, runs[algo][m].latency_cycles) for m in sizes])
        facts.update(fixed_cycles=a, cycles_per_element=b,
                     fixed_cycles_per_entry=a / max(facts["entries"], 1),
                     correct=all(runs[algo][m].correct for m in sizes),
                     latency_cycles={str(m): runs[algo][m].latency_cycles for m in sizes},
                     predicted_cycles={str(m): runs[algo][m].predicted_cycles for m in sizes})
        algorithms[algo] = facts
    rows = []
    for m in sizes:
        s, r = runs[SWING][m].latency_cycles, runs[RECDOUB][m].latency_cycles
        rows.append({"elements": m, "swing_cycles": s, "recdoub_cycles": r,
                     "speedup": r / s if s else None,
                     "winner": SWING if s < r else RECDOUB if r < s else "tie"})
    ahead_from = None
    for row in reversed(rows):
        if row["winner"] != SWING:
            break
        ahead_from = row["elements"]
    result = {"network": name, "nodes": topology.nodes, "sizes": rows, "algorithms": algorithms,
              "agrees": all(row["winner"] == SWING for row in rows),
              "swing_ahead_from": ahead_from}
    result["explanation"] = _explain(result)
    return result


def _explain(result: dict[str, Any]) -> list[str]:
    sw, rd = result["algorithms"][SWING], result["algorithms"][RECDOUB]
    rows = result["sizes"]
    lines = []
    ahead = [r["elements"] for r in rows if r["winner"] == SWING]
    if result["agrees"]:
        speedups = ", ".join(f"{r['speedup']:.2f}x" for r in rows)
        sizes = ", ".join(f"{r['elements']:,}" for r in rows)
        lines.append(f"The RTL agrees with the paper: Swing-B is ahead at every size "
                     f"({speedups} faster at {sizes} elements).")
    elif not ahead:
        lines.append("The RTL does not agree with the paper: recursive doubling-B is ahead at "
                     "every size measured.")
    else:
        lines.append(f"The RTL agrees only in part: Swing-B is ahead at "
                     f"{', '.join(f'{m:,}' for m in ahead)} elements and behind at the "
                     f"others.")
    lines.append(
        f"Hop distances: Swing's steps reach peers {sw['step_hops']} hops away (sum "
        f"{sw['hops_total']}), recursive doubling's {rd['step_hops']} (sum "
        f"{rd['hops_total']}); the busiest link carries {sw['bandwidth_term']:.3g} vectors "
        f"in total under Swing against {rd['bandwidth_term']:.3g} (congestion deficiency "
        f"{sw['congestion_deficiency']:.2f} against {rd['congestion_deficiency']:.2f}).")
    lines.append(
        f"Measured cost per element: Swing-B {sw['cycles_per_element']:.3f} cycles, recursive "
        f"doubling {rd['cycles_per_element']:.3f} (the model's beta: "
        f"{sw['predicted_beta']:.3f} and {rd['predicted_beta']:.3f}).")
    lines.append(
        f"Fixed cost: Swing-B {sw['fixed_cycles']:.0f} cycles over {sw['entries']} "
        f"step-table entries ({sw['collectives']} collectives), "
        f"{sw['fixed_cycles_per_entry']:.0f} per entry; recursive doubling "
        f"{rd['fixed_cycles']:.0f} cycles over {rd['entries']} entries, "
        f"{rd['fixed_cycles_per_entry']:.0f} per entry: every entry pays a clear-to-send "
        f"handshake with its peer and the route there and back before data moves.")
    db = rd["cycles_per_element"] - sw["cycles_per_element"]
    da = sw["fixed_cycles"] - rd["fixed_cycles"]
    if db > 0 and da > 0:
        lines.append(f"So Swing wins per element but pays {da:.0f} more fixed cycles; the lines "
                     f"cross at about {da / db:,.0f} elements.")
    elif db > 0:
        lines.append("Swing wins both per element and in fixed cost.")
    elif da > 0:
        lines.append("Swing loses both per element and in fixed cost on this network.")
    else:
        lines.append(f"Swing has the lower fixed cost but recursive doubling the lower cost per "
                     f"element; the lines cross at about {-da / -db if db else math.inf:,.0f} "
                     f"elements.")
    return lines


def run_study(sizes: Sequence[int] = STUDY_SIZES, *, seed: int = 0, backpressure: float = 0.25,
              progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Simulate Swing-B and recursive doubling-B on :func:`study_networks` and analyse them.

    ``backpressure`` is the endpoints' random local-link backpressure
    (:func:`innet.sim.network.simulate`): it slows both algorithms' injection alike; 0 shows the
    network and the step engines alone.

    Returns
    -------
    dict
        ``networks`` (one :func:`analyse` result each), ``correct`` (every run bit-exact),
        ``sizes``, ``backpressure`` and ``runs`` (every outcome's
        :meth:`~innet.sim.network.Outcome.to_dict`).
    """
    from innet.sim.network import Scenario, simulate

    say = progress or (lambda stage, done, total: None)
    results, everything = [], []
    for name, topo in study_networks():
        runs = [Scenario(algo=a, elements=m, name=f"{a} {m}") for m in sizes
                for a in (SWING, RECDOUB)]
        say(f"simulate {name}", 0, len(runs))
        outcomes = simulate(topo, runs, seed=seed, max_elements=max(1024, *sizes),
                            backpressure=backpressure,
                            progress=lambda d, t, n=name: say(f"simulate {n}", d, t))
        everything += outcomes
        results.append(analyse(name, topo, outcomes))
    return {"sizes": list(sizes), "backpressure": backpressure, "networks": results,
            "correct": all(o.correct for o in everything),
            "runs": [o.to_dict() for o in everything]}


def to_markdown(study: dict[str, Any]) -> str:
    """The study as Markdown: one table and the explanation per network."""
    out = ["# Swing-B against recursive doubling-B on the RTL network", "",
           (f"Endpoint backpressure {study.get('backpressure', 0.25):g} (the probability that "
            f"a local-link credit is held back in a cycle)."), ""]
    for net in study["networks"]:
        sw, rd = net["algorithms"][SWING], net["algorithms"][RECDOUB]
        out += [f"## {net['network']} ({net['nodes']} nodes)", "",
                ("| elements | Swing-B (cycles) | rec. doubling-B (cycles) | rec. doubling / "
                "Swing | faster |"), "|---:|---:|---:|---:|---|"]
        for row in net["sizes"]:
            winner = {SWING: "Swing-B", RECDOUB: "rec. doubling-B"}.get(row["winner"], "tie")
            out.append(f"| {row['elements']:,} | {row['swing_cycles']:,} | "
                       f"{row['recdoub_cycles']:,} | {row['speedup']:.2f} | {winner} |")
        out += ["", (f"Bit-exact: Swing-B {'yes' if sw['correct'] else 'NO'}, recursive "
                    f"doubling-B {'yes' if rd['correct'] else 'NO'}."), ""]
        out += [" ".join(net["explanation"]), ""]
    return "\n".join(out)
