"""Runs of ``innet`` in new processes forked from one that has imported innet already.

A short command spends most of its time in a new interpreter importing innet, numpy,
networkx and Amaranth. :class:`ForkServer` starts one interpreter (this file, run as a script)
that imports them once and then forks a child for every run. The child is a process of its own,
as a user's would be: its working directory, environment, standard streams (files), exit
status and signals are its own, and it starts from the state a new interpreter has after
those imports (the server computes nothing). It runs ``python -m innet.sim.cli ARGS`` and
ends as the interpreter ends: it waits for its threads, runs the exit handlers and flushes
its streams.

What the server cannot give a child is a different interpreter start-up: a run whose
environment differs from the server's in a ``PYTHON*`` variable is not served
(:meth:`ForkServer.serves`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

__all__ = ["ForkServer"]

#: Modules the server imports before it forks: what the commands import (the command modules
#: keep their heavy imports inside their functions).
PRELOAD = ("numpy", "networkx", "click", "rich.console", "rich.table", "amaranth",
           "amaranth.back.rtlil", "amaranth.lib.memory", "amaranth.sim", "innet.gen.topology",
           "innet.gen.routing", "innet.gen.embed", "innet.gen.image", "innet.gen.swing",
           "innet.gen.regmap", "innet.gen.analysis", "innet.hw.switch", "innet.hw.ceng",
           "innet.hw.endpoint", "innet.hw.network", "innet.sim.network", "innet.sim.runner")


class ForkServer:
    """One server process, started at the first :meth:`run` and stopped by :meth:`close`."""

    def __init__(self) -> None:
        self._server: subprocess.Popen | None = None
        self._startup: dict[str, str] = {}  # the server's PYTHON* variables
        self._lock = threading.Lock()

    def serves(self, env: dict | None) -> bool:
        """Whether a run with environment ``env`` (None: this process's) can be forked: the
        variables that steer an interpreter's start-up (``PYTHON*``) are those the server
        started with (or starts with: this process's)."""
        started = self._startup if self._server is not None else _startup(os.environ)
        return _startup(os.environ if env is None else env) == started

    def run(self, args, *, cwd=None, env: dict | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
        """``innet ARGS`` in a forked child, as :func:`subprocess.run` with
        ``capture_output=True, text=True`` would return it (standard input: ``input``, or
        empty)."""
        args = [str(a) for a in args]
        with self._lock, tempfile.TemporaryDirectory(prefix="innet-run-") as tmp:
            files = {name: str(Path(tmp) / name) for name in ("stdin", "stdout", "stderr")}
            Path(files["stdin"]).write_text(input or "")
            request = {"args": args, "cwd": str(Path(cwd or os.getcwd()).resolve()),
                       "env": dict(os.environ if env is None else env), **files}
            server = self._start()
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            reply = server.stdout.readline()
            if not reply:
                raise RuntimeError(f"the fork server stopped (exit status {server.wait()})")
            status = json.loads(reply)["status"]
            stdout, stderr = (Path(files[name]).read_text() for name in ("stdout", "stderr"))
        return subprocess.CompletedProcess(["innet", *args], status, stdout, stderr)

    def close(self) -> None:
        """Stop the server (it ends at the end of its input)."""
        if self._server is not None:
            self._server.stdin.close()
            self._server.wait()
            self._server.stdout.close()
            self._server = None

    def _start(self) -> subprocess.Popen:
        if self._server is not None and self._server.poll() is not None:
            self.close()  # it stopped: a new one
        if self._server is None:
            self._startup = _startup(os.environ)
            self._server = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            text=True)
        return self._server


def _startup(env) -> dict[str, str]:
    """The variables of ``env`` that steer an interpreter's start-up."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


# -- the server ---------------------------------------------------------------------------------

def _serve() -> None:
    import importlib
    import pkgutil

    # OpenBLAS starts its threads when numpy is imported: one thread, so that the server
    # forks a process without threads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import innet.sim.cli as cli

    for name in PRELOAD:
        importlib.import_module(name)
    for module in pkgutil.iter_modules(cli.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{cli.__name__}.{module.name}")
    protocol_in, protocol_out = sys.stdin, sys.stdout
    for line in protocol_in:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)  # does not return
        _, wait = os.waitpid(pid, 0)
        status = os.waitstatus_to_exitcode(wait)
        protocol_out.write(json.dumps({"status": status}) + "\n")
        protocol_out.flush()


def _child(request: dict) -> None:
    """Become ``python -m innet.sim.cli ARGS`` and exit with its status."""
    import atexit
    import contextlib
    import runpy
    import threading as threads
    import traceback

    code = 1
    try:
        for fd, (name, flags) in enumerate([("stdin", os.O_RDONLY),
                                            ("stdout", os.O_WRONLY | os.O_TRUNC),
                                            ("stderr", os.O_WRONLY | os.O_TRUNC)]):
            opened = os.open(request[name], flags | (os.O_CREAT if fd else 0), 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = request["cwd"]
        main = Path(sys.modules["innet.sim.cli"].__file__).with_name("__main__.py")
        sys.argv = [str(main), *request["args"]]
        try:
            runpy.run_module("innet.sim.cli", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as done:
            if done.code is None or isinstance(done.code, int):
                code = done.code or 0
            else:
                print(done.code, file=sys.stderr)
                code = 1
        except BaseException:  # as the interpreter reports an uncaught exception
            traceback.print_exc()
            code = 1
        # What the interpreter does at exit: wait for the threads, run the exit handlers.
        threads._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream: nothing left to write
                stream.flush()
        os._exit(code)


if __name__ == "__main__":
    _serve()
