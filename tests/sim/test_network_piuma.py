"""A multi-level PIUMA network in RTL: 2 nodes x 2 sockets x a 2x2 core mesh
(16 switches), every link a pipeline of its level's latency in cycles (Table 1's 5, 25 and
50 ns at a 5 ns clock: 1, 5 and 10 stages).

The timing model is innet.sim.golden.idle_latency, which knows the switch (2 cycles), the
engine's reduction tree and the per-link stages, and nothing of the RTL's structure; the
tolerance is zero: on an idle network without backpressure every endpoint's first result
arrives in the cycle the model names. The paper's alpha (twice the longest leaf-to-root link
latency of the embedding; PIUMA, "Analysis") bounds the measured latency from below, and alpha
plus the same tree's latency with instant links bounds it from above.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from innet.gen.analysis.piuma import SystemParams, embedding_latencies, generated
from innet.gen.embed import embed, verify
from innet.gen.topology import link_cycles, link_latency_array, link_level, piuma
from innet.hw.network import link_stage_map
from innet.sim.golden import idle_latency
from innet.sim.network import Scenario, simulate

S = Scenario
CYCLE_NS = 5.0

# The simulations share one network build: one worker builds it (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("piuma16")


@pytest.fixture(scope="module")
def network():
    topo = piuma((2,), 2, 4)
    return topo, link_cycles(topo, CYCLE_NS)


def test_link_stages_follow_the_levels(network):
    topo, stages = network
    assert topo.nodes == 16
    per_level = {"core": 1, "socket": 5, "node": 10}  # Table 1 at 5 ns
    assert stages == {(u, v): per_level[link_level(topo, u, v)]
                      for u, _, v, _ in topo.link_array().tolist()}
    assert link_stage_map(topo, stages) == stages


@pytest.mark.rtl
def test_sixteen_switches_exact_and_on_time(network):
    topo, stages = network
    runs = [S("innet", 1), S("innet", 64, dtype="fp32"), S("innet", 64, op="max"),
            S("innet", 64, participants=(0, 5, 9, 15)), S("recdoub", 64),
            S("innet", 64, dtype="fp32", background=0.5)]
    # Loaded through the bench's parallel load port, every word read back.
    outcomes = simulate(topo, runs, seed=12, backpressure=0.0, link_stages=stages, load="lanes")
    for o in outcomes:
        assert o.correct, f"{o.scenario}: {o.detail}"
        assert o.p2p_sent == o.p2p_received
    idle = [o for o in outcomes if o.scenario.algo == "innet" and not o.scenario.background]
    for o in idle:
        e = embed(topo, o.scenario.participants, op=o.scenario.op, dtype=o.scenario.dtype)
        verify(e, topo)
        assert o.predicted_arrivals == idle_latency(e, radix=topo.radix, link_latency=stages)
        assert o.arrivals == o.predicted_arrivals  # tolerance: 0 cycles
    # The paper's alpha, in cycles of the embedding's own tree, is the analysis' alpha.
    e = embed(topo, op="add", dtype="int32")
    weights = np.nan_to_num(link_latency_array(topo) / CYCLE_NS)
    alpha = 2 * int(embedding_latencies(e, topo, weights).max())
    point = generated((2,), SystemParams(sockets=2, cores=4))
    assert alpha == point.alpha / CYCLE_NS
    assert point.alpha <= point.bound  # Eq. 1
    last = max(idle[0].arrivals.values())
    # Instant links: the switches only.
    assert alpha <= last <= alpha + max(idle_latency(e, radix=topo.radix).values())


@pytest.mark.rtl
def test_sixteen_switches_under_backpressure_and_load(network):
    topo, stages = network
    runs = [S("innet", 256, dtype="fp32", background=1.0, pattern="permutation"),
            S("ring", 64), S("innet", 0, kind="barrier")]
    # Loaded through the network's configuration bus, every word read back.
    for o in simulate(topo, runs, seed=5, backpressure=0.25, link_stages=stages, load="bus"):
        assert o.correct, f"{o.scenario}: {o.detail}"
        assert o.p2p_sent == o.p2p_received
        assert (o.p2p_sent > 0) == (o.scenario.background > 0)


@pytest.mark.rtl
def test_cli_simulates_the_levels_as_stages(network, innet):
    topo, stages = network
    proc = innet("sim", "allreduce", "piuma", "--nodes", "2", "--sockets", "2", "--cores", "4",
                 "--clock-mhz", str(1000 / CYCLE_NS), "--elements", "1", "--algo", "innet",
                 "--backpressure", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    counts: dict[str, int] = {}
    for n in stages.values():
        counts[str(n)] = counts.get(str(n), 0) + 1
    assert report["link_stages"] == counts
    got = report["algorithms"]["innet"]
    assert got["correct"] is True
    assert got["arrivals"] == got["predicted_arrivals"]
    assert len(got["arrivals"]) == topo.nodes

