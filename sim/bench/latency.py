"""Collective latency benchmarks: cycles on the quiet RTL network, against the zero-load bound of
the collective's tree.

- ``latency_polarfly_q3``: on the 13-node PolarFly q = 3 network, quiet (no background traffic,
  no endpoint backpressure), a 1-element fp32 in-network allreduce (sum) and a 4,096-element one,
  in one simulation, every result checked bit-exactly. Reported (:func:`measure`):

  - ``latency_cycles``: the 1-element allreduce, from the first start command to the last
    ``done`` (:attr:`innet.sim.network.Outcome.latency_cycles`);
  - ``bound_cycles``: the zero-load bound of its tree, the latest result of
    :func:`innet.sim.golden.idle_latency` (every hop at the switch's idle per-hop latency,
    every reducing switch at its engine's pipeline; PIUMA, "Collective Engine" and
    "Broadcast Tree"), and whether the RTL delivered every endpoint's first result in exactly
    the modelled cycle (``arrivals_exact``);
  - ``hop_cycles``: the idle per-hop latency as measured: the smallest gap between the cycles
    the endpoints received their result (the response crosses one more switch per level of
    its tree);
  - ``elements_per_cycle``: the 4,096-element allreduce's elements over its cycles.

  :func:`innet.sim.bench.report.targets` turns the cycles into nanoseconds at the routed fmax of
  the switches the hardware cases measured.
"""

from __future__ import annotations

import itertools
from typing import Any

from innet.sim.bench import Options, case

__all__ = ["LONG_ELEMENTS", "measure"]

#: Elements of the long allreduce (its throughput), in a full run.
LONG_ELEMENTS = 4096


def measure(short, long) -> dict[str, Any]:
    """The figures of a 1-element in-network allreduce ``short`` and a long one ``long``
    (:class:`innet.sim.network.Outcome`, run quiet).

    Raises
    ------
    RuntimeError
        If either result is wrong, or ``short`` has no modelled arrivals (not in-network).
    """
    for outcome in (short, long):
        if not outcome.correct:
            raise RuntimeError(f"{outcome.scenario} was wrong: {outcome.detail}")
    if not short.arrivals or not short.predicted_arrivals:
        raise RuntimeError(f"{short.scenario} has no arrivals: not an in-network allreduce")
    bound = max(short.predicted_arrivals.values())
    times = sorted(set(short.arrivals.values()))
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return {
        "latency_cycles": short.latency_cycles,
        "bound_cycles": bound,
        "bound_ratio": round(short.latency_cycles / bound, 3),
        "arrivals_exact": short.arrivals == short.predicted_arrivals,
        "hop_cycles": min(gaps) if gaps else None,
        "elements": long.scenario.elements,
        "cycles": long.latency_cycles,
        "elements_per_cycle": round(long.throughput_elems_per_cycle, 4),
    }


@case("latency_polarfly_q3", "simulation",
      "PolarFly q = 3 network, quiet: in-network allreduce (fp32 add) latency of 1 element, "
      "throughput of 4,096")
def _polarfly3(options: Options) -> dict[str, Any]:
    from innet.gen.topology import polarfly
    from innet.sim.network import Scenario, simulate

    runs = [Scenario("innet", 1, dtype="fp32"), Scenario("innet", LONG_ELEMENTS, dtype="fp32")]
    short, long = simulate(polarfly(3), runs, seed=1, backpressure=0.0)
    out = measure(short, long)
    exact = "every result in the modelled cycle" if out["arrivals_exact"] else \
        "results not in the modelled cycles"
    hop = "-" if out["hop_cycles"] is None else out["hop_cycles"]
    out["result"] = (f"1 element: {out['latency_cycles']} cycles, {out['bound_ratio']:.2f}x the "
                     f"tree's zero-load bound of {out['bound_cycles']} ({exact}), {hop} cycles "
                     f"per hop; {out['elements']:,} elements: {out['cycles']:,} cycles, "
                     f"{out['elements_per_cycle']:.3f} elements/cycle")
    return out
