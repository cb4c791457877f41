"""Multi-level PIUMA networks: structure against labels, networkx and counting formulas."""

import importlib
import itertools
import math

import networkx as nx
import numpy as np
import pytest

from innet.gen.topology import (
    PortMap,
    Topology,
    hyperx,
    link_cycles,
    link_latencies,
    link_latency_array,
    link_level,
    link_levels,
    mesh_shape,
    parse_nodes,
    piuma,
    piuma_layout,
    piuma_plan,
)
from innet.gen.topology.piuma import CORE, NODE, SOCKET, check_nodes_shape

CONFIGS = [  # (nodes, sockets, cores, placement)
    ((1,), 16, 8, "spread"),
    ((2,), 3, 4, "spread"),
    ((3, 3), 4, 4, "spread"),
    ((4, 2), 2, 6, "hub"),
    ((2, 3, 2), 3, 2, "spread"),
    ((5,), 1, 3, "spread"),
    ((3, 2), 4, 1, "hub"),
    ((1, 4), 16, 8, "hub"),
    ((2, 2), 5, 7, "spread"),
]


def mesh_adjacent(a, b, cols):
    (ra, ca), (rb, cb) = divmod(a, cols), divmod(b, cols)
    return abs(ra - rb) + abs(ca - cb) == 1


@pytest.mark.parametrize(("nodes", "sockets", "cores", "placement"), CONFIGS)
def test_structure_follows_the_labels(nodes, sockets, cores, placement):
    topo = piuma(nodes, sockets, cores, placement=placement)
    rows, cols = mesh_shape(cores)
    dims = len(nodes)
    # switch counts and row-major labels
    assert topo.nodes == math.prod(nodes) * sockets * cores
    grid = list(itertools.product(*(range(s) for s in nodes), range(sockets), range(cores)))
    assert list(topo.labels) == grid
    # the port map is an involution (checked element by element and by PortMap itself)
    PortMap(topo.ports.peer, topo.ports.peer_port)
    for u in range(topo.nodes):
        for p, (v, q) in enumerate(topo.ports[u]):
            assert topo.ports[v][q] == (u, p)
    # every link is what its labels say, and every such pair is linked exactly as the paper says
    by_level = {"core": set(), "socket": [], "node": []}
    for u, _, v, _ in topo.links():
        a, b = topo.labels[u], topo.labels[v]
        if a[:dims] != b[:dims]:
            assert sum(x != y for x, y in zip(a[:dims], b[:dims], strict=True)) == 1
            by_level["node"].append((a[:dims], b[:dims]))
            level = "node"
        elif a[dims] != b[dims]:
            by_level["socket"].append((a[:dims], frozenset((a[dims], b[dims]))))
            level = "socket"
        else:
            assert mesh_adjacent(a[dims + 1], b[dims + 1], cols)
            by_level["core"].add(frozenset((u, v)))
            level = "core"
        assert link_level(topo, u, v) == level == link_level(topo, v, u)
    mesh_links = rows * (cols - 1) + cols * (rows - 1)
    assert len(by_level["core"]) == math.prod(nodes) * sockets * mesh_links
    # one link per socket pair of every node, one per pair of HyperX peers
    socket_pairs = by_level["socket"]
    assert len(socket_pairs) == len(set(socket_pairs)) == math.prod(nodes) * math.comb(sockets, 2)
    peers = {frozenset(pair) for pair in by_level["node"]}
    assert len(peers) == len(by_level["node"])
    hyperx = nx.Graph()
    hyperx.add_nodes_from(itertools.product(*(range(s) for s in nodes)))
    hyperx.add_edges_from((x, y) for x, y in itertools.combinations(hyperx.nodes, 2)
                          if sum(a != b for a, b in zip(x, y, strict=True)) == 1)
    assert peers == {frozenset(e) for e in hyperx.edges}


