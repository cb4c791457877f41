"""innet.sim.sweep: spec grids, the result cache, running on Dask, resuming, the output files.

The tests of the runner use a real local Dask cluster (two worker processes) with a task that
stands in for a measurement: it records each execution as a file, so that what ran can be
counted from outside the workers. The sweep of real points (synthesis and network simulation),
on the local cluster and on a `dask scheduler` with two `dask worker` processes, is in
``tests/cli/test_cli_sweep.py``.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
import re
import signal
import sys
import time
from pathlib import Path

import cloudpickle
import pytest

from innet.sim.sweep import (
    comparable,
    open_client,
    pareto_front,
    parse_spec,
    point_key,
    run_sweep,
    write_results,
)
from innet.sim.sweep.cache import cached, lookup
from innet.sim.sweep.output import csv_text
from innet.sim.sweep.spec import COMPONENTS, NETWORK

# The stand-in task below runs on the workers, which cannot import this file: send it whole.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

# What SIGINT does in this process before any test: Python's KeyboardInterrupt, or nothing
# when the process was started with it ignored (in the background of a shell script).
SIGINT_AT_START = signal.getsignal(signal.SIGINT)


# Specs ---------------------------------------------------------------------------------------


def test_a_grid_is_every_combination_of_its_lists():
    table = {"component": "switch", "radix": [2, 4, 8], "collective": ["none", "pass"],
             "seed": [1, 2], "pnr": False}
    spec = parse_spec({"hardware": [table]})
    got = [(p.values["radix"], p.values["collective"], p.values["seed"]) for p in spec.points]
    assert got == list(itertools.product([2, 4, 8], ["none", "pass"], [1, 2]))
    assert [p.id for p in spec.points] == [f"hw{i}" for i in range(1, 13)]
    for p in spec.points:
        assert set(p.values) == {"component", *COMPONENTS["switch"]}
        assert p.values["pnr"] is False
        assert p.values["payload_width"] == COMPONENTS["switch"]["payload_width"].default


def test_points_of_several_tables_in_order_and_defaults_filled_in():
    spec = parse_spec({
        "sweep": {"timeout": 60},
        "network": [{"topology": "polarfly", "q": 2, "algo": ["innet", "ring"]},
                    {"topology": "hyperx", "shape": "3x3", "elements": [1, 64]}],
        "hardware": [{"component": "alu"}],
    })
    assert spec.timeout == 60.0
    assert [p.id for p in spec.points] == ["hw1", "net1", "net2", "net3", "net4"]
    net = [p.values for p in spec.points[1:]]
    assert [v["algo"] for v in net] == ["innet", "ring", "innet", "innet"]
    assert [v["elements"] for v in net] == [1, 1, 1, 64]
    for v in net:
        assert set(v) == set(NETWORK)
        assert v["backpressure"] == NETWORK["backpressure"].default


def test_a_shape_is_kept_in_one_spelling():
    (point,) = parse_spec({"network": [{"topology": "hyperx", "shape": " 02X3"}]}).points
    assert dict(point.params)["shape"] == "2x3"


def test_a_default_named_or_left_out_is_the_same_point():
    bare = parse_spec({"hardware": [{"component": "alu"}]}).points[0]
    named = parse_spec({"hardware": [{"component": "alu", "mul": True, "seed": 1,
                                      "target": "ecp5"}]}).points[0]
    assert bare == named
    assert bare.label == "alu"


@pytest.mark.parametrize(("data", "message"), [
    ({}, "The spec names no points; add a [[hardware]] or [[network]] table"),
    ({"hw": []}, "Unknown table 'hw'; a spec has sweep, hardware and network"),
    ({"hardware": [{"component": "alu", "mull": True}]},
     ("hardware[0] has no parameter 'mull'; it takes component, mul, tag_width, target, pnr, "
      "seed")),
    ({"hardware": [{"component": "gpu"}]},
     "hardware[0].component must be one of alu, switch, ceng, muladd, not 'gpu'"),
    ({"hardware": [{"mul": True}]},
     "hardware[0].component is missing: give one of alu, switch, ceng, muladd"),
    ({"hardware": [{"component": "switch"}]},
     "hardware[0].radix is missing: give an integer from 1 to 1024"),
    ({"hardware": [{"component": "switch", "radix": 1025}]},
     "hardware[0].radix must be an integer from 1 to 1024, not 1025"),
    ({"hardware": [{"component": "switch", "radix": []}]},
     "hardware[0].radix is an empty list; give an integer from 1 to 1024, or a list of them"),
    ({"hardware": [{"component": "switch", "radix": [2, 2]}]},
     "hardware[0].radix lists 2 twice"),
    ({"hardware": [{"component": "switch", "radix": 2, "buffer_depth": 2}]},
     ("hardware[0].buffer_depth must be an integer from 5 (the credit round trip) to 4096, "
      "not 2")),
    ({"hardware": [{"component": "switch", "radix": 2, "payload_width": 16}]},
     ("hardware[0].payload_width must be 32 with collective = \"engine\" (the engine reduces "
      "32-bit elements), not 16")),
    ({"hardware": [{"component": "alu", "mul": 1}]},
     "hardware[0].mul must be true or false, not 1"),
    ({"hardware": [{"component": "alu", "target": "vu9p"}]},
     "hardware[0].target must be one of ecp5, ecp5-ooc, ice40, not 'vu9p'"),
    ({"hardware": [{"component": "alu"}, {"component": "alu", "mul": True}]},
     "hardware[1] repeats the point of hardware[0]; each point is named once"),
    ({"network": [{"q": 2}]},
     "network[0].topology is missing: give one of polarfly, hyperx, torus"),
    ({"network": [{"topology": "polarfly", "q": 6}]},
     "network[0].q must be a prime power from 2 to 31, not 6"),
    ({"network": [{"topology": "torus", "q": 3}]},
     "network[0].q does not apply: torus takes shape (such as \"3x3\") and no q"),
    ({"network": [{"topology": "torus"}]},
     "network[0].shape is missing: torus takes shape (such as \"3x3\") and no q"),
    ({"network": [{"topology": "polarfly", "q": 3, "shape": "3x3"}]},
     ("network[0].shape does not apply: polarfly takes q (a prime power from 2 to 31) and no "
      "shape")),
    ({"network": [{"topology": "polarfly"}]},
     "network[0].q is missing: polarfly takes q (a prime power from 2 to 31) and no shape"),
    ({"hardware": [{"component": "alu", "seed": -1}]},
     "hardware[0].seed must be an integer from 0 to 2147483647, not -1"),
    # A network's seed takes what innet sim --seed takes.
    ({"network": [{"topology": "polarfly", "q": 2, "seed": 1 << 32}]},
     "network[0].seed must be an integer from 0 to 4294967295, not 4294967296"),
    ({"network": [{"topology": "hyperx", "shape": "3y3"}]},
     "network[0].shape must be sizes joined by 'x' such as \"3x3\", not '3y3'"),
    ({"network": [{"topology": "polarfly", "q": 2, "background": 1.5}]},
     "network[0].background must be a number from 0 to 1, not 1.5"),
    ({"network": [{"topology": "polarfly", "q": 2, "backpressure": 1}]},
     "network[0].backpressure must be a number from 0 to below 1, not 1"),
    ({"network": [{"topology": "polarfly", "q": 2, "backpressure": 0.999}]},
     ("network[0].backpressure must be at most 255/256 (0.996), the most the endpoints' "
      "throttle holds back, not 0.999")),
    ({"network": [{"topology": "polarfly", "q": 2, "background": 0.001}]},
     ("network[0].background must be 0 or at least 1/256 (0.0039), the traffic generators' "
      "finest rate, not 0.001")),
    ({"network": [{"topology": "polarfly", "q": 2, "algo": "allgather"}]},
     "network[0].algo must be one of innet, swing-l, swing-b, recdoub, ring, not 'allgather'"),
    ({"network": [{"topology": "polarfly", "q": 2, "dtype": "fp32", "op": "xor"}]},
     "network[0].op must be one of add, min, max, mul on fp32, not 'xor'"),
    ({"network": [{"topology": "polarfly", "q": 2, "elements": 0}]},
     "network[0].elements must be an integer from 1 to 65536, not 0"),
    ({"sweep": {"timeout": 0}, "hardware": [{"component": "alu"}]},
     "sweep.timeout must be a number of at least 1, not 0"),
    ({"sweep": {"workers": 2}, "hardware": [{"component": "alu"}]},
     "sweep has no parameter 'workers'; it takes timeout"),
    ({"sweep": 60, "hardware": [{"component": "alu"}]}, "sweep must be a table ([sweep])"),
    ({"hardware": {"component": "alu"}}, "hardware must be an array of tables ([[hardware]])"),
    ({"network": ["polarfly"]}, "network must be an array of tables ([[network]])"),
    ({"network": [{"topology": "hyperx", "shape": "65536x65536"}]},
     "network[0].shape '65536x65536': Shape 65536x65536 is too large: 4294967296 nodes"),
    ({"network": [{"topology": "torus", "shape": "2x34"}]},
     ("network[0].shape '2x34': The torus 2x34 has diameter 18: minimal routing needs as many "
      "hop-indexed p2p VCs, and a switch has at most 16")),
    ({"network": [{"topology": "torus", "shape": ["3x3", " 3X3"]}]},
     "network[0] names one point twice; each point is named once"),
    ({"network": [{"topology": "torus", "shape": "3x3"}, {"topology": "torus", "shape": "03x3"}]},
     "network[1] repeats the point of network[0]; each point is named once"),
    ({"network": [{"topology": "hyperx", "shape": "64x64x64"}]},
     "network[0].shape '64x64x64' has 262,144 switches; a simulated network has at most 1,024"),
    ({"network": [{"topology": "polarfly", "q": 2, "seed": list(range(1000)),
                   "elements": list(range(1, 1001))}]},
     "network[0] names 1,000,000 points; a spec names at most 10,000"),
    ({"network": [{"topology": "polarfly", "q": 2, "seed": list(range(100_000))}]},
     "network[0] names 100,000 points; a spec names at most 10,000"),
    ({"network": [{"topology": "polarfly", "q": 2, "seed": [*range(100_000), 5]}]},
     "network[0].seed lists 5 twice"),
    ({"network": [{"topology": "polarfly", "q": q, "seed": list(range(3000))}
                  for q in (2, 3, 4, 5)]},
     "The spec names more than 10,000 points; split it"),
])
def test_bad_specs_are_refused_naming_the_key(data, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_spec(data)


def test_component_refuses_an_unknown_component():
    """component() builds what parse_spec accepted; called with anything else it says so."""
    from innet.sim.sweep.points import component

    message = "Component must be one of alu, switch, ceng, muladd, not 'gpu'"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        component({"component": "gpu"})


# Cache ---------------------------------------------------------------------------------------


def test_the_key_changes_with_each_thing_it_is_made_of():
    base = ("hardware", {"component": "alu", "seed": 1}, "digest", "yosys==1")
    keys = {point_key(*base),
            point_key("network", *base[1:]),
            point_key(base[0], {"component": "alu", "seed": 2}, *base[2:]),
            point_key(*base[:2], "other digest", base[3]),
            point_key(*base[:3], "yosys==2")}
    assert len(keys) == 5
    assert point_key(*base) == point_key(base[0], {"seed": 1, "component": "alu"}, *base[2:])


@pytest.mark.parametrize(("status", "reason"), [("ok", ""), ("failed", "too large")])
def test_a_result_the_cache_cannot_hold_is_kept_and_says_so(tmp_path, status, reason):
    (tmp_path / "file").write_text("not a directory")
    record = cached(tmp_path / "file", "key", lambda: {"status": status, "reason": reason,
                                                      "result": {"x": 1}})
    said = record.pop("reason")
    assert record == {"key": "key", "status": status, "result": {"x": 1}, "cached": False}
    assert said.startswith(f"{reason}; not kept in the cache: " if reason else
                           "not kept in the cache: ")
    assert str(tmp_path / "file") in said


def test_cached_measures_once_and_keeps_only_lasting_outcomes(tmp_path):
    calls = []

    def measure(status):
        def run():
            calls.append(status)
            return {"status": status, "reason": "", "result": {"x": len(calls)}}
        return run

    for status in ("ok", "failed", "error", "timeout"):
        first = cached(tmp_path, status, measure(status))
        again = cached(tmp_path, status, measure(status))
        assert first["cached"] is False
        kept = status in ("ok", "failed")
        assert again["cached"] is kept
        assert again["result"] == first["result"] if kept else again["result"] != first["result"]
        assert (lookup(tmp_path, status) is not None) is kept
    assert calls == ["ok", "failed", "error", "error", "timeout", "timeout"]
    assert cached(None, "ok", measure("ok"))["cached"] is False  # no cache: always measured


def test_a_damaged_cache_file_is_measured_again(tmp_path):
    (tmp_path / "k.json").write_text("{not json")
    record = cached(tmp_path, "k", lambda: {"status": "ok", "reason": "", "result": {}})
    assert record["cached"] is False
    assert lookup(tmp_path, "k")["key"] == "k"


# Running on Dask -----------------------------------------------------------------------------


def stand_in(point, cache, timeout):
    """A point's task whose measurement records each time it runs in ``<cache>/../ran``,
    takes a moment, and fails for ``seed = 13`` (an incorrect result) and ``seed = 14`` (a
    crash)."""
    seed = point.values["seed"]

    def measure():
        runs = Path(cache).parent / "ran"
        runs.mkdir(exist_ok=True)
        (runs / f"{point.id}-{time.monotonic_ns()}").touch()
        time.sleep(0.3)
        if seed == 14:
            raise RuntimeError("the tool crashed")
        if seed == 13:
            return {"status": "failed", "reason": "incorrect result", "result": {}}
        return {"status": "ok", "reason": "", "result": {"square": seed * seed}}

    key = point_key(point.kind, point.values, "design", "tools")
    return {"id": point.id, "kind": point.kind, "label": point.label, "params": point.values,
            **cached(cache, key, measure), "seconds": 0.3}


def _ran(tmp_path):
    return sorted(p.name.split("-")[0] for p in (tmp_path / "ran").iterdir())


@pytest.fixture(scope="module")
def client():
    with open_client(workers=2) as c:
        yield c


def _spec(seeds):
    return parse_spec({"hardware": [{"component": "muladd", "seed": list(seeds)}]})


def test_the_local_workers_leave_ctrl_c_to_the_command(client):
    """The terminal sends Ctrl-C to the local cluster's workers too: they ignore it (each
    would print its KeyboardInterrupt), and the command stops them on its way out. The
    command's own handler is left as it was."""
    import os

    before = client.run(os.getpid)
    for pid in before.values():
        os.kill(pid, signal.SIGINT)
    time.sleep(1)
    assert client.run(os.getpid) == before  # the same two processes still serve
    assert signal.getsignal(signal.SIGINT) is SIGINT_AT_START


