"""PolarFly expansions against Section VI and Table IV of PolarFly (SC'22)."""

from collections import Counter
from functools import cache

import networkx as nx
import pytest

from innet.gen.topology import polarfly, torus
from innet.gen.topology.expansion import expand
from innet.gen.topology.layout import polarfly_layout

CASES = [(3, 1, 0), (5, 2, 0), (7, 3, 0), (9, 1, 0), (3, 0, 1), (5, 0, 3), (7, 0, 1),
         (7, 0, 7), (9, 0, 4), (11, 0, 2), (5, 1, 2), (7, 2, 7), (4, 2, 0), (8, 1, 0)]


@cache
def build(q, r0, r1):
    topo = polarfly(q, r0=r0, r1=r1)
    return topo, polarfly_layout(topo), topo.to_networkx()


@pytest.mark.parametrize(("q", "r0", "r1"), CASES)
def test_sizes_and_original_network_kept(q, r0, r1):
    topo, layout, _ = build(q, r0, r1)
    base = polarfly(q)
    n = base.nodes
    assert topo.nodes == n + (q + 1) * r0 + q * r1
    assert dict(topo.params) == {"q": q, "r0": r0, "r1": r1, "starter": layout.starter}
    for u in range(n):  # no link rewired: every original port leads where it did
        assert topo.ports[u][: base.degree(u)] == base.ports[u]
        assert topo.labels[u] == base.labels[u]
    for u in range(n, topo.nodes):
        assert len(topo.labels[u]) == 4
        original = base.node_of(topo.labels[u][:3])
        assert topo.classes[u] == base.classes[original]
    for u in range(topo.nodes):
        assert list(topo.neighbors(u)) == sorted(topo.neighbors(u))
        for p, (v, p2) in enumerate(topo.ports[u]):
            assert topo.ports[v][p2] == (u, p)
    expected_sizes = (q + 1,) + layout.sizes[1:q + 1] + (q + 1,) * r0 + layout.sizes[1:r1 + 1]
    assert layout.sizes == expected_sizes
    assert sorted(u for c in layout.clusters for u in c) == list(range(topo.nodes))


def replicas_follow_definition_vi1(topo, layout, graph, original_cluster, replica_cluster):
    base = set(layout.clusters[original_cluster])
    for v, v2 in zip(layout.clusters[original_cluster], layout.clusters[replica_cluster],
                     strict=True):
        assert topo.labels[v2][:3] == topo.labels[v]
        for w in graph[v]:
            if w in base:  # intra-cluster edge -> edge between the replicas
                w2 = layout.clusters[replica_cluster][layout.clusters[original_cluster].index(w)]
                assert graph.has_edge(v2, w2)
            elif w < v2:  # inter-cluster edge that existed before this replica
                assert graph.has_edge(v2, w)


@pytest.mark.parametrize(("q", "r0"), [(q, r0) for q, r0, r1 in CASES if r1 == 0])
def test_quadric_replication(q, r0):
    # Section VI-A: q + 1 nodes per copy, diameter 2, quadrics +1 and V1 +2 ports per copy,
    # q + 1 links between a copy and every other cluster.
    topo, layout, graph = build(q, r0, 0)
    assert nx.diameter(graph) == 2
    assert nx.average_shortest_path_length(graph) < 2
    degrees = Counter(zip(topo.classes, topo.degrees.tolist(), strict=True))
    if q % 2:
        assert set(degrees) == {("quadric", q + r0), ("v1", q + 1 + 2 * r0), ("v2", q + 1)}
    else:  # even q: the nucleus is adjacent to every quadric copy
        nucleus = topo.node_of((1, 1, 1))
        assert topo.degree(nucleus) == (q + 1) * (1 + r0)
        assert {d for c, d in degrees if c == "quadric"} == {q + r0}
    copies = range(q + 1, q + 1 + r0)
    for k in copies:
        replicas_follow_definition_vi1(topo, layout, graph, 0, k)
        for other in range(len(layout.clusters)):
            if other != k:
                links = sum(1 for u in layout.clusters[k] for w in graph[u]
                            if layout.cluster_of[w] == other)
                assert links == q + 1


