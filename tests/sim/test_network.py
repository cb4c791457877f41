"""Whole-network simulations (innet.sim.network + innet.hw.network) on PolarFly q = 2 and 3,
HyperX 3x3 and a ring of 8 (the 16-switch HyperX 4x4 and 4x4 torus run the same way in
``innet bench sim_matrix_16``). Each topology is built once (Verilator,
cached) and all its scenarios run in one simulation; every result is checked bit for bit
inside the testbench (in-network against innet.sim.golden's exact reduction order, step
schedules against innet.gen.swing.golden), every scoreboard must end empty and no p2p flit
may be lost.

The scenario matrix is spread over the topologies: each gets every algorithm at least once;
every size (1, 64, 1024), type (int32, fp32), kind, subsets, concurrent ids and background
loads (50 % and 100 %, uniform and permutation) appear somewhere. The bench generates the
host traffic and checks every flit in the simulated design; one network of each kind loads
through the configuration bus (one target after another, every word read back), PolarFly q = 3
by the backdoor (the nodes' boot memories) with every word read back. The injection tests show
that the checks catch a dropped, duplicated or reordered flit and a corrupted result element,
and name it.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from amaranth import Shape

from innet.gen.topology import hyperx, polarfly, torus
from innet.sim.network import Scenario, simulate
from innet.sim.runner import SimulationError

S = Scenario

MATRIX = {
    "polarfly-q2": (lambda: polarfly(2), [
        S("innet", 1), S("innet", 64, dtype="fp32", participants=(0, 2, 3, 5)),
        (S("innet", 64, participants=(0, 1, 2), collective_id=0),
         S("innet", 64, op="max", participants=(3, 4, 5, 6), collective_id=1)),
        S("innet", 64, kind="reduce", root=4), S("innet", 64, kind="broadcast", root=2),
        S("innet", 0, kind="barrier"),
        S("swing-l", 1), S("swing-b", 64, background=0.5), S("recdoub", 64),
        S("ring", 64, background=1.0, pattern="permutation"),
        S("innet", 64, dtype="fp32", background=1.0),
    ]),
    "polarfly-q3": (lambda: polarfly(3), [
        S("innet", 1), S("innet", 1, backpressure=0.0), S("innet", 1024, dtype="fp32"),
        S("swing-l", 1),
        S("swing-b", 64, background=1.0), S("recdoub", 1), S("ring", 64),
    ]),
    "hyperx-3x3": (lambda: hyperx((3, 3)), [
        S("innet", 64, participants=(0, 1, 4, 5, 8)),
        S("innet", 64, dtype="fp32", kind="reduce"), S("swing-l", 1), S("swing-b", 64),
        S("recdoub", 64, background=0.5, pattern="permutation"), S("ring", 1),
    ]),
    "ring-8": (lambda: torus((8,)), [
        S("innet", 1, dtype="fp32"), S("innet", 0, kind="barrier"), S("swing-l", 64),
        S("swing-b", 256, dtype="fp32"), S("recdoub", 64),
        S("ring", 64, background=0.5, pattern="permutation"),
        # An in-network mul: this network's switches are built with multipliers.
        S("innet", 64, op="mul", dtype="fp32", background=1.0),
        S("innet", 64, kind="broadcast"),
    ]),
}
#: The networks (one of each kind) loaded through the configuration bus.
BY_BUS = {"polarfly-q2", "hyperx-3x3", "ring-8"}


@pytest.mark.rtl
@pytest.mark.parametrize("name", list(MATRIX))
def test_scenarios(name):
    make, runs = MATRIX[name]
    load = {"load": "bus"} if name in BY_BUS else {"load": "backdoor", "check_load": True}
    outcomes = simulate(make(), runs, seed=len(name), **load)
    flat = [s for r in runs for s in (r if isinstance(r, tuple) else (r,))]
    assert [o.scenario for o in outcomes] == flat
    for o in outcomes:
        assert o.correct, f"{o.scenario}: {o.detail}"
        assert o.detail == ""
        assert o.latency_cycles > 0
        assert o.p2p_sent == o.p2p_received
        assert (o.p2p_sent > 0) == (o.scenario.background > 0)
        assert o.predicted_cycles is not None
        assert o.predicted_cycles > 0
        assert o.throughput_elems_per_cycle == pytest.approx(
            o.scenario.elements / o.latency_cycles)
        default = 0.25  # simulate's
        assert o.backpressure == (default if o.scenario.backpressure is None
                                  else o.scenario.backpressure)
        if o.backpressure == 0 and o.scenario.algo == "innet" and not o.scenario.background:
            # Without backpressure the first results arrive in the modelled cycles.
            assert o.arrivals == o.predicted_arrivals


@pytest.mark.rtl
@pytest.mark.parametrize(("args", "load", "algo"), [
    ([], "backdoor", "innet"), (["--check-load"], "backdoor", "recdoub-l"),
    (["--load", "bus"], "bus", "innet")])
def test_cli_json(innet, args, load, algo):
    proc = innet("sim", "allreduce", "polarfly", "--q", "2", "--elements", "1", "--algo",
                 algo, "--json", *args)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["load"] == load
    assert report["threads"] == 1
    assert list(report["algorithms"]) == [algo]
    got = report["algorithms"][algo]
    assert got["correct"] is True
    assert got["latency_cycles"] > 0
    assert set(got) >= {"correct", "latency_cycles", "throughput_elems_per_cycle",
                        "predicted_cycles"}


def test_cli_threads_reach_the_simulation(monkeypatch):
    """--threads builds the model with that many threads (a threaded model is run in
    tests/sim/test_runner.py; a threaded network is measured by innet bench)."""
    from click.testing import CliRunner

    from innet.sim import network
    from innet.sim.cli import main

    seen = {}

    def simulate(topo, runs, **kwargs):
        seen.update(kwargs)
        return []

    monkeypatch.setattr(network, "simulate", simulate)
    done = CliRunner().invoke(main, ["sim", "allreduce", "polarfly", "--q", "2", "--elements",
                                     "1", "--algo", "innet", "--threads", "2", "--seed", "7",
                                     "--backpressure", "0.5", "--json"])
    assert done.exit_code == 0, done.output
    assert (seen["threads"], seen["seed"], seen["backpressure"]) == (2, 7, 0.5)
    report = json.loads(done.stdout)
    assert (report["threads"], report["topology"], report["nodes"]) == (2, "PolarFly q=2", 7)
    # What a run needs to be run again.
    assert (report["seed"], report["backpressure"]) == (7, 0.5)


def test_bench_is_the_network_with_test_ports():
    from innet.hw.network import Network
    from innet.sim.tb.networkbench import BenchNode, NetworkBench

    topo = torus((3,))
    bench = NetworkBench(topo, vector_depth=4, step_depth=2)
    product = Network(topo, vector_depth=4, step_depth=2)
    assert isinstance(bench.node, BenchNode)
    assert bench.node_module != product.node_module
    extra = set(bench.signature.members) - set(product.signature.members)
    assert extra == {"stall_rate", "rng_seed", "rng_load", "clear", "epoch", "host_rate",
                     "host_perm", "host_perm_dst", "host_rx_stall", "inject", "inject_node",
                     "lane_on", "lane_addr", "lane_w_data", "lane_w_en", "lane_r_data",
                     "boot_load", "boot_count", "boot_busy", "rd_addr", "rd_data", "tb_cycle",
                     "tb_start", "tb_done", "tb_idle", "tb_fault"}
    node_extra = set(bench.node.signature.members) - set(product.node.signature.members)
    assert node_extra >= {"stall_rate", "host_rate", "rd_addr", "rd_data", "done", "fault"}
    width = Shape.cast(bench.signature.members["rd_data"].shape).width
    assert width == 3 * 32
    width = Shape.cast(bench.signature.members["lane_r_data"].shape).width
    assert width == 2 * 3 * 32
    for top in (bench, product):  # built for their ports only: not to be elaborated
        for block in (top, top.node, top.switch, top.endpoint):
            block._MustUse__silence = True


@pytest.mark.parametrize(("runs", "message"), [
    ([S("bogus", 1)], (r"^Algorithm must be one of innet, swing-l, swing-b, recdoub, "
                      r"recdoub-l, recdoub-b, ring, not 'bogus'$")),
    ([S("innet", 2048)], (r"^A vector of 2048 elements does not fit in the endpoints' memory "
                         r"of 1024 elements$")),
    ([S("innet", 1, participants=(0, 99))], r"^.*99.*$"),
    ([S("innet", 1, collective_id=5)], (r"^Collective id 5 needs at least 6 collective ids, "
                                       r"not 2$")),
    ([S("ring", 1, participants=(0, 1))], (r"^Algorithm ring runs an allreduce on every node "
                                          r"only$")),
    ([(S("innet", 1, participants=(0, 1)), S("innet", 1, participants=(1, 2),
                                             collective_id=1))],
     (r"^Concurrent collectives share endpoints \[1\]; an endpoint runs one collective at a "
     r"time$")),
    ([S("innet", 0)], r"^Elements must be at least 1 \(0 only for a barrier\), not 0$"),
    ([S("innet", 1, background=1.5)], r"^Background load must be between 0 and 1, not 1.5$"),
    ([S("innet", 1, background=0.0038)],
     (r"^Background load 0.0038 is below the traffic generators' finest rate, 1/256 of the "
      r"cycles$")),
    ([S("innet", 1, backpressure=0.9970)],
     (r"^Backpressure must be at most 255/256 \(0.996\), the most the endpoints' throttle "
      r"holds back, not 0.997$")),
    ([S("innet", 1, background=0.0015)],
     (r"^Background load 0.0015 is below the traffic generators' finest rate, 1/256 of the "
      r"cycles$")),
    ([S("innet", 1, backpressure=0.9999)],
     (r"^Backpressure must be at most 255/256 \(0.996\), the most the endpoints' throttle "
      r"holds back, not 0.9999$")),
    ([S("innet", 1, backpressure=1.0)],
     r"^Backpressure must be at least 0 and below 1, not 1.0$"),
    ([(S("innet", 1, participants=(0, 1)), S("innet", 1, participants=(2, 3),
                                             collective_id=1, backpressure=0.0))],
     (r"^Concurrent scenarios must share elements, dtype, background, pattern and "
      r"backpressure$")),
])
def test_errors(runs, message):
    with pytest.raises(ValueError, match=message):
        simulate(polarfly(2), runs, max_elements=1024)


def test_a_vector_beyond_any_endpoint_memory_is_named_as_such():
    with pytest.raises(ValueError, match=r"^A vector of 1048577 elements does not fit in an "
                                         r"endpoint's memory, 1048576 elements at the most$"):
        simulate(polarfly(2), [S("innet", 2**20 + 1)])


@pytest.mark.parametrize(("runs", "kind", "message"), [
    ([S("swing-b", 8)], "drop",
     r"^The drop injection acts on background traffic, and no scenario has any$"),
    ([S("innet", 8), S("ring", 8)], "reorder",
     r"^The reorder injection acts on background traffic, and no scenario has any$"),
    ([S("ring", 8, background=0.5)], "corrupt",
     (r"^The corrupt injection acts on the in-network responses node 3 receives, and no "
      r"scenario sends it any$")),
    ([S("innet", 8, participants=(0, 1, 2)), S("innet", 8, kind="reduce", root=1)], "corrupt",
     (r"^The corrupt injection acts on the in-network responses node 3 receives, and no "
      r"scenario sends it any$")),
])
def test_an_injection_with_nothing_to_act_on_is_refused(runs, kind, message):
    with pytest.raises(ValueError, match=message):
        simulate(polarfly(2), runs, inject=(kind, 3))


def test_numpy_numbers_are_taken_as_their_values():
    """A numpy element count and load plan as the Python numbers they equal (no build)."""
    from innet.gen.cost import CostModel
    from innet.gen.routing import routing
    from innet.hw.network import image_sizes
    from innet.sim.network import _plan, network_sizes

    topo = polarfly(2)
    sizes = image_sizes(topo, **network_sizes(topo, 64))

    def plan(elements, background):
        spec, cycles, _ = _plan((S("innet", elements, background=background),), topo,
                                routing(topo), sizes, 0.25, 0, CostModel(), {})
        return json.dumps(spec, sort_keys=True), cycles

    assert plan(np.int64(8), np.float32(0.5)) == plan(8, 0.5)


def test_the_wait_for_a_run_grows_with_its_prediction():
    from innet.gen.cost import CostModel
    from innet.gen.routing import routing
    from innet.hw.network import image_sizes
    from innet.sim.network import CYCLE_LIMIT, _plan, network_sizes

    topo = polarfly(2)
    sizes = image_sizes(topo, **network_sizes(topo, 4096))
    limits = []
    for backpressure, elements in ((0.0, 64), (255 / 256, 4096)):
        spec, (cycles,), _ = _plan((S("ring", elements),), topo, routing(topo), sizes,
                                   backpressure, 0, CostModel(), {})
        limits.append((spec["cycle_limit"], cycles))
    (quick, _), (slow, cycles) = limits
    assert quick == CYCLE_LIMIT
    # 4,096 elements through local links of 1/256 of an element a cycle: a million cycles.
    assert cycles > 4096 * 256
    assert slow >= 8 * cycles


def test_backpressure_type_and_range():
    with pytest.raises(TypeError, match=r"^Backpressure must be a number, not '0.5'$"):
        simulate(polarfly(2), [S("innet", 1, backpressure="0.5")])
    with pytest.raises(ValueError, match=r"^Backpressure must be at least 0 and below 1, "
                                         r"not -0.1$"):
        simulate(polarfly(2), [S("innet", 1)], backpressure=-0.1)


@pytest.mark.parametrize("backpressure", [0.0, 0.25, 0.5])
def test_predictions_price_the_backpressure_as_the_local_bandwidth(backpressure):
    """A local-link credit held back in a fraction b of the cycles leaves the link 1 - b
    elements a cycle, so the in-network allreduce's time per element, that of its slowest
    pipeline stage (PIUMA, Eq. 2), is 1 / (1 - b) cycles (no simulation: the plan only)."""
    from innet.gen.cost import CostModel
    from innet.gen.routing import routing
    from innet.hw.network import image_sizes
    from innet.sim.network import _plan, network_sizes

    topo = polarfly(2)
    sizes = image_sizes(topo, **network_sizes(topo, 4096))

    def predicted(elements):
        _spec, (cycles,), _arrivals = _plan((S("innet", elements),), topo, routing(topo), sizes,
                                            backpressure, 0, CostModel(), {})
        return cycles

    assert predicted(4096) - predicted(1024) == pytest.approx(3072 / (1 - backpressure))



def test_a_short_host_vector_is_priced_by_the_entries_it_fills():
    """The plan prices a host-style run at its own length: one element fills one block of one
    of the ring's two collectives, so it pays fewer entries than the full-vector line."""
    from innet.gen.compare import host_prediction
    from innet.gen.cost import CostModel
    from innet.gen.routing import routing
    from innet.hw.network import image_sizes
    from innet.sim.network import _plan, network_sizes

    topo = polarfly(2)
    sizes = image_sizes(topo, **network_sizes(topo, 4096))
    route = routing(topo)
    ring = host_prediction(topo, "ring", CostModel(), route=route)
    for elements in (1, 64):
        _spec, (cycles,), _ = _plan((S("ring", elements),), topo, route, sizes, 0.0, 0,
                                    CostModel(), {})
        assert cycles == ring.cycles(elements)
    assert ring.cycles(1) < ring.cost.time(1)
    assert ring.cycles(64) == ring.cost.time(64)