def test_ctrl_c_during_the_local_cluster_start_stops_the_command(monkeypatch):
    """A Ctrl-C while the local cluster starts is not lost: it is raised once the cluster is
    up, and the cluster is shut down on the way out; SIGINT's handler is left as it was."""
    import os

    import distributed

    started = []
    real = distributed.LocalCluster

    def interrupted_start(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the handler runs here, in the middle of the start
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(distributed, "LocalCluster", interrupted_start)
    with pytest.raises(KeyboardInterrupt), open_client(workers=1):
        pytest.fail("the command went on after a Ctrl-C")
    assert started[0].status.name == "closed"
    assert signal.getsignal(signal.SIGINT) is SIGINT_AT_START


def test_a_sweep_returns_every_point_in_order_and_survives_failures(client, tmp_path):
    spec = _spec([3, 13, 14, 5])
    seen = []
    records = run_sweep(spec.points, client, tmp_path / "cache", task=stand_in,
                        on_result=lambda r, s: seen.append((r["id"], s.done, s.failed)))
    assert [r["id"] for r in records] == ["hw1", "hw2", "hw3", "hw4"]
    assert [r["status"] for r in records] == ["ok", "failed", "error", "ok"]
    assert [r["result"].get("square") for r in records] == [9, None, None, 25]
    assert records[2]["reason"] == "RuntimeError: the tool crashed"
    assert sorted(i for i, _, _ in seen) == ["hw1", "hw2", "hw3", "hw4"]
    assert [done for _, done, _ in seen] == [1, 2, 3, 4]
    assert seen[-1][2] == 2


def test_an_interrupted_sweep_resumes_running_only_the_missing_points(client, tmp_path):
    spec = _spec(range(1, 9))
    cache = tmp_path / "cache"

    def interrupt(record, state):
        if state.done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec.points, client, cache, task=stand_in, on_result=interrupt)
    time.sleep(1.0)  # tasks already started when the sweep was cancelled may still finish
    keys = {p.id: point_key(p.kind, p.values, "design", "tools") for p in spec.points}
    done = {i for i, k in keys.items() if lookup(cache, k) is not None}
    assert 3 <= len(done) < len(spec.points)
    first = _ran(tmp_path)
    records = run_sweep(spec.points, client, cache, task=stand_in)
    again = _ran(tmp_path)
    for i in first:
        again.remove(i)
    assert sorted(again) == sorted(set(keys) - done)  # each missing point once, nothing else
    assert [r["cached"] for r in records] == [r["id"] in done for r in records]
    assert [r["result"]["square"] for r in records] == [s * s for s in range(1, 9)]
    # Once complete, the sweep costs nothing.
    before = len(_ran(tmp_path))
    assert all(r["cached"] for r in run_sweep(spec.points, client, cache, task=stand_in))
    assert len(_ran(tmp_path)) == before


