"""Paths and link loads for many pairs, Valiant and Compact Valiant (PolarFly, Section VII-B)."""

import importlib
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from innet.gen.routing import (
    Routing,
    link_loads,
    path,
    paths,
    routing,
    routing_from_table,
    valiant,
)
from innet.gen.topology import LOCAL, hyperx, polarfly, torus


def by_hand(topo, table, src, dst):
    """The path by following the table entry by entry (independent of `paths`)."""
    out, u = [], src
    while u != dst:
        p = int(table[u, dst])
        out.append((u, p))
        u = topo.ports[u][p][0]
    return (*out, (dst, LOCAL))


@pytest.mark.parametrize("topo", [polarfly(5), hyperx((3, 4)), torus((4, 5))],
                         ids=["pf5", "hx3x4", "t4x5"])
def test_paths_match_the_table_walk(topo):
    r = routing(topo)
    table = r.table()
    rng = np.random.default_rng(1)
    src = rng.integers(0, topo.nodes, 300)
    dst = rng.integers(0, topo.nodes, 300)
    routes = paths(r, src, dst)
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        assert routes.path(i) == by_hand(topo, table, s, d)
        assert routes.hops[i] == len(routes.path(i)) - 1
    assert path(r, 0, 0) == ((0, LOCAL),)
    assert len(routes) == 300


def test_link_loads_count_every_crossing():
    topo = torus((4, 4))
    r = routing(topo)
    rng = np.random.default_rng(2)
    src = rng.integers(0, 16, 200)
    dst = rng.integers(0, 16, 200)
    weight = rng.integers(1, 9, 200)
    expected = Counter()
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True):
        for u, p in path(r, s, d)[:-1]:
            expected[(u, p)] += w
    loads = link_loads(r, src, dst, weight)
    assert loads.dtype == np.int64
    assert loads.shape == (16, topo.radix)
    assert {(u, p): int(loads[u, p]) for u, p in zip(*np.nonzero(loads), strict=True)} \
        == dict(expected)
    unit = link_loads(r, src, dst)
    assert unit.sum() == paths(r, src, dst).hops.sum()
    halves = link_loads(r, src, dst, 0.5)
    assert halves.dtype == np.float64
    assert np.allclose(halves, unit / 2)


def test_valiant_intermediates_and_path_lengths():
    topo = polarfly(7)
    r = routing(topo)
    n = topo.nodes
    src, dst = np.divmod(np.arange(n * n), n)
    mid = valiant(topo, src, dst, seed=3)
    same = src == dst
    assert (mid[same] == -1).all()
    assert ((mid[~same] != src[~same]) & (mid[~same] != dst[~same]) & (mid[~same] >= 0)).all()
    assert np.array_equal(mid, valiant(topo, src, dst, seed=3))
    assert not np.array_equal(mid, valiant(topo, src, dst, seed=4))
    assert len(np.unique(mid[~same])) == n  # every router serves as an intermediate
    routes = paths(r, src, dst, via=mid)
    assert routes.hops.max() <= 4  # 2 * diameter
    for i in range(0, n * n, 97):
        nodes = [u for u, _ in routes.path(i)]
        if mid[i] >= 0:
            assert mid[i] in nodes
        assert nodes[-1] == dst[i]


def test_compact_valiant_picks_neighbours_and_never_bounces():
    topo = polarfly(7)
    graph = topo.to_networkx()
    r = routing(topo)
    n = topo.nodes
    src, dst = np.divmod(np.arange(n * n), n)
    mid = valiant(topo, src, dst, "compact", seed=5)
    adjacent = np.array([graph.has_edge(s, d) for s, d in zip(src, dst, strict=True)])
    minimal = adjacent | (src == dst)
    assert (mid[minimal] == -1).all()
    assert all(graph.has_edge(s, m) for s, m in zip(src[~minimal], mid[~minimal], strict=True))
    routes = paths(r, src, dst, via=mid)
    assert routes.hops.max() == 3  # at most 3 hops (Section VII-B)
    for i in np.flatnonzero(~minimal)[::41]:
        nodes = [u for u, _ in routes.path(i)]
        assert nodes.count(src[i]) == 1  # the packet never returns to its source router
    with_via = link_loads(r, src, dst, via=mid)
    assert with_via.sum() == routes.hops.sum()