@pytest.mark.parametrize(("nodes", "sockets", "cores", "placement"), CONFIGS)
def test_levels_latencies_and_port_order(nodes, sockets, cores, placement):
    topo = piuma(nodes, sockets, cores, placement=placement, latency_core=2, latency_socket=7,
                 latency_node=11)
    dims = len(nodes)
    levels = link_levels(topo)
    lat = link_latency_array(topo)
    expected = {CORE: 2.0, SOCKET: 7.0, NODE: 11.0}
    for u in range(topo.nodes):
        row = [int(x) for x in levels[u, : topo.degree(u)]]
        assert (levels[u, topo.degree(u):] == -1).all()
        assert np.isnan(lat[u, topo.degree(u):]).all()
        assert row == sorted(row)  # mesh ports, then socket ports, then node ports
        keys = []
        for p, v in enumerate(topo.neighbors(u)):
            a, b = topo.labels[u], topo.labels[v]
            assert lat[u, p] == expected[row[p]]
            if row[p] == SOCKET:
                keys.append((b[dims] - a[dims]) % sockets)
            elif row[p] == NODE:
                d = next(i for i in range(dims) if a[i] != b[i])
                keys.append((d, (b[d] - a[d]) % nodes[d]))
        socket_keys = [k for k in keys if not isinstance(k, tuple)]
        node_keys = [k for k in keys if isinstance(k, tuple)]
        assert socket_keys == sorted(socket_keys)
        assert node_keys == sorted(node_keys)
    as_dict = link_latencies(topo)
    assert len(as_dict) == topo.num_links
    assert all(value == expected[{"core": CORE, "socket": SOCKET,
                                  "node": NODE}[link_level(topo, u, v)]]
               for (u, v), value in as_dict.items())


@pytest.mark.parametrize(("nodes", "sockets", "cores", "placement"), CONFIGS)
def test_every_node_and_socket_is_wired_alike(nodes, sockets, cores, placement):
    """The placement depends only on offsets: the far end of a port is the same slot, shifted by
    the port's offset, at every node and every socket."""
    topo = piuma(nodes, sockets, cores, placement=placement)
    dims = len(nodes)
    slots = sockets * cores
    labels = np.array(topo.labels)
    peer = topo.ports.peer
    present = peer >= 0
    offset = np.where(present[..., None],
                      labels[np.where(present, peer, 0)] - labels[:, None, :], 0)
    offset[..., :dims] %= np.array(nodes)
    offset[..., dims] %= sockets
    offset = np.where(present[..., None], offset, -99)
    # Same slot in every node: identical offsets and ports (node-level translation).
    per_slot = offset.reshape(-1, slots, *offset.shape[1:])
    assert (per_slot == per_slot[0]).all()
    ports = topo.ports.peer_port.reshape(-1, slots, topo.radix)
    assert (ports == ports[0]).all()
    # Same core in every socket: the same mesh and socket ports (socket-level translation).
    levels = link_levels(topo)[:slots].reshape(sockets, cores, -1)
    intra = np.where((levels >= 0) & (levels != NODE), levels, -1)
    assert (intra == intra[0]).all()
    far = offset[:slots, :, dims:].reshape(sockets, cores, topo.radix, -1)
    assert (np.where(intra[..., None] >= 0, far, 0) == np.where(intra[0][..., None] >= 0,
                                                                far[0], 0)).all()


def water_fill_radix(mesh_degrees, extra):
    """The least maximum degree reachable by adding ``extra`` ports to cores with the given mesh
    degrees (an independent model of the spread policy's target)."""
    t = max(mesh_degrees)
    while sum(max(0, t - m) for m in mesh_degrees) < extra:
        t += 1
    return t


@pytest.mark.parametrize(("nodes", "sockets", "cores"), [
    ((16, 16), 16, 8), ((4, 4), 16, 8), ((8,), 4, 4), ((3, 5), 6, 6), ((1,), 9, 4),
])
def test_spread_levels_the_degrees(nodes, sockets, cores):
    layout = piuma_plan(nodes, sockets, cores)
    rows, cols = layout.mesh
    mesh = [(r > 0) + (r < rows - 1) + (c > 0) + (c < cols - 1)
            for r in range(rows) for c in range(cols)]
    kinds = sum(s - 1 for s in nodes)
    degrees = layout.degrees.reshape(sockets, cores)
    for s in range(sockets):
        node_ports = len(range(s, kinds, sockets))
        best = water_fill_radix(mesh, sockets - 1 + node_ports)
        assert degrees[s].max() == best
    # no socket's switches differ by more than one port where the mesh allows it
    assert int(degrees.max()) - int(degrees.min()) <= max(1, max(mesh) - min(mesh))


def test_hub_carries_every_socket_link():
    topo = piuma((3, 3), 5, 8, placement="hub")
    levels = link_levels(topo)
    labels = np.array(topo.labels)
    socket_ports = (levels == SOCKET).sum(axis=1)
    core = labels[:, -1]
    assert (socket_ports[core == 0] == 4).all()
    assert (socket_ports[core != 0] == 0).all()
    assert topo.radix == 4 + 2  # a corner of the 2x4 mesh has two mesh ports