def test_a_client_of_a_scheduler_that_is_not_there():
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"^Cannot reach the Dask scheduler at "
                                         r"'tcp://127\.0\.0\.1:9': connection refused$"), \
            open_client("tcp://127.0.0.1:9"):
        pass
    # Refused at once: Dask would try again for CONNECT_SECONDS.
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(("greeting", "reason"), [
    (None, "the server there sent nothing in 1 s; a Dask scheduler speaks first"),
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "the server there does not speak Dask's protocol"),
    (b"", "the server there closed the connection without a Dask handshake"),
])
def test_a_server_that_is_not_a_dask_scheduler(monkeypatch, greeting, reason):
    """A server that stays silent (an HTTP server, such as the dashboard's port), answers
    something else or hangs up is named, instead of a hang or Dask reading a length out of
    the reply."""
    import contextlib
    import socket
    import threading

    import innet.sim.sweep.run as run

    monkeypatch.setattr(run, "CONNECT_SECONDS", 1)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve():
        conn, _ = server.accept()
        # The client may hang up as soon as it has read enough of the greeting, before the
        # server is done: a reset or a socket no longer connected is not the test's failure.
        with conn, contextlib.suppress(OSError):
            if greeting is not None:
                conn.sendall(greeting)
                conn.shutdown(socket.SHUT_WR)
            conn.recv(1)  # until the client hangs up

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    address = f"tcp://127.0.0.1:{port}"
    with server, pytest.raises(ValueError, match=r"^Cannot reach ") as error, open_client(address):
        pass
    thread.join(5)
    assert str(error.value) == f"Cannot reach the Dask scheduler at {address!r}: {reason}"


