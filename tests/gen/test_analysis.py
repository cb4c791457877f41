"""gen.analysis against networkx and the closed formulas."""

import math
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from innet.gen.analysis import (
    bisection,
    degree_distribution,
    distance_stats,
    link_failures,
    moore_bound,
    moore_efficiency,
    peer_distances,
    polarfly_triangles,
    summarize,
    triangle_count,
)
from innet.gen.topology import Topology, hyperx, polarfly, torus

TOPOLOGIES = {
    "torus 5x4": lambda: torus((5, 4)),
    "torus 2x3x2": lambda: torus((2, 3, 2)),
    "mesh 4x3": lambda: torus((4, 3), mesh=True),
    "ring 7": lambda: torus(7),
    "hyperx 3x4": lambda: hyperx((3, 4)),
    "hyperx 2x2x3": lambda: hyperx((2, 2, 3)),
    "polarfly 4": lambda: polarfly(4),
    "polarfly 7": lambda: polarfly(7),
    "polarfly 9": lambda: polarfly(9),
    "polarfly 5 r0=1 r1=2": lambda: polarfly(5, r0=1, r1=2),
}


def nx_counts(graph, sources=None):
    counts = Counter()
    for source in sources if sources is not None else graph.nodes:
        for target, d in nx.single_source_shortest_path_length(graph, source).items():
            if target != source:
                counts[d] += 1
    return tuple(counts.get(d, 0) for d in range(max(counts) + 1))


@pytest.mark.parametrize("name", TOPOLOGIES)
def test_distances_match_networkx(name):
    topo = TOPOLOGIES[name]()
    graph = topo.to_networkx()
    stats = distance_stats(topo)
    assert stats.exact
    assert stats.diameter == nx.diameter(graph)
    assert stats.avg_shortest_path == pytest.approx(nx.average_shortest_path_length(graph))
    assert stats.counts == nx_counts(graph)
    assert stats.connected
    expected = {"torus": "product", "hyperx": "product", "polarfly": "per-degree"}[topo.kind]
    if topo.params.get("r1"):
        expected = "all-pairs"
    assert stats.method == expected
    assert distance_stats(topo, method="all-pairs").counts == stats.counts
    assert distance_stats(topo, method="sampled", samples=10**6).counts == stats.counts


def test_sampled_distances_are_bfs_from_the_seeded_sources():
    topo = polarfly(5, r1=3)
    stats = distance_stats(topo, method="sampled", samples=7, seed=11)
    sources = np.sort(np.random.default_rng(11).choice(topo.nodes, size=7, replace=False))
    assert stats.counts == nx_counts(topo.to_networkx(), sources.tolist())
    assert stats.sources == 7
    assert not stats.exact
    assert stats.method == "sampled"


def test_disconnected_graph():
    peer = np.array([[1], [0], [3], [2]])
    stats = peer_distances(peer)
    assert stats.diameter is None
    assert stats.avg_shortest_path is None
    assert not stats.connected
    assert stats.counts == (0, 4)


def test_moore_bound():
    assert moore_bound(3, 2) == 10  # Petersen
    assert moore_bound(7, 2) == 50  # Hoffman-Singleton
    assert moore_bound(4, 3) == 1 + 4 + 12 + 36
    for q in (3, 7, 31):
        n = q * q + q + 1
        assert moore_efficiency(n, q + 1, 2) == pytest.approx(n / (q * q + 2 * q + 2))


@pytest.mark.parametrize("name", TOPOLOGIES)
def test_triangles_and_degrees_match_networkx(name):
    topo = TOPOLOGIES[name]()
    graph = topo.to_networkx()
    assert triangle_count(topo) == sum(nx.triangles(graph).values()) // 3
    assert degree_distribution(topo) == dict(sorted(Counter(d for _, d in graph.degree()).items()))


def test_triangles_of_random_graphs():
    for seed in range(5):
        graph = nx.gnm_random_graph(40, 200, seed=seed)
        topo = Topology.from_edges("custom", {}, [(u,) for u in range(40)], list(graph.edges()))
        assert triangle_count(topo) == sum(nx.triangles(graph).values()) // 3


@pytest.mark.parametrize("q", [3, 5, 7, 9, 11])
def test_polarfly_triangles_by_cluster(q):
    tri = polarfly_triangles(polarfly(q))
    assert (tri.intra, tri.inter, tri.mixed) == (math.comb(q, 2), math.comb(q, 3), 0)
    assert tri.total == math.comb(q + 1, 3)


def test_polarfly_triangles_of_an_expansion_add_up():
    topo = polarfly(7, r0=1, r1=3)
    tri = polarfly_triangles(topo)
    assert tri.total == sum(nx.triangles(topo.to_networkx()).values()) // 3


