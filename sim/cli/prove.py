"""``innet prove``: prove the flow-control blocks' formal properties with SymbiYosys.

    innet prove                      every block's properties
    innet prove credit               one block (credit, round-robin, buffer, switch, engine)
    innet prove round-robin.fair     one property
    innet prove -o proofs/ --json    keep the SymbiYosys work (and any trace) in proofs/

Per property: ``proved`` (k-induction closed: it holds in every reachable state), ``bounded to
depth k`` (no counterexample within k steps of reset), ``FAILED`` with the counterexample trace
as VCD, or ``VACUOUS`` (its cover is unreachable, so the proof says nothing). Exit 1 if any
property failed or is vacuous.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import click

from innet.sim.cli._common import (
    FAILED,
    console,
    fail,
    json_option,
    output_option,
    print_json,
    progress,
)

__all__ = ["command"]


@click.command("prove")
@click.argument("block", required=False)
@output_option("Keep every property's SymbiYosys work here (DIR/BLOCK.PROPERTY/), and the "
               "counterexample traces [a temporary directory, kept only for a trace].",
               directory=True)
@json_option
def command(block: str | None, output: Path | None, as_json: bool) -> None:
    """Prove the formal properties of BLOCK (default: every block): k-induction with
    SymbiYosys, then the cover that shows each property is not vacuous."""
    from innet.sim.formal import Toolchain, select

    try:
        chosen = select(block)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="BLOCK") from None
    tools = Toolchain()
    root = output if output is not None else Path(tempfile.mkdtemp(prefix="innet-prove-"))
    results = []
    start = time.monotonic()
    bar = progress()
    bar.disable = not bar.console.is_terminal
    working = None  # the work directory of the property being proved
    tool_failed = False
    try:
        with bar:
            task = bar.add_task("proving", total=len(chosen))
            for prop in chosen:
                bar.update(task, description=f"proving {prop.key}")
                working = root / prop.key
                try:
                    results.append((prop, prop.prove(working, tools=tools)))
                except RuntimeError as error:  # a tool failed: its message names its logs
                    tool_failed = True
                    fail(f"{prop.key}: {error}", code=FAILED)
                working = None
                bar.advance(task)
    except BaseException as error:
        # Interrupted (or a bug): the unfinished property's work is not kept.
        if working is not None and not isinstance(error, SystemExit):
            shutil.rmtree(working, ignore_errors=True)
        raise
    finally:
        # The temporary directory is kept only for a counterexample trace or a failed tool's
        # logs.
        if output is None and not tool_failed and all(r.ok for _p, r in results):
            shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - start
    bad = [(p, r) for p, r in results if not r.ok]
    if as_json:
        print_json({"solver": tools.solver,
                    "seconds": round(elapsed, 1), "ok": not bad,
                    "properties": [{"property": p.key, "statement": p.statement,
                                    "sizes": p.sizes, "status": r.status, "depth": r.depth,
                                    "cover_steps": r.cover_steps, "engine": r.engine,
                                    "seconds": round(r.seconds, 1),
                                    "trace": None if r.trace is None else str(r.trace),
                                    "where": r.where or None} for p, r in results]})
    else:
        out = console()
        width = max(len(p.key) for p, _r in results)
        for p, r in results:
            out.print(f"{p.key:<{width}}  {r.describe()}  ({r.seconds:.1f} s)", soft_wrap=True,
                      markup=False)
        # The covers' engine, then the bounded checks' others.
        engines = ", ".join(dict.fromkeys([f"smtbmc {tools.solver}",
                                           *(r.engine for _p, r in results)]))
        counts = {s: sum(r.status == s for _p, r in results)
                  for s in ("proved", "bounded", "failed", "vacuous")}
        out.print(", ".join(f"{n} {s}" for s, n in counts.items() if n or s == "proved")
                  + f" in {elapsed:.0f} s (SymbiYosys: {engines})",
                  markup=False)
    if bad:
        p, r = bad[0]
        fail(f"{p.key}: {r.describe()}", code=FAILED)
