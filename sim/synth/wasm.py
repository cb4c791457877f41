"""The first run of a YoWASP tool in a process, under a lock shared by every process.

A YoWASP tool (Yosys, nextpnr) compiles its WebAssembly to machine code the first time it
runs on a machine and writes the result to its cache (``~/.cache/YoWASP``, or
``$YOWASP_CACHE_DIR``); later runs map that file instead of compiling. Two first runs at once
(the seeds of ``innet synth --seeds 1,2,3``, parallel tests, a proof beside a synthesis) each
compile and each write the file, and a run that mapped the file one of them wrote dies of a
bus error (SIGBUS) when the other truncates it to write its own. :func:`prepare` runs a tool
once per process, printing its version, while holding an exclusive lock on a file in that
cache: the first such run on the machine compiles and writes the cache whole while every
other waits, and every later run only maps it.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["lock_path", "prepare"]

_prepared: set[str] = set()
_guard = threading.Lock()


def lock_path() -> Path:
    """The lock file, in the directory where YoWASP caches its compiled tools."""
    import platformdirs  # installed with the YoWASP tools

    cache = os.environ.get("YOWASP_CACHE_DIR") or platformdirs.user_cache_dir(
        "YoWASP", appauthor=False)
    return Path(cache) / "innet-first-run.lock"


def prepare(module: str, runner: str, version_flag: str) -> None:
    """Run the YoWASP tool of ``module`` (its entry point ``runner``) with ``version_flag``
    under the lock of :func:`lock_path`, once per process; later calls return at once.

    What the run prints and its exit status are ignored: the tool's real run reports its own
    errors.
    """
    with _guard:
        if module in _prepared:
            return
        lock = lock_path()
        lock.parent.mkdir(parents=True, exist_ok=True)
        code = f"import sys, {module} as m; sys.exit(m.{runner}(sys.argv[1:]))"
        with open(lock, "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            subprocess.run([sys.executable, "-c", code, version_flag], capture_output=True,
                           check=False)
        _prepared.add(module)