#: A flit the checker names: its payload is its sequence number.
_NAMED = re.compile(r"endpoint 3 received a host flit out of sequence or altered \(from (\d+), "
                    r"expected sequence (\d+)\) in cycle \d+: Flit\(kind=<Kind.P2P: 0>, "
                    r"payload=(\d+)")


@pytest.mark.rtl
@pytest.mark.parametrize(("kind", "step"), [("drop", 1), ("duplicate", -1), ("reorder", 1)])
def test_a_lost_duplicated_or_reordered_flit_is_named(kind, step):
    runs = [S("swing-b", 64, background=1.0)]
    with pytest.raises(SimulationError) as error:
        simulate(polarfly(2), runs, seed=4, inject=(kind, 3))
    found = _NAMED.search(str(error.value))
    assert found, str(error.value)
    assert int(found[3]) == int(found[2]) + step  # the next flit, or the one again


@pytest.mark.rtl
def test_a_corrupted_result_element_is_named():
    outcome, = simulate(polarfly(2), [S("innet", 64)], seed=4, inject=("corrupt", 5))
    assert not outcome.correct
    assert re.fullmatch(r"endpoint 5 element 0: got 0x[0-9a-f]{8}, expected 0x[0-9a-f]{8}",
                        outcome.detail), outcome.detail
    got, want = (int(x, 16) for x in re.findall(r"0x([0-9a-f]{8})", outcome.detail))
    assert got ^ want == 1  # payload bit 0 flipped on its way in


