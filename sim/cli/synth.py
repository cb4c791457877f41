"""``innet synth``: size and speed of innet's RTL on an FPGA (Yosys + nextpnr, from PyPI).

Each component is a subcommand with its construction parameters (``innet synth switch --radix
8``) followed by the flow options every subcommand shares. The flow itself is
:func:`innet.sim.synth.synthesize`; the targets are the files of ``constraints/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from innet.hw.variants import make_switch
from innet.sim.cli._common import (
    console,
    err_console,
    json_option,
    output_option,
    print_json,
    write_atomic,
)
from innet.sim.cli._options import (
    decorate,
    flit_option,
    mul_option,
    switch_options,
    topology_from_args,
    topology_options,
)
from innet.sim.cli._parse import SIZE_GRAMMAR, Size

__all__ = ["command", "flow_options", "print_result", "run"]


def flow_options(func: Callable) -> Callable:
    """The options every ``innet synth`` component shares."""
    options = [
        click.option("--target", type=click.Choice(["ecp5", "ecp5-ooc", "ice40"]), default="ecp5",
                     show_default=True, help="Synthesis target: a file of constraints/."),
        click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=1,
                     show_default=True,
                     help="nextpnr placement seed (fmax moves 5-10 %% with it)."),
        click.option("--no-pnr", "no_pnr", is_flag=True,
                     help="Synthesis and packing only: no place and route, no fmax."),
        click.option("--timeout", type=click.FloatRange(min=1), default=1800.0,
                     show_default=True,
                     help="Seconds each tool may run; a place and route past it keeps the "
                          "synthesis figures and says so."),
        click.option("--no-cache", "no_cache", is_flag=True,
                     help="Run the tools even if this design's result is cached."),
        output_option("Keep the build directory here (Verilog, scripts, logs, reports) and "
                      "write synth.json into it."),
        json_option,
    ]
    return decorate(func, options)


def run(component: Any, name: str, params: dict[str, Any], *, target: str, seed: int,
        no_pnr: bool, timeout: float, no_cache: bool, output: Path | None,
        as_json: bool) -> dict[str, Any]:
    """Emit ``component`` as ``name`` (or take it as it is if it is a ``Design`` already),
    synthesise it and print the result."""
    from innet.hw.verilog import Design, emit
    from innet.sim import synth

    tgt = synth.load_target(target)
    synth.check_tools(tgt.family)  # before the slow part: say how to install them
    err = err_console()
    with err.status(f"emitting {name}") as status:
        design = component if isinstance(component, Design) else emit(component, name)
        result = synth.synthesize(design, tgt, seed=seed, pnr=not no_pnr, timeout=timeout,
                                  workdir=output, cache=not no_cache,
                                  status=lambda text: status.update(text))
    report = {"component": params.pop("component"), "params": params,
              "target_description": tgt.description, **result.as_json()}
    if output is not None:
        write_atomic(Path(output) / "synth.json",
                     json.dumps(report, indent=2, sort_keys=True) + "\n")
    if result.note:
        click.echo(f"innet: warning: {result.note}", err=True)
    if as_json:
        print_json(report)
    else:
        print_result(report)
    return report


def print_result(report: dict[str, Any]) -> None:
    """The readable form of one ``innet synth`` result."""
    out = console()
    cached = " (cached)" if report.get("cached") else ""
    out.print(f"{report['design']} on {report['target_description']}, seed "
              f"{report['seed']}{cached}", soft_wrap=True)
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
    fmax, placed = report["fmax_mhz"], report.get("placed_fmax_mhz")
    if fmax is None and placed is not None:
        estimate = "placement estimate: placed, not routed (see the warning)"
        rows.append(("fmax", f"<={placed:.1f} MHz", estimate))
    elif fmax is None:
        rows.append(("fmax", "-", report["note"] or "not routed"))
    else:
        verdict = "met" if fmax >= report["clock_mhz"] else "missed"
        rows.append(("fmax", f"{fmax:.1f} MHz", f"target {report['clock_mhz']:g} MHz: {verdict}"))
    path = report.get("critical_path")
    if path:
        share = 100 * path["routing_ns"] / path["ns"] if path["ns"] else 0.0
        rows.append(("critical path", f"{path['ns']:.2f} ns",
                     f"{path['start']} -> {path['end']}"))
        from innet.sim.synth import levels_text

        rows.append(("", "", f"{levels_text(path)}, {share:.0f} % routing"))
    for label, value, note in rows:
        out.print(f"  {label:<14}{value:>10}  {note}".rstrip(), soft_wrap=True)


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
                   "none (the p2p cost: nothing on the collective VCs).")
@mul_option
@flow_options
def switch(collective: str, mul: bool, target: str, seed: int, no_pnr: bool, timeout: float,
           no_cache: bool, output: Path | None, as_json: bool, **params: Any) -> None:
    """The PIUMA-style switch with its register file (as `innet verilog switch`)."""
    from innet.sim.bench.hardware import collective_path

    path = collective_path(collective, mul=mul, payload_width=params["payload_width"])
    top, values = make_switch(**params, collective=path)
    values.update(collective=collective, mul=mul if collective == "engine" else None)
    run(top, "innet_switch", {"component": "switch", **values}, target=target, seed=seed,
        no_pnr=no_pnr, timeout=timeout, no_cache=no_cache, output=output, as_json=as_json)


@command.command("alu")
@mul_option
@click.option("--operand-tag-width", "tag_width", type=int, default=0, show_default=True,
              help="Bits of the side-band tag carried with the operands (not a flit's tag).")
@flow_options
def alu(mul: bool, tag_width: int, target: str, seed: int, no_pnr: bool, timeout: float,
        no_cache: bool, output: Path | None, as_json: bool) -> None:
    """The reduction unit of the collective engine (innet.hw.alu.ALU, binary32 bit-exact)."""
    from innet.hw.alu import ALU

    run(ALU(mul=mul, tag_width=tag_width), "innet_alu",
        {"component": "alu", "mul": mul, "tag_width": tag_width}, target=target, seed=seed,
        no_pnr=no_pnr, timeout=timeout, no_cache=no_cache, output=output, as_json=as_json)


@command.command("muladd")
@click.option("--width", type=int, default=8, show_default=True, help="Operand width.")
@flow_options
def muladd(width: int, target: str, seed: int, no_pnr: bool, timeout: float, no_cache: bool,
           output: Path | None, as_json: bool) -> None:
    """The registered multiply-add of `innet doctor`: a seconds-long check of the flow."""
    from innet.hw.testing import MulAdd

    run(MulAdd(width), "innet_muladd", {"component": "muladd", "width": width},
        target=target, seed=seed, no_pnr=no_pnr, timeout=timeout, no_cache=no_cache,
        output=output, as_json=as_json)


@command.command("ceng")
@click.option("--radix", type=int, default=8, show_default=True,
              help="Network ports of the switch it sits in (the local port is extra).")
@flit_option("collective_ids")
@mul_option
@flow_options
def ceng(radix: int, collective_ids: int, mul: bool, target: str, seed: int, no_pnr: bool,
         timeout: float, no_cache: bool, output: Path | None, as_json: bool) -> None:
    """The collective engine alone (innet.hw.ceng), 32-bit elements."""
    from innet.hw.ceng import CollectiveEngine
    from innet.hw.ceng.top import EngineTop
    from innet.hw.flit import FlitParams

    params = FlitParams(payload_width=32, collective_ids=collective_ids)
    top = EngineTop(CollectiveEngine(params, radix, mul=mul))
    run(top, "innet_ceng", {"component": "ceng", "radix": radix,
                            "collective_ids": collective_ids, "mul": mul},
        target=target, seed=seed, no_pnr=no_pnr, timeout=timeout, no_cache=no_cache,
        output=output, as_json=as_json)


@command.command("network")
@topology_options
@click.option("--max-elements", type=Size(low=1), default=1024, show_default=True,
              help=f"Each endpoint's vector memory in elements ({SIZE_GRAMMAR}).")
@flow_options
def network(kind: str, max_elements: int, target: str, seed: int, no_pnr: bool,
            timeout: float, no_cache: bool, output: Path | None, as_json: bool,
            **options: Any) -> None:
    """The whole network of KIND (polarfly, hyperx, torus, piuma): innet.hw.network's
    Network, a switch and an endpoint per node, sized as `innet sim allreduce` sizes it."""
    from innet.hw.network import emit_network
    from innet.sim.network import network_sizes

    chosen = topology_from_args(kind, options)
    topo, label = chosen.topology, chosen.name
    with err_console().status(f"emitting the {label} network"):
        design, _top = emit_network(topo, **network_sizes(topo, max_elements))
    run(design, design.toplevel, {"component": "network", "topology": label,
                                  "nodes": topo.nodes, **network_sizes(topo, max_elements)},
        target=target, seed=seed, no_pnr=no_pnr, timeout=timeout, no_cache=no_cache,
        output=output, as_json=as_json)
