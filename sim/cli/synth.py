"""``innet synth``: size and speed of innet's RTL on an FPGA (Yosys + nextpnr, from PyPI).

Each component is a subcommand with its construction parameters (``innet synth switch --radix
8``) followed by the flow options every subcommand shares. The flow itself is
:func:`innet.sim.synth.synthesize`; the targets are the files of ``constraints/``.
"""

from __future__ import annotations

import collections
import functools
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from innet.gen.checks import parse_whole
from innet.hw.variants import make_endpoint, make_switch, switch_collective
from innet.sim.cli._common import (
    console,
    err_console,
    json_option,
    output_option,
    print_json,
)
from innet.sim.cli._options import (
    decorate,
    endpoint_options,
    flit_option,
    mul_option,
    switch_options,
    topology_from_args,
    topology_options,
    vector_depth_option,
)
from innet.sim.cli._parse import Finite
from innet.sim.synth.flow import PATHS_KEPT, install_build

__all__ = ["Seeds", "command", "flow_options", "print_breakdown", "print_paths",
           "print_result", "run"]


class Seeds(click.ParamType):
    """Placement seeds: ``1``, ``1,2,3``; the option may be repeated (``--seed 1 --seed 2``)."""

    name = "SEEDS"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        try:
            return tuple(parse_whole(item, "Seed", high=2**31 - 1)
                         for item in str(value).split(","))
        except ValueError:
            self.fail(f"Seeds must be whole numbers from 0 to {2**31 - 1} separated by "
                      f"commas, not {value!r:.60}", param, ctx)


#: The flow options, as the subcommand functions receive them in ``flow``.
_FLOW = ("target", "seeds", "no_pnr", "timeout", "no_cache", "output", "as_json", "breakdown",
         "depth", "paths")


def flow_options(func: Callable) -> Callable:
    """The options every ``innet synth`` component shares, handed to ``func`` as one dict
    ``flow`` (the keyword arguments of :func:`run`)."""

    @functools.wraps(func)
    def command(**kwargs: Any) -> Any:
        flow = {name: kwargs.pop(name) for name in _FLOW}
        seeds = [seed for group in flow["seeds"] for seed in group] or [1]
        twice = sorted(seed for seed, n in collections.Counter(seeds).items() if n > 1)
        if twice:
            raise click.BadParameter(f"Seeds must be distinct, not {twice[0]} twice",
                                     param_hint="'--seed'")
        if flow["no_pnr"] and len(seeds) > 1:
            raise ValueError("Several seeds place and route one synthesis several times; with "
                             "--no-pnr give one seed or none")
        flow["seeds"] = seeds
        return func(flow=flow, **kwargs)

    options = [
        click.option("--target", type=click.Choice(["ecp5", "ecp5-ooc", "ice40"]), default="ecp5",
                     show_default=True,
                     help="Synthesis target: the ECP5 LFE5U-85F (in context, or ecp5-ooc: out "
                          "of context) or the iCE40 HX8K (small components)."),
        click.option("--seed", "--seeds", "seeds", type=Seeds(), multiple=True,
                     help="nextpnr placement seed (default 1; fmax moves 5-10 % with it); "
                          "several (1,2,3 or the option repeated) place and route the one "
                          "synthesis with each and summarise fmax over them."),
        click.option("--no-pnr", "no_pnr", is_flag=True,
                     help="Synthesis and packing only: no place and route, no fmax."),
        click.option("--timeout", type=Finite(min=1), default=1800.0,
                     show_default=True,
                     help="Seconds each tool may run; a place and route past it keeps the "
                          "synthesis figures and says so."),
        click.option("--no-cache", "no_cache", is_flag=True,
                     help="Run the tools even if this design's result is cached."),
        click.option("--breakdown", is_flag=True,
                     help="Also show LUT4, FF, LUT RAM, BRAM, carry and logic cells per block "
                          "of the design's hierarchy."),
        click.option("--breakdown-depth", "depth", type=click.IntRange(min=1), default=2,
                     show_default=True,
                     help="Levels of hierarchy of --breakdown (deeper blocks count in their "
                          "ancestor)."),
        click.option("--paths", type=click.IntRange(1, PATHS_KEPT), default=5,
                     show_default=True,
                     help="Worst endpoints to list after place and route (the worst traced in "
                          "full)."),
        output_option("Keep the build directory here (Verilog, scripts, logs, reports) and "
                      "write synth.json into it; a result taken from the cache has no build "
                      "files (--no-cache runs the tools).", directory=True),
        json_option,
    ]
    return decorate(command, options)


