"""``innet bench``: generator speed-ups, simulation speed and hardware cost in one run.

The cases are the registry of :mod:`innet.sim.bench`; this module runs them with a progress
display on stderr and writes the report as JSON and Markdown.
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import click

from innet.sim.cli._common import err_console, json_option, output_option, write_atomic
from innet.sim.cli._parse import Finite

__all__ = ["command"]


@click.command("bench")
@click.option("--quick", is_flag=True,
              help="Small sizes and a tiny synthesis, in seconds (a check, not the figures).")
@click.option("--only", "only", multiple=True, metavar="PREFIX",
              help="Run only the benchmarks whose name starts with PREFIX (repeatable).")
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and exit.")
@click.option("--no-pnr", "no_pnr", is_flag=True,
              help="Hardware: synthesis and packing only (no place and route, no fmax).")
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=1, show_default=True,
              help="Hardware: nextpnr placement seed.")
@click.option("--timeout", type=Finite(min=1), default=1800.0, show_default=True,
              help="Hardware: seconds each synthesis tool may run.")
@click.option("--cached", is_flag=True,
              help="Hardware: only results already in the synthesis cache (an earlier run's "
                   "figures, in seconds); the others are reported as not measured.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Hardware: run the cases on the Dask cluster of this scheduler "
                   "(tcp://host:8786).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Hardware: worker processes of the local Dask cluster that runs several "
                   "hardware cases side by side [default: one per core].")
@output_option("Write bench.json and bench.md into this directory.", directory=True)
@json_option
def command(quick: bool, only: tuple[str, ...], list_only: bool, no_pnr: bool, seed: int,
            timeout: float, cached: bool, scheduler: str | None, workers: int | None,
            output: Path | None, as_json: bool) -> None:
    """Measure generator speed-ups over networkx, simulation speed and hardware cost.

    Prints the Markdown table (or --json); progress goes to stderr. Hardware needs the
    synth extra: pip install 'innet[synth]'. Several hardware cases run side by side on a
    local Dask cluster (or the one of --scheduler), as `innet sweep` runs its points.
    """
    from innet.sim import bench
    from innet.sim.bench.report import markdown, targets
    from innet.sim.sweep.run import open_client

    cases = bench.select(quick=quick, only=only)
    if list_only:
        if as_json:
            click.echo(json.dumps({"cases": [{"name": c.name, "group": c.group,
                                              "title": c.title} for c in cases]}, indent=2))
            return
        for c in cases:
            click.echo(f"{c.name:<28} {c.group:<11} {c.title}")
        return
    if scheduler is not None and workers is not None:
        raise ValueError("--workers sizes the local cluster; it does not apply with "
                         "--scheduler")
    options = bench.Options(quick=quick, pnr=not no_pnr, seed=seed, timeout=timeout,
                            cached=cached)
    hardware = sum(c.group == "hardware" for c in cases)
    dask = scheduler is not None or (hardware > 1 and not cached)
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    host = bench.machine()
    err = err_console()
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(open_client(scheduler, workers)) if dask else None
        status = stack.enter_context(err.status("benchmarks"))
        done = [0]

        def show(c) -> None:
            done[0] += 1
            status.update(f"[{done[0]}/{len(cases)}] {c.title}")

        results = bench.run(cases, options, progress=show, client=client)
    report = {
        "innet": metadata.version("innet"),
        "date": started,
        "options": {"quick": quick, "pnr": not no_pnr, "seed": seed, "timeout": timeout,
                    "cached": cached, "only": list(only)},
        "machine": host,
        "results": results,
        "targets": targets(results),
    }
    text = markdown(report)
    if output is not None:
        write_atomic(Path(output) / "bench.json", json.dumps(report, indent=2) + "\n")
        write_atomic(Path(output) / "bench.md", text)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(text, nl=False)
    for r in results:
        if r["status"] == "error":
            click.echo(f"innet: warning: {r['name']} failed: {r['error']}", err=True)
