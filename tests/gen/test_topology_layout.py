"""The PolarFly cluster layout (Algorithm 1) against Propositions V.1-V.6, Theorem V.7 and
Table II of PolarFly (SC'22, Section V)."""

import itertools
import math
from collections import Counter
from functools import cache

import networkx as nx
import pytest

from innet.gen.topology import hyperx, polarfly
from innet.gen.topology.layout import polarfly_layout

ODD = [3, 5, 7, 9, 11, 13, 25, 27]
EVEN = [2, 4, 8, 16]


@cache
def setup(q, starter=None):
    topo = polarfly(q)
    return topo, polarfly_layout(topo, starter), topo.to_networkx()


def triangles(graph):
    return [t for t in nx.enumerate_all_cliques(graph) if len(t) == 3]


@pytest.mark.parametrize("q", ODD + EVEN)
def test_every_vertex_in_exactly_one_cluster(q):
    topo, layout, _ = setup(q)
    members = sorted(u for cluster in layout.clusters for u in cluster)
    assert members == list(range(topo.nodes))  # Proposition V.1
    assert layout.clusters[0] == tuple(u for u in range(topo.nodes)
                                       if topo.classes[u] == "quadric")
    assert layout.centers[1:] == topo.neighbors(layout.starter)
    for i, cluster in enumerate(layout.clusters):
        assert all(layout.cluster_of[u] == i for u in cluster)
    assert layout.names[:2] == ("C0", "C1")


@pytest.mark.parametrize("q", ODD)
def test_fan_clusters(q):
    # Proposition V.2: each non-quadric cluster has q vertices forming (q-1)/2 triangles that
    # share only the centre; C0 has no internal edge (Property 1.1).
    topo, layout, graph = setup(q)
    assert layout.sizes == (q + 1,) + (q,) * q
    assert graph.subgraph(layout.clusters[0]).number_of_edges() == 0
    for cluster, center in zip(layout.clusters[1:], layout.centers[1:], strict=True):
        sub = graph.subgraph(cluster)
        assert cluster[0] == center
        tris = triangles(sub)
        assert len(tris) == (q - 1) // 2
        assert all(center in t for t in tris)
        assert sub.number_of_edges() == 3 * (q - 1) // 2
        others = Counter(u for t in tris for u in t if u != center)
        assert set(others.values()) == {1}
        kinds = Counter(tuple(sorted(topo.classes[u] for u in t if u != center)) for t in tris)
        if q % 4 == 1:  # Section V-C.2: pairs of V1 or pairs of V2
            assert set(kinds) <= {("v1", "v1"), ("v2", "v2")}
        else:  # one V1 and one V2
            assert set(kinds) == {("v1", "v2")}


@pytest.mark.parametrize("q", ODD)
def test_links_to_the_quadric_cluster(q):
    topo, layout, graph = setup(q)
    quadrics = set(layout.clusters[0])
    for cluster in layout.clusters[1:]:
        links = [(u, w) for u in cluster for w in graph[u] if w in quadrics]
        assert len(links) == q + 1  # Proposition V.3.2
        for u in cluster:  # V.3.1
            expected = 2 if topo.classes[u] == "v1" else 0
            assert sum(w in quadrics for w in graph[u]) == expected
        assert sorted(w for _, w in links) == sorted(quadrics)  # V.3.3: one each


@pytest.mark.parametrize("q", ODD)
def test_links_between_fan_clusters(q):
    topo, layout, graph = setup(q)
    for i, j in itertools.permutations(range(1, q + 1), 2):
        ci, cj = layout.clusters[i], set(layout.clusters[j])
        links = [(u, w) for u in ci for w in graph[u] if w in cj]
        assert len(links) == q - 2  # Proposition V.4.2
        assert len({u for u, _ in links}) == len({w for _, w in links}) == q - 2  # independent
        for u in ci:
            hits = sum(w in cj for w in graph[u])
            if topo.classes[u] == "v2":
                assert hits == 1  # V.4.1
        lonely = [u for u in ci[1:] if topo.classes[u] == "v1"
                  and not any(w in cj for w in graph[u])]
        assert len(lonely) == 1  # V.4.3
        assert layout.centers[i] not in {u for u, _ in links}


