"""The in-network alpha-beta cost (PIUMA, Analysis, Eq. 1 and 2), against independent models:
networkx distances and trees, and PIUMA's bound."""

import random

import networkx as nx
import numpy as np
import pytest

from innet.gen.embed import (
    Cost,
    CostModel,
    crossover,
    embed,
    embedding_cost,
    path_latencies,
    response_latencies,
)
from innet.gen.topology import hyperx, polarfly, torus
from innet.hw.alu.multi import multi_latency
from innet.hw.ceng import engine_latency


@pytest.mark.parametrize("topo", [polarfly(7), hyperx((4, 4, 4)), torus((5, 6))],
                         ids=["pf7", "hx4x4x4", "t5x6"])
def test_alpha_is_twice_the_longest_leaf_root_latency(topo):
    model = CostModel(link_latency=3, switch_latency=5, local_latency=2, reduce_latency=0,
                      front_latency=0)
    e = embed(topo)
    cost = embedding_cost(e, topo, model)
    graph = topo.to_networkx()
    hops = nx.single_source_shortest_path_length(graph, e.root)
    # Uniform latencies: the longest path is the deepest participant (PIUMA Eq. 1 with
    # D = depth hops, D + 1 switches), and it meets the bound with equality.
    deepest = max(hops[p] for p in e.participants)
    assert cost.alpha == 2 * (2 + 3 * deepest + 5 * (deepest + 1))
    assert cost.beta == 1.0  # one element per cycle on links and endpoint ports
    assert cost.time(100) == cost.alpha + 100 * cost.beta
    assert np.allclose(cost.time(np.array([0, 10])), [cost.alpha, cost.alpha + 10])
    latencies = path_latencies(e, topo, model)
    assert {p: latencies[p] for p in e.participants} == {
        p: 2 + 3 * hops[p] + 5 * (hops[p] + 1) for p in e.participants}


def test_per_link_latencies_move_the_longest_path():
    topo = torus(8)  # root 3; participant 7 is 4 hops away the plus way: 7 -> 0 -> 1 -> 2 -> 3
    e = embed(topo)
    assert e.root == 3
    base = embedding_cost(e, topo, CostModel(link_latency=1, switch_latency=0, local_latency=0,
                                             reduce_latency=0, front_latency=0))
    assert base.alpha == 2 * 4
    slow = CostModel(link_latency=1, switch_latency=0, local_latency=0, reduce_latency=0,
                     front_latency=0,
                     link_latencies={(4, 3): 10})  # on the path of 4, 5, 6 only
    assert embedding_cost(e, topo, slow).alpha == 2 * (10 + 2)  # 6 -> 5 -> 4 -> 3
    assert hash(slow) == hash(CostModel(link_latency=1, switch_latency=0, local_latency=0,
                                        reduce_latency=0, front_latency=0,
                                        link_latencies={(3, 4): 10}))


def test_one_way_kinds_and_bandwidth_terms():
    topo = polarfly(3)
    model = CostModel(link_latency=1, switch_latency=2, local_latency=1, reduce_latency=0,
                      front_latency=0)
    all_reduce = embedding_cost(embed(topo), topo, model)
    for kind in ("reduce", "broadcast"):
        one_way = embedding_cost(embed(topo, kind=kind, root=0), topo, model)
        assert one_way.alpha == all_reduce.alpha / 2 + model.local_latency
    assert embedding_cost(embed(topo, kind="barrier"), topo, model) == all_reduce
    assert CostModel(link_bandwidth=8, local_bandwidth=None).beta() == 0.125
    assert CostModel(link_bandwidth=8).beta() == 1.0  # the endpoint port is the bottleneck
    assert CostModel(link_bandwidth=8, local_bandwidth=2).beta() == 0.5
    assert CostModel(engine_bandwidth=0.5).beta(engine_load=1) == 2.0
    assert CostModel(local_bandwidth=None).beta(link_load=0.25) == 0.25
    assert CostModel().beta(link_load=0.25) == 1.0


def _tree(e):
    """The request tree as a networkx DiGraph child -> parent, from the embedding's links."""
    tree = nx.DiGraph()
    tree.add_nodes_from(e.participants)
    tree.add_edges_from((u, v) for u, _, v, _ in e.links)
    return tree


@pytest.mark.parametrize("topo", [polarfly(5), hyperx((3, 4)), torus((4, 6)), torus(7)],
                         ids=["pf5", "hx3x4", "t4x6", "ring7"])
@pytest.mark.parametrize(("reduce_latency", "op"), [(7, "add"), (None, "add"), (7, "mul"),
                                                    (None, "mul")])
