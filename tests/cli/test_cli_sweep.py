"""innet sweep: a small sweep (the example's kinds of point) on the embedded local cluster and
on a Dask cluster started here (a scheduler and two workers, separate processes), resuming
through the cache, and every bad input refused in one line before anything runs.

The sweep of real points synthesises (``synth``) and simulates a network with Verilator
(``rtl``); the others stop before any tool runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from innet.sim.sweep import comparable, load_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "sweep-small.toml"

#: The example's kinds of point with less synthesis: the ALU and the multiply-add (the example
#: has a switch, which takes Yosys three times as long as both), and the example's network grid.
SMALL = """
[sweep]
timeout = 600

[[hardware]]
component = "alu"
mul = false
pnr = false

[[hardware]]
component = "muladd"
width = 16
pnr = false

[[network]]
topology = "polarfly"
q = 2
algo = ["innet", "swing-l"]
elements = 1
"""


def _results(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text())["points"]


def _csv(out: Path) -> list[dict]:
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    return [{k: v for k, v in r.items() if k not in ("cached", "seconds")} for r in rows]


@contextlib.contextmanager
def dask_cluster(tmp_path: Path, workers: int = 2):
    """A `dask scheduler` and ``workers`` `dask worker` processes on localhost (one thread
    each); yields the scheduler's address and stops them afterwards."""
    from distributed import Client

    file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "w")  # noqa: SIM115 (closed below)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                               "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--dashboard-address", ":0",
                               "--scheduler-file", str(file)], stdout=log, stderr=log)]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        for i in range(workers):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads",
                 "1", "--memory-limit", "0", "--no-dashboard", "--dashboard-address", ":0",
                 "--name", f"worker{i}"],
                stdout=log, stderr=log, cwd=tmp_path))
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=90)
            assert len(client.nthreads()) == workers
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@pytest.mark.synth
@pytest.mark.rtl
def test_the_small_sweep_is_the_same_locally_and_on_a_dask_cluster(innet, tmp_path):
    small = tmp_path / "small.toml"
    small.write_text(SMALL)
    spec = load_spec(small)
    local = innet("sweep", str(small), "-o", "local", "--cache", "cache-local",
                  cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    records = _results(tmp_path / "local")
    assert [r["id"] for r in records] == [p.id for p in spec.points]
    assert [r["params"] for r in records] == [p.values for p in spec.points]
    assert all(r["status"] == "ok" and not r["cached"] for r in records), records
    # Each row streamed as its point finished.
    assert sorted(line.split()[0] for line in local.stdout.splitlines()) == \
        sorted(p.id for p in spec.points)
    assert "4 points: 4 run, 0 cached, 0 failed" in local.stderr
    for name in ("hardware.png", "network.png"):
        assert (tmp_path / "local" / name).read_bytes()[:4] == b"\x89PNG"
    # Hardware: the figures `innet synth` gives for the same design, without place and route.
    alu = innet("synth", "alu", "--no-mul", "--no-pnr", "--json")
    assert alu.returncode == 0, alu.stderr
    synth = json.loads(alu.stdout)
    hw1 = records[0]["result"]
    assert (hw1["logic_cells"], hw1["lut4"], hw1["ff"]) == (synth["logic_cells"],
                                                           synth["lut4"], synth["ff"])
    assert all(r["result"]["fmax_mhz"] is None and r["result"]["pnr"] == "skipped"
               for r in records if r["kind"] == "hardware")
    # Network: bit-exact allreduces; throughput is elements over latency.
    for r in records[2:]:
        result = r["result"]
        assert result["correct"] is True
        assert result["throughput_elems_per_cycle"] == pytest.approx(
            r["params"]["elements"] / result["latency_cycles"])

    with dask_cluster(tmp_path) as address:
        remote = innet("sweep", str(small), "-o", "remote", "--cache", "cache-remote",
                       "--scheduler", address, "--json", cwd=tmp_path)
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout) == json.loads((tmp_path / "remote" /
                                                    "results.json").read_text())
    assert comparable(_results(tmp_path / "remote")) == comparable(records)
    assert _csv(tmp_path / "remote") == _csv(tmp_path / "local")

    # A result missing from the cache (a sweep stopped before it) is the only point run.
    gone = next(r for r in records if r["id"] == "hw1")
    (tmp_path / "cache-local" / f"{gone['key']}.json").unlink()
    again = innet("sweep", str(small), "-o", "local", "--cache", "cache-local",
                  "--workers", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "4 points: 1 run, 3 cached, 0 failed" in again.stderr
    # Off a terminal, no progress display: the summary line alone.
    assert again.stderr.startswith("innet: sweep: 4 points")
    assert again.stderr.count("\n") == 1
    assert [r["cached"] for r in _results(tmp_path / "local")] == [False, True, True, True]
    assert comparable(_results(tmp_path / "local")) == comparable(records)


def test_list_prints_the_points_and_runs_nothing(innet, tmp_path):
    done = innet("sweep", str(EXAMPLE), "--list", "--cache", "cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ids = [p.id for p in load_spec(EXAMPLE).points]
    assert [line.split()[0] for line in done.stdout.splitlines()] == ids
    assert list(tmp_path.iterdir()) == []
    # As JSON: every point with its parameters, as the spec reads them.
    done = innet("sweep", str(EXAMPLE), "--list", "--json", "--cache", "cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert listed["spec"] == EXAMPLE.name
    assert [(p["id"], p["kind"], p["label"], p["params"]) for p in listed["points"]] == [
        (p.id, p.kind, p.label, dict(p.params)) for p in load_spec(EXAMPLE).points]
    assert list(tmp_path.iterdir()) == []


BAD = [
    ("unknown parameter", '[[hardware]]\ncomponent = "switch"\nradix = 2\nradx = 4\n',
     ("spec.toml: hardware[0] has no parameter 'radx'; it takes component, radix, "
      "payload_width, collective_ids, routing_depth, buffer_depth, local_depth, p2p_vcs, "
      "index_width, tag_width, collective, mul, target, pnr, seed")),
    ("out of range", '[[hardware]]\ncomponent = "switch"\nradix = [2, 2000]\n',
     "spec.toml: hardware[0].radix must be an integer from 1 to 1024, not 2000"),
    ("unknown value", '[[network]]\ntopology = "dragonfly"\n',
     ("spec.toml: network[0].topology must be one of polarfly, hyperx, torus, not "
      "'dragonfly'")),
    ("empty grid", '[[network]]\ntopology = "polarfly"\nq = 2\nelements = []\n',
     ("spec.toml: network[0].elements is an empty list; give an integer from 1 to 65536, or a "
      "list of them")),
    ("no points", '[sweep]\ntimeout = 60\n',
     "spec.toml: The spec names no points; add a [[hardware]] or [[network]] table"),
    ("not toml", '[[hardware]\n', "spec.toml is not valid TOML: {toml}"),
    ("nested too deeply", "x = " + "[" * 100_000, "spec.toml is not valid TOML: nested too deeply"),
    ("a number of 5000 digits", '[[network]]\ntopology = "polarfly"\nq = ' + "9" * 5000 + "\n",
     "spec.toml is not valid TOML: {toml}"),
]


@pytest.mark.parametrize(("case", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_spec_is_one_line_and_nothing_runs(innet, tmp_path, case, text, message):
    (tmp_path / "spec.toml").write_text(text)
    done = innet("sweep", "spec.toml", "-o", "out", "--cache", "cache", cwd=tmp_path)
    if "{toml}" in message:  # the parser's own words
        with pytest.raises(ValueError, match=r".") as info:  # TOMLDecodeError or the digit limit
            tomllib.loads(text)
        message = message.format(toml=info.value)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


def test_a_spec_that_is_not_utf8_is_one_line(innet, tmp_path):
    (tmp_path / "spec.toml").write_bytes(b'x = "\xff"\n')
    done = innet("sweep", "spec.toml", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "innet: error: spec.toml is not valid TOML: not UTF-8 text (byte 5)\n"
    assert [p.name for p in tmp_path.iterdir()] == ["spec.toml"]


def test_an_unreachable_scheduler_is_one_line(innet, tmp_path):
    done = innet("sweep", str(EXAMPLE), "--scheduler", "tcp://127.0.0.1:9", "-o", "out",
                 "--cache", "cache", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("innet: error: Cannot reach the Dask scheduler at "
                                  "'tcp://127.0.0.1:9': ")
    assert done.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "0"], "Invalid value for '--workers': 0 is not in the range x>=1."),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"],
     "--workers sizes the local cluster; it does not apply with --scheduler"),
    (["-o", "spec.toml"], "--output must be a directory, not the file 'spec.toml'"),
])
def test_bad_options_are_one_line(innet, tmp_path, args, message):
    (tmp_path / "spec.toml").write_text(EXAMPLE.read_text())
    done = innet("sweep", "spec.toml", "--cache", "cache", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--cache", "file/cache"], {},
     "The result cache '{tmp}/file/cache' cannot be written: Not a directory"),
    ([], {"INNET_CACHE": "file"},
     "The build cache '{tmp}/file' (INNET_CACHE) must be a directory, not a file"),
])
def test_a_cache_that_cannot_be_written_is_refused_before_anything_runs(innet, tmp_path, args,
                                                                        env, message):
    (tmp_path / "spec.toml").write_text(EXAMPLE.read_text())
    (tmp_path / "file").write_text("a file")
    done = innet("sweep", "spec.toml", *args, cwd=tmp_path, env={**os.environ, **env})
    assert done.returncode == 2
    assert done.stderr == "innet: error: " + message.format(tmp=tmp_path) + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "spec.toml"]


