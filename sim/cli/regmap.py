"""``innet regmap``: the switch or endpoint register map as JSON, a C header or Markdown."""

from __future__ import annotations

from pathlib import Path

import click

from innet.sim.cli._common import json_option, output_option, print_json, write_atomic
from innet.sim.cli._options import flit_option, given, step_depth_option, vector_depth_option

__all__ = ["command"]

_FORMATS = {"json": ".json", "c": ".h", "md": ".md"}
_ONLY = {
    "switch": ("radix",),
    "endpoint": ("step_depth", "vector_depth"),
}


@click.command("regmap")
@click.option("--target", type=click.Choice(["switch", "endpoint"]), default="switch",
              show_default=True, help="Which register map.")
@click.option("--radix", type=int, default=None, help="Switch: network ports (required).")
@flit_option("collective_ids")
@flit_option("routing_depth")
@step_depth_option
@vector_depth_option()
@click.option("--node-id-width", type=int, default=None,
              help="Bits of a node id [default: those of --routing-depth's node ids, as "
                   "`innet verilog` builds the switch and the endpoint].")
@click.option("--format", "fmt", type=click.Choice(sorted(_FORMATS)), default=None,
              help="Output format [default: from the -o suffix (.json, .h, .md), else md].")
@output_option("Write the register map to this file instead of standard output.")
@json_option
def command(target: str, radix: int | None, collective_ids: int,
            routing_depth: int, step_depth: int, vector_depth: int, node_id_width: int | None,
            fmt: str | None, output: Path | None, as_json: bool) -> None:
    """Generate the register map of a switch or an endpoint.

    Addresses count 32-bit words on the configuration bus. The same parameters always give
    the same bytes. With --json and no -o the map is printed as JSON (as --format json); with
    -o, --json prints the summary of the file written as JSON.
    """
    from innet.gen import regmap
    from innet.gen.checks import check_int

    for other, names in _ONLY.items():
        if other == target:
            continue
        for name in names:
            if given(name):
                raise ValueError(f"--{name.replace('_', '-')} applies only to --target {other}")
    if as_json and output is None and fmt not in (None, "json"):
        raise ValueError(f"--json prints the map as JSON; it cannot be combined with "
                         f"--format {fmt} without -o")
    # The routing depth sets the node ids' width (the endpoint's too: its flits carry them).
    check_int("Routing depth", routing_depth, low=1, high=regmap.MAX_ROUTING_DEPTH)
    if node_id_width is None:
        node_id_width = regmap.node_id_bits(routing_depth)
    if target == "switch":
        if radix is None:
            raise ValueError("--radix is required for --target switch")
        regs = regmap.switch_map(radix, collective_ids, routing_depth,
                                 node_id_width=node_id_width)
    else:
        regs = regmap.endpoint_map(collective_ids, step_depth, vector_depth,
                                   node_id_width=node_id_width)
    if fmt is None and as_json and output is None:
        fmt = "json"
    if fmt is None:
        suffix = output.suffix.lower() if output is not None else ""
        fmt = next((f for f, s in _FORMATS.items() if s == suffix), "md")
    text = {"json": regmap.to_json, "c": regmap.to_c_header, "md": regmap.to_markdown}[fmt](regs)
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomic(output, text)
    if as_json:
        print_json({"output": str(output), "format": fmt, "target": target,
                    "registers": len(regs), "words": regs.size, "digest": regs.digest})
        return
    click.echo(f"wrote {output}: {target} register map, {len(regs)} registers in {regs.size} "
               f"words, digest {regs.digest[:16]}")
