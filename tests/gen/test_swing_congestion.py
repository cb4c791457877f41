"""Congestion deficiency on real networks, routed with the project's routing tables.

The reference is the paper's own estimate (Section 4.1): at step ``s`` every collective sends
``1/2^(s+1)`` of its share and some link carries ``delta(sigma(s))`` such messages, so on a
square D-dimensional torus ``Ξ = sum_s delta(floor(s/D)) / 2^(s+1) / sum_s 1/2^(s+1)``, which
tends to 1.19, 1.03 and 1.008 for D = 2, 3, 4 (Table 2).
"""

import functools
import math

import pytest

from innet.gen.routing import routing
from innet.gen.swing import build_schedule, delta
from innet.gen.swing.cost import congestion
from innet.gen.topology import hyperx, polarfly, torus


def model(algorithm, topo, shape, **options):
    schedule = build_schedule(algorithm, shape, **options)
    return congestion(schedule, topo.ports.peer, routing(topo).next_port)


@functools.cache
def swing_xi(shape):
    return model("swing-b", torus(shape), shape).congestion_deficiency


def paper_xi(side, dims):
    steps = dims * int(math.log2(side))
    top = sum(delta(s // dims) / 2 ** (s + 1) for s in range(steps))
    return top / sum(1 / 2 ** (s + 1) for s in range(steps))


@pytest.mark.parametrize(("side", "dims"), [(4, 2), (8, 2), (16, 2), (32, 2), (4, 3), (8, 3),
                                            (4, 4)])
def test_swing_matches_the_paper_estimate(side, dims):
    shape = (side,) * dims
    measured = model("swing-b", torus(shape), shape).congestion_deficiency
    assert measured == pytest.approx(paper_xi(side, dims), rel=1e-9)


@pytest.mark.parametrize(("shape", "table"), [((64, 64), 1.19), ((16, 16, 16), 1.03),
                                              ((8, 8, 8, 8), 1.008)])
def test_large_square_tori_approach_table_2(shape, table):
    assert swing_xi(shape) == pytest.approx(table, abs=0.006)


def test_more_dimensions_less_congestion():
    """Same 4096 nodes: 1-, 2-, 3-, 4-dimensional; and a 2-D torus growing."""
    xi = [swing_xi(shape) for shape in [(4096,), (64, 64), (16, 16, 16), (8, 8, 8, 8)]]
    assert xi == sorted(xi, reverse=True)
    growing = [swing_xi((s, s)) for s in (4, 8, 16, 32, 64)]
    assert growing == sorted(growing)


def test_a_side_of_two_has_one_link():
    """A torus side of 2 is a single link, so plain and mirrored collectives share it."""
    assert swing_xi((2, 2, 2, 2, 2, 2)) == pytest.approx(2.0)


@pytest.mark.parametrize("shape", [(8, 8), (4, 4, 4), (16,)])
def test_hyperx_has_no_congestion(shape):
    swing = model("swing-b", hyperx(shape), shape)
    assert swing.congestion_deficiency == 1.0
    assert swing.max_hops == 1


def test_swing_beats_recursive_doubling_on_a_torus():
    shape = (16, 16)
    topo = torus(shape)
    swing = model("swing-b", topo, shape)
    mirrored = model("recdoub-b", topo, shape, multiport=True)
    assert swing.congestion_deficiency < mirrored.congestion_deficiency
    assert swing.max_hops < mirrored.max_hops


@pytest.mark.parametrize("shape", [(8, 8), (4, 6), (3, 5)])
def test_neighbour_algorithms_have_no_congestion(shape):
    topo = torus(shape)
    for algorithm in ("ring", "bucket"):
        result = model(algorithm, topo, shape)
        assert result.congestion_deficiency == pytest.approx(1.0)
        assert result.max_hops == 1


def test_rectangular_torus_is_worse_than_square():
    """Section 4.2: same node count, the flatter the torus the higher the congestion."""
    xi = [model("swing-b", torus(shape), shape).congestion_deficiency
          for shape in [(16, 16), (32, 8), (64, 4)]]
    assert xi == sorted(xi)


def test_polarfly_runs_the_odd_ring():
    topo = polarfly(7)  # 57 nodes
    result = model("swing-b", topo, (topo.nodes,))
    assert result.max_hops <= 2  # diameter 2
    assert result.congestion_deficiency >= 1.0
