"""Generator benchmarks: innet's generators at scale against the networkx references.

Each case times the innet generator on the full-size input (after a warm-up call on a small
input, so that compiled kernels and caches are ready: the figure is the steady state) and the
reference of :mod:`innet.sim.bench.reference` on the same input. A reference that would run
for minutes does a share of its independent, equal units of work (dense-matrix rows,
destinations of the routing table, root candidates of the embedding), taken evenly spaced over
all of them; its time is scaled by ``units_total / units_measured``. The networkx graph a
reference works on is built before its clock starts (input conversion, not counted), which
favours the reference. ``speedup`` is reference seconds over innet seconds: a measured ratio,
never an estimate of either side alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from innet.sim.bench import Options, case

__all__ = ["compare", "timed"]



def timed(func: Callable[[], Any], budget: float = 2.0, repeat: int = 3) -> tuple[float, Any]:
    """``(seconds, result)`` of ``func``: the best of up to ``repeat`` calls while the calls
    so far took less than ``budget`` seconds in all."""
    best, result, spent = float("inf"), None, 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
        if spent >= budget:
            break
    return best, result


def _sig(seconds: float) -> float:
    """``seconds`` to 4 significant digits (microsecond timings keep their precision)."""
    return float(f"{seconds:.4g}")


def compare(size: str, fast: Callable[[], Any], reference: Callable[[np.ndarray], Any],
            total: int, measured: int, unit: str, what: str) -> dict[str, Any]:
    """Time ``fast()`` and ``reference(units)`` on ``measured`` of ``total`` units.

    Returns the case's result: ``size``, ``seconds`` (innet), ``reference`` (what it is, the
    unit, units measured and total, measured and scaled seconds, how the ratio is formed) and
    ``speedup``.
    """
    seconds, _ = timed(fast)
    units = np.unique(np.linspace(0, total - 1, min(measured, total)).round().astype(np.int64))
    start = time.perf_counter()
    reference(units)
    spent = time.perf_counter() - start
    scaled = spent * total / len(units)
    basis = ("whole input" if len(units) == total else
             f"{len(units):,} of {total:,} {unit}s (evenly spaced) timed, scaled by "
             f"{total / len(units):.4g}")
    return {
        "size": size,
        "seconds": _sig(seconds),
        "reference": {"what": what, "unit": unit, "units_total": total,
                      "units_measured": len(units), "seconds_measured": _sig(spent),
                      "seconds": _sig(scaled), "basis": basis},
        "speedup": round(scaled / seconds, 1),
    }


def _ports(topo) -> list[list[int]]:
    peer = topo.ports.peer
    return [[int(v) for v in row if v >= 0] for row in peer]


# PolarFly construction ---------------------------------------------------------------------------

def _polarfly(q: int, rows: int) -> dict[str, Any]:
    from innet.gen.topology import polarfly
    from innet.sim.bench.reference import polarfly_reference

    polarfly(7)  # warm-up
    n = q * q + q + 1
    out = compare(f"ER_{q}: {n:,} routers of radix {q + 1}", lambda: polarfly(q),
                  lambda units: polarfly_reference(q, rows=units), n, rows, "row",
                  "dense dot-product matrix mod q, zero entries as networkx edges")
    out["nodes"] = n
    return out


@case("polarfly_q127", "generators", "PolarFly construction, q = 127")
def _pf127(options: Options) -> dict[str, Any]:
    return _polarfly(127, 512)


@case("polarfly_q251", "generators", "PolarFly construction, q = 251")
def _pf251(options: Options) -> dict[str, Any]:
    return _polarfly(251, 128)


@case("polarfly_q31", "generators", "PolarFly construction, q = 31", quick=True, full=False)
def _pf31(options: Options) -> dict[str, Any]:
    return _polarfly(31, 993)


# Routing tables ----------------------------------------------------------------------------------

def _routing(q: int, dests: int) -> dict[str, Any]:
    from innet.gen.routing import routing
    from innet.gen.topology import polarfly
    from innet.sim.bench.reference import graph_of, routing_reference

    routing(polarfly(3)).table()  # warm-up
    topo = polarfly(q)
    ports = _ports(topo)
    graph = graph_of(ports)
    n = topo.nodes
    out = compare(f"PolarFly q = {q}: {n:,} x {n:,} = {n * n:,} entries",
                  lambda: routing(topo).table(),
                  lambda units: routing_reference(graph, ports, units.tolist()), n, dests,
                  "destination", "networkx BFS from each destination, lowest port one hop "
                  "closer")
    out["entries"] = n * n
    return out


@case("routing_q61", "generators", "Routing tables, PolarFly q = 61")
def _rt61(options: Options) -> dict[str, Any]:
    return _routing(61, 256)


@case("routing_q127", "generators", "Routing tables, PolarFly q = 127")
def _rt127(options: Options) -> dict[str, Any]:
    return _routing(127, 64)


@case("routing_q13", "generators", "Routing tables, PolarFly q = 13", quick=True, full=False)
def _rt13(options: Options) -> dict[str, Any]:
    return _routing(13, 183)


# Embeddings --------------------------------------------------------------------------------------

def _embedding(label: str, topo, grid, candidates: int) -> dict[str, Any]:
    from innet.gen.embed import embed
    from innet.gen.topology import polarfly
    from innet.sim.bench.reference import graph_of, root_keys_reference, tree_reference

    embed(polarfly(3))  # warm-up
    ports = _ports(topo)
    graph = graph_of(ports)
    n = topo.nodes
    parts = list(range(n))
    seconds, emb = timed(lambda: embed(topo))
    # The reference's root search is one BFS per candidate (timed on a share and scaled); its
    # tree stage (one BFS from the root and every participant's walk) runs in full, from the
    # root innet chose (the scaled search does not pick one).
    units = np.unique(np.linspace(0, n - 1, min(candidates, n)).round().astype(np.int64))
    start = time.perf_counter()
    root_keys_reference(graph, parts, grid=grid, candidates=units.tolist())
    search = time.perf_counter() - start
    start = time.perf_counter()
    tree = tree_reference(graph, ports, parts, emb.root)
    tree_seconds = time.perf_counter() - start
    scaled = search * n / len(units) + tree_seconds
    agree = tree["switches"] == {s.node: (s.req_in, s.req_out) for s in emb.switches}
    return {
        "size": f"{label}: {n:,} switches, allreduce on every node",
        "seconds": _sig(seconds),
        "reference": {
            "what": "networkx BFS from each root candidate (eccentricity, total distance), "
                    "then BFS from the root and each participant's walk",
            "unit": "root candidate", "units_total": n, "units_measured": len(units),
            "seconds_measured": _sig(search + tree_seconds), "seconds": _sig(scaled),
            "basis": f"root search: {len(units):,} of {n:,} candidates (evenly spaced) in "
                     f"{search:.3g} s, scaled by {n / len(units):.4g}; tree stage in full "
                     f"({tree_seconds:.3g} s)",
        },
        "speedup": round(scaled / seconds, 1),
        "trees_agree": bool(agree),
        "root": emb.root,
        "depth": emb.depth,
    }


@case("embed_polarfly_q127", "generators", "Allreduce embedding, PolarFly q = 127")
def _emb_pf(options: Options) -> dict[str, Any]:
    from innet.gen.topology import polarfly

    return _embedding("PolarFly q = 127", polarfly(127), None, 64)


@case("embed_hyperx_128x128", "generators", "Allreduce embedding, HyperX 128 x 128")
def _emb_hx(options: Options) -> dict[str, Any]:
    from innet.gen.topology import hyperx

    return _embedding("HyperX 128 x 128", hyperx((128, 128)), (128, 128), 32)


@case("embed_hyperx_16x16", "generators", "Allreduce embedding, HyperX 16 x 16", quick=True,
      full=False)
def _emb_hx16(options: Options) -> dict[str, Any]:
    from innet.gen.topology import hyperx

    return _embedding("HyperX 16 x 16", hyperx((16, 16)), (16, 16), 256)


# Swing schedules ---------------------------------------------------------------------------------

def _swing(shape: tuple[int, ...]) -> dict[str, Any]:
    from innet.gen.swing import build_schedule
    from innet.sim.bench.reference import swing_peers_reference

    build_schedule("swing-l", (4, 4))  # warm-up
    ranks = int(np.prod(shape))
    collectives = 2 * len(shape)
    out = compare(f"{ranks:,} ranks, torus {'x'.join(map(str, shape))}, {collectives} "
                  f"collectives", lambda: build_schedule("swing-l", shape),
                  lambda units: swing_peers_reference(shape, units.tolist()), collectives,
                  collectives, "collective",
                  "Swing Eq. 2 per rank and step in Python loops (peers only; innet also "
                  "builds and checks the block ranges)")
    out["ranks"] = ranks
    out["algorithm"] = "swing-l"
    return out


@case("swing_16384", "generators", "Swing schedule (swing-l), 16,384 ranks")
def _swing_full(options: Options) -> dict[str, Any]:
    return _swing((128, 128))


@case("swing_1024", "generators", "Swing schedule (swing-l), 1,024 ranks", quick=True,
      full=False)
def _swing_quick(options: Options) -> dict[str, Any]:
    return _swing((32, 32))


# Configuration images ----------------------------------------------------------------------------

def _image(q: int) -> dict[str, Any]:
    from innet.gen.embed import embed, reconstruct
    from innet.gen.image import build_image
    from innet.gen.routing import routing, routing_from_table
    from innet.gen.topology import polarfly
    from innet.sim.bench.reference import embedding_reference, graph_of, routing_reference

    topo = polarfly(q)
    n = topo.nodes

    def fast():
        return build_image(topo, routes=routing(topo), embeddings=[embed(topo)])

    ports = _ports(topo)
    graph = graph_of(ports)

    def reference():
        from innet.gen.embed import SwitchConfig

        table = routing_reference(graph, ports)
        ref = embedding_reference(graph, ports, list(range(n)))
        switches = [SwitchConfig(u, req_in, out, out, req_in)
                    for u, (req_in, out) in ref["switches"].items()]
        emb = reconstruct(topo, switches, op="add", dtype="int32", collective_id=0,
                          kind="allreduce")
        return build_image(topo, routes=routing_from_table(topo, table), embeddings=[emb])

    fast_image = fast()  # warm-up
    seconds, _ = timed(fast)
    start = time.perf_counter()
    ref_image = reference()
    ref_seconds = time.perf_counter() - start
    return {
        "size": f"PolarFly q = {q}: {n} switches + {n} endpoints, routes and one allreduce",
        "seconds": _sig(seconds),
        "reference": {"what": "the same image builder fed with networkx routes and embedding",
                      "unit": "image", "units_total": 1, "units_measured": 1,
                      "seconds_measured": _sig(ref_seconds),
                      "seconds": _sig(ref_seconds), "basis": "whole input"},
        "speedup": round(ref_seconds / seconds, 1),
        "images_agree": fast_image.writes == ref_image.writes,
        "writes": sum(len(w) for w in fast_image.writes),
    }


@case("image_polarfly_q13", "generators", "Configuration image, PolarFly q = 13")
def _img13(options: Options) -> dict[str, Any]:
    return _image(13)


@case("image_polarfly_q5", "generators", "Configuration image, PolarFly q = 5", quick=True,
      full=False)
def _img5(options: Options) -> dict[str, Any]:
    return _image(5)
