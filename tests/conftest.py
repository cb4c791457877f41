"""Shared fixtures, and the test order: the longest tests first.

The whole-network simulations (``test_network``, ``test_demo``) each take minutes (a Verilator
build of a whole network, then its scenarios); started last, they would leave one pytest-xdist
worker running alone at the end of the suite. Started first, the short tests fill the other
worker around them. The other Verilator, synthesis and proof tests (``rtl``, ``synth``) come
next, the short tests last. Within each group the collection order is kept.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterable

import pytest

__all__ = ["innet", "pytest_collection_modifyitems"]

#: Test files whose simulations take minutes.
LONG = ("test_network.py", "test_demo.py", "test_network_piuma.py")


def pytest_collection_modifyitems(session, config, items) -> None:
    def rank(item) -> int:
        if item.get_closest_marker("rtl") is None and item.get_closest_marker("synth") is None:
            return 2
        return 0 if item.path.name in LONG else 1

    items.sort(key=rank)


def run_innet(*args: str, cwd=None, env: dict | None = None, input: str | None = None,
              hide: Iterable[str] = ()) -> subprocess.CompletedProcess:
    """Run ``innet ARGS`` in a fresh interpreter, as a user would, and return the finished
    process (text output, never raising on a non-zero exit). ``hide`` names modules made
    unimportable first, to show what a missing optional dependency does."""
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


@pytest.fixture
def innet() -> Callable[..., subprocess.CompletedProcess]:
    """:func:`run_innet`: ``innet("topo", "polarfly", "-q", "3")``."""
    return run_innet
