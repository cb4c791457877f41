"""PolarFly ER_q against a brute-force galois model and the paper's formulas (SC'22, Section IV)."""

import math
from functools import cache

import galois
import networkx as nx
import numpy as np
import pytest

from innet.gen.topology import MAX_Q, polarfly
from innet.gen.topology.field import conway_polynomial, factor_prime_power, field_tables

QS = [2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 25, 27, 32]
ODD = [q for q in QS if q % 2]


@cache
def model(q):
    """ER_q straight from the definition: all left-normalised vectors, dot products in galois."""
    field = galois.GF(q)
    vectors = [v for v in np.ndindex(q, q, q) if any(v) and v[np.flatnonzero(v)[0]] == 1]
    vectors.sort()
    gv = field(np.array(vectors))
    dots = gv[:, None, 0] * gv[None, :, 0] + gv[:, None, 1] * gv[None, :, 1] \
        + gv[:, None, 2] * gv[None, :, 2]
    adjacency = (np.asarray(dots) == 0).astype(np.float64)
    quadric = np.diag(adjacency).astype(bool)
    np.fill_diagonal(adjacency, 0)
    return vectors, adjacency, quadric


@cache
def built(q):
    return polarfly(q)


@pytest.mark.parametrize("q", QS)
def test_matches_the_definition(q):
    vectors, adjacency, quadric = model(q)
    topo = built(q)
    assert list(topo.labels) == [tuple(int(x) for x in v) for v in vectors]
    assert (nx.to_numpy_array(topo.to_networkx(), nodelist=range(topo.nodes), dtype=int)
            == adjacency).all()
    assert [c == "quadric" for c in topo.classes] == quadric.tolist()


@pytest.mark.parametrize("q", QS)
def test_counts_degrees_and_port_order(q):
    topo = built(q)
    n = q * q + q + 1
    assert topo.nodes == n
    assert topo.num_links == q * (q + 1) ** 2 // 2
    assert topo.radix == q + 1
    degrees = topo.degrees
    quadric = np.array([c == "quadric" for c in topo.classes])
    assert quadric.sum() == q + 1
    assert set(degrees[quadric].tolist()) == {q}
    assert set(degrees[~quadric].tolist()) == {q + 1}
    for u in range(n):
        assert list(topo.neighbors(u)) == sorted(topo.neighbors(u))  # ascending neighbour id
        for p, (v, p2) in enumerate(topo.ports[u]):
            assert topo.ports[v][p2] == (u, p)


@pytest.mark.parametrize("q", QS)
def test_diameter_two_and_unique_two_paths(q):
    _, adjacency, quadric = model(q)
    looped = adjacency + np.diag(quadric.astype(np.float64))
    two = looped @ looped
    off = ~np.eye(len(adjacency), dtype=bool)
    assert (two[off] == 1).all()  # Property 1.4: exactly one 2-path, self-loops counted
    reach = adjacency + adjacency @ adjacency
    assert (reach[off] > 0).all()  # diameter <= 2
    assert (adjacency[off] == 0).any()  # and not 1
    if q <= 13:
        assert nx.diameter(built(q).to_networkx()) == 2


@pytest.mark.parametrize("q", QS)
def test_triangle_count(q):
    triangles = sum(nx.triangles(built(q).to_networkx()).values()) // 3
    assert triangles == (q + 1) * q * (q - 1) // 6 == math.comb(q + 1, 3)  # Proposition V.5


@pytest.mark.parametrize("q", QS)
def test_triangles_avoid_quadrics(q):
    # Property 1.5: quadric edges lie on no triangle; any other edge on exactly one.
    topo = built(q)
    graph = topo.to_networkx()
    for u, v in graph.edges():
        common = len(set(graph[u]) & set(graph[v]))
        quad = "quadric" in (topo.classes[u], topo.classes[v])
        assert common == (0 if quad else 1)


