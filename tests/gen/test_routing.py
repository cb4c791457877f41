"""Routing tables: minimal against networkx, the paper's cross product, conventions, errors."""

import itertools

import networkx as nx
import numpy as np
import pytest

from innet.gen.routing import (
    UNREACHABLE,
    alive_ports,
    hardware_dtype,
    hop_distances,
    parse_failures,
    port_dtype,
    routing,
    routing_from_table,
    valiant,
)
from innet.gen.topology import LOCAL, hyperx, polarfly, torus

NETWORKS = {
    "pf2": lambda: polarfly(2), "pf3": lambda: polarfly(3), "pf4": lambda: polarfly(4),
    "pf5": lambda: polarfly(5), "pf7": lambda: polarfly(7), "pf8": lambda: polarfly(8),
    "pf9": lambda: polarfly(9), "hx3x3": lambda: hyperx((3, 3)),
    "hx2x3x4": lambda: hyperx((2, 3, 4)), "hx2x8": lambda: hyperx((2, 8)),
    "t4x4": lambda: torus((4, 4)), "t3x5": lambda: torus((3, 5)), "t2x4": lambda: torus((2, 4)),
    "ring8": lambda: torus(8), "ring5": lambda: torus(5), "ring2": lambda: torus(2),
    "mesh4x3": lambda: torus((4, 3), mesh=True), "pf3-expanded": lambda: polarfly(3, r0=1),
}
EXPECTED = {"pf": "cross-product", "hx": "dimension-order", "t2": "dimension-order",
            "t3": "dimension-order", "t4": "dimension-order", "ri": "dimension-order",
            "me": "dimension-order"}


def walk(topo, table, src, dst):
    """Follow the table by hand; the hop count (an independent model of `paths`)."""
    hops, u = 0, src
    while u != dst:
        u = topo.ports[u][int(table[u, dst])][0]
        hops += 1
        assert hops <= topo.nodes
    return hops


@pytest.mark.parametrize("name", NETWORKS)
def test_table_reaches_every_destination_in_exactly_the_distance(name):
    topo = NETWORKS[name]()
    r = routing(topo)
    assert r.algorithm == ("shortest-path" if "expanded" in name else EXPECTED[name[:2]])
    table = r.table()
    dist = dict(nx.all_pairs_shortest_path_length(topo.to_networkx()))
    for s, d in itertools.product(range(topo.nodes), repeat=2):
        assert walk(topo, table, s, d) == dist[s][d]
    assert (np.diagonal(table) == LOCAL).all()
    off = ~np.eye(topo.nodes, dtype=bool)
    assert (table[off] >= 0).all()
    assert (table < topo.ports.degree[:, None]).all()
    s, d = np.divmod(np.arange(topo.nodes ** 2), topo.nodes)
    assert (r.next_port(s, d) == table[s, d]).all()  # the pairwise path agrees with the table
    assert (hop_distances(topo, s, d) == [dist[a][b] for a, b in zip(s, d, strict=True)]).all()
    assert table.dtype == np.int8
    assert not table.flags.writeable


@pytest.mark.parametrize("q", [3, 4, 5, 7, 9])
def test_polarfly_next_hop_is_the_unique_common_neighbour(q):
    topo = polarfly(q)
    graph = topo.to_networkx()
    table = routing(topo).table()
    for s, d in itertools.combinations(range(topo.nodes), 2):
        for a, b in ((s, d), (d, s)):
            nxt = topo.ports[a][int(table[a, b])][0]
            if graph.has_edge(a, b):
                assert nxt == b
            else:
                assert [nxt] == list(nx.common_neighbors(graph, a, b))


def test_paper_example_in_er3():
    # PolarFly, Section IV-D: in ER_3 the intermediate of (0,0,1) and (1,2,2) is (1,1,0).
    topo = polarfly(3)
    s, d, v = topo.node_of((0, 0, 1)), topo.node_of((1, 2, 2)), topo.node_of((1, 1, 0))
    r = routing(topo)
    assert r.next_port(s, d) == topo.port_to(s, v)
    assert r.next_port(v, d) == topo.port_to(v, d)


def test_hyperx_corrects_the_lowest_dimension_first():
    topo = hyperx((3, 4, 2))
    r = routing(topo)
    for s, d in itertools.product(range(topo.nodes), repeat=2):
        u, fixed = s, -1
        while u != d:
            v = topo.ports[u][r.next_port(u, d)][0]
            changed = [i for i in range(3) if topo.labels[u][i] != topo.labels[v][i]]
            assert len(changed) == 1
            assert changed[0] > fixed
            assert topo.labels[v][changed[0]] == topo.labels[d][changed[0]]
            fixed, u = changed[0], v