@pytest.mark.rtl
def test_a_flipped_backdoor_word_is_caught_by_the_load_check_and_by_the_results():
    runs = [S("innet", 64)]
    with pytest.raises(SimulationError, match=r"Endpoint 5 element 0 reads 0x[0-9a-f]{8} after "
                                              r"the backdoor load, which wrote 0x[0-9a-f]{8}"):
        simulate(polarfly(2), runs, seed=4, inject=("load", 5), check_load=True)
    outcome, = simulate(polarfly(2), runs, seed=4, inject=("load", 5))
    assert not outcome.correct
    assert re.fullmatch(r"endpoint \d element 0: got 0x[0-9a-f]{8}, expected 0x[0-9a-f]{8}",
                        outcome.detail), outcome.detail


@pytest.mark.rtl
def test_the_backdoor_loads_in_several_fills(monkeypatch):
    """Three rows per fill (the boot memory refilled between them), every word read back."""
    from innet.sim import runner

    real = runner.run

    def few_rows(design, module, *, params, **kwargs):
        return real(design, module, params={**params, "boot_fill": 3}, **kwargs)

    monkeypatch.setattr(runner, "run", few_rows)
    outcome, = simulate(polarfly(2), [S("innet", 10, dtype="fp32")], seed=6, check_load=True)
    assert outcome.correct, outcome.detail


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"load": "memory"}, r"^Load must be one of backdoor, lanes, bus, not 'memory'$"),
    ({"inject": ("lose", 1)}, (r"^Inject must be \(kind, node\) with a kind of drop, "
                               r"duplicate, reorder, corrupt, load and a node of the topology, "
                               r"not \('lose', 1\)$")),
    ({"load": "bus", "check_load": True},
     (r"^Check load applies to the backdoor load, not 'bus' \(which reads back every word of "
     r"the image anyway\)$")),
    ({"load": "lanes", "inject": ("load", 1)},
     r"^The load injection applies to the backdoor load, not 'lanes'$"),
    ({"inject": ("drop", 7)}, r"^Inject must be .* not \('drop', 7\)$"),
])
def test_load_and_inject_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate(polarfly(2), [S("innet", 1)], **kwargs)


