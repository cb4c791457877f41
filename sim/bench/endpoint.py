"""Benchmarks of the endpoint in cocotb + Verilator: intrinsic throughput, step-engine
turnaround and bandwidth-optimal step throughput on rings of switches and endpoints.

Each case (rings of 2 and 4 nodes, 4,096 elements) builds a ring of switches and endpoints
without throttles (direct links between every switch and its endpoint), and runs, with the flit
monitor of :mod:`innet.sim.tb.tb_endpoint`:

- an in-network broadcast of ``elements`` from node 0 through the intrinsic (node 0 sends every
  element as a request and receives it back as a response; a broadcast has nothing to reduce,
  so this measures the endpoint's streaming both ways);
- Swing and recursive doubling, latency-optimal, on one element: cycles per step-table entry
  (the engine's turnaround: CTS out, data back, reduction, next entry);
- Swing and recursive doubling, bandwidth-optimal, and ring on ``elements``: per entry of node
  0, the elements it sends per cycle while streaming and per cycle of the whole entry.
"""

from __future__ import annotations

import itertools
from typing import Any

from innet.sim.bench import Options, case

__all__ = ["RUNS", "measure", "summarise"]

#: Algorithms of :func:`measure`'s runs, in order: latency-optimal, then bandwidth-optimal.
RUNS = ("swing-l", "recdoub-l", "swing-b", "recdoub-b", "ring")


def measure(nodes: int, elements: int = 4096, *, throttle: bool = False,
            design: Any = None) -> dict[str, Any]:
    """Run the measurements on a ring of ``nodes``; returns the raw reports of
    :func:`innet.sim.tb.tb_endpoint.test_measure` (``runs``, ``intrinsic``) plus ``nodes`` and
    ``elements``. ``design`` is a ``(Design, params)`` of
    :func:`~innet.sim.tb.endpointbench.bench_design` to use instead of building one."""
    from innet.gen.swing import build_schedule
    from innet.sim import runner
    from innet.sim.tb.endpointbench import NODE_MODULE, bench_design

    if design is None:
        design = bench_design(nodes, vector_depth=max(64, elements), throttle=throttle)
    built, params = design
    # One element per entry: as many elements as the schedule has collectives.
    latency = [{"algorithm": a, "schedule_shape": [nodes], "op": "add", "dtype": "fp32",
                "elements": build_schedule(a, nodes).collectives, "base": 0}
               for a in ("swing-l", "recdoub-l")]
    bandwidth = [{"algorithm": a, "schedule_shape": [nodes], "op": "add", "dtype": "fp32",
                  "elements": elements, "base": 0} for a in ("swing-b", "recdoub-b", "ring")]
    intrinsic = [{"root": 0, "cid": 0, "elements": elements}]
    out = runner.run(built, "innet.sim.tb.tb_endpoint", testcase="test_measure", seed=1,
                     params={**params, "seed": 1, "runs": latency + bandwidth,
                             "intrinsic": intrinsic}, internals=False,
                     hier_blocks=(NODE_MODULE,)).output
    return {"nodes": nodes, "elements": elements, **out}


def _span(timeline: dict, key: str) -> tuple[int, int, int] | None:
    got = timeline.get(key)
    return None if got is None else tuple(got)


def _entries(timeline: dict) -> list[int]:
    """The step-table entries node 0 ran, from its monitor timeline (``"0:entry:what"`` keys)."""
    return sorted({int(k.split(":")[1]) for k in timeline if k.startswith("0:")})


def summarise(report: dict[str, Any]) -> list[str]:
    """Readable lines of one :func:`measure` report."""
    nodes, elements = report["nodes"], report["elements"]
    lines = [f"{nodes} nodes (ring), {elements} elements"]
    for run in report["intrinsic"]:
        tl = run["timeline"]
        sent, back = _span(tl, "0:0:request"), _span(tl, "0:0:response_in")
        lines.append(
            f"  intrinsic broadcast from node 0: {run['cycles']} cycles start to last done, "
            f"{elements / run['cycles']:.3f} elements/cycle; node 0 sent {sent[2]} requests "
            f"in {sent[1] - sent[0] + 1} cycles ({sent[2] / (sent[1] - sent[0] + 1):.3f}/cycle)"
            f", received {back[2]} responses in {back[1] - back[0] + 1} cycles "
            f"({back[2] / (back[1] - back[0] + 1):.3f}/cycle)")
    for name, run in zip(RUNS, report["runs"], strict=True):
        tl = run["timeline"]
        entries = _entries(tl)
        starts = [tl[f"0:{e}:cts"][0] for e in entries if f"0:{e}:cts" in tl]
        n = run["elements"]
        count = f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
        head = (f"  {name:9s} n={n}: {run['cycles']} cycles, {count} at node 0, "
                f"{run['data']} data + {run['cts']} CTS flits")
        if name.endswith("-l"):
            per = [b - a for a, b in itertools.pairwise(starts)]
            lines.append(f"{head}; cycles per entry (CTS to next CTS): {per or '-'}, "
                         f"{run['cycles'] / max(1, len(entries)):.1f} on average")
            continue
        lines.append(f"{head}; {n / run['cycles']:.3f} elements/cycle overall")
        for i, e in enumerate(entries):
            data = _span(tl, f"0:{e}:data")
            if data is None:
                continue
            stream = data[1] - data[0] + 1
            end = starts[i + 1] if i + 1 < len(starts) else run["start"] + run["cycles"]
            lines.append(f"    entry {e}: {data[2]} elements sent at {data[2] / stream:.3f}"
                         f"/cycle; entry {end - starts[i]} cycles "
                         f"({data[2] / (end - starts[i]):.3f} elements/cycle)")
    return lines


def _ring(nodes: int, elements: int = 4096) -> dict[str, Any]:
    report = measure(nodes, elements)
    elements = report["elements"]
    (intrinsic,) = report["intrinsic"]
    runs = dict(zip(RUNS, report["runs"], strict=True))
    per_entry = {name: round(runs[name]["cycles"]
                             / max(1, len(_entries(runs[name]["timeline"]))), 1)
                 for name in ("swing-l", "recdoub-l")}
    rate = {name: round(runs[name]["elements"] / runs[name]["cycles"], 3)
            for name in ("swing-b", "recdoub-b", "ring")}
    intrinsic_rate = round(elements / intrinsic["cycles"], 3)
    return {
        "size": f"ring of {nodes} switches and endpoints, {elements:,} elements",
        "nodes": nodes, "elements": elements,
        "intrinsic_elements_per_cycle": intrinsic_rate,
        "cycles_per_entry": per_entry, "elements_per_cycle": rate,
        "result": (f"{nodes} nodes: intrinsic broadcast {intrinsic_rate:.3f} elements/cycle; "
                   + ", ".join(f"{n} {c:g} cycles per entry" for n, c in per_entry.items())
                   + "; " + ", ".join(f"{n} {r:.3f} elements/cycle" for n, r in rate.items())),
        "summary": summarise(report),
    }


@case("endpoint_ring2", "simulation", "Endpoint on a ring of 2: intrinsic, step engine")
def _ring2(options: Options) -> dict[str, Any]:
    return _ring(2)


@case("endpoint_ring4", "simulation", "Endpoint on a ring of 4: intrinsic, step engine")
def _ring4(options: Options) -> dict[str, Any]:
    return _ring(4)