def test_a_missing_spec_is_one_line(innet, tmp_path):
    done = innet("sweep", "nope.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("innet: error: Invalid value for 'SPEC': File 'nope.toml' does not "
                           "exist.\n")


def test_bench_refuses_an_unreachable_scheduler_in_one_line(innet):
    done = innet("bench", "--only", "hw_alu", "--no-pnr", "--scheduler", "tcp://127.0.0.1:9")
    assert done.returncode == 2
    assert done.stderr.startswith("innet: error: Cannot reach the Dask scheduler at "
                                  "'tcp://127.0.0.1:9': ")
    assert done.stderr.count("\n") == 1


def test_results_the_cache_could_not_keep_are_one_warning(monkeypatch, tmp_path):
    """The records say which results were not kept in the cache (a cluster's workers may not
    write where the command checked); the command says so once, after the results."""
    from click.testing import CliRunner

    from innet.sim import sweep
    from innet.sim.cli import main
    from innet.sim.sweep.cache import NOT_KEPT

    def run_sweep(points, client, cache, **options):
        return [{"id": p.id, "kind": p.kind, "label": p.label, "params": dict(p.params),
                 "key": p.id, "status": "ok", "reason": NOT_KEPT + "Read-only file system",
                 "cached": False, "seconds": 0.0, "result": {"logic_cells": 15}}
                for p in points]

    monkeypatch.setattr(sweep, "open_client", lambda *args: contextlib.nullcontext())
    monkeypatch.setattr(sweep, "run_sweep", run_sweep)
    (tmp_path / "spec.toml").write_text('[[hardware]]\ncomponent = "muladd"\nwidth = [4, 5]\n'
                                        'pnr = false\n')
    points = len(load_spec(tmp_path / "spec.toml").points)
    done = CliRunner().invoke(main, ["sweep", str(tmp_path / "spec.toml"), "--cache",
                                     str(tmp_path / "cache"), "-o", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warnings == [(f"innet: warning: {points} of {points} results could not be kept in "
                         f"the cache {tmp_path / 'cache'} (Read-only file system): a sweep run "
                         f"again measures them again")]
