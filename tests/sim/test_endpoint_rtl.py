"""Endpoints in two- and four-node networks of the switch RTL, in cocotb + Verilator
(innet.sim.tb.tb_endpoint on innet.sim.tb.endpointbench.EndpointBench).

Every run is programmed with an image from innet.gen.image.build_image and checked bit-exactly
against innet.gen.swing.golden; random backpressure between every switch and its endpoint,
random per-node start delays, a flit scoreboard that must be empty after every run.
"""

import itertools

import pytest
from conftest import shared

from innet.gen import ops
from innet.gen.swing import ALGORITHMS
from innet.sim import runner
from innet.sim.tb.endpointbench import NODE_MODULE, bench_design

pytestmark = pytest.mark.rtl

VECTOR_DEPTH = 64
#: Per network size: step-table depth and collective ids (the most any schedule needs there:
#: 2x2 Swing has 4 collectives and 16 entries, schedules on 2 ranks 2 and 4).
SIZES = {2: {"step_depth": 4, "collective_ids": 2}, 4: {"step_depth": 16, "collective_ids": 4}}
SUPPORTED = [(op.name.lower(), dtype.name.lower()) for dtype in ops.DType for op in ops.Op
             if ops.is_supported(op, dtype)]


@shared
def bench(nodes: int):
    """(Design, params) of the test network of ``nodes`` nodes in a ring (made once per test
    run)."""
    return bench_design(nodes, vector_depth=VECTOR_DEPTH, **SIZES[nodes])


def run(nodes: int, testcase: str, seed: int = 1, **params):
    design, base = bench(nodes)
    return runner.run(design, "innet.sim.tb.tb_endpoint", testcase=testcase, seed=seed,
                      params={**base, "seed": seed, **params}, internals=False,
                      hier_blocks=(NODE_MODULE,)).output


def schedule_runs(nodes: int, shapes, seed: int) -> list[dict]:
    """Every algorithm on every shape with every supported (op, dtype), lengths, bases, stalls
    and delays varied."""
    runs = []
    combos = list(itertools.product(shapes, ALGORITHMS))
    for i, (op, dtype) in enumerate(SUPPORTED):
        for j, (shape, algorithm) in enumerate(combos):
            k = i * len(combos) + j + seed
            elements = 1 + (k * 7) % 23
            runs.append({"algorithm": algorithm, "schedule_shape": list(shape), "op": op,
                         "dtype": dtype, "elements": elements,
                         "base": (k * 13) % (VECTOR_DEPTH - elements + 1),
                         "stall": (0, 40, 120, 200)[k % 4], "delay": (0, 7, 30)[k % 3]})
    return runs


def test_two_nodes_every_algorithm_op_and_type():
    runs = schedule_runs(2, [(2,)], seed=1)
    out = run(2, "test_schedules", runs=runs)
    assert len(out["runs"]) == len(runs) == len(ALGORITHMS) * len(SUPPORTED)


def test_four_nodes_every_algorithm_op_and_type():
    runs = schedule_runs(4, [(4,), (2, 2)], seed=2)
    out = run(4, "test_schedules", seed=2, runs=runs)
    assert len(out["runs"]) == len(runs) == 2 * len(ALGORITHMS) * len(SUPPORTED)


@pytest.mark.parametrize("nodes", [2, 4])
def test_step_engine_with_background_p2p_traffic(nodes):
    runs = [{"algorithm": algorithm, "schedule_shape": [nodes], "op": "add", "dtype": "fp32",
             "elements": 40, "base": 3, "stall": 60, "delay": 20, "background": 0.3}
            for algorithm in ("swing-b", "ring", "recdoub-l")]
    out = run(nodes, "test_schedules", seed=3, runs=runs)
    assert out["host_flits"] > 0


def test_random_runs():
    out = run(4, "test_random_runs", seed=4, random_runs=300, monitor=True)
    assert out["random_runs"] == 300


@pytest.mark.parametrize("nodes", [2, 4])
def test_intrinsic_broadcast(nodes):
    specs = [{"root": r, "cid": r % SIZES[nodes]["collective_ids"], "elements": e, "base": b,
              "stall": s, "delay": d}
             for r, e, b, s, d in zip(range(nodes), (VECTOR_DEPTH, 1, 37, 0),
                                      (0, 5, 20, 0), (0, 80, 160, 40), (0, 9, 30, 3),
                                      strict=False)]
    out = run(nodes, "test_intrinsic", seed=5, intrinsic=specs)
    assert [r["requests"] for r in out["intrinsic"]] == [s["elements"] for s in specs]


def test_measurement_script_on_the_test_network():
    from innet.sim.bench.endpoint import measure, summarise

    n = VECTOR_DEPTH
    report = measure(2, n, design=bench(2))
    (intrinsic,) = report["intrinsic"]
    assert intrinsic["requests"] == n
    # On an idle network (the throttles idle) node 0 streams its requests one a cycle, and its
    # own results come back one a cycle: the root's local port holds a credit for every cycle
    # of its loop.
    for what in ("request", "response_in"):
        first, last, count = intrinsic["timeline"][f"0:0:{what}"]
        assert (count, last - first + 1) == (n, n), what
    runs = dict(zip(["swing-l", "recdoub-l", "swing-b", "recdoub-b", "ring"], report["runs"],
                    strict=True))
    # Bandwidth-optimal on two ranks: each rank sends half the vector twice.
    for name in ("swing-b", "recdoub-b", "ring"):
        assert runs[name]["data"] == 2 * 2 * (n // 2)
    lines = summarise(report)
    assert lines[0] == f"2 nodes (ring), {n} elements"
    assert lines[1].startswith("  intrinsic broadcast from node 0: ")
    assert sum(line.startswith("    entry ") for line in lines) == 4 + 2 + 4
