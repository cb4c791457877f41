"""gen.export: every format checked line by line or loaded back."""

import io
import json

import matplotlib.image
import networkx as nx
import pytest

from innet.gen import export
from innet.gen.topology import Topology, hyperx, link_latencies, piuma, polarfly, torus

BUILDERS = [lambda: torus((4, 3)), lambda: torus((3, 2), mesh=True), lambda: hyperx((2, 3, 2)),
            lambda: polarfly(5), lambda: polarfly(4), lambda: polarfly(5, r0=1, r1=2)]


@pytest.fixture(params=range(len(BUILDERS)), ids=["torus", "mesh", "hyperx", "pf5", "pf4",
                                                   "pf5x"])
def topo(request):
    return BUILDERS[request.param]()


@pytest.mark.parametrize("endpoints", [1, 3])
def test_anynet_line_by_line(topo, endpoints):
    lines = export.anynet(topo, endpoints).splitlines()
    assert len(lines) == topo.nodes
    for u, line in enumerate(lines):
        words = line.split()
        assert words[:2] == ["router", str(u)]
        pairs = list(zip(words[2::2], map(int, words[3::2]), strict=True))
        nodes = [x for kind, x in pairs if kind == "node"]
        routers = [x for kind, x in pairs if kind == "router"]
        assert nodes == list(range(u * endpoints, (u + 1) * endpoints))
        assert routers == list(topo.neighbors(u))
        assert [kind for kind, _ in pairs] == ["node"] * endpoints + ["router"] * len(routers)


def _edges(topo):
    return sorted((min(u, v), max(u, v)) for u, _, v, _ in topo.links())


def _read_adjacency(text, shift=0):
    """The adjacency file as its readers take it: ``V E``, then the neighbours of vertex
    0, 1, ... one line each, ids separated by single spaces."""
    lines = text.split("\n")
    assert lines[-1] == ""  # every line ends with a newline
    lines = lines[:-1]
    for line in lines:
        assert line == line.strip(), f"spaces at an end of {line!r}"
        assert "  " not in line, f"double space in {line!r}"
    vertices, edges = map(int, lines[0].split(" "))
    assert len(lines) == vertices + 1
    neighbours = [[int(x) - shift for x in line.split(" ")] if line else []
                  for line in lines[1:]]
    pairs = [(u, v) for u, vs in enumerate(neighbours) for v in vs]
    assert sorted((v, u) for u, v in pairs) == sorted(pairs)  # every edge from both ends
    assert len(pairs) == 2 * edges
    return neighbours, sorted((u, v) for u, v in pairs if u < v)


def test_adjacency_reads_back_edge_for_edge(topo):
    neighbours, edges = _read_adjacency(export.adjacency(topo))
    assert edges == _edges(topo)
    assert neighbours == [list(topo.neighbors(u)) for u in range(topo.nodes)]
    shifted, edges = _read_adjacency(export.adjacency(topo, one_based=True), shift=1)
    assert shifted == neighbours
    assert edges == _edges(topo)


def test_graphml_loads_back(topo):
    text = export.graphml(topo)
    assert export.from_graphml(text) == topo
    graph = nx.parse_graphml(text, node_type=int)
    assert {frozenset(e) for e in graph.edges()} == {frozenset((u, v))
                                                     for u, _, v, _ in topo.links()}
    assert export.graphml(topo) == text  # byte-stable


def _sst_import(path):
    """What SST Merlin's ``topoAny.import_graph`` does with a GraphML file: read it with
    ``networkx.read_graphml``, number the vertices in file order unless their ids are integers,
    and take ``int(endpoints)`` endpoints on every vertex (a vertex without them is an error)."""
    graph = nx.read_graphml(path)
    assert not graph.is_directed()
    vertices = list(graph.nodes())
    if not all(isinstance(v, int) for v in vertices):
        graph = nx.relabel_nodes(graph, {v: i for i, v in enumerate(vertices)}, copy=True)
    endpoints = {}
    for v in graph.nodes:
        assert "endpoints" in graph.nodes[v], f"vertex {v} has no endpoints attribute"
        endpoints[v] = int(graph.nodes[v]["endpoints"])
    return graph, endpoints