def test_reductions_on_the_way_up(topo, reduce_latency, op):
    """With reduction latency, alpha = slowest input up (each switch adds its engine's front end
    and, where k >= 2 ports contribute, its reduction: 7 cycles, or by default the reduction
    unit's at the topology's radix, and for mul the engine's tree of pairwise ALUs over the k
    ports) + slowest path down; computed on the tree alone."""
    model = CostModel(link_latency=3, switch_latency=2, local_latency=1,
                      reduce_latency=reduce_latency, front_latency=4)

    def reduction(k):
        if reduce_latency:
            return 7
        if op == "mul":  # the engine's own latency of k ports, without its front end
            return engine_latency(k, topo.radix, op) - engine_latency(1, topo.radix)
        return multi_latency(topo.radix + 1)

    rng = random.Random(topo.nodes)
    for participants in (None, sorted(rng.sample(range(topo.nodes), topo.nodes // 2))):
        e = embed(topo, participants, op=op)
        tree = _tree(e)
        members = set(e.participants)
        k = {u: tree.in_degree(u) + (u in members) for u in tree}
        up, down = {}, {}
        for p in e.participants:
            route = nx.shortest_path(tree, p, e.root)
            hops = len(route) - 1
            up[p] = 1 + 3 * hops + sum(2 + 4 + (reduction(k[u]) if k[u] >= 2 else 0)
                                       for u in route)
            down[p] = 3 * hops + 2 * (hops + 1) + 1
        assert path_latencies(e, topo, model) == pytest.approx(up)
        assert response_latencies(e, topo, model) == pytest.approx(down)
        assert embedding_cost(e, topo, model).alpha == max(up.values()) + max(down.values())


CASES = [polarfly(2), polarfly(3), polarfly(5), polarfly(7), hyperx((3, 3)), hyperx((4, 4, 4)),
         hyperx((2, 8)), torus((4, 4)), torus((3, 5)), torus(8), torus((3, 4), mesh=True)]


@pytest.mark.parametrize("topo", CASES, ids=lambda t: f"{t.kind}{t.nodes}")
def test_piuma_bound(topo):
    """PIUMA, Analysis, Eq. 1: alpha <= 2 x (latencies of the links and switches on the longest
    leaf-root path), each switch at its worst (every port contributing); equality when
    switches add no engine latency (no front end, no reduction). On an L-dimensional HyperX
    the path has at most L hops."""
    rng = random.Random(topo.nodes * 7 + len(topo.params))
    for trial in range(4):
        model = CostModel(link_latency=rng.choice([0, 1, 3]), switch_latency=rng.choice([1, 2]),
                          local_latency=rng.choice([0, 1]), reduce_latency=rng.choice([0, 7]),
                          front_latency=rng.choice([0, 3]))
        size = topo.nodes if trial == 0 else rng.randint(1, topo.nodes)
        e = embed(topo, sorted(rng.sample(range(topo.nodes), size)))
        hops = nx.single_source_shortest_path_length(topo.to_networkx(), e.root)
        depth = max(hops[p] for p in e.participants)
        assert depth == e.depth
        worst = model.switch_latency + model.front_latency + model.reduce_latency
        bound = 2 * (model.local_latency + depth * model.link_latency + (depth + 1) * worst)
        alpha = embedding_cost(e, topo, model).alpha
        assert alpha <= bound
        if model.reduce_latency == model.front_latency == 0:
            assert alpha == bound
        if topo.kind == "hyperx":
            dims = len(topo.params["shape"])
            assert alpha <= 2 * (model.local_latency + dims * model.link_latency
                                 + (dims + 1) * worst)


def test_crossover_picks_the_fastest_at_each_size():
    low_latency = Cost(alpha=10, beta=2)
    high_bandwidth = Cost(alpha=100, beta=1)
    rows = crossover({"tree": low_latency.time, "ring": high_bandwidth.time}, [1, 90, 1000])
    assert [winner for _, winner, _ in rows] == ["tree", "tree", "ring"]
    assert rows[1][2] == {"tree": 190.0, "ring": 190.0}  # a tie goes to the first listed
    with pytest.raises(ValueError, match=r"^Crossover needs at least one cost function$"):
        crossover({}, [1])


def test_errors():
    with pytest.raises(ValueError, match=r"^Link latency must be finite and >= 0, not -1.0$"):
        CostModel(link_latency=-1)
    with pytest.raises(ValueError, match=r"^Link bandwidth must be > 0 \(inf allowed\), "
                                         r"not 0.0$"):
        CostModel(link_bandwidth=0)
    with pytest.raises(TypeError, match=r"^Switch latency must be a number, not 'x'$"):
        CostModel(switch_latency="x")
    with pytest.raises(TypeError, match=r"^Link latencies must be a mapping of \(u, v\) to "
                                        r"cycles, not \[1\]$"):
        CostModel(link_latencies=[1])
    with pytest.raises(TypeError, match=r"^Link latency keys must be \(u, v\) pairs of node ids, "
                                        r"not 3$"):
        CostModel(link_latencies={3: 1})
    with pytest.raises(TypeError, match=r"^Link latency keys must be \(u, v\) pairs of node ids, "
                                        r"not \('a', 1\)$"):
        CostModel(link_latencies={("a", 1): 1})
    with pytest.raises(ValueError, match=r"^Latency of link 0-1 must be finite and >= 0, not "
                                         r"inf$"):
        CostModel(link_latencies={(0, 1): float("inf")})
    e = embed(polarfly(2))
    for cost in (embedding_cost, path_latencies, response_latencies):
        # A tree of another network was climbed for ever by the latencies.
        with pytest.raises(ValueError, match=r"^Embedding was made for topology "):
            cost(e, polarfly(3))
        with pytest.raises(TypeError, match=r"^Topology must be a Topology, not NoneType$"):
            cost(e, None)
        with pytest.raises(TypeError, match=r"^Embedding must be an Embedding, not NoneType$"):
            cost(None, polarfly(2))
        with pytest.raises(TypeError, match=r"^Model must be a CostModel, not 'x'$"):
            cost(e, polarfly(2), "x")
