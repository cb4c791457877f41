"""Measure how far the PIUMA analysis runs on the real network: time per stage and peak memory.

``python -m innet.sim.bench.piuma_scale 1 16 1K [--dims 2] [--json]`` runs
:func:`innet.gen.analysis.piuma.generated` (build the network of Table 1, embed the allreduce,
verify it, the latency-shortest tree, every host round on the routed paths and by Dijkstra, and
the check against the closed form) on ``count`` nodes shaped by
:func:`~innet.gen.analysis.piuma.sweep_shape`, each size in a fresh process so its peak
resident memory is its own, and prints one line per size: switches, links, seconds per stage,
peak RSS, alpha against Eq. 1 (PIUMA, "Analysis", Eq. 1) and the agreement with the closed form.
It is what backs the README's statement of how large a network this machine generates; it is
a measurement, not a test (timings depend on the machine and its load).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

__all__ = ["main", "measure", "measure_in_child", "summarise"]

_MODULE = "innet.sim.bench.piuma_scale"


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
        If the child fails (its last line of stderr is the message).
    """
    done = subprocess.run([sys.executable, "-m", _MODULE, "--child", str(count),
                           "--dims", str(dims)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise RuntimeError(f"Measuring {count} nodes failed: {lines[-1]}")
    return json.loads(done.stdout)


def summarise(report: dict[str, Any]) -> str:
    """One readable line of a :func:`measure` report."""
    stages = ", ".join(f"{name} {sec:.1f} s" for name, sec in report["seconds"].items())
    shape = "x".join(str(s) for s in report["nodes"])
    return (f"{report['node_count']:>6,} nodes ({shape}): {report['switches']:,} switches, "
            f"{report['links']:,} links; {stages}; total {report['total_seconds']:.1f} s, "
            f"peak {report['peak_rss_mb']:,.0f} MB; alpha {report['alpha_ns']:g} ns "
            f"(Eq. 1 {report['eq1_bound_ns']:g} ns), closed form agrees")


def _count(text: str) -> int:
    from innet.gen.analysis.piuma import sweep_shape

    raw = text.strip().upper()
    scale = {"K": 1024}.get(raw[-1:], 1)
    digits = raw[:-1] if scale > 1 else raw
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"Node count must be a number such as 64 or 16K, "
                                         f"not {text!r}")
    count = int(digits) * scale
    try:
        sweep_shape(count, 1)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return count


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m innet.sim.bench.piuma_scale",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("counts", nargs="+", type=_count, help="node counts (powers of two)")
    parser.add_argument("--dims", type=int, default=2, help="HyperX dimensions [2]")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dims < 1:
        parser.error(f"--dims must be at least 1, not {args.dims}")
    if args.child:
        print(json.dumps(measure(args.counts[0], args.dims)))
        return 0
    reports = []
    for count in args.counts:
        try:
            report = measure_in_child(count, args.dims)
        except RuntimeError as exc:
            print(f"piuma_measure: error: {exc}", file=sys.stderr)
            return 1
        reports.append(report)
        if not args.json:
            print(summarise(report), flush=True)
    if args.json:
        print(json.dumps(reports, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
