"""The Topology type: port-map checks, accessors, identity and the JSON form."""

import hashlib
import json

import networkx as nx
import numpy as np
import pytest

from innet.gen.topology import (
    LOCAL,
    Link,
    PortMap,
    Topology,
    hyperx,
    piuma,
    polarfly,
    title,
    torus,
)

# A path 0 - 1 - 2 with a chord-free triangle-free layout; port order: node 1 sees 2 first.
PATH = [[(1, 1)], [(2, 0), (0, 0)], [(1, 0)]]


def make(ports, **extra):
    n = len(ports)
    return Topology(kind="custom", params={"n": n}, labels=[(u,) for u in range(n)],
                    ports=ports, **extra)


def test_local_is_minus_one():
    assert LOCAL == -1


def test_accessors_follow_the_port_map():
    topo = make(PATH)
    assert topo.nodes == 3
    assert topo.radix == 2
    assert topo.min_degree == 1
    assert topo.num_links == 2
    assert [topo.degree(u) for u in range(3)] == [1, 2, 1]
    assert topo.neighbors(1) == (2, 0)
    assert topo.port_to(1, 0) == 1
    assert topo.ports[1] == ((2, 0), (0, 0))
    assert topo.links() == (Link(0, 0, 1, 1), Link(1, 0, 2, 0))
    assert list(topo.ports) == [tuple(map(tuple, row)) for row in PATH]
    assert topo.ports == PATH
    assert topo.ports[-1] == ((1, 0),)
    assert topo.ports[0:2] == (((1, 1),), ((2, 0), (0, 0)))
    assert topo.node_of((2,)) == 2
    assert topo.params["n"] == 3
    assert repr(topo) == "Topology(custom(n=3), nodes=3, links=2, radix=2)"


def test_topology_is_immutable_and_hashable():
    topo = make(PATH)
    with pytest.raises(AttributeError):
        topo.kind = "x"
    with pytest.raises(TypeError):
        topo.params["n"] = 4
    with pytest.raises(ValueError, match="read-only"):
        topo.ports.peer[0, 0] = 2
    assert {topo: 1}[make(PATH)] == 1


def test_equality_covers_every_field():
    topo = make(PATH)
    assert topo == make(PATH)
    assert topo != make([[(2, 0)], [], [(0, 0)]])
    assert topo != Topology(kind="other", params={"n": 3}, labels=topo.labels, ports=PATH)
    assert topo != make(PATH, classes=("a", "b", "c"))


def test_fingerprint_is_sha256_of_the_documented_canonical_form():
    topo = make(PATH, classes=("a", "b", "a"))
    header = json.dumps({"kind": "custom", "params": {"n": 3}, "labels": [[0], [1], [2]],
                         "classes": ["a", "b", "a"]}, sort_keys=True, separators=(",", ":"))
    peer = [1, -1, 2, 0, 1, -1]
    port = [1, -1, 0, 0, 0, -1]
    blob = (header.encode() + b"\n" + (3).to_bytes(4, "little") + (2).to_bytes(4, "little")
            + b"".join(x.to_bytes(4, "little", signed=True) for x in peer + port))
    assert topo.fingerprint == hashlib.sha256(blob).hexdigest()


def test_fingerprints_differ_between_topologies():
    prints = {t.fingerprint for t in (torus(4), torus(5), torus(4, mesh=True), hyperx(4),
                                      hyperx((2, 2)), torus((2, 2)))}
    assert len(prints) == 6


def test_to_networkx_keeps_ports_and_labels():
    topo = torus((3, 4))
    graph = topo.to_networkx()
    assert graph.number_of_nodes() == 12
    assert graph.number_of_edges() == topo.num_links
    assert graph.graph == {"kind": "torus", "params": {"shape": [3, 4], "mesh": False}}
    for u, v, data in graph.edges(data=True):
        assert topo.ports[u][data["ports"][u]] == (v, data["ports"][v])
    assert graph.nodes[5]["label"] == (1, 1)


def test_json_round_trip_and_contract_fields():
    topo = make(PATH, classes=("a", "b", "a"))
    text = topo.to_json()
    data = json.loads(text)
    assert data["nodes"] == 3
    assert data["ports"] == [[[v, p] for v, p in row] for row in PATH]
    assert data["format"] == "innet-topology"
    assert data["version"] == 1
    assert Topology.from_json(text) == topo
    assert Topology.from_json(text.encode()) == topo
    assert Topology.from_dict(topo.to_dict()) == topo
    assert topo.to_json() == text  # byte-stable


def test_portmap_from_arrays():
    peer = np.array([[1, -1], [2, 0], [1, -1]])
    port = np.array([[1, -1], [0, 0], [0, -1]])
    assert PortMap(peer, port) == PATH
    assert PortMap.from_lists(PortMap(peer, port)) == PATH
    assert repr(PortMap(peer, port)) == "PortMap(nodes=3, radix=2)"
    assert PortMap(peer, port) != "not a port map"