def test_workers_must_be_a_positive_count():
    with pytest.raises(ValueError, match=r"^Workers must be a whole number of at least 1, "
                                         r"not 0$"), open_client(workers=0):
        pass


# Output --------------------------------------------------------------------------------------


def _dominated(points, i):
    c, v = points[i]
    return any((c2 <= c and v2 >= v) and (c2, v2) != (c, v) for c2, v2 in points)


@pytest.mark.parametrize("seed", range(20))
def test_pareto_front_is_the_points_nothing_dominates(seed):
    rng = random.Random(seed)
    points = [(rng.randint(1, 12), rng.randint(1, 12)) for _ in range(rng.randint(1, 25))]
    front = pareto_front(points)
    assert sorted(front) == [i for i in range(len(points)) if not _dominated(points, i)]
    assert [points[i][0] for i in front] == sorted(points[i][0] for i in front)


def _records():
    hw = [{"id": f"hw{i}", "kind": "hardware", "label": f"switch radix={r}", "status": s,
           "reason": "" if s == "ok" else "does not fit", "cached": i % 2 == 0,
           "seconds": 1.5, "key": "k", "params": {"component": "switch", "radix": r},
           "result": {"logic_cells": 1000 * r, "fmax_mhz": f}}
          for i, (r, f, s) in enumerate([(2, 180.0, "ok"), (4, 150.0, "ok"), (8, None, "ok"),
                                         (16, None, "failed")], 1)]
    net = [{"id": f"net{i}", "kind": "network", "label": a, "status": "ok", "reason": "",
            "cached": False, "seconds": 20.0, "key": "k",
            "params": {"topology": "polarfly", "q": 2, "shape": None, "algo": a,
                       "elements": n},
            "result": {"latency_cycles": 40 + n, "throughput_elems_per_cycle": n / (40 + n),
                       "correct": True}}
           for i, (a, n) in enumerate(itertools.product(["innet", "ring"], [1, 64]), 1)]
    return hw + net


