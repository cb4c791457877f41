"""``innet demo``: the whole flow on PolarFly q=3, or the Swing-B study.

    innet demo [-o DIR] [--quick] [--sizes 1,64,1K,4K] [--op add] [--dtype int32]
               [--seed N] [--json]
    innet demo --study swing [-o DIR] [--sizes 64,256,1K,4K] [--json]

The demo builds the topology, the embedding, the image and the Verilog of PolarFly ER_3 (13
switches), simulates the allreduce of every size with every algorithm (in-network, Swing-L,
Swing-B, recursive doubling, ring) in one Verilator run with a progress display on stderr,
prints the comparison table, and writes to DIR (default ``./innet-demo``,
replaced as a whole when the run completes): ``network.v`` + ``network.json`` (ports),
``image.bin`` / ``image.hex`` / ``image.json``, ``report.json``, ``report.md``,
``embedding.png`` and ``latency.png``. ``--quick`` simulates 1 and 64 elements only.

``--study swing`` runs Swing-B against recursive doubling-B on the ring of 8 and the 4x4 torus
(default DIR ``./innet-swing-study``: ``study.json``, ``study.md``) and says whether the RTL
agrees with the Swing paper, and why.

Exits 1 when any simulated result is not bit-exact (the report is still written).
"""

from __future__ import annotations

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
    progress,
    wide,
)
from innet.sim.cli._options import dtype_option, given, op_option
from innet.sim.cli._parse import SIZE_GRAMMAR, Finite, Sizes
from innet.sim.network import MAX_ELEMENTS, MAX_SEED, check_backpressure

__all__ = ["command"]


class _Display:
    """Feeds ``progress(stage, done, total)`` calls into a rich progress display."""

    def __init__(self, bar: Any) -> None:
        self.bar, self.tasks = bar, {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(stage, total=total)
        self.bar.update(self.tasks[stage], completed=done, total=total)


def _run_with_progress(func: Any, **kwargs: Any) -> Any:
    bar = progress()
    bar.disable = not bar.console.is_terminal
    with bar:
        return func(progress=_Display(bar), **kwargs)


def _demo(output: Path, sizes: list[int], op: str, dtype: str, seed: int,
          backpressure: float, as_json: bool) -> bool:
    from innet.sim.report.demo import run_demo
    from innet.sim.report.summary import render

    if not as_json:
        err_console().print(f"innet demo: PolarFly q=3, allreduce {op} {dtype} of "
                            f"{', '.join(f'{m:,}' for m in sizes)} elements, every algorithm")
    report = _run_with_progress(run_demo, output=output, sizes=sizes, op=op, dtype=dtype,
                                seed=seed, backpressure=backpressure)
    if as_json:
        print_json(report)
        return report["correct"]
    out = wide(console())
    render(report, out)
    out.print(f"wrote {len(report['written'])} files to {output}/ in "
              f"{report['wall_seconds']:.0f} s:")
    out.print("  " + " ".join(Path(p).name for p in report["written"].values()))
    return report["correct"]


def _study(output: Path, sizes: list[int], seed: int, backpressure: float,
           as_json: bool) -> bool:
    import json

    from innet.sim.report.demo import write_outputs
    from innet.sim.report.study import STUDY_FILES, run_study, to_markdown

    study = _run_with_progress(run_study, sizes=sizes, seed=seed, backpressure=backpressure)
    md = to_markdown(study)
    study["written"] = write_outputs(output, dict(zip(STUDY_FILES, (
        json.dumps(study, indent=2, sort_keys=True) + "\n", md), strict=True)))
    if as_json:
        print_json(study)
        return study["correct"]
    from rich.markdown import Markdown

    out = wide(console())
    out.print(Markdown(md))
    out.print(f"wrote {output}/study.json, {output}/study.md")
    return study["correct"]


@click.command("demo")
@output_option("Output directory [default: ./innet-demo, or ./innet-swing-study with "
               "--study swing]; replaced as a whole when the run completes, so it must be "
               "new, empty or an earlier output with nothing else in it.", directory=True)
@click.option("--quick", is_flag=True, help="Simulate 1 and 64 elements only (CI).")
@click.option("--sizes", type=Sizes(low=1, high=MAX_ELEMENTS), default=None,
              help=f"Vector sizes in elements ({SIZE_GRAMMAR}) [default: 1,64,1K,4K; study: "
                   f"64,256,1K,4K].")
@op_option
@dtype_option
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True,
              help="Seed of the test vectors and the random backpressure.")
@click.option("--backpressure", type=Finite(min=0, max=1, max_open=True), default=0.25,
              show_default=True,
              help="Probability that an endpoint's local-link credit is held back in a cycle "
                   "(in steps of 1/256, at most 255/256).")
@click.option("--study", type=click.Choice(["swing"]), default=None,
              help="Run a study instead of the demo: swing = Swing-B against recursive "
                   "doubling-B on the ring of 8 and the 4x4 torus.")
@json_option
def command(output: Path | None, quick: bool, sizes: list[int] | None, op: str, dtype: str,
            seed: int, backpressure: float, study: str | None, as_json: bool) -> None:
    """Build, simulate and measure the default network (PolarFly q=3) end to end."""
    import warnings

    from amaranth.hdl import UnusedElaboratable

    # Components built only to read their sizes are never elaborated; that is intended here.
    warnings.filterwarnings("ignore", category=UnusedElaboratable)
    from innet.gen.ops import DType, Op, check_supported
    from innet.sim.report.demo import DEFAULT_SIZES, FILES, QUICK_SIZES, check_replaceable
    from innet.sim.report.study import STUDY_FILES, STUDY_SIZES

    check_supported(Op.parse(op), DType.parse(dtype))
    check_backpressure(backpressure)
    if quick and sizes is not None:
        raise click.UsageError("--quick and --sizes cannot be used together")
    twice = [m for n, m in enumerate(sizes or []) if m in sizes[:n]]
    if twice:
        raise click.UsageError(f"--sizes lists {twice[0]:,} twice")
    if study is not None:
        ignored = [f"--{name}" for name in ("op", "dtype") if given(name)]
        if ignored:
            verb = "does" if len(ignored) == 1 else "do"
            raise click.UsageError(f"{' and '.join(ignored)} {verb} not apply to --study "
                                   f"swing, which compares int32 sums")
        output = output or Path("innet-swing-study")
        check_replaceable(output, STUDY_FILES)
        chosen = sizes if sizes else list(STUDY_SIZES[:2] if quick else STUDY_SIZES)
        ok = _study(output, chosen, seed, backpressure, as_json)
    else:
        output = output or Path("innet-demo")
        check_replaceable(output, list(FILES.values()))
        chosen = sizes if sizes else list(QUICK_SIZES if quick else DEFAULT_SIZES)
        ok = _demo(output, chosen, op, dtype, seed, backpressure, as_json)
    if not ok:
        fail("a simulated result is not bit-exact (see the report)", code=FAILED)