def run(component: Any, name: str, params: dict[str, Any], *, target: str, seeds: list[int],
        no_pnr: bool, timeout: float, no_cache: bool, output: Path | None,
        as_json: bool, breakdown: bool = False, depth: int = 2,
        paths: int = 5) -> dict[str, Any]:
    """Emit ``component`` as ``name`` (or take it as it is if it is a ``Design`` already),
    synthesise it (placed and routed with each seed) and print the result.

    Returns the report: with one seed, its result's fields; with several, the first seed's
    and ``seeds`` (every seed's result) and ``seed_summary``
    (:func:`innet.sim.synth.seed_summary`). ``breakdown`` (rows at ``depth``) is added when
    asked for, and ``paths`` keeps the ``paths`` worst endpoints.
    """
    from innet.hw.verilog import Design, emit
    from innet.sim import synth

    tgt = synth.load_target(target)
    synth.check_tools(tgt.family)  # before the slow part: say how to install them
    # The build runs in a directory beside the output, which takes its files only when the
    # run completes: an interrupted or failed run leaves the output as it was.
    staging = None
    if output is not None:
        output = Path(output)
        output.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.new.", dir=output.parent))
    try:
        err = err_console()
        with err.status(f"emitting {name}") as status:
            design = component if isinstance(component, Design) else emit(component, name)
            results = synth.synthesize_seeds(design, tgt, seeds, pnr=not no_pnr,
                                             timeout=timeout, workdir=staging,
                                             cache=not no_cache,
                                             status=lambda text: status.update(text))
        reports = [{**r.as_json(), "paths": list(r.paths)[:paths]} for r in results]
        report = {"component": params.pop("component"), "params": params,
                  "target_description": tgt.description, **reports[0]}
        if len(results) > 1:
            report["seeds"] = reports
            report["seed_summary"] = synth.seed_summary(reports)
        if breakdown:
            report["breakdown"] = synth.breakdown(results[0].blocks, depth)
        if staging is not None:
            (staging / "synth.json").write_text(json.dumps(report, indent=2, sort_keys=True)
                                                + "\n")
            install_build(staging, output)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    for note in dict.fromkeys(r.note for r in results if r.note):
        click.echo(f"innet: warning: {note}", err=True)
    reused = [str(r.seed) for r in results if r.cached]
    if output is not None and reused:
        seeds = f"seed{'s' if len(reused) > 1 else ''} {', '.join(reused)}"
        click.echo(f"innet: warning: the result of {seeds} came from the "
                   f"synthesis cache, so {output} has no build files of it (--no-cache runs "
                   f"the tools)", err=True)
    if as_json:
        print_json(report)
    else:
        print_result(report)
    return report


def _fmax_row(report: dict[str, Any]) -> tuple[str, str, str]:
    fmax, placed = report["fmax_mhz"], report.get("placed_fmax_mhz")
    if fmax is None and placed is not None:
        return ("fmax", f"<={placed:.1f} MHz",
                "placement estimate: placed, not routed (see the warning)")
    if fmax is None:
        return ("fmax", "-", report["note"] or "not routed")
    verdict = "met" if fmax >= report["clock_mhz"] else "missed"
    return ("fmax", f"{fmax:.1f} MHz", f"target {report['clock_mhz']:g} MHz: {verdict}")


