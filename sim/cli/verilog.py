"""``innet verilog``: emit innet's RTL as Verilog, with the port metadata JSON beside the .v.

Each component is a subcommand (``innet verilog switch``, ``ceng``, ``endpoint``), with
:func:`write_design` and :func:`summary` for the common part; the switch's and the endpoint's
parameters are the shared :func:`innet.sim.cli._options.switch_options` and
:func:`~innet.sim.cli._options.endpoint_options`, built by
:func:`innet.hw.variants.make_switch` and :func:`~innet.hw.variants.make_endpoint`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from innet.hw.variants import make_endpoint, make_switch, switch_collective
from innet.sim.cli._common import (
    console,
    err_console,
    json_option,
    output_option,
    print_json,
    write_atomic,
    write_atomic_all,
)
from innet.sim.cli._options import (
    buffer_depth_option,
    endpoint_options,
    flit_options,
    mul_option,
    switch_options,
)

__all__ = ["check_output", "command", "summary", "write_design"]


def _module_name(ctx: click.Context, param: click.Parameter, name: str) -> str:
    from innet.hw.verilog import check_module_name

    return check_module_name(name)


def check_output(output: Path) -> Path:
    """``output`` if it names a ``.v`` file; call before the (slow) emission."""
    output = Path(output)
    if output.suffix != ".v":
        raise ValueError(f"The output must be a .v file, not {str(output)!r}")
    return output


def write_design(design, output: Path) -> tuple[Path, Path | None]:
    """Write ``design``'s Verilog to ``output`` and its port metadata beside it (same stem,
    ``.json``), both or neither."""
    output = check_output(output)
    if design.ports is None:
        return write_atomic(output, design.verilog), None
    meta = output.with_suffix(".json")
    write_atomic_all([(output, design.verilog),
                      (meta, json.dumps(design.ports, indent=2, sort_keys=True) + "\n")])
    return output, meta


def summary(design, files: tuple[Path, Path | None], extra: dict[str, Any]) -> dict[str, Any]:
    """The JSON summary of an emitted design: files, size, digest and ``extra`` facts."""
    return {
        "top": design.toplevel,
        "verilog": str(files[0]),
        "metadata": None if files[1] is None else str(files[1]),
        "lines": len(design.verilog.splitlines()),
        "digest": design.digest,
        **extra,
    }


@click.group("verilog")
def command() -> None:
    """Emit RTL as Verilog, with its port metadata (JSON) beside the .v file."""


@command.command("switch")
@switch_options
@click.option("--collective", type=click.Choice(["engine", "pass", "none"]), default="engine",
              show_default=True,
              help="Collective path: the engine (in-network reduction), the pass-through, or "
                   "none (the p2p switch: no collective support).")
@mul_option(default=False)
@click.option("--name", default="innet_switch", show_default=True, callback=_module_name,
              help="Top module name.")
@output_option("Verilog file to write; the port metadata goes beside it (.json). "
               "[default: <name>.v]")
@json_option
def switch(radix: int, payload_width: int, collective_ids: int, routing_depth: int,
           buffer_depth: int, p2p_vcs: int, index_width: int, tag_width: int,
           local_depth: int | None, collective: str, mul: bool, name: str,
           output: Path | None, as_json: bool) -> None:
    """A PIUMA-style switch with its register file (plain ports, clk and rst)."""
    from innet.hw.flit import FlitParams
    from innet.hw.verilog import emit

    output = check_output(output or Path(f"{name}.v"))
    # The flit format's own checks come first (FlitParams names the bad value).
    FlitParams(payload_width=payload_width, routing_depth=routing_depth,
               collective_ids=collective_ids, p2p_vcs=p2p_vcs, index_width=index_width,
               tag_width=tag_width)
    top, params = make_switch(radix, payload_width, collective_ids, routing_depth,
                              buffer_depth, p2p_vcs, index_width, tag_width, local_depth,
                              collective=switch_collective(collective, mul, payload_width))
    with err_console().status("emitting Verilog"):
        design = emit(top, name)
    files = write_design(design, output)
    p = top.params
    facts = {
        "params": params,
        "flit": {"width": p.width, "fields": {f: {"offset": p.offsets[f], "width": w}
                                              for f, w in p.widths.items()}},
        "virtual_channels": p.vcs,
        "registers": len(top.regmap.registers),
        "config_address_width": top.regmap.address_width,
        "collective": collective,
        "mul": mul if collective == "engine" else None,
    }
    report = summary(design, files, facts)
    if as_json:
        print_json(report)
        return
    out = console()
    fields = ", ".join(f"{f} {w}" for f, w in p.widths.items())
    aw = top.regmap.address_width
    path = {"engine": f"engine, a {radix + 1}-operand reduction unit"
                      + (f" and {radix} ALUs with multipliers" if mul else ""),
            "pass": "pass-through (no reduction)",
            "none": "none (p2p switch: flits of the collective VCs are discarded)"}[collective]
    wrote = f"wrote {report['verilog']} ({report['lines']} lines, module {name})"
    for line in (
        f"{wrote} and {report['metadata']}",
        (f"links:  {radix} network + 1 local, each way valid, payload[{p.width - 1}:0], "
         f"credit[{p.vcs - 1}:0]"),
        (f"config: addr[{aw - 1}:0], w_data[31:0], w_en, r_data[31:0]; "
         f"{len(top.regmap.registers)} registers"),
        f"flit:   {p.width} bits: {fields}",
        f"VCs:    {p.vcs} ({p2p_vcs} p2p, {collective_ids} request, 1 response)",
        f"collective: {path}",
    ):
        out.print(line, soft_wrap=True)


@command.command("ceng")
@click.option("--radix", type=int, required=True,
              help="Network ports of the switch it belongs to; the local port is extra.")
@flit_options()
@mul_option(default=False)
@buffer_depth_option
@click.option("--queue-depth", type=int, default=None,
              help="Results per id the output queue holds [default: the reduction's latency "
                   "+ 4].")
@click.option("--registered", is_flag=True,
              help="Register every port (a timing harness for out-of-context synthesis).")
@click.option("--name", default="innet_ceng", show_default=True, callback=_module_name,
              help="Top module name.")
@output_option("Verilog file to write; the port metadata goes beside it (.json). "
               "[default: <name>.v]")
@json_option
def ceng(radix: int, collective_ids: int, routing_depth: int, p2p_vcs: int, index_width: int,
         tag_width: int, mul: bool, buffer_depth: int, queue_depth: int | None,
         registered: bool, name: str, output: Path | None, as_json: bool) -> None:
    """The collective engine alone (plain ports, clk and rst), e.g. to synthesize it."""
    from innet.hw.alu.multi import multi_latency
    from innet.hw.ceng import CollectiveEngine, engine_latency
    from innet.hw.ceng.top import EngineTop
    from innet.hw.flit import FlitParams
    from innet.hw.verilog import emit

    output = check_output(output or Path(f"{name}.v"))
    params = FlitParams(payload_width=32, routing_depth=routing_depth,
                        collective_ids=collective_ids, p2p_vcs=p2p_vcs,
                        index_width=index_width, tag_width=tag_width)
    engine = CollectiveEngine(params, radix, buffer_depth, mul=mul, queue_depth=queue_depth)
    top = EngineTop(engine, registered=registered)
    with err_console().status("emitting Verilog"):
        design = emit(top, name)
    files = write_design(design, output)
    ports = radix + 1
    latency = {k: engine_latency(k, radix) for k in range(1, ports + 1)}
    facts = {
        "params": {"radix": radix, "collective_ids": collective_ids,
                   "routing_depth": routing_depth, "p2p_vcs": p2p_vcs,
                   "index_width": index_width, "tag_width": tag_width, "mul": mul,
                   "buffer_depth": engine.depth, "queue_depth": engine.queue_depth,
                   "registered": registered},
        "reduce_cycles": engine.reduce_cycles,
        "latency_by_ports": {str(k): v for k, v in latency.items()},
        "flit_width": params.width,
    }
    report = summary(design, files, facts)
    if as_json:
        print_json(report)
        return
    out = console()
    by_ports = ", ".join(f"{k}: {v}" for k, v in latency.items())
    for line in (
        (f"wrote {report['verilog']} ({report['lines']} lines, module {name}) and "
        f"{report['metadata']}"),
        (f"reduce:  one {ports}-operand unit of {multi_latency(ports)} cycles"
         + (f" and a tree of {ports - 1} ALUs with multipliers for mul" if mul else "")
         + f"; {collective_ids} ids x {engine.queue_depth} queued results"),
        f"latency: cycles added by contributing ports {{{by_ports}}}",
        f"ports:   {'every port registered (timing harness)' if registered else 'plain'}",
    ):
        out.print(line, soft_wrap=True)


@command.command("endpoint")
@endpoint_options
@click.option("--name", default="innet_endpoint", show_default=True, callback=_module_name,
              help="Top module name.")
@output_option("Verilog file to write; the port metadata goes beside it (.json). "
               "[default: <name>.v]")
@json_option
def endpoint(name: str, output: Path | None, as_json: bool, **params: Any) -> None:
    """An endpoint: vector memory, collective intrinsic, step engine, register file."""
    from innet.hw.verilog import emit

    output = check_output(output or Path(f"{name}.v"))
    top, values = make_endpoint(**params)
    p = top.params
    with err_console().status("emitting Verilog"):
        design = emit(top, name)
    files = write_design(design, output)
    facts = {
        "params": values,
        "flit": {"width": p.width, "fields": {f: {"offset": p.offsets[f], "width": w}
                                              for f, w in p.widths.items()}},
        "virtual_channels": p.vcs,
        "registers": len(top.regmap.registers),
        "register_words": top.regmap.size,
        "config_address_width": top.address_width,
        "memory_base": top.memory_base,
    }
    report = summary(design, files, facts)
    if as_json:
        print_json(report)
        return
    out = console()
    aw = top.address_width
    vector_depth = values["vector_depth"]
    wrote = f"wrote {report['verilog']} ({report['lines']} lines, module {name})"
    for line in (
        f"{wrote} and {report['metadata']}",
        (f"links:  tx and rx to the switch's local port, payload[{p.width - 1}:0], "
         f"credit[{p.vcs - 1}:0]; host p2p_tx/p2p_rx streams"),
        (f"config: addr[{aw - 1}:0], w_data[31:0], w_en, r_data[31:0]; "
         f"{len(top.regmap.registers)} registers at 0x0..0x{top.regmap.size - 1:x}"),
        (f"memory: {vector_depth} x 32 bits at 0x{top.memory_base:x}.."
         f"0x{top.memory_base + vector_depth - 1:x} (word addresses); the same again as "
         f"the step engine's scratch"),
        (f"steps:  {values['step_depth']} entries; ALU "
         f"{'with' if values['mul'] else 'without'} multiplier"),
    ):
        out.print(line, soft_wrap=True)