@pytest.mark.parametrize(("build", "lower"), [(lambda: torus((8, 8)), 16),
                                              (lambda: hyperx((4, 4, 4)), 64),
                                              (lambda: polarfly(11), 1)])
def test_bisection(build, lower):
    topo = build()
    cut = bisection(topo, seed=3)
    parts = np.array(cut.parts)
    links = topo.link_array()
    assert cut.cut == int((parts[links[:, 0]] != parts[links[:, 2]]).sum())
    assert cut.cut >= lower  # a cut can never beat the bisection width
    assert cut.links == topo.num_links
    assert cut.fraction == cut.cut / topo.num_links
    assert sum(cut.sizes) == topo.nodes
    assert abs(cut.sizes[0] - cut.sizes[1]) <= max(2, topo.nodes // 25)
    assert cut.method == "METIS (pymetis), seed 3"
    assert bisection(topo, seed=3) == cut


def test_polarfly_bisection_is_large():
    # Section IX-A: PolarFly cuts more than 40% of its links for radix >= 18.
    assert bisection(polarfly(19)).fraction > 0.4


def test_link_failures_follow_the_seeded_runs():
    topo = polarfly(5)
    result = link_failures(topo, runs=5, seed=7, step=0.1)
    links = topo.link_array()
    rng = np.random.default_rng(7)
    for ratio in result.ratios:
        order = rng.permutation(len(links))
        k = round(ratio * len(links))
        graph = topo.to_networkx()
        graph.remove_edges_from(links[order[: k - 1]][:, [0, 2]].tolist())
        assert nx.is_connected(graph)
        graph.remove_edge(*links[order[k - 1]][[0, 2]].tolist())
        assert not nx.is_connected(graph)
    assert result.median_ratio == sorted(result.ratios)[2]
    assert result.ratios[result.median_run] == result.median_ratio
    assert result.curve[0].ratio == 0
    assert result.curve[0].diameter == 2
    diameters = [p.diameter for p in result.curve]
    paths = [p.avg_shortest_path for p in result.curve]
    assert diameters == sorted(diameters)  # failures never shorten a path
    assert paths == sorted(paths)
    assert all(p.ratio < result.median_ratio for p in result.curve)
    assert link_failures(topo, runs=5, seed=7, step=0.1) == result
    assert result.distance_method == "all-pairs"


def test_summary_fields():
    summary = summarize(polarfly(5), with_bisection=True, with_failures=True, runs=3)
    for key in ("kind", "nodes", "links", "radix", "min_degree", "diameter",
                "avg_shortest_path", "moore_bound", "moore_efficiency", "triangles",
                "quadrics", "v1", "v2", "clusters", "bisection", "failures"):
        assert key in summary
    assert summary["clusters"] == [6, 5, 5, 5, 5, 5]
    assert (summary["quadrics"], summary["v1"], summary["v2"]) == (6, 15, 10)
    steps = []
    summarize(torus(4), progress=lambda step, done, total: steps.append(step))
    assert "distances" in steps
    assert "triangles" in steps


def test_analysis_errors():
    with pytest.raises(ValueError, match=r"^Method must be one of auto, all-pairs, sampled, "
                                         r"product, per-degree, not 'fast'$"):
        distance_stats(torus(4), method="fast")
    with pytest.raises(ValueError, match=r"^The product method needs a HyperX or torus, not "
                                         r"polarfly$"):
        distance_stats(polarfly(3), method="product")
    with pytest.raises(ValueError, match=r"^The per-degree method needs an unexpanded "
                                         r"PolarFly$"):
        distance_stats(torus(4), method="per-degree")
    with pytest.raises(ValueError, match=r"^Samples must be a positive integer, not 0$"):
        distance_stats(torus(4), samples=0)
    with pytest.raises(ValueError, match=r"^Method must be auto, all-pairs or sampled for a raw "
                                         r"graph, not 'product'$"):
        peer_distances(np.array([[1], [0]]), method="product")
    with pytest.raises(ValueError, match=r"^Degree and diameter must be non-negative, not -1 "
                                         r"and 2$"):
        moore_bound(-1, 2)
    with pytest.raises(ValueError, match=r"^Runs must be a positive integer, not 0$"):
        link_failures(torus(4), runs=0)
    with pytest.raises(ValueError, match=r"^Step must be between 0 and 1, not 1.5$"):
        link_failures(torus(4), step=1.5)
    lonely = Topology(kind="custom", params={}, labels=[(0,), (1,)], ports=[[], []])
    with pytest.raises(ValueError, match=r"^A network without links cannot lose any$"):
        link_failures(lonely)
