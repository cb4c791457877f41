"""Simulation benchmarks: simulated cycles per second of whole networks (Verilator).

Every case runs :func:`innet.sim.network.simulate`, every result checked bit-exactly against
the golden models and every flit by the bench's checkers. The speed is that of the simulation
during the collectives (start command to the last ``done``: the background traffic, the
backpressure and the checks all run in the simulated design, cocotb only waits): the summed
latencies over the summed wall-clock seconds of those phases. The whole-run speed beside it
also counts loading the images and vectors and reading back the results (``fixed_seconds``:
the whole run's seconds beyond the collectives'). A warm-up call builds (or finds cached) the
Verilator model first. ``load`` names how the images and vectors were loaded
(:func:`innet.sim.network.simulate`'s ``load``: the backdoor unless a case says otherwise).

- ``sim_polarfly_q3_allreduce``: long in-network allreduces (1,024 int32 per node) on the
  13-node PolarFly q = 3 network with background p2p traffic at 0.5;
  ``sim_polarfly_q3_threads`` the same with a Verilator model on 2 threads;
- ``sim_soak_polarfly_q3``: at least 10^6 cycles of random p2p traffic at full load with
  back-to-back allreduces on two collective ids and endpoint backpressure, nothing lost or
  duplicated;
- ``sim_matrix_16``: the 16-switch HyperX 4x4 and 4x4 torus, every algorithm, several sizes,
  types, kinds and background loads (the test suite's scenario matrix, on networks too large
  for it);
- ``sim_polarfly_q5``, ``sim_polarfly_q7``, ``sim_hyperx_4x4x4``: the larger networks (31, 57
  and 64 switches), an in-network allreduce with background traffic and a ring allreduce each;
  ``sim_polarfly_q7_threads`` the same on q = 7 with a Verilator model on 2 threads.
"""

from __future__ import annotations

import math
import time
from typing import Any

from innet.sim.bench import Options, case

__all__: list[str] = []

ELEMENTS = 1024


def _speed(outcomes, seconds: float, load: str = "backdoor") -> dict[str, Any]:
    bad = [o for o in outcomes if not o.correct]
    if bad:
        raise RuntimeError(f"{bad[0].scenario} was wrong: {bad[0].detail}")
    lost = [o for o in outcomes if o.p2p_sent != o.p2p_received]
    if lost:
        raise RuntimeError(f"{lost[0].scenario}: {lost[0].p2p_sent} p2p flits sent, "
                           f"{lost[0].p2p_received} received")
    cycles = sum(o.latency_cycles for o in outcomes)
    hot = sum(o.run_seconds for o in outcomes)
    return {"cycles": int(cycles), "seconds": round(hot, 3),
            "cycles_per_second": round(cycles / hot, 1) if hot > 0 else None,
            "whole_run_seconds": round(seconds, 3),
            "whole_run_cycles_per_second": round(cycles / seconds, 1),
            "fixed_seconds": round(max(0.0, seconds - hot), 3), "load": load,
            "p2p_flits": sum(o.p2p_sent for o in outcomes)}


def _timed(topo, runs, **args):
    from innet.sim.network import simulate

    start = time.perf_counter()
    outcomes = simulate(topo, runs, **args)
    return outcomes, time.perf_counter() - start


def _warm(topo, threads: int = 1) -> float:
    from innet.sim.network import Scenario

    start = time.perf_counter()
    _timed(topo, [Scenario("innet", 1)], threads=threads)
    return round(time.perf_counter() - start, 1)


@case("sim_polarfly_q3_allreduce", "simulation",
      "PolarFly q = 3 network, long allreduces with background 0.5: simulated cycles per second")
def _polarfly3(options: Options, threads: int = 1) -> dict[str, Any]:
    from innet.gen.topology import polarfly
    from innet.sim.network import Scenario

    topo = polarfly(3)
    count = 2 if options.quick else 8
    _warm(topo, threads)
    run = Scenario("innet", ELEMENTS, op="add", dtype="int32", background=0.5)
    outcomes, seconds = _timed(topo, [run] * count, seed=count, threads=threads)
    return {"size": f"PolarFly q = 3: {topo.nodes} nodes, {count} allreduces of "
                    f"{ELEMENTS:,} int32 per node, background p2p 0.5, backpressure 0.25, "
                    f"{threads} thread(s)",
            **_speed(outcomes, seconds),
            "basis": "allreduce cycles over the wall-clock seconds from start to done"}


@case("sim_polarfly_q3_threads", "simulation",
      "PolarFly q = 3 network, long allreduces with background 0.5, Verilator model on 2 "
      "threads: simulated cycles per second")
def _polarfly3_threads(options: Options) -> dict[str, Any]:
    return _polarfly3(options, threads=2)


@case("sim_soak_polarfly_q3", "simulation",
      "PolarFly q = 3 soak: 10^6 cycles of full-load p2p, back-to-back allreduces on two ids")