@pytest.mark.parametrize(("ports", "message"), [
    ([[(1, 0)], [(2, 0)], [(1, 0)]],
     (r"^Port 0 of node 0 is wired to port 0 of node 1, but that port is wired to port 0 of "
     r"node 2$")),
    ([[(0, 0)]], r"^Port 0 of node 0 is wired to node 0 itself$"),
    ([[(1, 0), (1, 1)], [(0, 0), (0, 1)]], r"^Nodes 0 and 1 are wired by more than one link$"),
    ([[(3, 0)], [], []], r"^Port 0 of node 0 names node 3, but there are 3 nodes$"),
    ([[(1, 1)], [(0, 0)]], r"^Port 0 of node 0 names port 1 of node 1, which has only 1 ports$"),
    ([[(1, -1)], [(0, 0)]], (r"^Port 0 of node 0 names \(1, -1\); nodes and ports are "
                            r"non-negative$")),
])
def test_bad_port_maps_are_rejected(ports, message):
    with pytest.raises(ValueError, match=message):
        make(ports)


def test_bad_port_arrays_are_rejected():
    with pytest.raises(ValueError, match=r"^Ports of node 0 must be numbered 0..deg-1 without "
                                         r"gaps; port 0 is out of place$"):
        PortMap(np.array([[-1, 1], [0, -1]]), np.array([[-1, 0], [1, -1]]))
    with pytest.raises(ValueError, match=r"^Port 0 of node 0 has a peer node but no peer port, "
                                         r"or the reverse$"):
        PortMap(np.array([[1], [0]]), np.array([[-1], [0]]))
    with pytest.raises(ValueError, match=r"^Peer arrays must both have shape \(N, radix\), not "
                                         r"\(2,\) and \(2,\)$"):
        PortMap(np.array([1, 0]), np.array([0, 0]))
    with pytest.raises(TypeError, match=r"^Peer arrays must hold integers, not float64 and "
                                        r"int64$"):
        PortMap(np.array([[1.0], [0.0]]), np.array([[0], [0]]))


def test_oversized_port_arrays_are_rejected(monkeypatch):
    from innet.gen.topology import core

    monkeypatch.setattr(core, "MAX_PORT_ENTRIES", 3)
    with pytest.raises(ValueError, match=r"^A port map of 2 nodes of radix 2 is too large; at "
                                         r"most 3 port entries are supported$"):
        PortMap(np.array([[1, -1], [0, -1]]), np.array([[0, -1], [0, -1]]))


@pytest.mark.parametrize(("ports", "message"), [
    ("abc", r"^Ports must be a sequence of port lists, not 'abc'$"),
    ([[(1, "0")], [(0, 0)]], (r"^Port 0 of node 0 must be a \(node, port\) pair of integers, "
                             r"not \(1, '0'\)$")),
    ([[(1,)], [(0, 0)]], (r"^Port 0 of node 0 must be a \(node, port\) pair of integers, "
                         r"not \(1,\)$")),
])
def test_malformed_port_lists_are_type_errors(ports, message):
    with pytest.raises(TypeError, match=message):
        PortMap.from_lists(ports)


def test_bad_fields_are_rejected():
    with pytest.raises(TypeError, match=r"^Kind must be a non-empty string, not ''$"):
        Topology(kind="", params={}, labels=[(0,), (1,)], ports=[[(1, 0)], [(0, 0)]])
    with pytest.raises(TypeError, match=r"^Params must be a mapping, not \[1\]$"):
        Topology(kind="x", params=[1], labels=[(0,), (1,)], ports=[[(1, 0)], [(0, 0)]])
    with pytest.raises(ValueError, match=r"^Labels must have one entry per node \(2\), not 1$"):
        Topology(kind="x", params={}, labels=[(0,)], ports=[[(1, 0)], [(0, 0)]])
    with pytest.raises(ValueError, match=r"^Classes must be empty or have one entry per node "
                                         r"\(2\), not 1$"):
        Topology(kind="x", params={}, labels=[(0,), (1,)], ports=[[(1, 0)], [(0, 0)]],
                 classes=("a",))


def test_bad_node_arguments():
    topo = make(PATH)
    with pytest.raises(ValueError, match=r"^Node 0 is not adjacent to node 2$"):
        topo.port_to(0, 2)
    with pytest.raises(ValueError, match=r"^Node 3 is out of range 0..2$"):
        topo.degree(3)
    with pytest.raises(TypeError, match=r"^Node must be an integer, not '1'$"):
        topo.neighbors("1")
    with pytest.raises(IndexError, match=r"^Node 3 is out of range; there are 3 nodes$"):
        topo.ports[3]
    with pytest.raises(TypeError, match=r"^Node must be an integer, not 1.0$"):
        topo.ports[1.0]
    with pytest.raises(ValueError, match=r"^No node has label \(7,\)$"):
        topo.node_of((7,))


