"""Simulation benchmarks: simulated cycles per second of a whole network (Verilator).

The PolarFly q = 3 network (13 nodes, each a switch with its collective engine and an
endpoint; :mod:`innet.hw.network`) runs in-network allreduces of 1,024 int32
elements per node through :func:`innet.sim.network.simulate`, every result checked
bit-exactly against the golden model. One simulation pays a fixed cost (cocotb start-up,
loading the configuration image over the bus) besides the cycles it simulates, so the case
times two simulations, one allreduce and ``1 + extra`` back to back, and divides the extra
allreduces' cycles by the extra time: the steady simulation speed, with the fixed cost
reported beside it. A warm-up call builds (or finds cached) the Verilator model first.
"""

from __future__ import annotations

import time
from typing import Any

from innet.sim.bench import Options, case

__all__: list[str] = []

ELEMENTS = 1024


def _network_speed(q: int, extra: int) -> dict[str, Any]:
    from innet.gen.topology import polarfly
    from innet.sim.network import Scenario, simulate

    topo = polarfly(q)
    allreduce = Scenario("innet", ELEMENTS, op="add", dtype="int32")
    simulate(topo, [Scenario("innet", 8)])  # warm-up: the Verilator build
    runs = {}
    for count in (1, 1 + extra):
        start = time.perf_counter()
        outcomes = simulate(topo, [allreduce] * count, seed=count)
        seconds = time.perf_counter() - start
        if not all(o.correct for o in outcomes):
            bad = next(o for o in outcomes if not o.correct)
            raise RuntimeError(f"Allreduce on PolarFly q = {q} was wrong: {bad.detail}")
        runs[count] = (sum(o.latency_cycles for o in outcomes), seconds)
    (c1, s1), (ck, sk) = runs[1], runs[1 + extra]
    cycles, seconds = ck - c1, sk - s1
    if seconds <= 0:
        raise RuntimeError("The longer simulation was not slower: the machine is too noisy "
                           "to measure")
    return {
        "size": f"PolarFly q = {q}: {topo.nodes} nodes, {extra} allreduces of {ELEMENTS:,} "
                f"int32 per node",
        "cycles": int(cycles), "seconds": round(seconds, 3),
        "cycles_per_second": round(cycles / seconds, 1),
        "allreduce_cycles": round(c1),
        "fixed_seconds": round(max(0.0, s1 - c1 * seconds / cycles), 3),
        "basis": f"({1 + extra} allreduces - 1) in one simulation each: extra cycles over "
                 f"extra seconds",
    }


@case("sim_polarfly_q3_allreduce", "simulation",
      "PolarFly q = 3 network, long allreduce: simulated cycles per second")
def _polarfly3(options: Options) -> dict[str, Any]:
    return _network_speed(3, 1 if options.quick else 8)
