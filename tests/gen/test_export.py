"""gen.export: every format checked line by line or loaded back."""

import io
import json

import matplotlib.image
import networkx as nx
import pytest

from innet.gen import export
from innet.gen.topology import Topology, hyperx, polarfly, torus

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


def test_adjacency_line_by_line(topo):
    lines = export.adjacency(topo).splitlines()
    assert lines[0] == f"{topo.nodes} {topo.num_links}"
    assert len(lines) == topo.nodes + 1
    for u, line in enumerate(lines[1:]):
        assert [int(x) for x in line.split()] == list(topo.neighbors(u))
    shifted = export.adjacency(topo, one_based=True).splitlines()
    assert [int(x) for x in shifted[1].split()] == [v + 1 for v in topo.neighbors(0)]


def test_graphml_loads_back(topo):
    text = export.graphml(topo)
    assert export.from_graphml(text) == topo
    graph = nx.parse_graphml(text, node_type=int)
    assert {frozenset(e) for e in graph.edges()} == {frozenset((u, v))
                                                     for u, _, v, _ in topo.links()}
    assert export.graphml(topo) == text  # byte-stable


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