@pytest.mark.parametrize(("nodes", "sockets", "cores"), [((3, 3), 3, 4), ((2, 2, 2), 2, 6),
                                                          ((4,), 4, 9)])
def test_diameter_by_level(nodes, sockets, cores):
    topo = piuma(nodes, sockets, cores)
    layout = piuma_layout(topo)
    graph = topo.to_networkx()
    labels = topo.labels
    dims = len(nodes)
    socket0 = [u for u in graph if labels[u][:dims + 1] == (0,) * (dims + 1)]
    assert nx.diameter(graph.subgraph(socket0)) == layout.d_max == sum(mesh_shape(cores)) - 2
    sockets_of_node0 = nx.quotient_graph(
        graph.subgraph([u for u in graph if labels[u][:dims] == (0,) * dims]),
        lambda a, b: labels[a][dims] == labels[b][dims])
    assert nx.diameter(sockets_of_node0) == 1
    nodes_graph = nx.quotient_graph(graph, lambda a, b: labels[a][:dims] == labels[b][:dims])
    assert nx.diameter(nodes_graph) == layout.dimensions == sum(s > 1 for s in nodes)


def test_json_round_trip_and_parameters():
    topo = piuma((2, 3), 3, 4, placement="hub", latency_core=1.5)
    again = Topology.from_json(topo.to_json())
    assert again == topo
    assert again.fingerprint == topo.fingerprint
    assert topo.params["latency_core"] == 1.5
    assert topo.params["mesh"] == (2, 2)
    assert piuma_layout(again).placement == "hub"
    assert topo.fingerprint != piuma((2, 3), 3, 4, placement="hub").fingerprint
    assert mesh_shape(8) == (2, 4)
    assert mesh_shape(16) == (4, 4)
    assert mesh_shape(7) == (1, 7)
    assert piuma(2, 2, 6, mesh=(3, 2)).params["mesh"] == (3, 2)
    assert parse_nodes("4x4") == (4, 4)
    assert parse_nodes("1") == (1,)
    with pytest.raises(ValueError, match=rf"^Each size of nodes must have at most 18 digits, "
                                         rf"not {'9' * 40}$"):
        parse_nodes("2x" + "9" * 5000)


def test_errors():
    with pytest.raises(TypeError, match=r"^Nodes must be a HyperX shape \(a sequence of "
                                        r"integers\), not 'ab'$"):
        piuma("ab")
    with pytest.raises(ValueError, match=r"^Nodes must have at least one dimension$"):
        piuma(())
    with pytest.raises(ValueError, match=r"^Dimension 1 of nodes 2x0 must be at least 1, "
                                         r"not 0$"):
        piuma((2, 0))
    with pytest.raises(TypeError, match=r"^Sockets must be an integer, not 2.0$"):
        piuma(2, 2.0)
    with pytest.raises(ValueError, match=r"^Cores must be at least 1, not 0$"):
        piuma(2, 2, 0)
    with pytest.raises(ValueError, match=r"^Placement must be one of spread, hub, not "
                                         r"'ring'$"):
        piuma(2, placement="ring")
    with pytest.raises(ValueError, match=r"^Mesh 3x3 has 9 places, not one for each of the 8 "
                                         r"cores$"):
        piuma(2, mesh=(3, 3))
    with pytest.raises(TypeError, match=r"^Mesh must be a \(rows, cols\) pair of integers, "
                                        r"not '2x4'$"):
        piuma(2, mesh="2x4")
    with pytest.raises(ValueError, match=r"^Latency of the socket level must be finite and "
                                         r"> 0 ns, not 0.0$"):
        piuma(2, latency_socket=0)
    with pytest.raises(TypeError, match=r"^Latency of the node level must be a number of ns, "
                                        r"not '5ns'$"):
        piuma(2, latency_node="5ns")
    with pytest.raises(ValueError, match=r"^A PIUMA network needs at least 2 switches, not 1$"):
        piuma(1, 1, 1)
    with pytest.raises(ValueError, match=r"^A PIUMA network of 2,097,152 switches and "
                                         r"1,099,512,676,352 ports is too large; at most "
                                         r"268,435,456 port entries are supported$"):
        piuma((1 << 20,), 2, 1)
    with pytest.raises(ValueError, match=r"^A PIUMA network of 33,554,432 switches is too "
                                         r"large; at most 2,097,152 are built$"):
        piuma((512, 512), 16, 8)
    with pytest.raises(ValueError, match=r"^Sockets must be at most 4096, not 100000$"):
        piuma(1, 100000)
    with pytest.raises(ValueError, match=r"^A PIUMA network of 100000000000000000000 nodes "
                                         r"\(100000000000000000000\) is too large; at most "
                                         r"1048576 nodes are supported$"):
        piuma_plan((10**20,))
    with pytest.raises(ValueError, match=r"^Cores must be at most 4096, not 10000000000$"):
        piuma(2, 2, 10**10)
    with pytest.raises(ValueError, match=r"^Nodes must be sizes joined by 'x' such as 4x4, "
                                         r"not '4y4'$"):
        parse_nodes("4y4")
    with pytest.raises(TypeError, match=r"^Nodes must be a HyperX shape"):
        check_nodes_shape([1.5])
    topo = piuma((2,), 2, 2)
    with pytest.raises(ValueError, match=r"^Topology must be a PIUMA network, not hyperx$"):
        link_levels(hyperx(3))
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not str$"):
        piuma_layout("piuma")
    with pytest.raises(ValueError, match=r"^Node 0 is not adjacent to node 7$"):
        link_level(topo, 0, 7)
    with pytest.raises(ValueError, match=r"^Latency level must be one of core, socket, node, "
                                         r"not 'die'$"):
        link_latency_array(topo, {"die": 1})


