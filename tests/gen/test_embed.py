"""The dynamic embedding: verifier properties on many networks, root choice, semantics, errors."""

import random
import re

import networkx as nx
import numpy as np
import pytest

from innet.gen.embed import KINDS, Embedding, embed, reconstruct, root_keys, verify
from innet.gen.ops import DType, Op
from innet.gen.topology import LOCAL, hyperx, polarfly, torus

NETWORKS = {
    **{f"pf{q}": (lambda q=q: polarfly(q)) for q in (2, 3, 4, 5, 7, 8, 9, 11, 13)},
    "hx3x3": lambda: hyperx((3, 3)), "hx4x4x4": lambda: hyperx((4, 4, 4)),
    "hx2x8": lambda: hyperx((2, 8)), "t4x4": lambda: torus((4, 4)),
    "t8x8": lambda: torus((8, 8)), "t3x5": lambda: torus((3, 5)), "ring7": lambda: torus(7),
    "ring8": lambda: torus(8), "ring2": lambda: torus(2), "mesh3x4": lambda: torus((3, 4), True),
    "pf3-expanded": lambda: polarfly(3, r0=1),
}


def run(topo, e, values):
    """Push one-hot inputs through the switch configurations (an independent model of the
    hardware): requests are reduced up ``req_out`` links, responses multicast down ``resp_out``.
    Returns what each node's endpoint receives, as a list of delivered vectors."""
    config = {s.node: s for s in e.switches}

    def request(u):  # the value switch u sends on req_out (or keeps, at the root)
        total = np.zeros_like(values[0])
        for q in config[u].req_in:
            if q == LOCAL:
                total = total + values[u]
            else:
                v, p = topo.ports[u][q]
                assert config[v].req_out == p  # the child really sends here
                total = total + request(v)
        return total

    delivered = {u: [] for u in range(topo.nodes)}

    def respond(u, value):
        for q in config[u].resp_out:
            if q == LOCAL:
                delivered[u].append(value)
            else:
                v, p = topo.ports[u][q]
                assert config[v].resp_in == p  # the child listens on this link
                respond(v, value)

    respond(e.root, request(e.root))
    return delivered


def check_semantics(topo, e):
    n = topo.nodes
    values = np.eye(n, dtype=np.int64)  # one-hot: the sum shows who contributed how often
    delivered = run(topo, e, values)
    everyone = np.zeros(n, dtype=np.int64)
    everyone[list(e.participants)] = 1
    if e.kind == "broadcast":
        everyone = values[e.root]
    receivers = [e.root] if e.kind == "reduce" else list(e.participants)
    for u in range(n):
        if u in receivers:
            assert len(delivered[u]) == 1
            assert (delivered[u][0] == everyone).all()
        else:
            assert delivered[u] == []


def distances(topo):
    return dict(nx.all_pairs_shortest_path_length(topo.to_networkx()))


@pytest.mark.parametrize("name", NETWORKS)
def test_verifier_properties_full_and_random_subsets(name):
    topo = NETWORKS[name]()
    dist = distances(topo)
    rng = random.Random(name)
    subsets = [None, [rng.randrange(topo.nodes)]]
    subsets += [sorted(rng.sample(range(topo.nodes), rng.randint(2, topo.nodes)))
                for _ in range(3)]
    for participants in subsets:
        for kind in KINDS:
            e = embed(topo, participants, kind=kind)
            verify(e, topo)
            check_semantics(topo, e)
            parts = e.participants
            assert parts == tuple(participants or range(topo.nodes))
            assert e.root in parts
            ecc = {c: max(dist[c][p] for p in parts) for c in parts}
            assert e.depth == ecc[e.root] == min(ecc.values())  # minimum eccentricity
            if topo.kind == "polarfly" and "expanded" not in name:
                assert e.depth <= 2
            if topo.kind == "hyperx":
                assert e.depth <= len(topo.params["shape"])
            # The registers cannot tell a barrier from an allreduce, nor kinds on one switch.
            ambiguous = kind == "barrier" or len(e.switches) == 1
            assert reconstruct(topo, e.switches, op=e.op, dtype=e.dtype, collective_id=0,
                               kind=kind if ambiguous else None) == e


