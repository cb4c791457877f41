"""HyperX, torus and mesh against networkx's Cartesian products and the closed formulas."""

import itertools
import math

import networkx as nx
import pytest

from innet.gen.topology import hyperx, parse_shape, torus

SHAPES = [(2,), (3,), (7,), (2, 2), (2, 3), (3, 4), (4, 4), (1, 5), (5, 1, 3), (2, 3, 4),
          (3, 3, 3), (2, 2, 2, 2)]


def product(factors):
    """Cartesian product of 1-D graphs on row-major integer ids (an independent model)."""
    graph = factors[0]
    for factor in factors[1:]:
        graph = nx.cartesian_product(graph, factor)

    def flatten(node):
        return (*flatten(node[0]), node[1]) if isinstance(node, tuple) else (node,)

    return nx.relabel_nodes(graph, {node: flatten(node) for node in graph})


def row_major(shape, coords):
    return sum(c * math.prod(shape[d + 1:]) for d, c in enumerate(coords))


def check_port_map(topo):
    for u in range(topo.nodes):
        assert len(topo.ports[u]) == topo.degree(u)
        for p, (v, p2) in enumerate(topo.ports[u]):
            assert topo.ports[v][p2] == (u, p)


def edges_by_label(topo):
    return {frozenset((topo.labels[u], topo.labels[v])) for u, _, v, _ in topo.links()}


@pytest.mark.parametrize("shape", SHAPES)
def test_hyperx_matches_a_product_of_complete_graphs(shape):
    topo = hyperx(shape)
    model = product([nx.complete_graph(s) for s in shape])
    assert topo.nodes == math.prod(shape)
    assert edges_by_label(topo) == {frozenset(e) for e in model.edges()}
    assert set(topo.degrees.tolist()) == {sum(s - 1 for s in shape)}
    assert nx.diameter(topo.to_networkx()) == sum(s > 1 for s in shape)
    for u, label in enumerate(topo.labels):
        assert u == row_major(shape, label)
    check_port_map(topo)


@pytest.mark.parametrize("shape", SHAPES)
def test_hyperx_port_order(shape):
    topo = hyperx(shape)
    for u, x in enumerate(topo.labels):
        expected = [tuple(c if e == d else x[e] for e in range(len(shape)))
                    for d, s in enumerate(shape) for c in range(s) if c != x[d]]
        assert [topo.labels[v] for v in topo.neighbors(u)] == expected


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mesh", [False, True])
def test_torus_matches_a_product_of_rings_or_paths(shape, mesh):
    topo = torus(shape, mesh=mesh)
    one = nx.path_graph if mesh else nx.cycle_graph  # cycle_graph(2) is one edge, as ours
    model = product([one(s) for s in shape])
    model.remove_edges_from(list(nx.selfloop_edges(model)))  # cycle_graph(1) is a self-loop
    assert topo.nodes == math.prod(shape)
    assert edges_by_label(topo) == {frozenset(e) for e in model.edges()}
    if topo.num_links:
        diameter = sum(s - 1 for s in shape) if mesh else sum(s // 2 for s in shape)
        assert nx.diameter(topo.to_networkx()) == diameter
    if not mesh:
        assert set(topo.degrees.tolist()) == {sum(min(s - 1, 2) for s in shape)}
    for u, label in enumerate(topo.labels):
        assert u == row_major(shape, label)
    check_port_map(topo)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mesh", [False, True])
def test_torus_port_order_is_minus_then_plus_per_dimension(shape, mesh):
    topo = torus(shape, mesh=mesh)
    for u, x in enumerate(topo.labels):
        expected = []
        for d, s in enumerate(shape):
            for step in (-1, 1):
                c = x[d] + step
                if mesh and not 0 <= c < s:
                    continue
                y = tuple(c % s if e == d else x[e] for e in range(len(shape)))
                if y != x and y not in expected:
                    expected.append(y)
        assert [topo.labels[v] for v in topo.neighbors(u)] == expected


def test_ring_and_size_two_dimensions():
    ring = torus(6)
    assert ring.neighbors(0) == (5, 1)
    assert ring.ports[0] == ((5, 1), (1, 0))
    pair = torus(2)
    assert pair.num_links == 1
    assert pair.ports[0] == ((1, 0),)
    assert pair.ports[1] == ((0, 0),)
    assert torus((2, 2)).radix == 2  # a 4-cycle, not a multigraph
    assert torus((4, 1)).params["shape"] == (4, 1)
    assert torus((4, 1)).radix == 2


def test_params_and_kind():
    assert torus((8, 8)).kind == "torus"
    assert dict(torus((8, 8), mesh=True).params) == {"shape": (8, 8), "mesh": True}
    assert dict(hyperx([4, 4, 4]).params) == {"shape": (4, 4, 4)}
    assert hyperx(5) == hyperx([5])


@pytest.mark.parametrize(("text", "shape"), [("4x4x4", (4, 4, 4)), ("8", (8,)),
                                             (" 2X3 ", (2, 3)), ("4,4", (4, 4))])
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize(("text", "message"), [
    ("4x0", r"^Dimension 1 of shape 4x0 must be at least 1, not 0$"),
    ("abc", r"^Shape must be sizes joined by 'x' such as 4x4x4, not 'abc'$"),
    ("4x", r"^Shape must be sizes joined by 'x' such as 4x4x4, not '4x'$"),
    ("-4", r"^Shape must be sizes joined by 'x' such as 4x4x4, not '-4'$"),
    ("1x1", r"^Shape 1x1 must have at least 2 nodes, not 1$"),
    ("4096x4096x4096", r"^Shape 4096x4096x4096 is too large: 68719476736 nodes$"),
    ("4x" + "9" * 5000, rf"^Each size of shape must have at most 18 digits, not {'9' * 40}$"),
])
def test_parse_shape_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_shape(text)


def test_leading_zeros_do_not_count_as_digits():
    assert parse_shape("4x" + "0" * 5000 + "4") == (4, 4)


@pytest.mark.parametrize("build", [hyperx, torus])
def test_shape_errors(build):
    with pytest.raises(TypeError, match=r"^Shape must be a sequence of integers, not '44'$"):
        build("44")
    with pytest.raises(TypeError, match=r"^Shape must be a sequence of integers, not "
                                        r"\(4, 2.0\)$"):
        build((4, 2.0))
    with pytest.raises(TypeError, match=r"^Shape must be a sequence of integers, not True$"):
        build(True)
    with pytest.raises(ValueError, match=r"^Shape must have at least one dimension$"):
        build(())
    with pytest.raises(ValueError, match=r"^Dimension 0 of shape -3 must be at least 1, "
                                         r"not -3$"):
        build(-3)


def test_mesh_flag_must_be_bool():
    with pytest.raises(TypeError, match=r"^Mesh must be a bool, not 'yes'$"):
        torus(4, mesh="yes")


def test_product_model_sanity():
    # The helper itself: a 2x3 torus has 2*3 + 3*2... check against explicit enumeration.
    model = product([nx.cycle_graph(2), nx.cycle_graph(3)])
    explicit = {frozenset((a, b)) for a, b in itertools.combinations(
        itertools.product(range(2), range(3)), 2)
        if (a[0] == b[0] and (a[1] - b[1]) % 3 in (1, 2)) or (a[1] == b[1] and a[0] != b[0])}
    assert {frozenset(e) for e in model.edges()} == explicit
