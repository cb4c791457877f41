"""BookSim2 routing-table export, checked line by line against BookSim's port numbering."""

import pytest

from innet.gen.routing import (
    booksim_ports,
    booksim_routing_table,
    routing,
    write_booksim_routing,
)
from innet.gen.topology import hyperx, polarfly, torus


@pytest.mark.parametrize("topo", [polarfly(3), hyperx((3, 3)), torus((4, 4))],
                         ids=["pf3", "hx3x3", "t4x4"])
@pytest.mark.parametrize("p", [1, 2])
def test_lines_follow_booksim_numbering(topo, p):
    r = routing(topo)
    table = r.table()
    text = booksim_routing_table(r, p)
    lines = text.splitlines()
    n = topo.nodes
    assert len(lines) == n * n * p
    assert text.endswith("\n")
    expected_order = [(router, dest) for router in range(n) for dest in range(n * p)]
    seen = []
    for line in lines:
        router, dest, port = map(int, line.split())
        seen.append((router, dest))
        # BookSim anynet: node ports first (ascending node id), then router ports in
        # ascending neighbour id; node `dest` sits on router dest // p.
        if dest // p == router:
            assert port == dest % p
        else:
            neighbour = sorted(topo.neighbors(router))[port - p]
            assert neighbour == topo.ports[router][int(table[router, dest // p])][0]
    assert seen == expected_order


def test_polarfly_ports_shift_by_the_node_ports_and_grids_permute():
    pf = polarfly(4)
    assert ((booksim_ports(pf, 3) - 3)[pf.ports.peer >= 0] == (pf.ports.peer >= 0).nonzero()[1]
            ).all()
    hx = hyperx((3, 3))
    # Node 4 = (1, 1): topology ports reach 1, 7 (dimension 0) then 3, 5; BookSim sorts 1,3,5,7.
    assert hx.neighbors(4) == (1, 7, 3, 5)
    assert booksim_ports(hx)[4].tolist() == [1, 4, 2, 3]


def test_write_streams_the_same_text(tmp_path):
    r = routing(torus((3, 3)))
    out = write_booksim_routing(r, tmp_path / "sub" / "anynet.route", 2)
    assert out.read_text() == booksim_routing_table(r, 2)
    assert [p.name for p in out.parent.iterdir()] == ["anynet.route"]


def test_errors():
    r = routing(torus((3, 3)))
    with pytest.raises(ValueError, match=r"^Nodes per router must be at least 1, not 0$"):
        booksim_routing_table(r, 0)
    with pytest.raises(TypeError, match=r"^Nodes per router must be an integer, not 1.5$"):
        booksim_routing_table(r, 1.5)
    with pytest.raises(TypeError, match=r"^Routing must be a Routing, not str$"):
        booksim_routing_table("table")
    cut = routing(torus((3, 3)), failed_switches=[4])
    with pytest.raises(ValueError, match=r"^Node 4 cannot be reached from router 0; BookSim "
                                         r"needs a route for every destination$"):
        booksim_routing_table(cut)