def test_every_participant_path_is_minimal_and_dimension_ordered():
    topo = hyperx((3, 4, 3))
    e = embed(topo)
    parent = {u: v for u, _, v, _ in e.links}
    for p in e.participants:
        u, dims = p, []
        while u != e.root:
            v = parent[u]
            dims += [d for d in range(3) if topo.labels[u][d] != topo.labels[v][d]]
            u = v
        assert dims == sorted(dims)
        assert len(dims) == sum(
            a != b for a, b in zip(topo.labels[p], topo.labels[e.root], strict=True))


def test_root_tie_break():
    # HyperX and torus: every node has the same eccentricity and total distance; the root is
    # the node nearest the middle of the grid (PIUMA Fig. 2), lowest id among equals.
    assert embed(hyperx((5, 5))).root == 12  # (2, 2)
    assert embed(hyperx((4, 4))).root == 5  # (1, 1) before (1, 2), (2, 1), (2, 2)
    assert embed(torus((3, 5))).root == 7  # (1, 2)
    # PolarFly: quadrics have one neighbour fewer, so a larger total distance.
    topo = polarfly(5)
    root = embed(topo).root
    assert topo.classes[root] != "quadric"
    assert root == min(u for u in range(topo.nodes) if topo.classes[u] != "quadric")
    keys = root_keys(topo, np.arange(topo.nodes))
    assert keys[root].tolist() == [2, 2 * (topo.nodes - 1) - 6, 0, root]
    # Subsets: minimum eccentricity first.
    ring = torus(10)
    assert embed(ring, [0, 1, 2, 8]).root == 0
    assert embed(ring, [1, 2, 3]).root == 2


def test_explicit_root_and_non_participant_root():
    topo = torus((4, 4))
    e = embed(topo, [0, 1, 2], root=10)
    verify(e, topo)
    assert e.root == 10
    assert LOCAL not in e.switch(10).req_in
    assert e.depth == max(nx.shortest_path_length(topo.to_networkx(), 10, p) for p in (0, 1, 2))
    check_semantics(topo, e)


def test_single_participant_and_kind_layouts():
    topo = polarfly(3)
    e = embed(topo, [4])
    assert e.switches[0].req_in == {LOCAL}
    assert e.depth == 0
    assert e.links == ()
    verify(e, topo)
    r = embed(topo, kind="reduce", root=2)
    assert r.switch(2).resp_out == {LOCAL}
    assert all(s.resp_in is None for s in r.switches)
    assert all(not s.resp_out for s in r.switches if s.node != 2)
    b = embed(topo, kind="broadcast", root=2)
    assert b.switch(2).req_in == {LOCAL}
    assert all(s.req_out is None for s in b.switches)
    assert all(not s.req_in for s in b.switches if s.node != 2)
    assert {s.node for s in b.switches if LOCAL in s.resp_out} == set(range(topo.nodes))