@pytest.mark.parametrize("q", ODD)
def test_class_sizes_and_property_one(q):
    topo = built(q)
    classes = topo.classes
    assert classes.count("v1") == q * (q + 1) // 2
    assert classes.count("v2") == q * (q - 1) // 2
    for u in range(topo.nodes):
        count = {"quadric": 0, "v1": 0, "v2": 0}
        for v in topo.neighbors(u):
            count[classes[v]] += 1
        expected = {
            "quadric": {"quadric": 0, "v1": q, "v2": 0},  # Property 1.1
            "v1": {"quadric": 2, "v1": (q - 1) // 2, "v2": (q - 1) // 2},  # Property 1.2
            "v2": {"quadric": 0, "v1": (q + 1) // 2, "v2": (q + 1) // 2},  # Property 1.3
        }[classes[u]]
        assert count == expected


@pytest.mark.parametrize("q", [q for q in QS if q % 2 == 0])
def test_even_q_classes(q):
    # Every line meets the line of absolute points, so V2 is empty; the nucleus (1, 1, 1) is
    # adjacent to all q + 1 quadrics, every other non-quadric to exactly one.
    topo = built(q)
    assert topo.classes.count("v2") == 0
    nucleus = topo.node_of((1, 1, 1))
    for u in range(topo.nodes):
        if topo.classes[u] != "quadric":
            quadrics = sum(topo.classes[v] == "quadric" for v in topo.neighbors(u))
            assert quadrics == (q + 1 if u == nucleus else 1)


def test_large_q_sizes():
    topo = polarfly(61)
    assert topo.nodes == 61 * 61 + 61 + 1
    assert topo.radix == 62
    peer, port = topo.ports.peer, topo.ports.peer_port
    us, ps = np.nonzero(peer >= 0)
    assert (peer[peer[us, ps], port[us, ps]] == us).all()
    assert (port[peer[us, ps], port[us, ps]] == ps).all()


@pytest.mark.parametrize("q", [2, 3, 4, 8, 9, 27, 49, 64, 121, 125, 128, 243, 256, 343, 512])
def test_field_tables_agree_with_galois(q):
    tables = field_tables(q)
    field = galois.GF(q)
    x = field.elements
    assert (tables.add.reshape(q, q) == np.asarray(x[:, None] + x[None, :])).all()
    assert (tables.mul.reshape(q, q) == np.asarray(x[:, None] * x[None, :])).all()
    assert (tables.neg == np.asarray(-x)).all()
    assert (tables.inv[1:] == np.asarray(x[1:] ** -1)).all()
    assert (tables.p, tables.m) == (field.characteristic, field.degree)
    assert tables.poly == ("" if field.degree == 1 else str(field.irreducible_poly))


def test_conway_polynomials_are_those_of_luebecks_tables():
    """Every field a PolarFly can have, and the prime fields under them: the search finds the
    polynomial of Lübeck's tables, read from the database galois ships (its public
    ``conway_poly`` builds a field class per prime, half a second each)."""
    from galois._databases import ConwayPolyDatabase

    database = ConwayPolyDatabase()
    fields = [factor_prime_power(q) for q in range(2, MAX_Q + 1) if factor_prime_power(q)]
    for p, m in fields:
        degrees, coefficients = database.fetch(p, m)
        expected = [0] * (m + 1)
        for degree, coefficient in zip(degrees, coefficients, strict=True):
            expected[degree] = coefficient
        assert conway_polynomial(p, m) == tuple(expected), (p, m)


@pytest.mark.parametrize(("p", "m"), [(4, 1), (6, 2), (1, 1), (3, 0)])
def test_conway_polynomial_needs_a_prime_and_a_degree(p, m):
    with pytest.raises(ValueError, match=rf"^The Conway polynomial needs a prime and a degree "
                                         rf"of at least 1, not \({p}, {m}\)$"):
        conway_polynomial(p, m)


def test_prime_power_factoring():
    found = [q for q in range(1, 130) if factor_prime_power(q)]
    expected = [q for q in range(2, 130) if galois.is_prime_power(q)]
    assert found == expected
    assert factor_prime_power(243) == (3, 5)


@pytest.mark.parametrize(("q", "error", "message"), [
    (6, ValueError, r"^q must be a prime power, not 6$"),
    (100, ValueError, r"^q must be a prime power, not 100$"),
    (1, ValueError, rf"^q must be between 2 and {MAX_Q}, not 1$"),
    (MAX_Q + 1, ValueError, rf"^q must be between 2 and {MAX_Q}, not {MAX_Q + 1}$"),
    ("7", TypeError, r"^q must be an integer, not '7'$"),
    (7.0, TypeError, r"^q must be an integer, not 7.0$"),
    (True, TypeError, r"^q must be an integer, not True$"),
])
def test_bad_q(q, error, message):
    with pytest.raises(error, match=message):
        polarfly(q)


def test_field_tables_reject_non_prime_powers():
    with pytest.raises(ValueError, match=r"^q must be a prime power, not 12$"):
        field_tables(12)
