"""The emitted Verilog under Verilator's lint: none of the warnings that mean hardware another
simulator or a synthesis tool would see differently from ours."""

from __future__ import annotations

import re
import subprocess

import pytest

from innet.hw.collective import CollectivePath
from innet.hw.variants import make_endpoint, make_switch
from innet.hw.verilog import emit
from innet.sim.runner import prepare_verilator

#: Warnings of a design that is not what it seems: a block that never runs (ALWNEVER: an
#: event-driven simulator leaves its outputs X), signals without a driver or with two, latches,
#: combinational loops, selects out of range, blocking and non-blocking assignments mixed.
BROKEN = ("ALWNEVER", "UNDRIVEN", "MULTIDRIVEN", "LATCH", "UNOPTFLAT", "SELRANGE", "COMBDLY",
          "BLKANDNBLK")

DESIGNS = {
    "endpoint": lambda: make_endpoint(16, 4, 1, 8, 2, 16, 8, 5)[0],
    "switch-engine": lambda: make_switch(2, collective_ids=1, routing_depth=8)[0],
    "switch-pass": lambda: make_switch(3, collective_ids=2, routing_depth=8,
                                       collective=CollectivePath)[0],
    "switch-p2p": lambda: make_switch(2, collective_ids=1, routing_depth=8, collective=None)[0],
}


def broken_warnings(verilog: str, top: str, workdir) -> list[str]:
    """The lines of Verilator's ``--lint-only -Wall`` on ``verilog`` that warn of a class in
    :data:`BROKEN`."""
    prepare_verilator()
    source = workdir / f"{top}.v"
    source.write_text(verilog)
    done = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-fatal", "--top-module",
                           top, source.name], cwd=workdir, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    pattern = re.compile(rf"^%Warning-({'|'.join(BROKEN)}):")
    return [line for line in done.stderr.splitlines() if pattern.match(line)]


@pytest.mark.rtl
@pytest.mark.parametrize("name", list(DESIGNS))
def test_no_warning_of_broken_hardware(name, tmp_path):
    design = emit(DESIGNS[name](), f"innet_{name.replace('-', '_')}")
    assert broken_warnings(design.verilog, design.toplevel, tmp_path) == []


@pytest.mark.rtl
def test_the_lint_catches_a_block_that_never_runs(tmp_path):
    # What Yosys writes for an Amaranth signal whose bits only a constant drives.
    verilog = ("module innet_const(output reg [1:0] y);\n"
               "  always @* y = 2'h0;\n"
               "endmodule\n")
    assert [line.split(":")[0] for line in broken_warnings(verilog, "innet_const", tmp_path)
            ] == ["%Warning-ALWNEVER", "%Warning-UNDRIVEN"]
