"""The collective engine in switches under cocotb + Verilator (innet.sim.tb.tb_ceng).

A radix-8 switch (the engine with multipliers, 2 collective ids): reductions of several
operations and types with random arrival skew on every contributing port and random
backpressure, bit-exact against innet.sim.golden; latency per port count and throughput with
inputs and credits always available; two ids at once with p2p background traffic. A ring of
four switches (engines as built by default, without multipliers) programmed from an image of
two embeddings on two ids, endpoints modelled by the testbench: request trees, reductions at
the meeting points, the roots' multicasts and the response trees, end to end. (The same tests
pass on PolarFly q = 2, ``("polarfly", 2)`` for ``network_bench`` and ``network_topology``; the
ring keeps the Verilator build short for CI.)
"""

import functools

import pytest
from conftest import shared

from innet.gen.embed import embed
from innet.gen.image import build_image
from innet.gen.ops import DType, Op
from innet.gen.routing import routing
from innet.gen.topology import polarfly, torus
from innet.hw.ceng import CollectiveEngine, engine_latency
from innet.hw.flit import bits_for
from innet.hw.switch import HOP_CYCLES, Switch
from innet.hw.verilog import emit
from innet.sim import runner
from innet.sim.golden import idle_latency
from innet.sim.tb.switchbench import SwitchBench, single

pytestmark = pytest.mark.rtl

SINGLE = {"radix": 8, "payload_width": 32, "buffer_depth": 5, "collective_ids": 2,
          "routing_depth": 16, "p2p_vcs": 2}
NETWORK = {"buffer_depth": 5, "collective_ids": 2, "p2p_vcs": 2}


def _base(top) -> dict:
    s = top.switches[0]
    p = s.params
    return {
        "flit": {"payload_width": p.payload_width, "routing_depth": p.routing_depth,
                 "collective_ids": p.collective_ids, "p2p_vcs": p.p2p_vcs,
                 "index_width": p.index_width, "tag_width": p.tag_width},
        "radix": s.radix, "buffer_depth": s.buffer_depth, "local_depth": s.local_depth,
        "switches": len(top.switches), "links": top.links, "external": top.external,
        "count_width": top.count_width,
    }


@shared
def single_bench():
    cfg = dict(SINGLE)
    top = single(cfg.pop("radix"), **cfg,
                 collective=functools.partial(CollectiveEngine, mul=True))
    return emit(top, "ceng_bench_single"), _base(top)


def network_topology(kind: str = "ring", size: int = 4):
    """The topology of :func:`network_bench`."""
    return torus((size,)) if kind == "ring" else polarfly(size)


@shared
def network_bench(kind: str = "ring", size: int = 4):
    """A network of switches with engines, every local port external (made once per test
    run): its design and bench parameters."""
    topo = network_topology(kind, size)
    switches = [Switch(topo.radix, buffer_depth=NETWORK["buffer_depth"],
                       collective_ids=NETWORK["collective_ids"], routing_depth=topo.nodes,
                       p2p_vcs=NETWORK["p2p_vcs"])
                for _ in range(topo.nodes)]
    links = []
    for link in topo.links():
        links += [(link.u, link.port_u, link.v, link.port_v),
                  (link.v, link.port_v, link.u, link.port_u)]
    top = SwitchBench(switches, links, [(u, topo.radix) for u in range(topo.nodes)])
    return emit(top, f"ceng_bench_{kind}{size}"), _base(top)


def single_routes() -> list:
    ports = SINGLE["radix"] + 1
    return [[d % ports for d in range(SINGLE["routing_depth"])]]


def run_single(testcase: str, seed: int, **params):
    design, base = single_bench()
    # optimize=False: the model's C++ at -O0 compiles in about half the time and simulates
    # these tests, paced by the Python testbench, at about the same speed.
    return runner.run(design, "innet.sim.tb.tb_ceng", testcase=testcase, seed=seed,
                      params={**base, "routes": single_routes(), "collectives": [[{}, {}]],
                              "seed": seed, **params}, internals=False, optimize=False).output


def coll(req_in, op, dtype, *, req_out=0, root=False, resp_out=()):
    return {"req_in": sorted(req_in), "op": int(Op.parse(op)), "dtype": int(DType.parse(dtype)),
            "req_out": req_out, "root": root, "resp_out": sorted(resp_out)}