def test_results_files_hold_every_record(tmp_path):
    records = _records()
    written = write_results(tmp_path / "out", records, spec="small.toml")
    assert sorted(p.name for p in written) == ["hardware.png", "network.png", "results.csv",
                                               "results.json"]
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data == {"spec": "small.toml", "points": records}
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "results.csv").read_text())))
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    for row, record in zip(rows, records, strict=True):
        assert row["status"] == record["status"]
        assert row["cached"] == str(record["cached"]).lower()
        for k, v in record["params"].items():
            assert row[f"param.{k}"] == ("" if v is None else str(v))
        for k, v in record["result"].items():
            assert row[f"result.{k}"] == ("" if v is None else str(v).lower()
                                          if isinstance(v, bool) else str(v))
    for name in ("hardware.png", "network.png"):
        assert (tmp_path / "out" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        p.name for p in written)  # no temporary file left behind


def test_plots_are_the_same_bytes_for_the_same_records(tmp_path):
    from innet.sim.sweep.plots import hardware_png, network_png

    records = _records()
    assert hardware_png(records[:4]) == hardware_png(records[:4])
    assert network_png(records[4:]) == network_png(records[4:])
    # Only unrouted points, or none finished: still a figure.
    assert hardware_png(records[2:4])[:4] == b"\x89PNG"
    assert network_png([{**records[4], "status": "error"}])[:4] == b"\x89PNG"


