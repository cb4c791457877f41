"""``innet regmap``: the switch or endpoint register map as JSON, a C header or Markdown."""

from __future__ import annotations

from pathlib import Path

import click

from innet.sim.cli._common import fail, output_option, write_atomic

__all__ = ["command"]

_FORMATS = {"json": ".json", "c": ".h", "md": ".md"}
_ONLY = {
    "switch": ("radix", "routing_depth"),
    "endpoint": ("step_depth", "vector_depth"),
}


@click.command("regmap")
@click.option("--target", type=click.Choice(["switch", "endpoint"]), default="switch",
              show_default=True, help="Which register map.")
@click.option("--radix", type=int, default=None, help="Switch: network ports (required).")
@click.option("--collective-ids", type=int, default=4, show_default=True,
              help="Collective identifiers.")
@click.option("--routing-depth", type=int, default=64, show_default=True,
              help="Switch: routing-table entries (destination node ids).")
@click.option("--step-depth", type=int, default=32, show_default=True,
              help="Endpoint: step-table entries.")
@click.option("--vector-depth", type=int, default=1024, show_default=True,
              help="Endpoint: elements of the local vector memory.")
@click.option("--node-id-width", type=int, default=16, show_default=True,
              help="Bits of a node id.")
@click.option("--format", "fmt", type=click.Choice(sorted(_FORMATS)), default=None,
              help="Output format [default: from the -o suffix (.json, .h, .md), else md].")
@output_option("Write the register map to this file instead of standard output.")
@click.pass_context
def command(ctx: click.Context, target: str, radix: int | None, collective_ids: int,
            routing_depth: int, step_depth: int, vector_depth: int, node_id_width: int,
            fmt: str | None, output: Path | None) -> None:
    """Generate the register map of a switch or an endpoint.

    Addresses count 32-bit words on the configuration bus. The same parameters always give
    the same bytes.
    """
    from innet.gen import regmap

    for other, names in _ONLY.items():
        if other == target:
            continue
        for name in names:
            if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
                fail(f"--{name.replace('_', '-')} applies only to --target {other}")
    if target == "switch":
        if radix is None:
            fail("--radix is required for --target switch")
        regs = regmap.switch_map(radix, collective_ids, routing_depth,
                                 node_id_width=node_id_width)
    else:
        regs = regmap.endpoint_map(collective_ids, step_depth, vector_depth,
                                   node_id_width=node_id_width)
    if fmt is None:
        suffix = output.suffix.lower() if output is not None else ""
        fmt = next((f for f, s in _FORMATS.items() if s == suffix), "md")
    text = {"json": regmap.to_json, "c": regmap.to_c_header, "md": regmap.to_markdown}[fmt](regs)
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomic(output, text)
    click.echo(f"wrote {output}: {target} register map, {len(regs)} registers in {regs.size} "
               f"words, digest {regs.digest[:16]}")
