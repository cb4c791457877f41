"""``innet sweep``: design-space exploration on Dask.

    innet sweep SPEC [-o DIR] [--cache DIR] [--scheduler ADDRESS] [--workers N] [--list]
        [--json]

Reads the spec (:mod:`innet.sim.sweep.spec`), refuses a bad one before anything runs, runs each
point as a Dask task (:func:`innet.sim.sweep.run_sweep`) on an embedded local cluster or on the
scheduler at ``--scheduler``, prints each point's row as it finishes with a progress display on
stderr (done, running, failed, elapsed), and writes ``results.csv``, ``results.json`` and the
plots into ``--output`` (``--json`` prints the records on stdout instead of the rows). A failed
point is a row with its reason; the sweep goes on, and the command exits 1 at the end if any
point failed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from innet.sim.cli._common import (
    FAILED,
    console,
    err_console,
    fail,
    json_option,
    output_option,
    print_json,
    wide,
)

__all__ = ["command"]


def _row(record: dict[str, Any]) -> str:
    """One point's line of the streamed table."""
    r = record["result"]
    if record["status"] != "ok":
        what = f"{record['status']}: {record['reason']}"
    elif record["kind"] == "hardware":
        fmax = r.get("fmax_mhz")
        what = (f"{r['logic_cells']:,} logic cells, "
                + (f"fmax {fmax:.1f} MHz" if fmax is not None else "not placed and routed"))
    else:
        what = (f"{r['latency_cycles']:,} cycles, "
                f"{r['throughput_elems_per_cycle']:.4g} elements/cycle")
    cached = " (cached)" if record.get("cached") else ""
    return f"{record['id']:<6} {record['label']}: {what}{cached}"


@click.command("sweep")
@click.argument("spec", type=click.Path(exists=True, path_type=Path, dir_okay=False))
@output_option("Write results.csv, results.json and the plots into this directory "
               "[default: sweep-out].", directory=True)
@click.option("--cache", "cache", type=click.Path(path_type=Path, file_okay=False),
              default=None,
              help="The result cache, one JSON file per point; give a directory every worker "
                   "sees to share it over a cluster [default: $INNET_CACHE/sweep].")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run on the Dask cluster of this scheduler (tcp://host:8786) instead of a "
                   "local one.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes of the local cluster [default: one per core].")
@click.option("--list", "list_only", is_flag=True,
              help="Print the points of the spec and exit (nothing runs).")
@json_option
def command(spec: Path, output: Path | None, cache: Path | None, scheduler: str | None,
            workers: int | None, list_only: bool, as_json: bool) -> None:
    """Run the hardware and network points of SPEC (TOML) as Dask tasks.

    Hardware points run through the synthesis flow (the synth extra), network points
    through the Verilator simulation; results are cached, so a stopped sweep resumes.
    """
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from innet.sim import sweep
    from innet.sim.runner import check_cache
    from innet.sim.sweep.cache import NOT_KEPT
    from innet.sim.sweep.output import summary

    if scheduler is not None and workers is not None:
        raise ValueError("--workers sizes the local cluster; it does not apply with "
                         "--scheduler")
    out = Path("sweep-out") if output is None else output
    if out.exists() and not out.is_dir():
        raise ValueError(f"--output must be a directory, not the file {str(out)!r}")
    plan = sweep.load_spec(spec)
    if list_only:
        if as_json:
            print_json({"spec": spec.name, "points": [
                {"id": p.id, "kind": p.kind, "label": p.label, "params": dict(p.params)}
                for p in plan.points]})
            return
        for p in plan.points:
            click.echo(f"{p.id:<6} {p.kind:<8} {p.label}")
        return
    cache_dir = (cache or sweep.default_cache()).resolve()
    if scheduler is None:  # a cluster's workers may see paths this machine does not
        check_cache(cache_dir, "The result cache")
    out_console = wide(console())
    err = err_console()
    bar = Progress(TextColumn("sweep"), BarColumn(),
                   TextColumn("{task.completed}/{task.total} done, {task.fields[running]} "
                              "running, {task.fields[failed]} failed"),
                   TimeElapsedColumn(), console=err, disable=not err.is_terminal)
    start = time.perf_counter()
    records: list[dict[str, Any]] = []
    with sweep.open_client(scheduler, workers) as client, bar:
        task = bar.add_task("sweep", total=len(plan.points), running=0, failed=0)

        def tick(state: sweep.Progress) -> None:
            bar.update(task, completed=state.done, running=state.running,
                       failed=state.failed)

        def show(record: dict[str, Any], state: sweep.Progress) -> None:
            if not as_json:
                out_console.print(_row(record), soft_wrap=True, markup=False)
            tick(state)

        records = sweep.run_sweep(plan.points, client, cache_dir, timeout=plan.timeout,
                                  on_result=show, on_tick=tick)
    sweep.write_results(out, records, spec=spec.name)
    unkept = [r for r in records if NOT_KEPT in r.get("reason", "")]
    if unkept:
        why = unkept[0]["reason"].split(NOT_KEPT)[-1]
        click.echo(f"innet: warning: {len(unkept)} of {len(records)} results could not be "
                   f"kept in the cache {cache_dir} ({why}): a sweep run again measures them "
                   f"again", err=True)
    if as_json:
        print_json({"spec": spec.name, "points": records})
    seconds = time.perf_counter() - start
    click.echo(f"innet: sweep: {summary(records, seconds)}; results in "
               f"{out}", err=True)
    failed = [r for r in records if r["status"] != "ok"]
    if failed:
        fail(f"{len(failed)} of {len(records)} points failed, the first {failed[0]['id']} "
             f"({failed[0]['label']}): {failed[0]['status']}: {failed[0]['reason']}",
             code=FAILED)
