"""``innet analyze``: analyses reproduced from papers on generated networks.

    innet analyze piuma [--nodes 4x4] [--sockets 16 --cores 8] [--core-mesh 2x4]
        [--placement spread|hub] [--latency-core 5ns --latency-socket 25ns --latency-node 50ns]
        [--bw-mem 51.2Gbps --bw-link 64Gbps] [--element-bytes 4] [--flags 1]
        [--round-overhead 0ns] [--max-nodes 16K --dims 2 --generate-up-to 64]
        [--vector 128KiB] [--plot fig4.png] [--json]

Without ``--nodes`` it reproduces PIUMA's Figure 4 from 1 to ``--max-nodes`` nodes (the real
network built, embedded and verified up to ``--generate-up-to`` nodes, the validated closed
form beyond) and the table of the paper's claims; with ``--nodes`` it analyses that one
network. ``--plot`` writes Figure 4 as a PNG, ``--json`` prints everything as JSON and ``-o``
writes it to a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from innet.gen.analysis.piuma import MAX_ELEMENT_BYTES, MAX_FLAGS
from innet.gen.checks import spell_shape
from innet.gen.topology.piuma import MAX_NODES
from innet.sim.cli._common import (
    json_option,
    output_option,
    print_json,
    progress,
    writable_path,
    write_atomic_all,
)
from innet.sim.cli._options import given, piuma_options
from innet.sim.cli._parse import SIZE_GRAMMAR, Size, parse_bandwidth, parse_mesh, parse_time

__all__ = ["command"]


def _fmt_ns(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 10_000:
        return f"{value / 1000:.1f} µs"
    if value >= 1000:
        return f"{value / 1000:.2f} µs"
    return f"{value:.5g} ns"


def _fmt(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None else format(value, spec)


def _params(options: dict[str, Any]):
    from innet.gen.analysis.piuma import SystemParams

    return SystemParams(
        sockets=options["sockets"], cores=options["cores"],
        mesh=parse_mesh(options["core_mesh"]),
        placement=options["placement"],
        latency_core=parse_time(options["latency_core"], "--latency-core"),
        latency_socket=parse_time(options["latency_socket"], "--latency-socket"),
        latency_node=parse_time(options["latency_node"], "--latency-node"),
        bw_mem=parse_bandwidth(options["bw_mem"], "--bw-mem"),
        bw_link=parse_bandwidth(options["bw_link"], "--bw-link"),
        element_bytes=options["element_bytes"], flags=options["flags"],
        round_overhead=parse_time(options["round_overhead"], "--round-overhead"))


def _point_rows(points: list, vector: int) -> list[str]:
    head = ("nodes", "shape", "D", "switches", "source", "alpha", "Eq.1", "innet T(1)",
            "recdoub T(1)", "ratio", f"innet {vector // 1024}K", f"Rab {vector // 1024}K")
    rows = [head]
    for p in points:
        d = p.to_dict()
        rows.append((f"{p.node_count:,}", spell_shape(p.nodes), str(p.dimensions),
                     f"{p.ranks:,}", p.source, _fmt_ns(p.alpha), _fmt_ns(p.bound),
                     _fmt_ns(d["innet_1_element_ns"]), _fmt_ns(d["rd_1_element_ns"]),
                     _fmt(d["latency_ratio"], ".1f"),
                     f"{_fmt(p.throughput('innet', vector), '.3f')} GB/s",
                     f"{_fmt(p.throughput('rabenseifner', vector), '.3f')} GB/s"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  " + "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True))
            for row in rows]


def _claim_rows(found: list) -> list[str]:
    rows = [("claim", "paper", "ours", "agrees")]
    for c in found:
        ours = "-" if c.ours is None else f"{c.ours:.3g} {c.unit}"
        paper = f"{c.paper:g} {c.unit}"
        if c.key == "latency":
            paper = "< 1 µs"
        elif c.key == "latency-ratio":
            paper = "> 40 x"
        agrees = "-" if c.agrees is None else ("yes" if c.agrees else "no")
        rows.append((c.claim, paper, ours, agrees))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                             for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
            for row in rows]


def _describe(params) -> str:
    return (f"{params.sockets} sockets x {params.cores} cores ({spell_shape(params.mesh)} mesh), "
            f"{params.placement} placement; L_C {params.latency_core:g} ns, "
            f"L_S {params.latency_socket:g} ns, L_P {params.latency_node:g} ns; "
            f"BW_mem {params.bw_mem:g} Gbit/s, BW_link {params.bw_link:g} Gbit/s; "
            f"{params.element_bytes}-byte elements; host rounds: 1 + {params.flags} flag "
            f"latencies + {params.round_overhead:g} ns")


@click.group("analyze")
def command() -> None:
    """Analyses reproduced from papers on generated networks."""


@command.command("piuma", short_help="PIUMA's allreduce analysis (Eq. 1-2, Table 1, "
                                      "Figure 4).")
@piuma_options
@click.option("--bw-mem", default="51.2Gbps", show_default=True,
              metavar="RATE", help="Memory bandwidth per core (a bare number is in Gbit/s).")
@click.option("--bw-link", default="64Gbps", show_default=True,
              metavar="RATE",
              help="Unidirectional link bandwidth (a bare number is in Gbit/s).")
@click.option("--element-bytes", type=click.IntRange(1, MAX_ELEMENT_BYTES), default=4,
              show_default=True,
              help="Bytes per element of the vector.")
@click.option("--flags", type=click.IntRange(0, MAX_FLAGS), default=1, show_default=True,
              help="One-way latencies per host round for the flag exchange.")
@click.option("--round-overhead", default="0ns", show_default=True,
              metavar="TIME",
              help="Extra cost of every host round, not in Table 1 (a bare number is in ns).")
@click.option("--max-nodes", type=Size(low=1, high=MAX_NODES), default="16K", show_default=True,
              help=f"Largest node count of the sweep, a power of two ({SIZE_GRAMMAR}).")
@click.option("--dims", type=int, default=2, show_default=True,
              help="HyperX dimensions of the sweep's networks.")
@click.option("--generate-up-to", type=Size(), default=64, show_default=True,
              help=f"Build, embed and verify the real network up to this many nodes "
                   f"({SIZE_GRAMMAR}).")
@click.option("--vector", type=Size(low=1, unit="B"), default="128KiB", show_default=True,
              help=f"The vector of the throughput claims, in bytes ({SIZE_GRAMMAR}).")
@click.option("--plot", type=click.Path(path_type=Path), default=None,
              callback=writable_path(suffix=".png"),
              help="Write Figure 4 (latency and throughput curves) as a PNG.")
@json_option
@output_option("Write the --json summary to this file.")
def piuma_command(nodes: str | None, plot: Path | None, as_json: bool, output: Path | None,
                  **options: Any) -> None:
    """PIUMA's allreduce analysis (Eq. 1-2, Table 1, Figure 4) on generated networks.

    Without --nodes it sweeps network sizes up to --max-nodes; with --nodes it analyses that
    one network.
    """
    from innet.gen.analysis import piuma as analysis
    from innet.gen.topology.piuma import parse_nodes

    params = _params(options)
    vector, max_nodes = options["vector"], options["max_nodes"]
    limit = options["generate_up_to"]
    shape = parse_nodes(nodes) if nodes is not None else None
    if shape is not None:
        for name in ("max_nodes", "dims"):
            if given(name):
                raise ValueError(f"--{name.replace('_', '-')} applies to the sweep, not to one "
                                 f"network given by --nodes")
    else:
        analysis.sweep_shape(max_nodes, options["dims"])  # validate before any work
    bar = progress()
    bar.disable = not bar.console.is_terminal
    with bar:
        task = bar.add_task("analysing", total=None)

        def report(what: str) -> None:
            bar.update(task, description=what)

        if shape is not None and _count(shape) <= limit:
            points = [analysis.generated(shape, params, progress=report)]
        elif shape is not None:
            points = [analysis.closed_form(shape, params)]
        else:
            points = analysis.sweep(params, max_nodes=max_nodes, dims=options["dims"],
                                    generate_up_to=limit, progress=report)
        found = analysis.claims(points, vector_bytes=vector) if shape is None else []
        implied = analysis.implied_overheads(points, vector_bytes=vector) \
            if shape is None else {}
        image = analysis.figure(points, vector_bytes=vector) if plot is not None else None
    written = str(plot) if image is not None else None
    out: dict[str, Any] = {"params": params.to_dict(), "vector_bytes": vector,
                           "points": [p.to_dict() for p in points]}
    if shape is None:
        out["claims"] = [c.to_dict() for c in found]
        out["implied_round_overhead_ns"] = implied
    if written:
        out["written"] = {"plot": written}
    files = [(plot, image)] if image is not None else []
    if output is not None:
        files.append((output, json.dumps(out, indent=2, sort_keys=True) + "\n"))
    write_atomic_all(files)
    if as_json:
        print_json(out)
        return
    click.echo(f"PIUMA allreduce: {_describe(params)}")
    if shape is not None:
        _single(points[0], vector)
    else:
        click.echo("latency (1 element) and throughput (per core) by network size")
        for line in _point_rows(points, vector):
            click.echo(line)
        click.echo("the paper's claims")
        for line in _claim_rows(found):
            click.echo(line)
        parts = [f"{k} {_fmt_ns(v)}" for k, v in implied.items() if v is not None]
        if parts:
            click.echo("host round overhead that would make each claim exact (on top of "
                       "--round-overhead; Table 1 lists none): " + ", ".join(parts))
    if written:
        click.echo(f"wrote plot: {written}")
    if output is not None:
        click.echo(f"wrote {output}")


def _count(shape: tuple[int, ...]) -> int:
    out = 1
    for size in shape:
        out *= size
    return out


def _single(p, vector: int) -> None:
    d = p.to_dict()
    if p.source == "generated":
        rows = [("network", (f"{'x'.join(map(str, p.nodes))} nodes, {p.ranks:,} switches, "
                            f"{d['links']:,} links, radix {d['radix']} (generated)")),
                ("embedding", f"root {p.root}, verified")]
    else:
        rows = [("network", (f"{'x'.join(map(str, p.nodes))} nodes, {p.ranks:,} switches "
                            f"(closed form; --generate-up-to builds it)"))]
    rows += [
        ("alpha", f"{_fmt_ns(p.alpha)} (Eq. 1 bound {_fmt_ns(p.bound)}, any wiring "
                  f"{_fmt_ns(p.any_wiring_bound)}"
                  + (f"; latency-shortest tree {_fmt_ns(p.spt_alpha)})" if p.spt_alpha
                     else ")")),
        ("beta", f"{p.beta:g} ns per element (Eq. 2)"),
        ("innet T(1)", _fmt_ns(d["innet_1_element_ns"])),
    ]
    if p.rounds is not None:
        rows += [
            ("host rounds", f"{len(p.rounds)}: " + ", ".join(f"{x:g}" for x in p.rounds)
             + " ns"),
            ("recdoub T(1)", (f"{_fmt_ns(d['rd_1_element_ns'])} "
                             f"({d['latency_ratio']:.1f}x in-network)")),
            (f"{vector // 1024} KB", (f"in-network {p.throughput('innet', vector):.3f} GB/s, "
                                     f"Rabenseifner {p.throughput('rabenseifner', vector):.3f} "
                                     f"GB/s")),
        ]
    else:
        rows.append(("host rounds", ("- (recursive doubling needs a power-of-two number of "
                                    "cores and nodes per dimension)")))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"  {name:<{width}}  {value}")