def test_single_switch_reductions_bit_exact():
    """Every port count from 2 to 9, several operations and types (fp32 add with specials,
    subnormals and cancellation), reductions toward a port and multicast at the root."""
    local = SINGLE["radix"]
    phases = [
        {"collectives": [coll(range(9), "add", "fp32", req_out=3),
                         coll([1, 4, local], "min", "fp32", root=True, resp_out=[0, 4, 7, local])],
         "elements": 150},
        {"collectives": [coll([0, 2, 3, 5, 6, local], "add", "fp32", root=True,
                              resp_out=range(9)),
                         coll([2, 7], "max", "int32", req_out=local)], "elements": 150},
        {"collectives": [coll([0, 1, 2, 3, 4], "nor", "uint32", req_out=8),
                         coll([3, 5, 6, 7, local], "mul", "fp32", root=True, resp_out=[1, 2])],
         "elements": 100},
        {"collectives": [coll([1, 2, 3, 4, 5, 6, 7], "add", "int32", req_out=0),
                         coll([0, 8], "max", "fp32", req_out=1)], "elements": 100},
        {"collectives": [coll([6], "add", "fp32", root=True, resp_out=[0, 6, local]),
                         coll([0, 1, 2, 4, 5, 6, 7, local], "xor", "int32", req_out=3)],
         "elements": 100},
    ]
    out = run_single("test_reduce_phases", 31, phases=phases, rates=[0.15, 1.0],
                     drain=0.6, stall_rate=0.02)
    assert out["results"] == 2 * (150 + 150 + 100 + 100 + 100)


def test_single_switch_latency_and_throughput():
    ks = [2, 3, 4, 5, 8, 9]
    out = run_single("test_latency_throughput", 32, ks=ks, op=int(Op.ADD),
                     dtype=int(DType.FP32), stream=300)
    latency = {int(k): v for k, v in out["latency"].items()}
    throughput = {int(k): v for k, v in out["throughput"].items()}
    print(f"radix-8 switch, fp32 add: cycles through the switch by contributing ports "
          f"{latency}; elements per cycle {throughput}")
    assert latency == {k: HOP_CYCLES + engine_latency(k, 8) for k in ks}
    assert throughput == dict.fromkeys(ks, 1.0)


def test_single_switch_two_ids_with_p2p():
    local = SINGLE["radix"]
    colls = [coll([0, 1, 3, 5, local], "add", "fp32", root=True, resp_out=[0, 2, 5, local]),
             coll([1, 2, 3, 4, 5, 7], "min", "int32", req_out=6)]
    out = run_single("test_two_ids_with_p2p", 33, ids=colls, elements=400,
                     p2p_load=0.5, drain=0.7, stall_rate=0.02)
    print(f"two ids and p2p: {out}")
    assert out["results"] == 800
    assert out["p2p"] > 1000


def network_run(testcase: str, seed: int, embeddings, **params) -> dict:
    (design, base), topo = network_bench(), network_topology()
    p = NETWORK
    image = build_image(topo, routes=routing(topo), embeddings=embeddings,
                        collective_ids=p["collective_ids"], routing_depth=topo.nodes,
                        node_id_width=bits_for(topo.nodes))
    routes = [[int(x) for x in row] for row in routing(topo).hardware_table()]
    # optimize=False: the model's C++ at -O0 compiles in about half the time and simulates
    # these tests, paced by the Python testbench, at about the same speed.
    return runner.run(design, "innet.sim.tb.tb_ceng", testcase=testcase, seed=seed, params={
        **base, "routes": routes, "collectives": [[{}, {}]] * topo.nodes,
        "writes": [list(image.writes[u]) for u in range(topo.nodes)],
        "embeddings": [e.to_dict() for e in embeddings], "seed": seed, **params},
        internals=False, optimize=False).output


def test_network_idle_latency_matches_the_model():
    """One element per embedding on the idle ring: every endpoint's result arrives exactly
    when innet.sim.golden.idle_latency says (HOP_CYCLES per switch, plus engine_latency(k, 2)
    where a switch reduces k ports)."""
    topo = network_topology()
    embeddings = [embed(topo, op="add", dtype="fp32", collective_id=0),
                  embed(topo, [0, 2, 3], root=3, op="min", dtype="int32", collective_id=1)]
    out = network_run("test_network_latency", 35, embeddings)
    print(f"idle ring of 4, cycles from injection to each endpoint's result: {out['latency']}")
    for emb in embeddings:
        want = {str(u): v for u, v in idle_latency(emb, radix=topo.radix).items()}
        assert out["latency"][str(emb.collective_id)] == want


def test_network_embeddings_end_to_end():
    """A ring of 4: an fp32 allreduce of every node on id 0 and an int32 max allreduce of 3
    nodes with another root on id 1, at the same time, with p2p background traffic; the
    switches are programmed with the image's register writes."""
    (design, _), topo = network_bench(), network_topology()
    e0 = embed(topo, op="add", dtype="fp32", collective_id=0)
    e1 = embed(topo, [1, 2, 3], root=2, op="max", dtype="int32", collective_id=1)
    assert e0.root != e1.root
    out = network_run("test_embeddings", 34, [e0, e1], elements=120, p2p_load=0.3, drain=0.7,
                      stall_rate=0.02)
    print(f"{design.toplevel}, two embeddings: {out}")
    assert out["results"] == 120 * (len(e0.participants) + len(e1.participants))