def test_torus_tie_break_goes_plus_and_size_two_uses_its_single_link():
    ring = torus(8)
    r = routing(ring)
    assert ring.ports[0][r.next_port(0, 4)][0] == 1  # tie: plus way
    assert ring.ports[5][r.next_port(5, 1)][0] == 6  # tie from 5: 6, 7, 0, 1
    assert ring.ports[0][r.next_port(0, 3)][0] == 1
    assert ring.ports[0][r.next_port(0, 5)][0] == 7  # shorter way is minus
    pair = torus((2, 3))
    rp = routing(pair)
    assert pair.ports[0][rp.next_port(0, 3)][0] == 3
    mesh = torus((5,), mesh=True)
    assert mesh.ports[4][routing(mesh).next_port(4, 0)][0] == 3


def test_dtypes_and_hardware_form():
    assert port_dtype(128) == np.int8
    assert port_dtype(129) == np.int16
    assert port_dtype(40000) == np.int32
    assert hardware_dtype(255) == np.uint8
    assert hardware_dtype(256) == np.uint16
    topo = hyperx((3, 3))
    r = routing(topo)
    hw = r.hardware_table()
    assert hw.dtype == np.uint8
    assert (np.diagonal(hw) == topo.radix).all()
    off = ~np.eye(topo.nodes, dtype=bool)
    assert (hw[off] == r.table()[off]).all()


def test_failures_route_on_what_remains():
    topo = polarfly(5)
    link = topo.links()[7]
    r = routing(topo, failed_links=[(link.v, link.u)])
    assert r.algorithm == "shortest-path"
    assert r.failed_links == ((link.u, link.v),)
    graph = topo.to_networkx()
    graph.remove_edge(link.u, link.v)
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    table = r.table()
    for s, d in itertools.product(range(topo.nodes), repeat=2):
        assert walk(topo, table, s, d) == dist[s][d]
        if s != d:
            assert not (s == link.u and topo.ports[s][int(table[s, d])][0] == link.v)
    assert (r.column(3) == table[:, 3]).all()


def test_failed_switch_is_unreachable():
    topo = torus((3, 3))
    r = routing(topo, failed_switches=[4])
    table = r.table()
    assert (np.delete(table[:, 4], 4) == UNREACHABLE).all()
    with pytest.raises(ValueError, match=r"^Node 4 cannot be reached from node 0; the table "
                                         r"has no register form$"):
        r.hardware_table()
    ok = routing(topo, failed_links=["0-1"])
    assert ok.failed_links == ((0, 1),)


def test_routing_from_table_round_trip_and_hardware_codes():
    topo = torus((3, 4))
    r = routing(topo)
    again = routing_from_table(topo, r.table())
    assert again.algorithm == "table"
    assert np.array_equal(again.table(), r.table())
    from_hw = routing_from_table(topo, r.hardware_table())
    assert np.array_equal(from_hw.table(), r.table())
    s, d = np.divmod(np.arange(topo.nodes ** 2), topo.nodes)
    assert (again.next_port(s, d) == r.next_port(s, d)).all()


def test_scalar_and_broadcast_next_port():
    topo = polarfly(3)
    r = routing(topo)
    assert isinstance(r.next_port(0, 5), int)
    assert r.next_port(0, 0) == LOCAL
    assert r.next_port(np.arange(topo.nodes), 2).shape == (topo.nodes,)
    assert "cross-product" in repr(r)


