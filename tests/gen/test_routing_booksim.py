"""BookSim2 exports read back the way BookSim reads them.

``BookSim`` below re-implements, in Python, the two readers of the BookSim2 ``anynet`` network
that the PolarFly authors' simulator uses (``src/networks/anynet.cpp``):

- ``AnyNet::readFile``: lines from ``getline`` (blank ones skipped), each cut at single spaces
  with empty pieces skipped, read as ``router|node ID`` pairs after a ``router|node ID`` head;
  router-router links are added in both directions, a node belongs to one router, node ids must
  be ``0..N-1``. ``_BuildNet`` then numbers each router's ports: its nodes by ascending id, then
  its neighbour routers by ascending id.
- ``AnyNet::loadRoutingTable``: ``while (file.good()) { getline; split(line, ' '); ... }`` with
  ``split`` from ``misc_utils.cpp`` (cuts at every single space; a line without one gives no
  items) and then ``items[0]``, ``items[1]``, ``items[2]``. A file that ends with a newline makes
  the loop read one more, empty line, whose missing items BookSim indexes anyway (a crash).

``atoi`` is read strictly (digits only) so that a malformed token fails here instead of becoming
a silent 0.
"""

import os
import re
from collections import deque

import numpy as np
import pytest

from innet.gen import export
from innet.gen.routing import (
    booksim_ports,
    booksim_routing_table,
    hop_distances,
    iter_booksim_routing,
    paths,
    routing,
    write_booksim_routing,
)
from innet.gen.topology import hyperx, piuma, polarfly, torus


def _atoi(token: str) -> int:
    assert re.fullmatch(r"[0-9]+", token), f"BookSim's atoi would misread {token!r}"
    return int(token)


def _split(line: str, sep: str = " ") -> list[str]:
    """``split`` of BookSim's ``misc_utils.cpp``."""
    items = []
    start = 0
    end = line.find(sep, start)
    while end != -1:
        items.append(line[start:end])
        start = end + 1
        end = line.find(sep, start)
        if end == -1:
            items.append(line[start:])
    return items