def _soak(options: Options) -> dict[str, Any]:
    from innet.gen.topology import polarfly
    from innet.sim.network import Scenario

    topo = polarfly(3)
    target = 20_000 if options.quick else 1_000_000
    half = topo.nodes // 2
    pair = (Scenario("innet", ELEMENTS, participants=tuple(range(half)), collective_id=0,
                     background=1.0),
            Scenario("innet", ELEMENTS, participants=tuple(range(half, topo.nodes)),
                     collective_id=1, background=1.0))
    _warm(topo)
    probe, _seconds = _timed(topo, [pair], seed=1)
    per_run = max(o.latency_cycles for o in probe)
    runs = math.ceil(1.2 * target / per_run)
    outcomes, seconds = _timed(topo, [pair] * runs, seed=2)
    # Concurrent scenarios share their cycles: count each run once.
    cycles = sum(max(a.latency_cycles, b.latency_cycles)
                 for a, b in zip(outcomes[::2], outcomes[1::2], strict=True))
    if cycles < target:
        raise RuntimeError(f"The soak ran {cycles:,} cycles, fewer than {target:,}")
    out = _speed(outcomes, seconds)
    hot = sum(max(a.run_seconds, b.run_seconds)
              for a, b in zip(outcomes[::2], outcomes[1::2], strict=True))
    out.update(cycles=int(cycles), seconds=round(hot, 3),
               cycles_per_second=round(cycles / hot, 1),
               whole_run_cycles_per_second=round(cycles / seconds, 1),
               fixed_seconds=round(max(0.0, seconds - hot), 3))
    return {"size": f"PolarFly q = 3: {topo.nodes} nodes, {runs} pairs of concurrent "
                    f"allreduces ({ELEMENTS:,} int32, ids 0 and 1), background p2p 1.0, "
                    f"backpressure 0.25",
            **out, "basis": "collective cycles over the wall-clock seconds from start to done; "
                            "every flit and element checked"}


@case("sim_matrix_16", "simulation",
      "HyperX 4x4 and 4x4 torus (16 switches): every algorithm, checked; cycles per second")
def _matrix16(options: Options) -> dict[str, Any]:
    from innet.gen.topology import hyperx, torus
    from innet.sim.network import Scenario as S

    matrices = {
        "HyperX 4x4": (hyperx((4, 4)), [
            S("innet", 64, dtype="fp32"), S("swing-l", 1), S("swing-b", 1), S("recdoub", 64),
            S("ring", 64, background=0.5)]),
        "torus 4x4": (torus((4, 4)), [
            S("innet", 64, background=1.0), S("innet", 64, kind="broadcast"),
            S("swing-l", 64), S("swing-b", 64, dtype="fp32"), S("recdoub", 1),
            S("ring", 64)]),
    }
    outcomes, seconds, loads = [], 0.0, []
    for label, (topo, runs) in matrices.items():
        _warm(topo)
        load = "bus" if label.startswith("torus") else "backdoor"
        got, took = _timed(topo, runs[:2] if options.quick else runs, seed=len(label),
                           load=load)
        outcomes += got
        seconds += took
        loads.append(f"{load} ({label})")
    return {"size": f"HyperX 4x4 and 4x4 torus: 16 nodes each, {len(outcomes)} scenarios",
            **_speed(outcomes, seconds, ", ".join(loads)),
            "basis": "collective cycles over the wall-clock seconds from start to done"}


def _large(topo, label: str, options: Options, threads: int = 1) -> dict[str, Any]:
    from innet.sim.network import Scenario

    elements = 64 if options.quick else ELEMENTS
    build = _warm(topo, threads)
    runs = [Scenario("innet", elements, background=0.5), Scenario("ring", elements)]
    outcomes, seconds = _timed(topo, runs, seed=1, threads=threads)
    return {"size": f"{label}: {topo.nodes} nodes, an in-network allreduce (background 0.5) and "
                    f"a ring allreduce of {elements:,} int32 per node, {threads} thread(s)",
            **_speed(outcomes, seconds), "build_and_warm_up_seconds": build,
            "basis": "collective cycles over the wall-clock seconds from start to done"}


@case("sim_polarfly_q5", "simulation", "PolarFly q = 5 network (31 switches): cycles per second")
def _polarfly5(options: Options) -> dict[str, Any]:
    from innet.gen.topology import polarfly

    return _large(polarfly(5), "PolarFly q = 5", options)


@case("sim_polarfly_q7", "simulation", "PolarFly q = 7 network (57 switches): cycles per second")
def _polarfly7(options: Options) -> dict[str, Any]:
    from innet.gen.topology import polarfly

    return _large(polarfly(7), "PolarFly q = 7", options)


@case("sim_polarfly_q7_threads", "simulation",
      "PolarFly q = 7 network (57 switches), Verilator model on 2 threads: cycles per second")
def _polarfly7_threads(options: Options) -> dict[str, Any]:
    from innet.gen.topology import polarfly

    return _large(polarfly(7), "PolarFly q = 7", options, threads=2)


@case("sim_hyperx_4x4x4", "simulation", "HyperX 4x4x4 network (64 switches): cycles per second")
def _hyperx444(options: Options) -> dict[str, Any]:
    from innet.gen.topology import hyperx

    return _large(hyperx((4, 4, 4)), "HyperX 4x4x4", options)
