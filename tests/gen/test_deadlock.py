"""innet.gen.deadlock: the channel-dependency graph of routes and collective trees."""

import itertools
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from image_samples import sample

from innet.gen.deadlock import (
    Channel,
    DeadlockError,
    channel_graph,
    check,
    check_diameter,
    diameter,
    image_collectives,
    image_graph,
    image_table,
)
from innet.gen.embed import SwitchConfig, embed
from innet.gen.image import build_image
from innet.gen.regmap import MAX_P2P_VCS
from innet.gen.routing import routing
from innet.gen.topology import LOCAL, hyperx, piuma, polarfly, torus

#: A chordless 5-cycle of PolarFly q=3: nodes two apart have one common neighbour, between them.
PENTAGON = [0, 1, 5, 9, 10]
PENTAGON_CYCLE = ("Deadlock: cyclic channel dependency 0 -(port 0, VC 7)-> 1 -(port 2, VC 7)-> 5 "
                  "-(port 2, VC 7)-> 9 -(port 2, VC 7)-> 10 -(port 0, VC 7)-> 0; VC 7 = "
                  "responses of every id; from collective ids 0, 1, 2, 3, 4")
PROPERTY = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _topologies():
    return [polarfly(3), polarfly(5), hyperx((3, 3)), hyperx((2, 3, 2)), torus((4, 4)),
            torus((5, 3)), torus((3, 4), mesh=True), piuma(2, sockets=2, cores=4)]


# -- reference models, independent of the implementation ----------------------------------------

def _p2p_reference(topo, table, vcs):
    """Walk every (source, destination) pair hop by hop; vertices ((u, v), vc)."""
    peer = topo.ports.peer
    graph = nx.DiGraph()
    n = topo.nodes
    for s, d in itertools.product(range(n), range(n)):
        u, k, last, seen = s, 0, None, set()
        while table[u][d] >= 0 and (u, min(k, vcs - 1)) not in seen:
            seen.add((u, min(k, vcs - 1)))
            v = int(peer[u, table[u][d]])
            here = ((u, v), min(k, vcs - 1))
            if last is not None:
                graph.add_edge(last, here)
            last, u, k = here, v, k + 1
    return graph


def _response_reference(embeddings):
    """The union of the line graphs of every id's response tree."""
    graph = nx.DiGraph()
    for e in embeddings:
        tree = nx.DiGraph((u, v) for u, _pu, v, _pv in e.response_links())
        graph.add_edges_from(nx.line_graph(tree).edges)
    return graph


def _is_cycle(edges, cycle):
    return all((a, b) in edges for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True))


def _pentagon_ids(topo, rotation=0):
    ring = PENTAGON[rotation:] + PENTAGON[:rotation]
    return [embed(topo, [ring[(i + j) % 5] for j in range(3)], root=ring[i],
                  collective_id=i) for i in range(5)]


# -- minimal routing and the configurations the project builds ----------------------------------

@pytest.mark.parametrize("topo", _topologies(), ids=repr)
def test_minimal_routing_is_acyclic_with_diameter_vcs(topo):
    graph = channel_graph(topo, routes=routing(topo).table())
    assert graph.p2p_vcs == diameter(topo)
    assert graph.edges
    assert graph.cycle() is None
    check(graph)


def test_hop_indexed_vcs_below_the_diameter_close_a_ring():
    topo = torus((4, 4))
    graph = channel_graph(topo, routes=routing(topo).table(), p2p_vcs=1)
    cycle = graph.cycle()
    assert [(c.node, c.peer, c.vc) for c in cycle] == [(0, 4, 0), (4, 8, 0), (8, 12, 0),
                                                        (12, 0, 0)]
    assert _is_cycle(graph.edges, cycle)


@pytest.mark.parametrize("topo", _topologies()[:6], ids=repr)
def test_default_embedding_with_routes_is_acyclic(topo):
    image = build_image(topo, routes=routing(topo), embeddings=[embed(topo)], elements=8)
    graph = image_graph(image)
    assert graph.cycle() is None
    assert {c.vc for c in graph.channels} >= {0, graph.p2p_vcs, graph.p2p_vcs + 1}


def test_the_image_samples_configuration_is_acyclic():
    image = sample()
    check(image_graph(image))
    assert sorted(image_collectives(image)) == [0]
    table = image_table(image)
    assert table.shape == (6, 6)
    assert (np.diag(table) == LOCAL).all()


# -- the cycles the check exists for ------------------------------------------------------------

