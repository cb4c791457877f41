"""Failure-aware embedding: every single-link failure of PolarFly q=5, failed switches, and
participants that can no longer be reached."""

import networkx as nx
import pytest

from innet.gen.embed import embed, verify
from innet.gen.topology import hyperx, polarfly, torus

PF5 = polarfly(5)
GRAPH = PF5.to_networkx()


def damaged_ecc(graph, root, participants):
    dist = nx.single_source_shortest_path_length(graph, root)
    return max(dist[p] for p in participants)


@pytest.mark.parametrize("kind", ["allreduce", "reduce"])
def test_every_single_link_failure_of_polarfly_q5(kind):
    base = embed(PF5, kind=kind)
    for link in PF5.links():
        e = embed(PF5, kind=kind, failed_links=[(link.u, link.v)])
        verify(e, PF5)
        assert e.failed_links == ((link.u, link.v),)
        used = {frozenset((u, v)) for u, _, v, _ in e.links}
        assert frozenset((link.u, link.v)) not in used
        graph = GRAPH.copy()
        graph.remove_edge(link.u, link.v)
        ecc = {c: damaged_ecc(graph, c, range(PF5.nodes)) for c in range(PF5.nodes)}
        assert e.depth == ecc[e.root] == min(ecc.values())
        assert e.depth <= 4  # PolarFly, Section IX-B: one failed link -> diameter 3 or 4
        if frozenset((link.u, link.v)) not in {frozenset((u, v)) for u, _, v, _ in base.links}:
            assert e.switches == base.switches  # a tree the failure does not touch is kept


def test_every_single_switch_failure_of_polarfly_q5():
    for dead in range(PF5.nodes):
        e = embed(PF5, failed_switches=[dead])
        verify(e, PF5)
        assert dead not in e.participants
        assert dead not in e.nodes
        graph = GRAPH.copy()
        graph.remove_node(dead)
        assert e.depth == damaged_ecc(graph, e.root, e.participants) <= 3  # Section IX-B


def test_subset_with_explicit_root_around_failures():
    topo = hyperx((4, 4))
    links = [(5, 6), (5, 9), (1, 5)]
    e = embed(topo, [5, 10, 15, 0], root=15, failed_links=links)
    verify(e, topo)
    graph = topo.to_networkx()
    graph.remove_edges_from(links)
    assert e.depth == damaged_ecc(graph, 15, [5, 10, 15, 0])


def test_unreachable_participants_are_named():
    isolate = [(0, v) for v in PF5.neighbors(0)]
    graph = GRAPH.copy()
    graph.remove_edges_from(isolate)
    keys = []
    for c in range(1, PF5.nodes):  # the best root among those that reach the most participants
        dist = nx.single_source_shortest_path_length(graph, c)
        keys.append((max(dist.values()), sum(dist.values()), c))
    root = min(keys)[2]
    with pytest.raises(ValueError, match=rf"^Participant 0 cannot reach root {root}: the failed "
                                         rf"links and switches cut it off$"):
        embed(PF5, failed_links=isolate)
    with pytest.raises(ValueError, match=r"^Participant 0 cannot reach root 7: the failed links "
                                         r"and switches cut it off$"):
        embed(PF5, [0, 7, 9], root=7, failed_links=isolate)
    ring = torus(6)
    with pytest.raises(ValueError, match=r"^Participant 3 cannot reach root 0: the failed links "
                                         r"and switches cut it off$"):
        embed(ring, [0, 3], root=0, failed_switches=[1, 5])
    with pytest.raises(ValueError, match=r"^Participant 3 is a failed switch$"):
        embed(ring, [0, 3], failed_switches=[3])
    with pytest.raises(ValueError, match=r"^Root 2 is a failed switch$"):
        embed(ring, [0, 3], root=2, failed_switches=[2])
    with pytest.raises(ValueError, match=r"^All 6 switches have failed: no participant is left$"):
        embed(ring, failed_switches=range(6))
    with pytest.raises(ValueError, match=r"^Failed link 0-3 does not exist: nodes 0 and 3 are not "
                                         r"adjacent$"):
        embed(ring, failed_links=["0-3"])


def test_auto_root_prefers_the_side_that_reaches_everyone():
    # Cutting the ring at two places leaves {1, 2} and {3, 4, 5, 0}: participants on one side.
    ring = torus(6)
    e = embed(ring, [3, 4, 5], failed_links=[(0, 1), (2, 3)])
    assert e.root == 4
    assert e.depth == 1
    verify(e, ring)
