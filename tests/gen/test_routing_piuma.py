"""The 'piuma' and 'shortest-latency' routings against networkx weighted shortest paths."""

import networkx as nx
import numpy as np
import pytest

from innet.gen.routing import path, paths, routing
from innet.gen.routing.latency import check_weights, latency_distances, path_latency
from innet.gen.routing.piuma import hierarchical
from innet.gen.topology import hyperx, link_latencies, link_latency_array, piuma, torus


def weighted(topo):
    graph = topo.to_networkx()
    for (u, v), lat in link_latencies(topo).items():
        graph.edges[u, v]["w"] = lat
    return graph


def all_pairs(topo):
    n = topo.nodes
    return np.repeat(np.arange(n), n), np.tile(np.arange(n), n)


@pytest.mark.parametrize(("nodes", "sockets", "cores", "placement"), [
    ((3, 2), 3, 4, "spread"), ((2, 2, 2), 2, 2, "hub"), ((1,), 5, 6, "spread")])
def test_piuma_routing_is_hierarchical(nodes, sockets, cores, placement):
    topo = piuma(nodes, sockets, cores, placement=placement)
    route = routing(topo)
    assert route.algorithm == "piuma"
    graph = weighted(topo)
    dims = len(nodes)
    labels = topo.labels
    node_of = {u: labels[u][:dims] for u in range(topo.nodes)}
    node_graph = hyperx(nodes) if topo.nodes > sockets * cores else None
    node_route = routing(node_graph) if node_graph is not None else None
    intra = {}
    for u in range(topo.nodes):
        members = [v for v in graph if node_of[v] == node_of[u]]
        if node_of[u] not in intra:
            intra[node_of[u]] = dict(nx.all_pairs_dijkstra_path_length(
                graph.subgraph(members), weight="w"))
    src, dst = all_pairs(topo)
    walked = paths(route, src, dst)
    lat = path_latency(link_latency_array(topo), walked.nodes, walked.ports)
    closed = hierarchical(topo).latency(src, dst)
    assert np.allclose(lat, closed)
    for i in range(len(src)):
        hops = walked.path(i)
        nodes_seen = [node_of[u] for u, _ in hops]
        # dimension order between nodes: the same node sequence as HyperX's own routing
        compressed = [x for k, x in enumerate(nodes_seen) if k == 0 or x != nodes_seen[k - 1]]
        if node_route is not None:
            expected = [node_graph.labels[u] for u, _ in
                        path(node_route, node_graph.node_of(nodes_seen[0]),
                             node_graph.node_of(nodes_seen[-1]))]
            assert compressed == expected
        # latency-shortest inside every node crossed: segment latency = intra-node distance
        start = 0
        for k in range(1, len(hops) + 1):
            if k == len(hops) or nodes_seen[k] != nodes_seen[start]:
                a, b = hops[start][0], hops[k - 1][0]
                seg = sum(graph.edges[hops[j][0], hops[j + 1][0]]["w"] for j in range(start, k - 1))
                assert seg == pytest.approx(intra[nodes_seen[start]][a][b])
                start = k


def test_piuma_tables_have_register_form():
    topo = piuma((2, 2), 2, 4)
    route = routing(topo)
    table = route.table()
    assert (np.diagonal(table) == -1).all()
    hw = route.hardware_table()
    assert (np.diagonal(hw) == topo.radix).all()
    assert (table[~np.eye(topo.nodes, dtype=bool)] >= 0).all()


@pytest.mark.parametrize("make", [
    lambda: (piuma((3, 2), 3, 4), None),
    lambda: (hyperx((3, 3)), "random"),
    lambda: (torus((4, 3)), "random"),
])
def test_shortest_latency_matches_networkx(make):
    topo, how = make()
    if how == "random":
        rng = np.random.default_rng(7)
        lat = {(u, v): float(rng.integers(1, 9)) for u, _, v, _ in topo.links()}
        route = routing(topo, "shortest-latency", latencies=lat)
    else:
        lat = link_latencies(topo)
        route = routing(topo, "shortest-latency")
    graph = topo.to_networkx()
    for (u, v), w in lat.items():
        graph.edges[u, v]["w"] = w
    truth = dict(nx.all_pairs_dijkstra_path_length(graph, weight="w"))
    weights = check_weights(topo, lat)
    src, dst = all_pairs(topo)
    walked = paths(route, src, dst)
    got = path_latency(weights, walked.nodes, walked.ports)
    want = np.array([truth[s][d] for s, d in zip(src.tolist(), dst.tolist(), strict=True)])
    assert np.allclose(got, want)
    assert np.allclose(latency_distances(topo, weights, np.arange(topo.nodes)),
                       want.reshape(topo.nodes, topo.nodes))
    # the lowest port on a shortest path
    table = route.table()
    for u in range(topo.nodes):
        for d in range(topo.nodes):
            if u == d:
                continue
            best = [p for p, v in enumerate(topo.neighbors(u))
                    if truth[v][d] + graph.edges[u, v]["w"] == pytest.approx(truth[u][d])]
            assert table[u, d] == min(best)


def test_shortest_latency_routes_around_failures():
    topo = piuma((2,), 2, 4)
    u, v = 0, topo.neighbors(0)[0]
    route = routing(topo, "shortest-latency", failed_links=[(u, v)])
    assert route.algorithm == "shortest-latency"
    walked = paths(route, [u], [v])
    assert walked.hops[0] > 1
    assert routing(topo, failed_links=[(u, v)]).algorithm == "shortest-path"


def test_errors():
    topo = piuma((2,), 2, 2)
    with pytest.raises(ValueError, match=r"^PIUMA routing needs a PIUMA network, not hyperx$"):
        routing(hyperx(3), "piuma")
    with pytest.raises(ValueError, match=r"^Routing 'shortest-latency' needs link latencies "
                                         r"\(latencies=...\) on a hyperx network$"):
        routing(hyperx(3), "shortest-latency")
    with pytest.raises(ValueError, match=r"^Latencies apply to the 'shortest-latency' routing, "
                                         r"not 'auto'$"):
        routing(topo, latencies={})
    with pytest.raises(ValueError, match=r"^Routing algorithm 'piuma' cannot avoid failures; "
                                         r"use 'shortest-path' or 'auto'$"):
        routing(topo, "piuma", failed_switches=[1])
    with pytest.raises(ValueError, match=r"^Latency of link 0-1 must be finite and > 0, "
                                         r"not 0.0$"):
        routing(hyperx(3), "shortest-latency", latencies={(0, 1): 0, (0, 2): 1, (1, 2): 1})
    with pytest.raises(ValueError, match=r"^Latency of link 1-2 must be finite and > 0, "
                                         r"not nan$"):
        routing(hyperx(3), "shortest-latency", latencies={(0, 1): 1, (0, 2): 1})
    with pytest.raises(ValueError, match=r"^Link latencies must have shape \(3, 2\), not "
                                         r"\(3,\)$"):
        check_weights(hyperx(3), [1, 2, 3])
    with pytest.raises(TypeError, match=r"^Link latencies must be an \(N, radix\) array or a "
                                        r"mapping of \(u, v\) to latency, not 'x'$"):
        check_weights(hyperx(3), "x")
    with pytest.raises(TypeError, match=r"^Link latency keys must be \(u, v\) pairs, not 3$"):
        check_weights(hyperx(3), {3: 1})
    with pytest.raises(ValueError, match=r"^Link 0-1 has latency 1.0 one way and 2.0 the "
                                         r"other$"):
        check_weights(hyperx(3), [[1, 1], [2, 1], [1, 1]])