def test_errors():
    topo = hyperx((3, 3))
    with pytest.raises(ValueError, match=r"^Routing algorithm must be one of auto, "
                                         r"cross-product, dimension-order, shortest-path, "
                                         r"piuma, shortest-latency, not 'xy'$"):
        routing(topo, "xy")
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not str$"):
        routing("hyperx")
    with pytest.raises(TypeError, match=r"^Algorithm must be a string, not 3$"):
        routing(topo, 3)
    with pytest.raises(ValueError, match=r"^Cross-product routing needs an unexpanded "
                                         r"PolarFly, not hyperx with params "):
        routing(topo, "cross-product")
    with pytest.raises(ValueError, match=r"^Dimension-order routing needs a HyperX, torus or "
                                         r"mesh, not polarfly$"):
        routing(polarfly(2), "dimension-order")
    with pytest.raises(ValueError, match=r"^Routing algorithm 'dimension-order' cannot avoid "
                                         r"failures; use 'shortest-path' or 'auto'$"):
        routing(topo, "dimension-order", failed_links=[(0, 1)])
    with pytest.raises(ValueError, match=r"^Failed link 0-4 does not exist: nodes 0 and 4 are "
                                         r"not adjacent$"):
        routing(topo, failed_links=[(0, 4)])
    with pytest.raises(ValueError, match=r"^Failed link 0-9 names node 9, outside 0..8$"):
        routing(topo, failed_links=[(0, 9)])
    with pytest.raises(ValueError, match=r"^A failed link must be written u-v, not '0_1'$"):
        routing(topo, failed_links=["0_1"])
    with pytest.raises(TypeError, match=r"^A failed link must be a pair of node ids, not "
                                        r"\(0, 1, 2\)$"):
        routing(topo, failed_links=[(0, 1, 2)])
    with pytest.raises(ValueError, match=r"^Failed switch 9 is outside 0..8$"):
        routing(topo, failed_switches=[9])
    with pytest.raises(TypeError, match=r"^A failed switch must be a node id, not 'a'$"):
        routing(topo, failed_switches=["a"])
    r = routing(topo)
    with pytest.raises(ValueError, match=r"^Node names node 9, outside 0..8$"):
        r.next_port(9, 0)
    with pytest.raises(TypeError, match=r"^Destination must be node ids \(integers\), not "
                                        r"1.5$"):
        r.next_port(0, 1.5)
    with pytest.raises(ValueError, match=r"^Destination names node -1, outside 0..8$"):
        r.column(-1)


@pytest.mark.parametrize("call", [
    lambda: hop_distances(None, 0, 1),
    lambda: valiant(None, 0, 1),
    lambda: hop_distances(None, [0, 1], [1]),
    lambda: parse_failures(None, ["0-1"], ()),
    lambda: alive_ports(None),
])
def test_functions_of_a_topology_refuse_anything_else(call):
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not NoneType$"):
        call()


def test_a_table_too_large_is_refused_before_it_is_made(monkeypatch):
    from innet.gen.routing import core

    monkeypatch.setattr(core, "MAX_TABLE_ENTRIES", 8)
    with pytest.raises(ValueError, match=r"^A routing table of 3 x 3 entries is too large; at "
                                         r"most 8 are supported$"):
        routing(torus((3,))).table()
    assert routing(torus((2,))).table().shape == (2, 2)


def test_routing_from_table_errors():
    topo = torus((3, 3))
    good = routing(topo).table().astype(np.int64)
    with pytest.raises(ValueError, match=r"^A routing table of 9 nodes must have shape \(9, 9\),"
                                         r" not \(9, 8\)$"):
        routing_from_table(topo, good[:, :8])
    with pytest.raises(TypeError, match=r"^A routing table must hold integers, not float64$"):
        routing_from_table(topo, good.astype(float))
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not list$"):
        routing_from_table([], good)
    bad = good.copy()
    bad[0, 5] = 7
    with pytest.raises(ValueError, match=r"^Routing table entry \[0, 5\] = 7 is not a network "
                                         r"port of node 0 \(0..3\)$"):
        routing_from_table(topo, bad)
    bad = good.copy()
    bad[2, 2] = 1
    with pytest.raises(ValueError, match=r"^Routing table entry \[2, 2\] = 1 must be the local "
                                         r"port$"):
        routing_from_table(topo, bad)


def test_bfs_distances_and_alive_ports_agree_with_networkx_and_refuse_other_nodes():
    import networkx as nx

    from innet.gen.routing.generic import alive_ports, bfs_distances

    topo = hyperx((3, 3))
    alive = alive_ports(topo, ["0-1"], [4])
    graph = topo.to_networkx()
    graph.remove_edge(0, 1)
    graph.remove_node(4)
    dist = bfs_distances(topo, np.int64(0), alive)
    want = nx.single_source_shortest_path_length(graph, 0)
    assert {v: int(d) for v, d in enumerate(dist) if d >= 0} == want
    with pytest.raises(ValueError, match=r"^Source -1 is outside 0\.\.8$"):
        bfs_distances(topo, -1)  # numpy would have read node 8
    with pytest.raises(ValueError, match=r"^Source 99 is outside 0\.\.8$"):
        bfs_distances(topo, [0, 99])
    with pytest.raises(TypeError, match=r"^Sources must be node ids, not 0\.7$"):
        bfs_distances(topo, 0.7)
    with pytest.raises(ValueError, match=r"^Alive must have the shape \(9, 4\) of the ports, "
                                         r"not \(3,\)$"):
        bfs_distances(topo, 0, np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match=r"^Failed switch -1 is outside 0\.\.8$"):
        alive_ports(topo, failed_switches=[-1])
    with pytest.raises(ValueError, match=r"^Failed link 0-99"):
        alive_ports(topo, failed_links=[(0, 99)])