def test_shared_response_vc_closes_a_pentagon():
    topo = polarfly(3)
    made = _pentagon_ids(topo)
    image = build_image(topo, routes=routing(topo), embeddings=made, elements=8,
                        check_deadlock=False)
    with pytest.raises(DeadlockError) as caught:
        check(image_graph(image))
    assert str(caught.value) == PENTAGON_CYCLE
    assert [c.node for c in caught.value.cycle] == PENTAGON
    # any four of the five ids are acyclic: the cycle needs every one
    for drop in range(5):
        rest = made[:drop] + made[drop + 1:]
        image = build_image(topo, routes=routing(topo), embeddings=rest, elements=8)
        assert image_graph(image).cycle() is None


def _around(topo, ring, cid):
    """Id ``cid``'s trees along ``ring`` rotated by ``cid``: requests from the third node through
    the second to the root (the first), the response back the same way: a chain even where the
    three nodes are a triangle (:func:`embed` would build a star there)."""
    root, mid, leaf = (ring[(cid + j) % 3] for j in range(3))
    port = topo.port_to
    return [
        SwitchConfig(root, req_in={port(root, mid), LOCAL}, resp_out={port(root, mid), LOCAL}),
        SwitchConfig(mid, req_in={port(mid, leaf), LOCAL}, req_out=port(mid, root),
                     resp_in=port(mid, root), resp_out={port(mid, leaf), LOCAL}),
        SwitchConfig(leaf, req_in={LOCAL}, req_out=port(leaf, mid), resp_in=port(leaf, mid),
                     resp_out={LOCAL}),
    ]


def test_three_ids_around_a_triangle_close_a_cycle_of_the_response_vc():
    """Three ids whose response trees run around a PolarFly q = 3 triangle, each rotated by
    one node, are refused with the cycle and the three ids named; any two of them, and the
    three ids as :func:`embed` builds them on the triangle (stars), are free of deadlock."""
    topo = polarfly(3)
    ring = _triangle(topo)
    trees = {c: _around(topo, ring, c) for c in range(3)}
    graph = channel_graph(topo, collectives=trees, collective_ids=3)
    cycle = graph.cycle()
    assert cycle is not None
    assert {c.node for c in cycle} == set(ring)
    assert {c.vc for c in cycle} == {graph.p2p_vcs + 3}  # the response VC
    assert graph.describe(cycle).endswith("from collective ids 0, 1, 2")
    with pytest.raises(DeadlockError, match=r"^Deadlock: cyclic channel dependency .* from "
                                            r"collective ids 0, 1, 2$"):
        check(graph)
    for pair in itertools.combinations(range(3), 2):
        assert channel_graph(topo, collectives={c: trees[c] for c in pair},
                             collective_ids=3).cycle() is None
    stars = [embed(topo, ring, root=ring[c], collective_id=c) for c in range(3)]
    build_image(topo, routes=routing(topo), embeddings=stars, elements=8)


def _triangle(topo):
    graph = nx.Graph((link.u, link.v) for link in topo.links())
    return next(c for c in nx.simple_cycles(graph, length_bound=3) if len(c) == 3)


def test_detours_around_failures_outgrow_the_vcs():
    topo = polarfly(3)
    failed = [(2, 4), (9, 10), (2, 3), (6, 11)]
    graph = channel_graph(topo, routes=routing(topo, failed_links=failed).table())
    cycle = graph.cycle()
    assert cycle is not None
    assert {c.vc for c in cycle} == {1}
    assert re.fullmatch(r"cyclic channel dependency 0 -\(port 0, VC 1\)-> 1 .*-> 0; VC 1 = "
                        r"p2p hops 1 and up; from routes toward nodes [0-9, ]+ and \d+ more",
                        graph.describe(cycle))


def test_build_image_refuses_a_configuration_that_can_deadlock():
    topo = polarfly(3)
    made = _pentagon_ids(topo)
    with pytest.raises(DeadlockError) as caught:
        build_image(topo, routes=routing(topo), embeddings=made, elements=8)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value) == PENTAGON_CYCLE
    assert [c.node for c in caught.value.cycle] == PENTAGON
    # the cycle is one of the graph of the same image built without the check
    image = build_image(topo, routes=routing(topo), embeddings=made, elements=8,
                        check_deadlock=False)
    assert _is_cycle(image_graph(image).edges, caught.value.cycle)


def test_build_image_refuses_routes_longer_than_the_diameter_around_a_ring():
    topo = torus((6,))  # diameter 3: three hop-indexed p2p VCs
    port = {(u, int(topo.ports.peer[u, p])): p for u in range(6) for p in range(2)}
    table = np.array([[LOCAL if u == d else port[u, (u + 1) % 6] for d in range(6)]
                      for u in range(6)])  # always the same way round: up to 5 hops
    with pytest.raises(DeadlockError, match=r"^Deadlock: cyclic channel dependency .*VC 2 = "
                                            r"p2p hops 2 and up; from routes toward nodes "
                                            r"[0-9, ]+") as caught:
        build_image(topo, routes=table)
    cycle = caught.value.cycle
    assert {c.vc for c in cycle} == {2}
    assert sorted(c.node for c in cycle) == list(range(6))
    assert all(c.peer == (c.node + 1) % 6 for c in cycle)
    shortest = np.array([[LOCAL if u == d else port[u, (u + 1) % 6] if (d - u) % 6 <= 3
                          else port[u, (u - 1) % 6] for d in range(6)] for u in range(6)])
    assert build_image(topo, routes=shortest).nodes == 6