def test_link_cycles_round_latencies_up():
    topo = piuma((2,), 2, 4, latency_core=5, latency_socket=25, latency_node=50)
    levels = {(u, v): link_level(topo, u, v) for u, _, v, _ in topo.link_array().tolist()}
    for cycle, want in ((5, {"core": 1, "socket": 5, "node": 10}),
                        (10, {"core": 1, "socket": 3, "node": 5}),
                        (2.5, {"core": 2, "socket": 10, "node": 20})):
        assert link_cycles(topo, cycle) == {pair: want[level] for pair, level in levels.items()}
    with pytest.raises(ValueError, match=r"^Clock cycle must be finite and > 0 ns, not 0$"):
        link_cycles(topo, 0)
    with pytest.raises(TypeError, match=r"^Clock cycle must be a number of ns, not '5ns'$"):
        link_cycles(topo, "5ns")



@pytest.mark.parametrize(("nodes", "sockets", "cores", "placement"), [
    ((2,), 2, 1, "spread"), ((2, 3), 4, 8, "spread"), ((3,), 5, 6, "hub"),
    ((2, 2, 2), 3, 4, "spread"), ((3, 3), 2, 3, "hub"),
])
def test_the_size_check_before_wiring_counts_every_port(monkeypatch, nodes, sockets, cores,
                                                        placement):
    # The network is refused before it is wired when its ports exceed the supported entries:
    # the count is exact, so one port fewer allowed refuses it and none fewer builds it.
    module = importlib.import_module("innet.gen.topology.piuma")

    ports = int((piuma(nodes, sockets, cores, placement=placement).ports.peer >= 0).sum())
    monkeypatch.setattr(module, "MAX_PORT_ENTRIES", ports - 1)
    with pytest.raises(ValueError, match=rf" and {ports:,} ports is too large; at most "
                                         rf"{ports - 1:,} port entries are supported$"):
        piuma(nodes, sockets, cores, placement=placement)


def _slot_ports_by_search(layout):
    """Every slot's ports found by looking at every socket link and node link for each slot:
    the port order of the module documentation, by the definition."""
    rows, cols = layout.mesh
    out = []
    for slot in range(layout.slots):
        core = slot % layout.cores
        r, c = divmod(core, cols)
        ports = []
        for dim, (x, size) in enumerate(((r, rows), (c, cols))):
            if x > 0:
                ports.append(("core", dim, -1))
            if x < size - 1:
                ports.append(("core", dim, 1))
        ports += [("socket", o, 0) for o in range(1, layout.sockets)
                  if layout.socket_core[o] == core]
        ports += [("node", d, delta) for d, row in enumerate(layout.node_slot)
                  for delta in range(1, len(row)) if row[delta] == slot]
        out.append(tuple(ports))
    return tuple(out)


@pytest.mark.parametrize(("nodes", "sockets", "cores", "placement"), [
    ((2,), 2, 1, "spread"), ((4, 4), 16, 8, "spread"), ((3, 5), 6, 4, "hub"),
    ((2, 2, 3), 5, 6, "spread"), ((7,), 3, 2, "hub"), ((1,), 9, 9, "spread"),
])
def test_slot_ports_are_those_a_search_finds(nodes, sockets, cores, placement):
    layout = piuma_plan(nodes, sockets, cores, placement=placement)
    assert layout.slot_ports == _slot_ports_by_search(layout)