def test_contract_types_and_json_round_trip():
    topo = hyperx((3, 3))
    e = embed(topo, [0, 4, 8], op="max", dtype="fp32", collective_id=3)
    assert isinstance(e.op, Op)
    assert e.op == Op.MAX
    assert e.dtype == DType.FP32
    assert e.collective_id == 3
    assert e.topology == topo.fingerprint
    for s in e.switches:
        assert isinstance(s.req_in, frozenset)
        assert isinstance(s.resp_out, frozenset)
        assert all(isinstance(p, int) for p in s.req_in | s.resp_out)
    assert Embedding.from_dict(e.to_dict()) == e
    assert hash(e) == hash(Embedding.from_dict(e.to_dict()))
    data = e.to_dict()
    root = next(s for s in data["switches"] if s["node"] == e.root)
    assert root["req_out"] is None
    assert root["resp_in"] is None
    assert root["req_in"][-1] == "local"
    assert "root=4" in repr(e)
    with pytest.raises(ValueError, match=r"^Embedding JSON lacks 'switches'$"):
        Embedding.from_dict({k: v for k, v in data.items() if k != "switches"})
    with pytest.raises(ValueError, match=r"^Embedding JSON field 'root' is malformed: "):
        Embedding.from_dict({**data, "root": "x"})
    with pytest.raises(ValueError, match=r"^Embedding JSON field 'depth' is malformed: cannot "
                                         r"convert float infinity to integer$"):
        Embedding.from_dict({**data, "depth": float("inf")})
    # Each field is named with what is wrong in it, in the file's terms.
    for change, message in [
        ({"switches": [1]}, "field 'switches' is malformed: a switch must be an object, not 1"),
        ({"switches": 7}, "field 'switches' is malformed: a list was expected, not 7"),
        ({"switches": [{"node": 0}]}, "field 'switches' is malformed: it lacks 'req_in'"),
        ({"links_used": [[0, 1], 5]},
         "field 'links_used' is malformed: a list was expected, not 5"),
        ({"failed_switches": "0"},
         "field 'failed_switches' is malformed: a list was expected, not '0'"),
        ({"collective_id": -1},
         "field 'collective_id' is malformed: collective id -1 is negative"),
    ]:
        with pytest.raises(ValueError, match="^" + re.escape(f"Embedding JSON {message}") + "$"):
            Embedding.from_dict({**data, **change})
    with pytest.raises(ValueError, match=r"^Embedding JSON must be an object, not list$"):
        Embedding.from_dict([data])
    # The failures are optional.
    assert Embedding.from_dict({k: v for k, v in data.items()
                                if k not in ("failed_links", "failed_switches")}) == e


def test_errors():
    topo = polarfly(3)
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not str$"):
        embed("pf")
    with pytest.raises(ValueError, match=r"^Kind must be one of allreduce, reduce, broadcast, "
                                         r"barrier, not 'scan'$"):
        embed(topo, kind="scan")
    with pytest.raises(ValueError, match=r"^Operation xor is not defined on fp32$"):
        embed(topo, op="xor", dtype="fp32")
    with pytest.raises(ValueError, match=r"^Operation must be one of "):
        embed(topo, op="avg")
    with pytest.raises(ValueError, match=r"^Collective id must be between 0 and 255, not "
                                         r"256$"):
        embed(topo, collective_id=256)
    with pytest.raises(TypeError, match=r"^Collective id must be an integer, not '1'$"):
        embed(topo, collective_id="1")
    with pytest.raises(ValueError, match=r"^Participant 3 is listed twice$"):
        embed(topo, [3, 1, 3])
    with pytest.raises(ValueError, match=r"^Participant 13 is outside 0..12$"):
        embed(topo, [13])
    with pytest.raises(ValueError, match=r"^Participants must name at least one node$"):
        embed(topo, [])
    with pytest.raises(TypeError, match=r"^A participant must be a node id, not 'a'$"):
        embed(topo, ["a"])
    with pytest.raises(TypeError, match=r"^Participants must be node ids, not '0,1'$"):
        embed(topo, "0,1")
    with pytest.raises(ValueError, match=r"^Root 13 is outside 0..12$"):
        embed(topo, root=13)
    with pytest.raises(TypeError, match=r"^Root must be a node id or 'auto', not 'middle'$"):
        embed(topo, root="middle")
    with pytest.raises(ValueError, match=r"^Root 5 of a reduce must be a participant$"):
        embed(topo, [1, 2], root=5, kind="reduce")
    with pytest.raises(ValueError, match=r"^Root 5 of a broadcast must be a participant$"):
        embed(topo, [1, 2], root=5, kind="broadcast")


@pytest.mark.parametrize("name", ["hx4x4x4", "hx2x8", "t3x5", "mesh3x4", "pf7", "pf8",
                                  "pf3-expanded"])
def test_root_keys_match_brute_force(name):
    topo = NETWORKS[name]()
    dist = distances(topo)
    rng = random.Random(name)
    for size in (1, 2, topo.nodes // 2, topo.nodes):
        parts = sorted(rng.sample(range(topo.nodes), size))
        keys = root_keys(topo, np.array(parts))
        for c, (ecc, total, _, node) in zip(parts, keys.tolist(), strict=True):
            assert node == c
            assert ecc == max(dist[c][p] for p in parts)
            assert total == sum(dist[c][p] for p in parts)