@pytest.mark.parametrize("endpoints", [1, 3])
def test_graphml_imports_as_sst_merlin_does(topo, endpoints, tmp_path):
    path = tmp_path / "topo.graphml"
    path.write_text(export.graphml(topo, endpoints))
    graph, counts = _sst_import(str(path))
    assert counts == dict.fromkeys(range(topo.nodes), endpoints)
    assert sorted((min(u, v), max(u, v)) for u, v in graph.edges()) == _edges(topo)
    assert all("latency_ns" not in data for _, _, data in graph.edges(data=True))


def test_graphml_carries_piuma_link_latencies(tmp_path):
    net = piuma((2,), 2, 2, latency_core=4.0, latency_socket=20.0, latency_node=60.0)
    path = tmp_path / "piuma.graphml"
    path.write_text(export.graphml(net))
    graph, counts = _sst_import(str(path))
    assert counts == dict.fromkeys(range(net.nodes), 1)
    latency = {(min(u, v), max(u, v)): data["latency_ns"]
               for u, v, data in graph.edges(data=True)}
    assert latency == link_latencies(net)
    assert sorted(set(latency.values())) == [4.0, 20.0, 60.0]
    assert export.from_graphml(path.read_text()) == net


def test_json_loads_back(topo):
    text = export.export(topo, "json")
    assert Topology.from_json(text) == topo
    data = json.loads(text)
    assert data["nodes"] == topo.nodes
    assert data["ports"][0] == [list(pair) for pair in topo.ports[0]]


def test_every_format_is_byte_stable():
    for fmt in export.FORMATS:
        assert export.export(polarfly(3), fmt) == export.export(polarfly(3), fmt)


@pytest.mark.parametrize(("q", "r0", "r1"), [(7, 0, 0), (4, 0, 0), (5, 1, 2)])
def test_plot_is_a_png(q, r0, r1):
    data = export.plot_layout(polarfly(q, r0=r0, r1=r1))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(io.BytesIO(data), format="png")
    assert image.shape[0] > 200
    assert image.shape[1] > 400
    assert image.std() > 0.05  # something was drawn
    assert export.plot_layout(polarfly(q, r0=r0, r1=r1)) == data


def test_export_errors():
    with pytest.raises(ValueError, match=r"^Export format must be one of anynet, adjacency, "
                                         r"graphml, json, not 'dot'$"):
        export.export(torus(3), "dot")
    with pytest.raises(ValueError, match=r"^Endpoints per router must be a positive integer, "
                                         r"not 0$"):
        export.anynet(torus(3), 0)
    with pytest.raises(ValueError, match=r"^Endpoints per router must be a positive integer, "
                                         r"not True$"):
        export.graphml(torus(3), True)
    with pytest.raises(ValueError, match=r"^A cluster layout needs a PolarFly topology, not "
                                         r"torus$"):
        export.plot_layout(torus(3))


def test_graphml_errors():
    with pytest.raises(ValueError, match=r"^GraphML is malformed: "):
        export.from_graphml("<graphml")
    plain = "\n".join(nx.generate_graphml(nx.path_graph(3)))
    with pytest.raises(ValueError, match=r"^GraphML lacks the innet graph attributes kind and "
                                         r"params$"):
        export.from_graphml(plain)
    graph = nx.Graph(kind="x", params="{}")
    graph.add_edge(0, 5, port_lo=0, port_hi=0)
    with pytest.raises(ValueError, match=r"^GraphML node ids must be 0..1$"):
        export.from_graphml("\n".join(nx.generate_graphml(graph)))
    graph = nx.Graph(kind="x", params="{}")
    graph.add_node(0, label="[0]")
    graph.add_node(1, label="[1]")
    graph.add_edge(0, 1, port_lo=3, port_hi=0)
    with pytest.raises(ValueError, match=r"^GraphML gives node 0 a port 3 out of range$"):
        export.from_graphml("\n".join(nx.generate_graphml(graph)))
    graph = nx.Graph(kind="x", params="[" * 100_000)
    graph.add_edge(0, 1, port_lo=0, port_hi=0)
    with pytest.raises(ValueError, match=r"^GraphML holds a malformed JSON attribute: nested too "
                                         r"deeply$"):
        export.from_graphml("\n".join(nx.generate_graphml(graph)))