def test_check_load_must_be_a_bool():
    with pytest.raises(TypeError, match=r"^Check load must be a bool, not 1$"):
        simulate(polarfly(2), [S("innet", 1)], check_load=1)


@pytest.mark.parametrize(("args", "kwargs", "error", "message"), [
    ((None, [S("innet", 1)]), {}, TypeError, r"^Topology must be a Topology, not NoneType$"),
    ((polarfly(2), ["x"]), {}, TypeError,
     r"^A run must be a Scenario or a tuple of Scenarios, not 'x'$"),
    ((polarfly(2), [S("innet", "a")]), {}, TypeError, r"^Elements must be an integer, not 'a'$"),
    ((polarfly(2), [S("innet", 1, background="x")]), {}, TypeError,
     r"^Background load must be a number, not 'x'$"),
    ((polarfly(2), [S("innet", 1)]), {"threads": 0}, ValueError,
     r"^Threads must be at least 1, not 0$"),
    ((polarfly(2), [S("innet", 1)]), {"waves": "yes"}, TypeError,
     r"^Waves must be a bool, not 'yes'$"),
    ((polarfly(2), [S("innet", 1)]), {"workdir": 5}, TypeError, r"^Workdir must be a path, not 5$"),
    ((polarfly(2), [S("innet", 1)]), {"progress": "x"}, TypeError,
     r"^Progress must be a callable, not 'x'$"),
    ((polarfly(2), [S("innet", 1)]), {"seed": -1}, ValueError,
     r"^Seed must be at least 0, not -1$"),
    ((polarfly(2), [S("innet", 1)]), {"threads": 10**9}, ValueError,
     rf"^Threads must be at most {os.cpu_count()}, not 1000000000$"),
    ((polarfly(2), None), {}, TypeError,
     r"^Runs must be a sequence of Scenarios \(or tuples of them\), not None$"),
    ((polarfly(2), [S("innet", 1, participants=[0, 1])]), {}, TypeError,
     r"^Participants must be a tuple of node ids, not \[0, 1\]$"),
    ((polarfly(2), [S("innet", 1, participants=(0, 9))]), {}, ValueError,
     r"^Participant must be at most 6, not 9$"),
    ((polarfly(2), [S("innet", 1, root=[0])]), {}, TypeError,
     r"^Root must be an integer, not \[0\]$"),
    ((polarfly(2), [S("innet", 1, collective_id=256)]), {}, ValueError,
     r"^Collective id must be at most 255, not 256$"),
    ((polarfly(2), [S([], 1)]), {}, ValueError,
     (r"^Algorithm must be one of innet, swing-l, swing-b, recdoub, recdoub-l, recdoub-b, ring, "
     r"not \[\]$")),
    ((polarfly(2), [S("innet", 1, name=3)]), {}, TypeError, r"^Name must be a string, not 3$"),
    ((polarfly(2), []), {}, ValueError, r"^Simulate needs at least one scenario per run$"),
    ((torus((2, 34)), [S("innet", 1)]), {}, ValueError,
     (r"^The torus 2x34 has diameter 18: minimal routing needs as many hop-indexed p2p VCs, "
      r"and a switch has at most 16$")),
    ((polarfly(2), [S("innet", 1), ()]), {}, ValueError,
     r"^Simulate needs at least one scenario per run$"),
    ((polarfly(2), [S("ring", 1, kind="scan")]), {}, ValueError,
     r"^Kind must be one of allreduce, reduce, broadcast, barrier, not 'scan'$"),
    ((polarfly(2), [S("innet", 1, pattern="hotspot")]), {}, ValueError,
     r"^Pattern must be one of uniform, permutation, not 'hotspot'$"),
    ((polarfly(2), [(S("ring", 64), S("innet", 64, participants=(0, 1)))]), {}, ValueError,
     r"^A host-style schedule runs alone, not concurrently with another collective$"),
    ((polarfly(2), [(S("innet", 64, participants=(0, 1, 2), collective_id=3),
                     S("innet", 64, participants=(3, 4, 5), collective_id=3))]), {}, ValueError,
     r"^Concurrent collectives need different ids, not 3 twice$"),
])
def test_arguments_are_checked_before_anything_is_built(monkeypatch, args, kwargs, error,
                                                        message):
    import innet.sim.network as network

    def built(*args, **kwargs):
        raise AssertionError("built before the arguments were checked")

    monkeypatch.setattr(network, "built_network", built)
    with pytest.raises(error, match=message):
        simulate(*args, **kwargs)
