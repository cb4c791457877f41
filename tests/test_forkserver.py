"""The fork server of the command-line tests gives what a fresh interpreter gives."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from forkserver import ForkServer


@pytest.fixture(scope="module")
def server():
    served = ForkServer()
    yield served
    served.close()


def fresh(args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "innet.sim.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, check=False)


@pytest.mark.parametrize("args", [
    ["topo", "polarfly", "--q", "2", "--json"],  # output, status 0
    ["topo", "polarfly", "--q", "6"],  # a user error: one line, status 2
    ["verilog", "switch", "--radix", "2", "--collective-ids", "1", "--routing-depth", "4",
     "-o", "sw.v"],  # a file written in the working directory
    ["image", "inspect", "missing.bin"],
])
def test_a_forked_run_is_a_fresh_interpreters(server, tmp_path, args):
    runs = []
    for kind in ("fork", "fresh"):
        cwd = tmp_path / kind
        cwd.mkdir()
        done = server.run(args, cwd=cwd) if kind == "fork" else fresh(args, cwd)
        runs.append((done.returncode, done.stdout, done.stderr,
                     sorted((p.name, p.read_bytes()) for p in cwd.iterdir())))
    assert runs[0] == runs[1]


def test_the_environment_is_the_runs_own(server, tmp_path, monkeypatch):
    env = {**os.environ, "INNET_DEBUG": "1"}
    args = ["topo", "polarfly", "--q", "6"]
    forked, plain = server.run(args, cwd=tmp_path, env=env), server.run(args, cwd=tmp_path)
    reference = fresh(args, tmp_path, env)
    assert "Traceback" in forked.stderr
    assert forked.returncode == reference.returncode
    assert forked.stderr.splitlines()[-1] == reference.stderr.splitlines()[-1]
    assert plain.returncode == 2
    assert "Traceback" not in plain.stderr
    # A variable of the interpreter's start-up needs a fresh interpreter: given, or set in this
    # process after the server started.
    assert not server.serves({**os.environ, "PYTHONPATH": str(tmp_path)})
    assert server.serves(env)
    assert server.serves(None)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert not server.serves(None)


def test_the_server_outlives_the_children_that_fail(server, tmp_path):
    for _ in range(3):
        done = server.run(["topo", "polarfly", "--q", "6"], cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.startswith("innet: error: ")
    assert server.run(["topo", "polarfly", "--q", "2", "--json"], cwd=tmp_path).returncode == 0