@pytest.mark.parametrize(("text", "error", "message"), [
    ("{", ValueError, (r"^Topology JSON is malformed: Expecting property name enclosed in double "
                      r"quotes: line 1 column 2 \(char 1\)$")),
    ("[]", TypeError, r"^Topology JSON must be an object, not list$"),
    ("[" * 100000 + "]" * 100000, ValueError, r"^Topology JSON is malformed: nested too deeply$"),
    ('{"nodes": ' + "9" * 5000 + "}", ValueError,
     r"^Topology JSON is malformed: an integer of 5,000 digits, more than 1,000$"),
    (json.dumps({**json.loads(polarfly(3).to_json()), "params": {"q": 3}}), ValueError,
     r"^Topology JSON of kind 'polarfly' lacks the params r0, r1$"),
    (json.dumps({**json.loads(torus(4).to_json()), "params": []}), ValueError,
     r"^Topology JSON params must be an object, not \[\]$"),
    ('{"format": "x"}', ValueError, (r"^Not an innet topology: format is 'x', expected "
                                    r"'innet-topology'$")),
    ('{"format": "innet-topology", "version": 9}', ValueError,
     r"^Topology JSON version 9 is not supported; expected 1$"),
    ('{"format": "innet-topology", "version": 1, "kind": "x"}', ValueError,
     r"^Topology JSON lacks params, nodes, labels, ports$"),
    (('{"format": "innet-topology", "version": 1, "kind": "x", "params": {}, "nodes": 3, '
     '"labels": [[0]], "ports": [[]]}'), ValueError,
     r"^Topology JSON says 3 nodes but lists ports for 1$"),
])
def test_bad_json_is_rejected(text, error, message):
    with pytest.raises(error, match=message):
        Topology.from_json(text)


def test_networkx_agrees_on_a_random_graph():
    graph = nx.gnm_random_graph(30, 80, seed=3)
    ports = [[] for _ in range(30)]
    for u, v in sorted(graph.edges()):
        ports[u].append([v, None])
        ports[v].append([u, None])
    for u in range(30):
        for pair in ports[u]:
            v = pair[0]
            pair[1] = next(i for i, back in enumerate(ports[v]) if back[0] == u)
    topo = make([[tuple(pair) for pair in row] for row in ports])
    assert nx.utils.edges_equal(topo.to_networkx().edges(), graph.edges())
    for u in range(30):
        for p, (v, p2) in enumerate(topo.ports[u]):
            assert topo.ports[v][p2] == (u, p)
            assert topo.port_to(u, v) == p


def test_from_edges_orders_ports_by_peer_id():
    topo = Topology.from_edges("custom", {}, [(0,), (1,), (2,), (3,)], [(2, 0), (0, 1), (3, 0)])
    assert topo.neighbors(0) == (1, 2, 3)
    assert topo.ports[2] == ((0, 1),)
    assert topo.ports[0] == ((1, 0), (2, 0), (3, 0))


@pytest.mark.parametrize(("edges", "message"), [
    ([(0, 4)], r"^Edge \(0, 4\) names a node outside 0..2$"),
    ([(1, 1)], r"^Edge \(1, 1\) is a self-loop$"),
    ([(0, 1), (1, 0)], r"^Edge \(0, 1\) is listed more than once$"),
])
def test_from_edges_errors(edges, message):
    with pytest.raises(ValueError, match=message):
        Topology.from_edges("custom", {}, [(0,), (1,), (2,)], edges)


def test_from_edges_size_limit(monkeypatch):
    from innet.gen.topology import core

    monkeypatch.setattr(core, "MAX_PORT_ENTRIES", 2)
    with pytest.raises(ValueError, match=r"^A port map of 3 nodes of radix 2 is too large; at "
                                         r"most 2 port entries are supported$"):
        Topology.from_edges("custom", {}, [(0,), (1,), (2,)], [(0, 1), (0, 2)])


@pytest.mark.parametrize(("topo", "name"), [
    (lambda: polarfly(3), "PolarFly q=3"),
    (lambda: polarfly(3, r0=1), "PolarFly q=3 r0=1 r1=0"),
    (lambda: hyperx((3, 3)), "HyperX 3x3"),
    (lambda: torus((4, 2)), "torus 4x2"),
    (lambda: torus((4,), mesh=True), "mesh 4"),
    (lambda: piuma((2, 2), 2, 4), "PIUMA 2x2 nodes x 2 sockets x 4 cores"),
])
def test_every_kind_has_one_title(topo, name):
    made = topo()
    assert made.title == name
    # The JSON form of the parameters (lists for tuples) gives the same name.
    assert title(made.kind, json.loads(json.dumps(made.to_dict()["params"]))) == name


def test_other_kinds_are_titled_by_their_parameters():
    assert title("dragonfly", {"groups": 9, "shape": (2, 4), "name": "dfly"}) == (
        "dragonfly (groups=9, shape=2x4, name=dfly)")
    assert title("torus", {}) == "torus ()"
    # An expansion given by one of its two counts: the other is 0.
    assert title("polarfly", {"q": 3, "r0": 1}) == "PolarFly q=3 r0=1 r1=0"
