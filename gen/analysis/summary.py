"""One summary of a topology: what ``innet topo`` prints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from innet.gen.analysis.distances import distance_stats
from innet.gen.analysis.resilience import bisection, link_failures
from innet.gen.analysis.structure import (
    degree_distribution,
    moore_bound,
    polarfly_triangles,
    triangle_count,
)
from innet.gen.topology import QUADRIC, V1, V2, Topology, polarfly_layout

__all__ = ["summarize"]

Progress = Callable[[str, int, int], None]


def summarize(topo: Topology, *, with_bisection: bool = False, with_failures: bool = False,
              seed: int = 0, runs: int = 20, samples: int = 256,
              progress: Progress | None = None) -> dict[str, Any]:
    """A JSON-ready summary of ``topo``.

    Always: ``kind, params, fingerprint, nodes, links, radix, min_degree, degrees`` (degree
    distribution), ``diameter, avg_shortest_path, distance_method, distances_exact,
    moore_bound, moore_efficiency, triangles``. PolarFly adds ``quadrics, v1, v2, starter,
    clusters`` (cluster sizes, C0 first) and ``triangles_by_cluster`` (intra, inter, mixed).
    ``bisection`` and ``failures`` only when asked (they are costly at large sizes).

    ``moore_bound`` is for the maximum degree and the measured diameter; for a disconnected
    network the distance fields are None.

    Parameters
    ----------
    progress : callable, optional
        ``progress(step, done, total)``, ``step`` naming the analysis under way.
    """
    def report(step: str) -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        return lambda done, total: progress(step, done, total)

    out: dict[str, Any] = {
        "kind": topo.kind,
        "params": {k: list(v) if isinstance(v, tuple) else v for k, v in topo.params.items()},
        "fingerprint": topo.fingerprint,
        "nodes": topo.nodes,
        "links": topo.num_links,
        "radix": topo.radix,
        "min_degree": topo.min_degree,
        "degrees": {str(k): v for k, v in degree_distribution(topo).items()},
    }
    stats = distance_stats(topo, samples=samples, seed=seed, progress=report("distances"))
    out["diameter"] = stats.diameter
    out["avg_shortest_path"] = stats.avg_shortest_path
    out["distance_method"] = stats.method
    out["distances_exact"] = stats.exact
    if stats.diameter is not None:
        bound = moore_bound(topo.radix, stats.diameter)
        out["moore_bound"] = bound
        out["moore_efficiency"] = topo.nodes / bound
    else:
        out["moore_bound"] = out["moore_efficiency"] = None
    if progress is not None:
        progress("triangles", 0, 1)
    if topo.kind == "polarfly":
        layout = polarfly_layout(topo)
        tri = polarfly_triangles(topo, layout.starter)
        out["triangles"] = tri.total
        out["triangles_by_cluster"] = {"intra": tri.intra, "inter": tri.inter,
                                       "mixed": tri.mixed}
        out["quadrics"] = topo.classes.count(QUADRIC)
        out["v1"] = topo.classes.count(V1)
        out["v2"] = topo.classes.count(V2)
        out["starter"] = layout.starter
        out["clusters"] = list(layout.sizes)
        out["cluster_names"] = list(layout.names)
    else:
        out["triangles"] = triangle_count(topo)
    if progress is not None:
        progress("triangles", 1, 1)
    if with_bisection:
        if progress is not None:
            progress("bisection", 0, 1)
        cut = bisection(topo, seed=seed)
        out["bisection"] = {"cut": cut.cut, "fraction": cut.fraction, "sizes": list(cut.sizes),
                            "method": cut.method}
        if progress is not None:
            progress("bisection", 1, 1)
    if with_failures:
        result = link_failures(topo, runs=runs, seed=seed, samples=samples,
                               progress=report("link failures"))
        out["failures"] = {
            "runs": result.runs, "seed": result.seed, "step": result.step,
            "disconnection_ratios": list(result.ratios),
            "median_disconnection_ratio": result.median_ratio,
            "median_run": result.median_run,
            "distance_method": result.distance_method,
            "curve": [{"ratio": p.ratio, "failed": p.failed, "diameter": p.diameter,
                       "avg_shortest_path": p.avg_shortest_path} for p in result.curve],
        }
    return out