def print_result(report: dict[str, Any]) -> None:
    """The readable form of one ``innet synth`` result."""
    from innet.sim.synth import levels_text

    out = console()
    several = report.get("seeds")
    cached = " (cached)" if report.get("cached") else ""
    seeds = (f"seeds {', '.join(str(r['seed']) for r in several)}" if several
             else f"seed {report['seed']}{cached}")
    out.print(f"{report['design']} on {report['target_description']}, {seeds}", soft_wrap=True)
    rows = [
        ("LUT4", f"{report['lut4']:,}", ""),
        ("CCU2C" if report["target"] == "ecp5" else "carry",
         f"{report['ccu2c'] if report['target'] == 'ecp5' else report['carry']:,}", ""),
        ("FF", f"{report['ff']:,}",
         f"+ {report['wrapper_ff']:,} port registers of the wrapper" if report["wrapper_ff"]
         else ""),
        ("BRAM", f"{report['bram']:,}", ""),
        ("DSP", f"{report['dsp']:,}", ""),
    ]
    if report["lutram"]:
        rows.append(("LUT RAM", f"{report['lutram']:,}", "TRELLIS_DPR16X4, 16x4 bits each"))
    cells = report["logic_cells"]
    rows.append(("logic cells", "-" if cells is None else f"{cells:,}",
                 "LUT slots after packing (CCU2C = 2)" if report["target"] == "ecp5"
                 else "logic cells after packing (LUT + FF)"))
    rows.append(("generic cells", f"{report['generic_cells']:,}",
                 "technology-independent synth; stat"))
    if several:
        for r in several:
            label, value, note = _fmax_row(r)
            cached = " (cached)" if r.get("cached") else ""
            rows.append((f"fmax seed {r['seed']}", value, note + cached))
        summary = report["seed_summary"]
        if summary["routed"]:
            note = (f"median; min {summary['min_mhz']:.1f}, max {summary['max_mhz']:.1f}; "
                    f"{summary['met']} of {len(several)} seeds reach "
                    f"{summary['clock_mhz']:g} MHz")
            rows.append(("fmax seeds", f"{summary['median_mhz']:.1f} MHz", note))
    else:
        rows.append(_fmax_row(report))
    path = report.get("critical_path")
    if path:
        share = 100 * path["routing_ns"] / path["ns"] if path["ns"] else 0.0
        rows.append(("critical path", f"{path['ns']:.2f} ns",
                     f"{path['start']} -> {path['end']}"
                     + (f" (seed {report['seed']})" if several else "")))
        rows.append(("", "", f"{levels_text(path)}, {share:.0f} % routing"))
    for label, value, note in rows:
        out.print(f"  {label:<14}{value:>10}  {note}".rstrip(), soft_wrap=True)
    if report.get("paths"):
        print_paths(report["paths"], report["seed"] if several else None)
    if report.get("breakdown"):
        print_breakdown(report["breakdown"], report["target"] == "ecp5")


def print_paths(paths: list[dict[str, Any]], seed: int | None = None) -> None:
    """The worst endpoints after routing (:func:`innet.sim.synth.worst_paths`) as a table."""
    from innet.sim.synth import levels_text

    out = console()
    of = "" if seed is None else f" (seed {seed})"
    out.print(f"worst endpoints{of}: arrival at the register input, clock-to-output and "
              f"every logic and routing delay before it", soft_wrap=True)
    width = max(len(p["end"]) for p in paths)
    for rank, p in enumerate(paths, 1):
        bits = f"{p['bits']} bit{'s' * (p['bits'] != 1)}"
        line = f"  {rank:>2}  {p['arrival_ns']:>6.2f} ns  {p['end']:<{width}}  {bits:>7}"
        if p.get("start") is not None:
            share = 100 * p["routing_ns"] / p["ns"] if p["ns"] else 0.0
            line += (f"  from {p['start']}: {levels_text(p)}, {share:.0f} % routing "
                     f"(the critical path)")
        out.print(line.rstrip(), soft_wrap=True)


def print_breakdown(rows: list[dict[str, Any]], ecp5: bool = True) -> None:
    """Per-block cell counts (:func:`innet.sim.synth.breakdown`) as a table with its total."""
    from innet.sim.synth import BLOCK_KINDS
    from innet.sim.synth.reports import block_label

    out = console()
    labels = {k: block_label(k, ecp5) for k in BLOCK_KINDS}
    names = [f"{r['block']} (own)" if r["own"] else r["block"] for r in rows]
    width = max(len("block"), *map(len, names))
    out.print(f"  {'block':<{width}}" + "".join(f"{labels[k]:>12}" for k in BLOCK_KINDS),
              soft_wrap=True)
    for name, row in zip(names, rows, strict=True):
        out.print(f"  {name:<{width}}" + "".join(f"{row[k]:>12,}" for k in BLOCK_KINDS),
                  soft_wrap=True)
    total = {k: sum(r[k] for r in rows) for k in BLOCK_KINDS}
    out.print(f"  {'total':<{width}}" + "".join(f"{total[k]:>12,}" for k in BLOCK_KINDS),
              soft_wrap=True)


@click.group("synth")
def command() -> None:
    """Synthesise a component (Yosys, nextpnr) and report its size and fmax.

    Needs the synth extra: pip install 'innet[synth]'.
    """


@command.command("switch")
@switch_options
@click.option("--collective", type=click.Choice(["engine", "pass", "none"]), default="engine",
              show_default=True,
              help="Collective path: the engine (in-network reduction), the pass-through, or "
                   "none (the p2p switch: no collective support).")