@pytest.mark.parametrize(("q", "r1"), [(q, r1) for q, r0, r1 in CASES if r0 == 0])
def test_non_quadric_replication(q, r1):
    # Section VI-B: q nodes per copy, maximum degree + r1 + 1, diameter 3, and every pair at
    # distance 3 is a vertex and a vertex of its cluster's copy (at most q - 1 per vertex).
    topo, layout, graph = build(q, 0, r1)
    assert topo.radix == q + 1 + r1 + 1
    assert nx.diameter(graph) == 3
    assert nx.average_shortest_path_length(graph) < 2
    far = Counter()
    for u, distances in nx.all_pairs_shortest_path_length(graph):
        for v, d in distances.items():
            if d == 3:
                far[u] += 1
                names = {layout.names[layout.cluster_of[u]], layout.names[layout.cluster_of[v]]}
                i = min(int(name[1:]) for name in names)
                assert names == {f"C{i}", f"C{q + i}"}
    assert max(far.values()) <= q - 1
    for i in range(1, r1 + 1):
        replicas_follow_definition_vi1(topo, layout, graph, i, q + i)


@pytest.mark.parametrize(("q", "r0", "r1"), [c for c in CASES if c[1] and c[2]])
def test_both_expansions(q, r0, r1):
    _topo, _layout, graph = build(q, r0, r1)
    assert nx.diameter(graph) <= 3
    assert nx.average_shortest_path_length(graph) < 2


def test_degree_fix_joins_the_lonely_vertex_to_every_other_centre():
    q = 7
    topo, layout, graph = build(q, 0, 2)
    base = polarfly(q).to_networkx()
    for i in (1, 2):
        original, replica = layout.clusters[i], layout.clusters[q + i]
        for j in range(1, q + 1):
            if j == i:
                continue
            cj = set(layout.clusters[j])
            (lonely,) = [u for u in original[1:] if topo.classes[u] == "v1"
                         and not any(w in cj for w in base[u])]
            assert graph.has_edge(replica[original.index(lonely)], layout.centers[j])
    # and to the centre of the earlier copy C(q+1) when C2 is copied
    c1 = set(layout.clusters[1])
    (lonely,) = [u for u in layout.clusters[2][1:] if topo.classes[u] == "v1"
                 and not any(w in c1 for w in base[u])]
    replica = layout.clusters[q + 2][layout.clusters[2].index(lonely)]
    assert graph.has_edge(replica, layout.centers[q + 1])


def test_a_starter_without_expansion_is_recorded():
    topo = polarfly(5, starter=polarfly(5).classes.index("quadric", 5))
    assert topo.params["starter"] == polarfly(5).classes.index("quadric", 5)
    assert polarfly_layout(topo).starter == topo.params["starter"]


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"r1": 8}, ValueError, r"^r1 must be between 0 and q=7, not 8$"),
    ({"r1": -1}, ValueError, r"^r1 must be between 0 and q=7, not -1$"),
    ({"r0": -1}, ValueError, r"^r0 must be at least 0, not -1$"),
    ({"r0": 1.5}, TypeError, r"^r0 must be an integer, not 1.5$"),
    ({"r1": "2"}, TypeError, r"^r1 must be an integer, not '2'$"),
    ({"starter": 0}, ValueError, r"^Starter must be a quadric of ER_7, not node 0$"),
    ({"r0": 100000}, ValueError, (r"^Expanding ER_7 by r0=100000, r1=0 gives 800057 nodes; that "
                                 r"is too large$")),
])
def test_expansion_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        polarfly(7, **kwargs)


def test_expansion_input_errors():
    with pytest.raises(ValueError, match=r"^Non-quadric cluster replication needs odd q "
                                         r"\(Proposition V.4\), not q=8$"):
        polarfly(8, r1=1)
    with pytest.raises(ValueError, match=r"^Only a PolarFly can be expanded, not torus$"):
        expand(torus(4), r0=1)
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not int$"):
        expand(7, r0=1)
    with pytest.raises(ValueError, match=r"^This PolarFly is already expanded; expand ER_q once "
                                         r"with the final r0 and r1$"):
        expand(polarfly(5, r0=1), r0=1)


@pytest.mark.parametrize(("r0", "r1", "error", "message"), [
    (-1, 0, ValueError, r"^r0 must be at least 0, not -1$"),
    (0.0, 0, TypeError, r"^r0 must be an integer, not 0\.0$"),
    (None, 0, TypeError, r"^r0 must be an integer, not None$"),
    (0, 999, ValueError, r"^r1 must be between 0 and q=509, not 999$"),
])
def test_expansion_is_checked_before_er_q_is_built(monkeypatch, r0, r1, error, message):
    from innet.gen.topology import ergraph

    def built(q):
        raise AssertionError("ER_q built before the expansion was checked")

    monkeypatch.setattr(ergraph, "er_graph", built)
    with pytest.raises(error, match=message):
        polarfly(509, r0=r0, r1=r1)
