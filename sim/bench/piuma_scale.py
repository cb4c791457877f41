"""Benchmarks: how far the PIUMA analysis runs on the real network, time per stage and peak
memory.

Each case runs :func:`innet.gen.analysis.piuma.generated` (build the network of Table 1, embed
the allreduce, verify it, the latency-shortest tree, every host round on the routed paths and
by Dijkstra, and the check against the closed form) on a number of nodes shaped by
:func:`~innet.gen.analysis.piuma.sweep_shape`, in a fresh Python process so that its peak
resident memory is its own, and reports switches, links, seconds per stage, peak RSS, alpha
against Eq. 1 (PIUMA, "Analysis", Eq. 1) and the agreement with the closed form. It shows how
large a network this machine generates; timings depend on the machine and its load.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from innet.gen.checks import spell_shape
from innet.sim.bench import Options, case

__all__ = ["measure", "measure_in_child", "summarise"]

#: The child process: ``measure(count, dims)`` printed as JSON.
_CHILD = ("import json, sys\n"
          "from innet.sim.bench.piuma_scale import measure\n"
          "print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))\n")


def measure(count: int, dims: int = 2) -> dict[str, Any]:
    """Run :func:`~innet.gen.analysis.piuma.generated` on ``count`` nodes in this process and
    return its stages' seconds, the peak RSS of this process so far and the results.

    Raises
    ------
    ValueError
        If ``count`` is not a power of two or ``dims`` is below 1.
    RuntimeError
        If the closed form disagrees with the generated network.
    """
    from innet.gen.analysis.piuma import closed_form, generated, sweep_shape

    shape = sweep_shape(count, dims)
    stages: list[tuple[str, float]] = []

    def mark(stage: str) -> None:
        stages.append((stage, time.perf_counter()))

    start = time.perf_counter()
    point = generated(shape, progress=mark)  # check=True: raises unless the closed form agrees
    end = time.perf_counter()
    seconds = {name: (stages[i + 1][1] if i + 1 < len(stages) else end) - at
               for i, (name, at) in enumerate(stages)}
    closed = closed_form(shape)
    return {"nodes": list(shape), "node_count": count, "switches": point.ranks,
            "links": point.extra["links"], "radix": point.extra["radix"],
            "seconds": seconds, "total_seconds": end - start,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "alpha_ns": point.alpha, "eq1_bound_ns": point.bound,
            "closed_form_alpha_ns": closed.alpha, "rounds_ns": list(point.rounds or ()),
            "closed_form_rounds_ns": list(closed.rounds or ()), "agrees": True}


def measure_in_child(count: int, dims: int = 2) -> dict[str, Any]:
    """:func:`measure` in a fresh Python process (so the peak RSS is this size's alone).

    Raises
    ------
    RuntimeError
        If the child fails (the last line of its stderr, the exception, is the message).
    """
    done = subprocess.run([sys.executable, "-c", _CHILD, str(count), str(dims)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(f"Measuring {count} nodes failed: {lines[-1]}")
    return json.loads(done.stdout)


def summarise(report: dict[str, Any]) -> str:
    """One readable line of a :func:`measure` report."""
    stages = ", ".join(f"{name} {sec:.1f} s" for name, sec in report["seconds"].items())
    shape = spell_shape(report["nodes"])
    return (f"{report['node_count']:>6,} nodes ({shape}): {report['switches']:,} switches, "
            f"{report['links']:,} links; {stages}; total {report['total_seconds']:.1f} s, "
            f"peak {report['peak_rss_mb']:,.0f} MB; alpha {report['alpha_ns']:g} ns "
            f"(Eq. 1 {report['eq1_bound_ns']:g} ns), closed form agrees")


def _scale(count: int) -> dict[str, Any]:
    report = measure_in_child(count)
    shape = spell_shape(report["nodes"])
    return {**report, "size": f"{count:,} nodes ({shape}): {report['switches']:,} switches, "
                              f"{report['links']:,} links",
            "summary": summarise(report)}


@case("piuma_scale_1k", "analysis", "PIUMA analysis of the generated network, 1K nodes")
def _scale_1k(options: Options) -> dict[str, Any]:
    return _scale(1024)


@case("piuma_scale_4k", "analysis", "PIUMA analysis of the generated network, 4K nodes")
def _scale_4k(options: Options) -> dict[str, Any]:
    return _scale(4096)


@case("piuma_scale_16", "analysis", "PIUMA analysis of the generated network, 16 nodes",
      quick=True, full=False)
def _scale_16(options: Options) -> dict[str, Any]:
    return _scale(16)
