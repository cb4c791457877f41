"""Shared fixtures, and the test order: the longest tests first, on every worker.

The whole-network simulations (``test_network``, ``test_demo``) each take minutes (a Verilator
build of a whole network, then its scenarios); started last, they would leave one pytest-xdist
worker running alone at the end of the suite. They come first, the other Verilator, synthesis
and proof tests (``rtl``, ``synth``) next, the short tests last; within each group the
collection order is kept. pytest-xdist's ``worksteal`` gives each of its n workers one n-th of
the list, in order, and a worker that runs out takes tests from the end of another's share:
so the list is dealt out, test i to share i mod n, and every share starts with its long tests
and ends with short ones, which are what the workers take from each other at the end. Tests
that share a build which takes minutes are marked ``xdist_group`` with its name: a group is
dealt to one share, so that one worker builds it while the others go on, instead of the others
waiting for the build at the same moment.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from forkserver import ForkServer

from innet.sim.runner import cache_lock

__all__ = ["innet", "pytest_collection_modifyitems", "run_innet", "shared"]

#: Where :func:`shared` keeps its results: a directory of this test run's temporary root, the
#: same for every pytest-xdist worker of the run (set by :func:`_shared_root`).
_SHARED: Path | None = None

#: Test files whose simulations take minutes.
LONG = ("test_network.py", "test_demo.py", "test_network_piuma.py")


def pytest_collection_modifyitems(session, config, items) -> None:
    def rank(item) -> int:
        if item.get_closest_marker("rtl") is None and item.get_closest_marker("synth") is None:
            return 2
        return 0 if item.path.name in LONG else 1

    items.sort(key=rank)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    shares: list[list] = [[] for _ in range(workers)]
    dealt: dict[str, int] = {}  # group -> its share
    turn = 0
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        group = None if marker is None else marker.args[0]
        if group in dealt:
            shares[dealt[group]].append(item)
            continue
        shares[turn].append(item)
        if group is not None:
            dealt[group] = turn
        turn = (turn + 1) % workers
    items[:] = [item for share in shares for item in share]


def run_innet(*args: str, cwd=None, env: dict | None = None, input: str | None = None,
              hide: Iterable[str] = ()) -> subprocess.CompletedProcess:
    """Run ``innet ARGS`` in a process of its own, as a user would, and return the finished
    process (text output, never raising on a non-zero exit): a child of this worker's
    :class:`~forkserver.ForkServer`, or a fresh interpreter where the server cannot give the
    run its start-up (a ``PYTHON*`` variable of ``env`` is not the server's). ``hide`` names
    modules made unimportable first, to show what a missing optional dependency does (in a
    fresh interpreter)."""
    if not hide and _FORK_SERVER.serves(env):
        return _FORK_SERVER.run(args, cwd=cwd, env=env, input=input)
    if hide:
        code = ("import sys\n"
                f"for name in {list(hide)!r}: sys.modules[name] = None\n"
                "from innet.sim.cli import main\n"
                "sys.argv = ['innet', *sys.argv[1:]]\n"
                "main()\n")
        cmd = [sys.executable, "-c", code, *args]
    else:
        cmd = [sys.executable, "-m", "innet.sim.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, input=input,
                          check=False)


#: The fork server of this worker's :func:`run_innet` (started at its first run).
_FORK_SERVER = ForkServer()


@pytest.fixture(scope="session", autouse=True)
def _fork_server():
    yield
    _FORK_SERVER.close()


@pytest.fixture
def innet() -> Callable[..., subprocess.CompletedProcess]:
    """:func:`run_innet`: ``innet("topo", "polarfly", "-q", "3")``."""
    return run_innet


@pytest.fixture(scope="session", autouse=True)
def _shared_root(tmp_path_factory) -> None:
    global _SHARED
    base = tmp_path_factory.getbasetemp()
    # Under pytest-xdist each worker's directory is inside the run's own.
    _SHARED = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"


def shared(function: Callable) -> Callable:
    """``function`` (of hashable arguments, returning something picklable: a bench's design
    and parameters) computed once per test run: in memory, and in a file the run's
    pytest-xdist workers share, so that a bench is elaborated by one worker only."""
    memo: dict = {}

    @functools.wraps(function)
    def once(*args):
        if args in memo:
            return memo[args]
        if _SHARED is None:
            memo[args] = function(*args)
            return memo[args]
        name = hashlib.sha256(repr((function.__module__, function.__qualname__, args))
                              .encode()).hexdigest()[:16]
        path = _SHARED / f"{function.__name__}-{name}.pickle"
        with cache_lock(path.with_suffix(".lock")):
            if path.exists():
                value = pickle.loads(path.read_bytes())
            else:
                value = function(*args)
                partial = path.with_suffix(".partial")
                partial.write_bytes(pickle.dumps(value))
                partial.replace(path)
        memo[args] = value
        return value

    return once
