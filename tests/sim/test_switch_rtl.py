"""Switches in cocotb + Verilator (innet.sim.tb.tb_switch): one radix-8 switch and a ring of four.

Random p2p and collective traffic from every link at up to full load with random backpressure
on every output, about 60,000 cycles over the tests; every flit checked against the golden
model in the testbench (exactly once, right port, in order); every credit counter checked every
cycle; latency and throughput reported.
"""

import random

import pytest
from conftest import shared

from innet.gen.regmap import switch_map
from innet.hw.collective import PASS_CYCLES, CollectivePath
from innet.hw.flit import bits_for
from innet.hw.switch import HOP_CYCLES
from innet.hw.verilog import emit
from innet.sim import runner
from innet.sim.tb.switchbench import ring, single

pytestmark = pytest.mark.rtl

# The fabric with the pass-through collective path (the testbench's golden model forwards
# requests from any port); the collective engine has its own benches (tests/sim/test_ceng_rtl.py).
SINGLE = {"radix": 8, "payload_width": 32, "buffer_depth": 5, "collective_ids": 4,
          "routing_depth": 16, "p2p_vcs": 2, "collective": CollectivePath}
RING = {"count": 4, "payload_width": 32, "buffer_depth": 5, "collective_ids": 2,
        "routing_depth": 8, "p2p_vcs": 2, "local_depth": 5, "collective": CollectivePath}


@shared
def bench(kind: str):
    """(Design, params) of a bench, made once per test run (its Verilator build cached on
    disk)."""
    if kind == "single":
        cfg = dict(SINGLE)
        top = single(cfg.pop("radix"), **cfg)
    else:
        cfg = dict(RING)
        top = ring(cfg.pop("count"), **cfg)
    s = top.switches[0]
    base = {
        "flit": {"payload_width": s.params.payload_width, "routing_depth": s.params.routing_depth,
                 "collective_ids": s.params.collective_ids, "p2p_vcs": s.params.p2p_vcs,
                 "index_width": s.params.index_width, "tag_width": s.params.tag_width},
        "radix": s.radix, "buffer_depth": s.buffer_depth, "local_depth": s.local_depth,
        "switches": len(top.switches), "links": top.links, "external": top.external,
        "count_width": top.count_width,
    }
    return emit(top, f"switch_bench_{kind}"), base


def single_config(seed: int) -> dict:
    """Random routing table (every port reachable) and collective registers for one switch."""
    rng = random.Random(seed)
    radix, ports = SINGLE["radix"], SINGLE["radix"] + 1
    routes = [d % ports if d < ports else rng.randrange(ports)
              for d in range(SINGLE["routing_depth"])]
    colls = []
    for c in range(SINGLE["collective_ids"]):
        resp_out = sorted(rng.sample(range(ports), rng.randint(1, 4)))
        colls.append({"req_in": sorted(rng.sample(range(ports), 3)),
                      "req_out": 2 if c == 1 else rng.randrange(radix),
                      "root": c % 2 == 0, "resp_in": rng.randrange(ports),
                      "resp_out": resp_out})
    return {"routes": [routes], "collectives": [colls]}


def ring_config() -> dict:
    """Shortest-path routes (ties clockwise) and one reduction tree per collective id."""
    n, radix = RING["count"], 2
    local = radix

    def toward(k, d):
        return 0 if (d - k) % n <= n // 2 else 1  # port 0 is clockwise

    routes = [[(local if d == k else toward(k, d)) if d < n else None
               for d in range(RING["routing_depth"])] for k in range(n)]
    colls = [[{} for _ in range(RING["collective_ids"])] for _ in range(n)]
    for c in range(RING["collective_ids"]):
        root = (2 * c + 1) % n
        parent = {k: (k + 1) % n if toward(k, root) == 0 else (k - 1) % n
                  for k in range(n) if k != root}
        for k in range(n):
            children = [q for q in (0, 1)
                        if parent.get((k + 1) % n if q == 0 else (k - 1) % n) == k]
            up = toward(k, root) if k != root else 0
            colls[k][c] = {"req_in": [*children, local], "req_out": up, "root": k == root,
                           "resp_in": up, "resp_out": [*children, local]}
    return {"routes": routes, "collectives": colls}