@pytest.mark.parametrize("q", ODD)
def test_triangle_distribution(q):
    # Proposition V.6, Theorem V.7 and Table II.
    topo, layout, graph = setup(q)
    tris = triangles(graph)
    clusters_of = [frozenset(layout.cluster_of[u] for u in t) for t in tris]
    internal = [c for c in clusters_of if len(c) == 1]
    external = [c for c in clusters_of if len(c) == 3]
    assert len(internal) == math.comb(q, 2)
    assert len(external) == math.comb(q, 3)
    assert len(internal) + len(external) == len(tris)
    assert sorted(map(sorted, external)) == sorted(
        map(list, itertools.combinations(range(1, q + 1), 3)))  # one per triplet
    kinds = Counter(tuple(sorted(topo.classes[u] for u in t)) for t, c in
                    zip(tris, clusters_of, strict=True) if len(c) == 3)
    if q % 4 == 1:
        expected = {("v1", "v1", "v1"): q * (q - 1) * (q - 5) // 24,
                    ("v1", "v2", "v2"): q * (q - 1) ** 2 // 8}
    else:
        expected = {("v1", "v1", "v2"): q * (q - 1) * (q - 3) // 8,
                    ("v2", "v2", "v2"): (q + 1) * q * (q - 1) // 24}
    assert dict(kinds) == {k: v for k, v in expected.items() if v}


@pytest.mark.parametrize("q", EVEN)
def test_even_q_layout(q):
    # The even-q analogue: the nucleus (1, 1, 1) is a centre alone in its cluster; the other
    # q - 1 clusters are fans of q/2 triangles on q + 1 vertices.
    topo, layout, graph = setup(q)
    nucleus = topo.node_of((1, 1, 1))
    assert nucleus in layout.centers
    assert sorted(layout.sizes[1:]) == [1] + [q + 1] * (q - 1)
    for cluster, center in zip(layout.clusters[1:], layout.centers[1:], strict=True):
        if center == nucleus:
            assert cluster == (nucleus,)
            continue
        tris = triangles(graph.subgraph(cluster))
        assert len(tris) == q // 2
        assert all(center in t for t in tris)


@pytest.mark.parametrize("q", [5, 7, 8])
def test_any_starter_quadric_works(q):
    topo = polarfly(q)
    for starter in [u for u in range(topo.nodes) if topo.classes[u] == "quadric"]:
        layout = polarfly_layout(topo, starter)
        assert layout.starter == starter
        assert sorted(u for c in layout.clusters for u in c) == list(range(topo.nodes))
        assert layout.centers[1:] == topo.neighbors(starter)


def test_layout_errors():
    topo = polarfly(7)
    with pytest.raises(ValueError, match=r"^Starter must be a quadric of ER_7, not node 1$"):
        polarfly_layout(topo, 1)
    with pytest.raises(ValueError, match=r"^Starter must be a quadric of ER_7, not node 57$"):
        polarfly_layout(topo, 57)
    with pytest.raises(TypeError, match=r"^Starter must be a node id, not '3'$"):
        polarfly_layout(topo, "3")
    with pytest.raises(ValueError, match=r"^A cluster layout needs a PolarFly topology, not "
                                         r"hyperx$"):
        polarfly_layout(hyperx(4))
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not str$"):
        polarfly_layout("polarfly")
    expanded = polarfly(7, r1=1)
    other = [u for u in range(57) if expanded.classes[u] == "quadric"][1]
    with pytest.raises(ValueError, match=rf"^This PolarFly was expanded along the layout of "
                                         rf"starter {expanded.params['starter']}, not {other}$"):
        polarfly_layout(expanded, other)
