"""``innet topo``: build a topology, summarise it, export it, plot it.

    innet topo polarfly --q 7 [--r0 N] [--r1 N] [--starter ID] [--plot layout.png]
    innet topo hyperx --shape 4x4x4
    innet topo torus --shape 8x8 [--mesh]
    innet topo piuma --nodes 4x4 [--sockets 16 --cores 8] [--core-mesh 2x4]
        [--placement spread|hub] [--latency-core 5ns --latency-socket 25ns --latency-node 50ns]

Each prints a readable summary (``--json``: a JSON object), writes ``--export FORMAT -o PATH``
(``anynet``, ``adjacency``, ``graphml``, ``json``; the format can also come from the suffix of
``-o``), and runs the costly analyses only when asked (``--bisection``, ``--failures``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from innet.gen.checks import spell_shape
from innet.sim.cli._common import (
    json_option,
    output_option,
    print_json,
    progress,
    writable_path,
    write_atomic,
)
from innet.sim.cli._options import decorate, topology_from_args, topology_options
from innet.sim.network import MAX_SEED

__all__ = ["command"]

_SUFFIXES = {".anynet": "anynet", ".adj": "adjacency", ".graphml": "graphml", ".json": "json"}
_FORMATS = ("anynet", "adjacency", "graphml", "json")


def _common(func: Callable) -> Callable:
    """Options shared by every topology."""
    options = [
        json_option,
        click.option("--export", "fmt", type=click.Choice(_FORMATS), default=None,
                     help="Write the topology in this format to -o PATH."),
        output_option("Where --export writes (the format may come from the suffix: "
                      ".anynet, .adj, .graphml, .json)."),
        click.option("--endpoints", type=click.IntRange(1, 1024), default=1,
                     show_default=True, help="Terminal nodes per router in an anynet or GraphML "
                          "export."),
        click.option("--bisection", is_flag=True,
                     help="Estimate the bisection cut with METIS (costly at large sizes)."),
        click.option("--failures", is_flag=True,
                     help="Run the seeded random link-failure experiment (costly)."),
        click.option("--runs", type=click.IntRange(1, 1000), default=20, show_default=True,
                     help="Runs of the link-failure experiment."),
        click.option("--samples", type=click.IntRange(1, 1_000_000), default=256,
                     show_default=True,
                     help="BFS sources when distances must be sampled (large expanded or "
                          "failed networks)."),
        click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True,
                     help="Seed of METIS, the failure experiment and distance sampling."),
    ]
    return decorate(func, options)


def _export_format(fmt: str | None, output: Path | None) -> str | None:
    if output is None:
        if fmt is not None:
            raise click.UsageError(f"--export {fmt} needs -o PATH")
        return None
    if fmt is None:
        fmt = _SUFFIXES.get(output.suffix.lower())
        if fmt is None:
            raise click.UsageError(f"Cannot tell the export format from {str(output)!r}; name "
                                   f"it with --export")
    return fmt


def _spans(sizes: list[int], names: list[str]) -> str:
    """``C0: 8, C1-C7: 7``: runs of equal cluster sizes."""
    parts, start = [], 0
    for i in range(1, len(sizes) + 1):
        if i == len(sizes) or sizes[i] != sizes[start]:
            name = names[start] if i - 1 == start else f"{names[start]}-{names[i - 1]}"
            parts.append(f"{name}: {sizes[start]}")
            start = i
    return ", ".join(parts)


def _title(summary: dict[str, Any]) -> str:
    from innet.gen.topology import title

    params = summary["params"]
    name = title(summary["kind"], params)
    if summary["kind"] == "polarfly":
        return f"{name} (ER_{params['q']})"
    if summary["kind"] == "piuma":
        return f"{name} ({spell_shape(params['mesh'])} mesh), {params['placement']} placement"
    return name


def _readable(summary: dict[str, Any]) -> list[str]:
    rows = [("nodes", f"{summary['nodes']:,}"), ("links", f"{summary['links']:,}"),
            ("radix", f"{summary['radix']} (min degree {summary['min_degree']})"),
            ("degrees", ", ".join(f"{d}: {n:,}" for d, n in summary["degrees"].items()))]
    how = summary["distance_method"] + ("" if summary["distances_exact"] else ", estimate")
    if summary["diameter"] is None:
        rows.append(("diameter", f"disconnected ({how})"))
    else:
        rows.append(("diameter", f"{summary['diameter']} ({how})"))
        rows.append(("avg shortest path", f"{summary['avg_shortest_path']:.4f}"))
        rows.append(("Moore bound", (f"{summary['moore_bound']:,} (efficiency "
                                    f"{100 * summary['moore_efficiency']:.1f}%)")))
    triangles = f"{summary['triangles']:,}"
    if "triangles_by_cluster" in summary:
        by = summary["triangles_by_cluster"]
        triangles += f" ({by['intra']:,} intra-cluster, {by['inter']:,} inter-cluster"
        triangles += f", {by['mixed']:,} mixed)" if by["mixed"] else ")"
    rows.append(("triangles", triangles))
    if summary["kind"] == "polarfly":
        rows.append(("classes", (f"{summary['quadrics']:,} quadrics, {summary['v1']:,} V1, "
                                f"{summary['v2']:,} V2")))
        rows.append(("clusters", (f"{_spans(summary['clusters'], summary['cluster_names'])} "
                                 f"(starter quadric {summary['starter']})")))
    if "piuma" in summary:
        rows += _piuma_rows(summary["piuma"])
    if "bisection" in summary:
        b = summary["bisection"]
        rows.append(("bisection cut", (f"{b['cut']:,} links ({100 * b['fraction']:.1f}%), halves "
                                      f"{b['sizes'][0]:,}/{b['sizes'][1]:,}, {b['method']}")))
    if "failures" in summary:
        f = summary["failures"]
        rows.append(("link failures", (f"disconnects at {100 * f['median_disconnection_ratio']:.1f}"
                                      f"% failed (median of {f['runs']} runs, seed {f['seed']})")))
        for point in f["curve"]:
            aspl = point["avg_shortest_path"]
            rows.append(("", (f"{100 * point['ratio']:5.1f}% failed: diameter "
                             f"{point['diameter']}, avg shortest path {aspl:.4f}")))
    rows.append(("fingerprint", summary["fingerprint"]))
    width = max(len(name) for name, _ in rows)
    return [_title(summary)] + [f"  {name:<{width}}  {value}" for name, value in rows]


def _piuma_rows(p: dict[str, Any]) -> list[tuple[str, str]]:
    """The multi-level rows of a PIUMA summary (:func:`innet.gen.analysis.piuma.structure`)."""
    levels = ("core", "socket", "node")
    lat = p["latency_ns"]
    rows = [("latencies", ", ".join(f"{name} {lat[name]:g} ns" for name in levels)),
            ("links by level", ", ".join(f"{name} {p['links_by_level'][name]:,}"
                                         for name in levels))]
    for name in levels:
        dist = ", ".join(f"{k}: {v:,}" for k, v in p["ports_by_level"][name].items())
        rows.append((f"{name} ports", f"{dist} (ports per switch: switches)"))
    diam = p["level_diameters"]
    rows.append(("level diameters", (f"mesh {diam['core']} (d_max), sockets {diam['socket']}, "
                                     f"nodes {diam['node']} (D)")))
    if p["latency_diameter_ns"] is not None:
        path = p["latency_diameter_path"]
        rows.append(("latency diameter", (f"{p['latency_diameter_ns']:g} ns ("
                                          + ", ".join(f"{path[n]} {n}" for n in levels)
                                          + " links)")))
    rows.append(("Eq. 1 bound", f"{p['eq1_bound_ns']:g} ns (PIUMA, alpha of an allreduce)"))
    return rows


def _run(topo, *, as_json: bool, fmt: str | None, output: Path | None, endpoints: int,
         bisection: bool, failures: bool, runs: int, samples: int, seed: int,
         plot: Path | None = None) -> None:
    from innet.gen import export
    from innet.gen.analysis import summarize

    fmt = _export_format(fmt, output)
    bar = progress()
    bar.disable = not bar.console.is_terminal  # no stray blank line on a pipe
    with bar:
        tasks: dict[str, Any] = {}

        def report(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done, total=total)

        summary = summarize(topo, with_bisection=bisection, with_failures=failures, seed=seed,
                            runs=runs, samples=samples, progress=report)
        if topo.kind == "piuma":
            from innet.gen.analysis.piuma import structure

            summary["piuma"] = structure(topo)
        text = None
        if fmt is not None:
            if fmt == "anynet":
                text = export.anynet(topo, endpoints)
            elif fmt == "graphml":
                text = export.graphml(topo, endpoints)
            else:
                text = export.export(topo, fmt)
        image = export.plot_layout(topo) if plot is not None else None
    written = {}
    if text is not None:
        written["export"] = str(write_atomic(output, text))
    if image is not None:
        written["plot"] = str(write_atomic(plot, image))
    if as_json:
        if written:
            summary["written"] = written
        print_json(summary)
        return
    for line in _readable(summary):
        click.echo(line)
    for what, path in written.items():
        click.echo(f"wrote {what}: {path}")


@click.command("topo")
@topology_options
@click.option("--starter", type=int, default=None,
              help="PolarFly: starter quadric of the cluster layout [the lowest id].")
@click.option("--plot", type=click.Path(path_type=Path), default=None,
              callback=writable_path(suffix=".png"),
              help="PolarFly: write a PNG of the cluster layout.")
@_common
def command(kind: str, starter: int | None, plot: Path | None, **options: Any) -> None:
    """Build a topology of KIND (polarfly, hyperx, torus, piuma), analyse it, export it.

    \b
    polarfly  PolarFly ER_q (SC'22), optionally expanded (--q, --r0, --r1)
    hyperx    all-to-all links along every dimension (--shape)
    torus     torus (or mesh) of any shape; a 1-D shape is a ring (--shape, --mesh)
    piuma     PIUMA multi-level network: a HyperX of nodes of sockets of core meshes
    """
    given = [name for name, value in (("--starter", starter), ("--plot", plot))
             if value is not None]
    if kind != "polarfly" and given:
        raise ValueError(f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                         f"polarfly, not {kind}")
    _export_format(options["fmt"], options["output"])
    _run(topology_from_args(kind, options, starter=starter), plot=plot, **options)