def test_only_the_kinds_present_are_plotted(tmp_path):
    written = write_results(tmp_path, _records()[4:])
    assert sorted(p.name for p in written) == ["network.png", "results.csv", "results.json"]


def test_comparable_drops_what_one_run_adds():
    records = [{**r, "traceback": "..."} for r in _records()]
    for r in comparable(records):
        assert not {"cached", "seconds", "traceback"} & set(r)
    assert csv_text([]) == "id,kind,label,status,reason,cached,seconds\n"


# innet bench ---------------------------------------------------------------------------------


@pytest.mark.synth  # emits the ALUs through Yosys before it looks in the synthesis cache
def test_bench_hardware_rows_run_as_tasks_as_they_run_in_process(tmp_path, monkeypatch):
    from innet.sim import bench

    monkeypatch.setenv("INNET_CACHE", str(tmp_path))  # before the workers start: theirs too
    quick = bench.Case("quick", "generators", "Quick", lambda options: {"value": 1})
    cases = [quick, *bench.select(only=["hw_alu"])]
    assert [c.name for c in cases] == ["quick", "hw_alu_add", "hw_alu"]
    options = bench.Options(cached=True)
    seen = []
    with open_client(workers=2) as c:
        parallel = bench.run(cases, options, progress=lambda case: seen.append(case.name),
                             client=c)
    alone = bench.run(cases, options)
    assert sorted(seen) == sorted(case.name for case in cases)
    assert seen[0] == "quick"  # in this process, before the hardware rows
    assert [r["name"] for r in parallel] == [case.name for case in cases]
    for a, b in zip(parallel, alone, strict=True):
        assert (a["status"], a.get("reason")) == (b["status"], b.get("reason"))
    assert [r["status"] for r in parallel[1:]] == ["unavailable", "unavailable"]
    assert list(tmp_path.iterdir()) == []