def test_table_loops_and_unreachable_destinations_are_reported():
    topo = torus(4)
    table = routing(topo).table().astype(np.int64)
    # Node 0 sends packets for 2 to node 1 and node 1 sends them back to node 0.
    table[0, 2] = topo.port_to(0, 1)
    table[1, 2] = topo.port_to(1, 0)
    looping = routing_from_table(topo, table)
    with pytest.raises(ValueError, match=r"^The route from node 0 to node 2 loops: it does not "
                                         r"arrive within 4 hops$"):
        paths(looping, [0], [2])
    cut = routing(torus((3, 3)), failed_switches=[4])
    with pytest.raises(ValueError, match=r"^Node 4 cannot be reached from node 1: switch 1 has "
                                         r"no route to it$"):
        path(cut, 1, 4)


def test_errors():
    topo = polarfly(3)
    r = routing(topo)
    with pytest.raises(TypeError, match=r"^Routing must be a Routing, not Topology$"):
        paths(topo, 0, 1)
    with pytest.raises(ValueError, match=r"^Via names node 13, outside 0..12 \(or -1 for "
                                         r"none\)$"):
        paths(r, [0], [1], via=[13])
    with pytest.raises(TypeError, match=r"^Via must be node ids or -1, not \[0.5\]$"):
        paths(r, [0], [1], via=[0.5])
    with pytest.raises(ValueError, match=r"^Valiant mode must be one of valiant, compact, not "
                                         r"'ugal'$"):
        valiant(topo, 0, 1, "ugal")
    with pytest.raises(ValueError, match=r"^Valiant routing needs at least 3 nodes, not 2$"):
        valiant(torus(2), 0, 1)
    with pytest.raises(ValueError, match=r"^Source names node 20, outside 0..12$"):
        valiant(topo, 20, 1)
    with pytest.raises(TypeError, match=r"^Seed must be an integer, not 'x'$"):
        valiant(topo, 0, 5, seed="x")
    with pytest.raises(ValueError, match=r"^Seed must be at least 0, not -1$"):
        valiant(topo, 0, 5, seed=-1)
    assert isinstance(r, Routing)


@pytest.mark.parametrize(("call", "message"), [
    (lambda t, r: paths(r, [0, 1, 2], [1, 2]),
     r"^Source and destination must broadcast together, not shapes \(3,\) and \(2,\)$"),
    (lambda t, r: valiant(t, [0, 1, 2], [1, 2]),
     r"^Source and destination must broadcast together, not shapes \(3,\) and \(2,\)$"),
    (lambda t, r: r.next_port([0, 1, 2], [1, 2]),
     r"^Node and destination must broadcast together, not shapes \(3,\) and \(2,\)$"),
    (lambda t, r: paths(r, [0, 1, 2], [1, 2, 3], via=[4, 5]),
     r"^Via must broadcast against the 3 pairs, not shape \(2,\)$"),
    (lambda t, r: link_loads(r, [0, 1, 2], [1, 2, 3], weight=[1, 2]),
     r"^Weight must broadcast against the 3 pairs, not shape \(2,\)$"),
])
def test_shapes_that_do_not_broadcast_are_named(call, message):
    topo = polarfly(3)
    with pytest.raises(ValueError, match=message):
        call(topo, routing(topo))


def test_weights_must_be_numbers_and_are_checked_before_any_pair_is_routed(monkeypatch):
    module = importlib.import_module("innet.gen.routing.paths")

    def never(*args, **kwargs):
        raise AssertionError("routed before the weights were checked")

    topo = polarfly(3)
    r = routing(topo)
    monkeypatch.setattr(module, "paths", never)
    with pytest.raises(TypeError, match=r"^Weight must be numbers, not 'a'$"):
        link_loads(r, [0, 1], [1, 2], weight="a")
    with pytest.raises(ValueError, match=r"^Weight must broadcast against the 2 pairs, not "
                                         r"shape \(3,\)$"):
        link_loads(r, [0, 1], [1, 2], weight=[1, 2, 3])


def test_valiant_on_other_topologies_uses_shortest_legs():
    topo = hyperx((4, 4))
    r = routing(topo)
    graph = topo.to_networkx()
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 16, 100), rng.integers(0, 16, 100)
    mid = valiant(topo, src, dst, seed=rng)
    routes = paths(r, src, dst, via=mid)
    for i in range(100):
        legs = nx.shortest_path_length(graph, src[i], mid[i]) + nx.shortest_path_length(
            graph, mid[i], dst[i]) if mid[i] >= 0 else 0
        assert routes.hops[i] == legs
