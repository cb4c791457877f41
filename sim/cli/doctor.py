"""``innet doctor``: report tool versions and prove that emit, build and simulate all work."""

from __future__ import annotations

import click

from innet.sim.cli._common import FAILED, console, err_console, fail, json_option, print_json

__all__ = ["command"]


@click.command("doctor")
@click.option("--samples", type=click.IntRange(1, 1_000_000), default=2000, show_default=True,
              help="Random operand sets the cocotb test checks.")
@json_option
def command(samples: int, as_json: bool) -> None:
    """Check the toolchain: versions, Amaranth -> Verilog, Verilator build, cocotb run."""
    from rich.table import Table

    from innet.sim import doctor

    found = doctor.versions()
    if not as_json:
        table = Table(title="innet doctor", show_header=False)
        for name, version in found.items():
            table.add_row(name, version)
        console().print(table)
    status = err_console()
    with status.status("checking") as spinner:
        checks = doctor.check(samples, progress=lambda step: spinner.update(step))
    if as_json:
        print_json({"versions": found, "ok": all(c.ok for c in checks),
                    "checks": [{"step": c.step, "ok": c.ok, "detail": c.detail} for c in checks]})
    else:
        out = console()
        for c in checks:
            out.print(f"{'ok  ' if c.ok else 'FAIL'} {c.step}: {c.detail}", markup=False,
                      soft_wrap=True)
    failed = [c for c in checks if not c.ok]
    if failed:
        fail(f"{failed[0].step} failed: {failed[0].detail}", code=FAILED)