def test_request_cycle_of_a_malformed_tree_is_found():
    topo = torus((3,))  # ring 0 - 1 - 2
    port = {(u, int(topo.ports.peer[u, p])): p for u in range(3) for p in range(2)}
    configs = [SwitchConfig(u, frozenset({LOCAL, port[u, (u - 1) % 3]}), port[u, (u + 1) % 3])
               for u in range(3)]
    graph = channel_graph(topo, collectives={1: configs}, collective_ids=2)
    cycle = graph.cycle()
    assert {c.vc for c in cycle} == {graph.p2p_vcs + 1}
    assert graph.describe(cycle).endswith("VC 2 = requests of id 1; from collective id 1")


def test_a_routing_loop_is_a_cycle_on_the_last_vc():
    topo = torus((4,))
    port = {(u, int(topo.ports.peer[u, p])): p for u in range(4) for p in range(2)}
    table = np.full((4, 4), -2)
    np.fill_diagonal(table, LOCAL)
    table[0, 2], table[1, 2] = port[0, 1], port[1, 0]  # 0 -> 1 -> 0 -> ...
    graph = channel_graph(topo, routes=table, p2p_vcs=3)
    assert graph.cycle() == [Channel(0, port[0, 1], 1, 2), Channel(1, port[1, 0], 0, 2)]
    one_hop = np.full((4, 4), -2)
    np.fill_diagonal(one_hop, LOCAL)
    one_hop[0, 1] = port[0, 1]
    assert channel_graph(topo, routes=one_hop, p2p_vcs=1).edges == {}


# -- properties ---------------------------------------------------------------------------------

@st.composite
def _tables(draw):
    topo = draw(st.sampled_from([torus((5,)), torus((3, 3)), hyperx((2, 3))]))
    n, degree = topo.nodes, [int(x) for x in topo.ports.degree]
    rows = [draw(st.lists(st.integers(-1, degree[u] - 1), min_size=n, max_size=n))
            for u in range(n)]
    # -1 drawn is "no route" (-2); the diagonal is LOCAL
    table = [[LOCAL if u == d else -2 if p < 0 else p for d, p in enumerate(row)]
             for u, row in enumerate(rows)]
    return topo, table, draw(st.integers(1, 3))


@PROPERTY
@given(_tables())
def test_random_tables_match_a_hop_by_hop_walk(case):
    topo, table, vcs = case
    graph = channel_graph(topo, routes=table, p2p_vcs=vcs)
    reference = _p2p_reference(topo, table, vcs)
    assert {((a.node, a.peer), a.vc, (b.node, b.peer), b.vc) for a, b in graph.edges} == {
        (a[0], a[1], b[0], b[1]) for a, b in reference.edges}
    cycle = graph.cycle()
    assert (cycle is None) == nx.is_directed_acyclic_graph(reference)
    if cycle is not None:
        assert _is_cycle(graph.edges, cycle)
        with pytest.raises(DeadlockError, match=r"^Deadlock: cyclic channel dependency "):
            check(graph)


@PROPERTY
@given(st.integers(4, 9), st.integers(1, 3), st.randoms(use_true_random=False))
def test_routes_longer_than_the_vcs_around_a_ring_are_found(length, vcs, rng):
    """Every ring node sends ``vcs + 1`` hops forward: the last VC carries a flit on two
    consecutive links everywhere on the ring, which closes a cycle."""
    if length < vcs + 2:
        vcs = length - 2
    topo = torus((length,))
    peer = topo.ports.peer
    ahead = [next(p for p in range(2) if peer[u, p] == (u + 1) % length) for u in range(length)]
    table = [[LOCAL if u == d else rng.choice([-2, 0, 1]) for d in range(length)]
             for u in range(length)]
    for u in range(length):
        for k in range(vcs + 1):
            table[(u + k) % length][(u + vcs + 1) % length] = ahead[(u + k) % length]
    graph = channel_graph(topo, routes=table, p2p_vcs=vcs)
    cycle = graph.cycle()
    assert cycle is not None
    assert _is_cycle(graph.edges, cycle)


@PROPERTY
@given(st.one_of(st.none(), st.integers(0, 4)),
       st.lists(st.tuples(st.integers(0, 12), st.sets(st.integers(0, 12), min_size=1,
                                                      max_size=6)), min_size=1, max_size=6))