def run(kind: str, testcase: str, seed: int = 1, **params):
    design, base = bench(kind)
    config = single_config(seed) if kind == "single" else ring_config()
    # optimize=False: the model's C++ at -O0 compiles in about half the time and simulates
    # these tests, paced by the Python testbench, at about the same speed.
    return runner.run(design, "innet.sim.tb.tb_switch", testcase=testcase, seed=seed,
                      params={**base, **config, "seed": seed, **params}, internals=False,
                      optimize=False)


@pytest.mark.parametrize("kind", ["single", "ring"])
def test_register_readback(kind):
    out = run(kind, "test_registers").output
    _, base = bench(kind)
    cfg = SINGLE if kind == "single" else RING
    regmap = switch_map(base["radix"], cfg["collective_ids"], cfg["routing_depth"],
                        node_id_width=bits_for(cfg["routing_depth"]))
    assert out["registers_checked"] == base["switches"] * len(regmap.registers)


def test_single_idle_latency():
    out = run("single", "test_idle_latency", probes=60).output
    assert out["idle_latency"] == {"1": HOP_CYCLES}


def test_ring_idle_latency():
    # HOP_CYCLES per switch crossed: the same node, one hop, two hops.
    out = run("ring", "test_idle_latency", probes=60).output
    assert out["idle_latency"] == {"1": HOP_CYCLES, "2": 2 * HOP_CYCLES, "3": 3 * HOP_CYCLES}


def test_single_stream_throughput():
    ports = SINGLE["radix"] + 1
    perm = [(e + 3) % ports for e in range(ports)]  # node d < ports is routed to port d
    out = run("single", "test_stream_throughput", permutation=perm, cycles=2000).output
    assert out["stream_throughput"] == [1.0] * ports


def test_single_uniform_random_saturation():
    """Uniform random destinations at full load, no backpressure: input queueing limits an
    output to about 2 - sqrt(2) = 0.59 of its cycles for many ports (Karol, Hluchyj and Morgan,
    1987); this switch stays at or above 0.60 with its nine ports."""
    ports = SINGLE["radix"] + 1
    out = run("single", "test_stream_throughput", destinations=list(range(ports)), seed=3,
              cycles=4000).output
    mean = sum(out["stream_throughput"]) / ports
    print(f"uniform random saturation: {mean:.3f} flits/cycle per output "
          f"{out['stream_throughput']}")
    assert mean >= 0.60


@pytest.mark.parametrize(("load", "cycles", "seed"), [(1.0, 15000, 11), (0.4, 10000, 12)])
def test_single_random_traffic(load, cycles, seed):
    out = run("single", "test_p2p_random", seed=seed, load=load, cycles=cycles, coll_rate=0.15,
              drain=0.75, stall_rate=0.01).output
    print(f"single switch, load {load}: latency {out['latency']}, "
          f"flits/cycle per output {out['throughput']}")
    assert out["matched"] > cycles * load * 2
    assert out["latency"]["1"]["min"] == HOP_CYCLES


def test_single_collective_priority():
    cfg = single_config(1)
    hot = cfg["collectives"][0][1]["req_out"]
    out = run("single", "test_collective_priority", hot_dst=hot, hot_cid=1, cycles=4000).output
    print(f"under p2p contention: collective latency {out['collective_latency']}, p2p mean "
          f"{out['p2p_latency_mean']:.1f} max {out['p2p_latency_max']}, "
          f"{out['overtaken']} overtakes")
    assert out["collective_latency"] == [HOP_CYCLES + PASS_CYCLES]
    assert out["p2p_latency_max"] > 10


def test_single_collective_random():
    out = run("single", "test_collective_random", seed=5, cycles=5000, load=0.6,
              atomic=True).output
    assert out["matched"] > 5000


def test_ring_random_traffic():
    out = run("ring", "test_p2p_random", seed=21, load=1.0, cycles=20000, coll_rate=0.1,
              responses=False, drain=0.8, stall_rate=0.01).output
    print(f"ring of 4: latency by switches crossed {out['latency']}, "
          f"flits/cycle per endpoint {out['throughput']}")
    assert set(out["latency"]) == {"1", "2", "3"}
    assert out["matched"] > 20000