class BookSim:
    """The anynet network and (optionally) the routing table, as BookSim loads them."""

    def __init__(self, network: str, nodes_per_router: int) -> None:
        self.nodes: dict[int, set[int]] = {}    # router_list[NODE]: router -> its nodes
        self.routers: dict[int, set[int]] = {}  # router_list[ROUTER]: router -> neighbours
        self.router_of: dict[int, int] = {}     # node_list: node -> router
        for line in network.split("\n"):
            if line == "":
                continue
            tokens = [t for t in line.split(" ") if t != ""]
            assert len(tokens) % 2 == 0, f"incomplete line {line!r}"
            head_type, head = tokens[0], _atoi(tokens[1])
            assert head_type == "router", f"unknown head of line type {head_type!r}"
            self.nodes.setdefault(head, set())
            self.routers.setdefault(head, set())
            for body_type, body in zip(tokens[2::2], map(_atoi, tokens[3::2]), strict=True):
                if body_type == "node":
                    assert self.router_of.setdefault(body, head) == head, \
                        f"node {body} connects to two routers"
                    self.nodes[head].add(body)
                else:
                    assert body_type == "router", f"unknown body type {body_type!r}"
                    self.nodes.setdefault(body, set())
                    self.routers.setdefault(body, set())
                    self.routers[head].add(body)
                    self.routers[body].add(head)
        assert sorted(self.router_of) == list(range(len(self.router_of))), \
            "booksim trafficmanager assumes sequential node numbering starting at 0"
        self.size = len(self.routers)
        assert self.size * nodes_per_router == len(self.router_of)  # _size * _p == _nodes
        # _BuildNet: output ports, nodes first, then routers, each ascending.
        self.ports = {r: sorted(self.nodes[r]) + sorted(self.routers[r]) for r in self.routers}
        self.local = {r: len(self.nodes[r]) for r in self.routers}
        self.table: list[dict[int, int]] = []

    def load_routing_table(self, text: str) -> None:
        self.table = [{} for _ in range(self.size)]
        for line in text.split("\n"):  # getline while the stream is good
            items = _split(line)
            if len(items) < 3:
                raise IndexError(f"BookSim indexes items[0..2] of the line {line!r}: it crashes")
            router, node, port = map(_atoi, items[:3])
            assert router < self.size, f"router {router} out of range"
            self.table[router][node] = port

    def distances(self, src: int) -> list[int]:
        """Router hops from ``src`` (BookSim's own routing: shortest paths, unit weights)."""
        dist = [-1] * self.size
        dist[src] = 0
        todo = deque([src])
        while todo:
            u = todo.popleft()
            for v in self.routers[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    todo.append(v)
        return dist

    def hops(self, src_router: int, dest: int) -> int:
        """Router-to-router hops of ``min_anynet`` from ``src_router`` to node ``dest``."""
        router, hops = src_router, 0
        while True:
            port = self.table[router][dest]
            assert 0 <= port < len(self.ports[router]), f"port {port} out of range"
            if port < self.local[router]:
                assert self.ports[router][port] == dest, "ejected at the wrong node"
                return hops
            router = self.ports[router][port]
            hops += 1
            assert hops <= self.size, "routing loop"


TOPOLOGIES = [polarfly(3), polarfly(4), hyperx((3, 3)), torus((4, 4)), torus((3, 2), mesh=True),
              piuma((2,), 2, 2)]
IDS = ["pf3", "pf4", "hx3x3", "t4x4", "mesh3x2", "piuma2"]


@pytest.mark.parametrize("topo", TOPOLOGIES, ids=IDS)
@pytest.mark.parametrize("p", [1, 2])
def test_anynet_loads_in_booksim_with_innet_distances(topo, p):
    sim = BookSim(export.anynet(topo, p), p)
    assert sim.size == topo.nodes
    assert {u: sorted(vs) for u, vs in sim.routers.items()} == {
        u: sorted(topo.neighbors(u)) for u in range(topo.nodes)}
    assert sim.router_of == {n: n // p for n in range(topo.nodes * p)}
    for u in range(topo.nodes):
        assert sim.distances(u) == hop_distances(topo, u, np.arange(topo.nodes)).tolist()


@pytest.mark.parametrize("topo", TOPOLOGIES, ids=IDS)
@pytest.mark.parametrize("p", [1, 2])
def test_routing_table_loads_in_booksim_with_innet_hops(topo, p):
    r = routing(topo)
    text = booksim_routing_table(r, p)
    assert not text.endswith("\n")
    sim = BookSim(export.anynet(topo, p), p)
    sim.load_routing_table(text)
    n = topo.nodes
    assert [sorted(row) for row in sim.table] == [list(range(n * p))] * n
    src, dest = np.divmod(np.arange(n * n * p), n * p)
    innet_hops = paths(r, src, dest // p).hops.tolist()
    assert [sim.hops(u, d) for u, d in zip(src.tolist(), dest.tolist(), strict=True)] \
        == innet_hops
    if topo.kind != "piuma":  # minimal routings: the hops are the distances
        for u in range(n):
            assert [sim.hops(u, d) for d in range(0, n * p, p)] == sim.distances(u)


def test_a_final_newline_crashes_booksims_loader():
    sim = BookSim(export.anynet(torus(3), 1), 1)
    text = booksim_routing_table(routing(torus(3)))
    sim.load_routing_table(text)
    with pytest.raises(IndexError, match=r"items\[0\.\.2\] of the line ''"):
        sim.load_routing_table(text + "\n")


@pytest.mark.parametrize("topo", [polarfly(3), hyperx((3, 3)), torus((4, 4))],
                         ids=["pf3", "hx3x3", "t4x4"])
@pytest.mark.parametrize("p", [1, 2])
def test_lines_follow_booksim_numbering(topo, p):
    r = routing(topo)
    table = r.table()
    lines = booksim_routing_table(r, p).split("\n")
    n = topo.nodes
    assert len(lines) == n * n * p
    expected_order = [(router, dest) for router in range(n) for dest in range(n * p)]
    seen = []
    for line in lines:
        router, dest, port = map(int, line.split(" "))
        seen.append((router, dest))
        # BookSim anynet: node ports first (ascending node id), then router ports in
        # ascending neighbour id; node `dest` sits on router dest // p.
        if dest // p == router:
            assert port == dest % p
        else:
            neighbour = sorted(topo.neighbors(router))[port - p]
            assert neighbour == topo.ports[router][int(table[router, dest // p])][0]
    assert seen == expected_order


def test_chunks_join_into_the_file():
    r = routing(torus((4, 4)))
    assert "".join(iter_booksim_routing(r, 2, rows=3)) == booksim_routing_table(r, 2)


def test_polarfly_ports_shift_by_the_node_ports_and_grids_permute():
    pf = polarfly(4)
    assert ((booksim_ports(pf, 3) - 3)[pf.ports.peer >= 0] == (pf.ports.peer >= 0).nonzero()[1]
            ).all()
    hx = hyperx((3, 3))
    # Node 4 = (1, 1): topology ports reach 1, 7 (dimension 0) then 3, 5; BookSim sorts 1,3,5,7.
    assert hx.neighbors(4) == (1, 7, 3, 5)
    assert booksim_ports(hx)[4].tolist() == [1, 4, 2, 3]


def test_write_gives_the_text_with_the_usual_mode(tmp_path):
    r = routing(torus((3, 3)))
    out = write_booksim_routing(r, tmp_path / "sub" / "anynet.route", 2)
    assert out.read_text() == booksim_routing_table(r, 2)
    assert [p.name for p in out.parent.iterdir()] == ["anynet.route"]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_errors(tmp_path):
    r = routing(torus((3, 3)))
    with pytest.raises(ValueError, match=r"^Nodes per router must be at least 1, not 0$"):
        booksim_routing_table(r, 0)
    with pytest.raises(TypeError, match=r"^Nodes per router must be an integer, not 1.5$"):
        booksim_routing_table(r, 1.5)
    with pytest.raises(ValueError, match=r"^Nodes per router must be at most 1024, not 10{9}$"):
        booksim_routing_table(r, 10**9)  # a MemoryError after seconds
    with pytest.raises(ValueError, match=r"^Rows must be at least 1, not 0$"):
        next(iter_booksim_routing(r, rows=0))
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not NoneType$"):
        booksim_ports(None)
    with pytest.raises(TypeError, match=r"^Routing must be a Routing, not str$"):
        booksim_routing_table("table")
    cut = routing(torus((3, 3)), failed_switches=[4])
    with pytest.raises(ValueError, match=r"^Node 4 cannot be reached from router 0; BookSim "
                                         r"needs a route for every destination$"):
        booksim_routing_table(cut)
    with pytest.raises(ValueError, match=r"^Node 4 cannot be reached"):
        write_booksim_routing(cut, tmp_path / "cut.route")
    assert list(tmp_path.iterdir()) == []
