"""How innet runs a YoWASP tool: its cache of compiled code, and its first run under a lock.

A YoWASP tool (Yosys, nextpnr, Boolector) compiles its WebAssembly to machine code the first
time it runs and writes the result to a cache file; later runs map that file instead of
compiling. Two first runs at once (two ``innet synth`` commands, parallel tests, a proof beside
a synthesis) each compile and each write the file, and a run that mapped the file one of them
wrote dies of a bus error (SIGBUS) when the other truncates it to write its own. The same
happens when a run under another version of wasmtime cannot read the file and rewrites it.

So innet's tool runs keep their compiled code in a cache of their own per wasmtime version
(:func:`cache_dir`, passed to the tools by :func:`environment`), and :func:`prepare` runs each
tool once per process, printing its version, while holding an exclusive lock on a file in that
cache: the first such run compiles and writes the cache whole while every other waits, and
every later run only maps it.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["LOCK_NAME", "cache_dir", "command", "environment", "prepare"]

#: The lock file's name, in :func:`cache_dir`.
LOCK_NAME = "innet-first-run.lock"

_prepared: set[tuple[str, ...]] = set()
_guard = threading.Lock()


def cache_dir() -> Path | None:
    """The folder of the compiled tools: ``$YOWASP_CACHE_DIR`` if it is set (made absolute,
    so that it does not depend on the folder a tool runs in), else ``wasmtime-<version>`` in
    YoWASP's own cache folder; created if missing. ``None`` if it cannot be created (a
    read-only cache: the tools then use what YoWASP's default finds, without a lock)."""
    given = os.environ.get("YOWASP_CACHE_DIR")
    if given is not None:
        path = Path(given).absolute()
    else:
        import platformdirs  # installed with the YoWASP tools

        version = importlib.metadata.version("wasmtime")
        path = Path(platformdirs.user_cache_dir("YoWASP", appauthor=False)) / f"wasmtime-{version}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def environment() -> dict[str, str]:
    """The environment of a YoWASP tool's run: this process's, with ``YOWASP_CACHE_DIR`` set
    to :func:`cache_dir`."""
    path = cache_dir()
    return dict(os.environ) if path is None else {**os.environ, "YOWASP_CACHE_DIR": str(path)}


def command(module: str, runner: str, *args: str) -> list[str]:
    """The command line that runs the YoWASP tool of Python module ``module`` (its entry point
    ``runner``) with ``args`` in this Python."""
    return [sys.executable, "-c", f"import sys, {module} as m; sys.exit(m.{runner}(sys.argv[1:]))",
            *args]


def prepare(argv: Sequence[str], waiting: Callable[[], None] | None = None) -> None:
    """Run ``argv`` (a tool printing its version) in :func:`environment` under the lock of
    :func:`cache_dir`, once per process; later calls with the same ``argv`` return at once.
    ``waiting`` is called if another process holds the lock.

    What the run prints and its exit status are ignored: the tool's real run reports its own
    errors.
    """
    key = tuple(str(arg) for arg in argv)
    if key in _prepared:
        return
    with _guard:
        if key in _prepared:
            return
        path = cache_dir()
        held = None if path is None else _open(path / LOCK_NAME)
        try:
            if held is not None:
                try:
                    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if waiting is not None:
                        waiting()
                    fcntl.flock(held, fcntl.LOCK_EX)
            subprocess.run(key, env=environment(), stdin=subprocess.DEVNULL,
                           capture_output=True, check=False)
        finally:
            if held is not None:
                held.close()
        _prepared.add(key)


def _open(lock: Path):
    """The lock file, open; read-only if it cannot be written; ``None`` if it cannot be opened
    at all (the run then goes without the lock)."""
    for mode in ("a", "r"):
        try:
            return open(lock, mode)
        except OSError:
            continue
    return None