@mul_option(default=False)
@flow_options
def switch(collective: str, mul: bool, flow: dict[str, Any], **params: Any) -> None:
    """The PIUMA-style switch with its register file (as `innet verilog switch`)."""
    path = switch_collective(collective, mul=mul, payload_width=params["payload_width"])
    top, values = make_switch(**params, collective=path)
    values.update(collective=collective, mul=mul if collective == "engine" else None)
    run(top, "innet_switch", {"component": "switch", **values}, **flow)


@command.command("endpoint")
@endpoint_options
@flow_options
def endpoint(flow: dict[str, Any], **params: Any) -> None:
    """An endpoint (as `innet verilog endpoint`): vector memory, collective intrinsic, step
    engine, register file."""
    top, values = make_endpoint(**params)
    run(top, "innet_endpoint", {"component": "endpoint", **values}, **flow)


@command.command("alu")
@mul_option(default=True)
@click.option("--operand-tag-width", "tag_width", type=int, default=0, show_default=True,
              help="Bits of the side-band tag carried with the operands (not a flit's tag).")
@flow_options
def alu(mul: bool, tag_width: int, flow: dict[str, Any]) -> None:
    """The reduction unit of the collective engine (innet.hw.alu.ALU, binary32 bit-exact)."""
    from innet.hw.alu import ALU

    run(ALU(mul=mul, tag_width=tag_width), "innet_alu",
        {"component": "alu", "mul": mul, "tag_width": tag_width}, **flow)


@command.command("reduction")
@click.option("--leaves", type=int, default=9, show_default=True,
              help="Operand positions (a switch's engine has radix + 1).")
@click.option("--datapath", type=click.Choice(["multi", "tree"]), default="multi",
              show_default=True,
              help="One multi-operand unit (one alignment, one rounding: innet.hw.alu.multi) "
                   "or a tree of leaves - 1 pairwise ALUs (innet.hw.ceng.tree).")
@mul_option(default=False)
@flow_options
def reduction(leaves: int, datapath: str, mul: bool, flow: dict[str, Any]) -> None:
    """A collective engine's reduction datapath alone, 32-bit operands."""
    if datapath == "multi":
        from innet.hw.alu.multi import MultiOperandUnit

        if mul:
            raise ValueError("--mul needs --datapath tree: the multi-operand unit has no "
                             "multiplier")
        unit = MultiOperandUnit(leaves)
    else:
        from innet.hw.ceng.tree import ReductionTree

        unit = ReductionTree(leaves, mul=mul)
    run(unit, "innet_reduction", {"component": "reduction", "leaves": leaves,
                                  "datapath": datapath, "mul": mul}, **flow)


@command.command("muladd")
@click.option("--width", type=int, default=8, show_default=True, help="Operand width.")
@flow_options
def muladd(width: int, flow: dict[str, Any]) -> None:
    """The registered multiply-add of `innet doctor`: a seconds-long check of the flow."""
    from innet.hw.testing import MulAdd

    run(MulAdd(width), "innet_muladd", {"component": "muladd", "width": width}, **flow)


@command.command("ceng")
@click.option("--radix", type=int, default=8, show_default=True,
              help="Network ports of the switch it sits in (the local port is extra).")
@flit_option("collective_ids")
@mul_option(default=False)
@flow_options
def ceng(radix: int, collective_ids: int, mul: bool, flow: dict[str, Any]) -> None:
    """The collective engine alone (innet.hw.ceng), 32-bit elements."""
    from innet.hw.ceng import CollectiveEngine
    from innet.hw.ceng.top import EngineTop
    from innet.hw.flit import FlitParams

    params = FlitParams(payload_width=32, collective_ids=collective_ids)
    top = EngineTop(CollectiveEngine(params, radix, mul=mul))
    run(top, "innet_ceng", {"component": "ceng", "radix": radix,
                            "collective_ids": collective_ids, "mul": mul}, **flow)


@command.command("network")
@topology_options
@vector_depth_option()
@flow_options
def network(kind: str, vector_depth: int, flow: dict[str, Any], **options: Any) -> None:
    """The whole network of KIND (polarfly, hyperx, torus, piuma): innet.hw.network's
    Network, a switch and an endpoint per node, sized as `innet sim allreduce` sizes it."""
    from innet.hw.network import Network
    from innet.sim.network import cached_network, network_sizes

    topo = topology_from_args(kind, options)
    label = topo.title
    with err_console().status(f"emitting the {label} network"):
        design, _top = cached_network(Network, topo, f"innet_network_{topo.kind}{topo.nodes}",
                                      **network_sizes(topo, vector_depth))
    run(design, design.toplevel, {"component": "network", "topology": label,
                                  "nodes": topo.nodes, **network_sizes(topo, vector_depth)},
        **flow)