def test_random_embeddings_match_the_line_graphs_of_their_trees(rotation, specs):
    """Random ids, alone or after the five pentagon ids (rotated), which close a cycle of the
    response VC: acyclic and cyclic graphs alike match the networkx reference."""
    topo = polarfly(3)
    made = [] if rotation is None else _pentagon_ids(topo, rotation)
    made += [embed(topo, sorted(members | {root}), root=root, collective_id=len(made) + c)
             for c, (root, members) in enumerate(specs)]
    graph = channel_graph(topo, collectives={e.collective_id: e.switches for e in made},
                          collective_ids=len(made))
    reference = _response_reference(made)
    resp = graph.p2p_vcs + len(made)
    ours = {((a.node, a.peer), (b.node, b.peer)) for a, b in graph.edges if a.vc == resp}
    assert ours == set(reference.edges)
    acyclic = nx.is_directed_acyclic_graph(reference)
    event("acyclic" if acyclic else "cyclic")  # --hypothesis-show-statistics: both occur
    cycle = graph.cycle()
    assert (cycle is None) == acyclic
    if cycle is not None:
        assert _is_cycle(set(reference.edges), [(c.node, c.peer) for c in cycle])


@PROPERTY
@given(st.integers(0, 4), st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)),
                                   max_size=3))
def test_the_pentagon_is_found_among_other_ids(rotation, extra):
    topo = polarfly(3)
    made = _pentagon_ids(topo, rotation)
    made += [embed(topo, sorted({a, b}), root=a, collective_id=5 + i)
             for i, (a, b) in enumerate(extra)]
    graph = channel_graph(topo, collectives={e.collective_id: e.switches for e in made},
                          collective_ids=len(made))
    cycle = graph.cycle()
    assert cycle is not None
    assert _is_cycle(graph.edges, cycle)
    assert {c.vc for c in cycle} == {graph.p2p_vcs + len(made)}


# -- errors -------------------------------------------------------------------------------------

def test_errors():
    topo = torus((4,))
    with pytest.raises(ValueError, match=r"^P2p VCs must be .*, not 0$"):
        channel_graph(topo, p2p_vcs=0)
    # A diameter beyond the switch's VCs names the topology, not an option left to default.
    with pytest.raises(ValueError, match=r"^The mesh 34 has diameter 33: minimal routing needs as "
                                         r"many hop-indexed p2p VCs, and a switch has at most "
                                         r"16$"):
        channel_graph(torus((34,), mesh=True))
    with pytest.raises(TypeError, match=r"^Collective ids must be an integer, not '2'$"):
        channel_graph(topo, collective_ids="2")
    with pytest.raises(ValueError, match=r"^Routing table must have shape \(4, 4\), not "
                                         r"\(2, 2\)$"):
        channel_graph(topo, routes=[[0, 0], [0, 0]])
    with pytest.raises(TypeError, match=r"^Routing table must hold integer ports, not "
                                        r"float64$"):
        channel_graph(topo, routes=np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"^Routing table entry \[1, 0\] names port 2, but "
                                         r"node 1 has 2 ports$"):
        channel_graph(topo, routes=[[LOCAL, 0, 0, 0], [2, LOCAL, 0, 0], [0, 0, LOCAL, 0],
                                    [0, 0, 0, LOCAL]])
    with pytest.raises(ValueError, match=r"^Collective id must be .*, not 3$"):
        channel_graph(topo, collectives={3: []}, collective_ids=2)
    with pytest.raises(ValueError, match=r"^Collective id 0: switch 1 req_out names port 5, "
                                         r"but node 1 has 2 ports$"):
        channel_graph(topo, collectives={0: [SwitchConfig(1, frozenset({0}), 5)]})
    with pytest.raises(ValueError, match=r"^Collective id 0: switch 1 req_in names port 4, "
                                         r"but node 1 has 2 ports$"):
        channel_graph(topo, collectives={0: [SwitchConfig(1, frozenset({4}), 0)]})


@pytest.mark.parametrize(("shape", "hops"), [((2, 30), 16), ((2, 32), 17), ((40, 40), 40)])
def test_check_diameter_refuses_more_hops_than_a_switch_has_vcs(shape, hops):
    topo = torus(shape)
    assert diameter(topo) == hops
    if hops <= MAX_P2P_VCS:
        assert check_diameter(topo) == hops
        return
    with pytest.raises(ValueError, match=rf"^The {re.escape(topo.title)} has diameter {hops}: "
                                         rf"minimal routing needs as many hop-indexed p2p VCs, "
                                         rf"and a switch has at most {MAX_P2P_VCS}$"):
        check_diameter(topo)
