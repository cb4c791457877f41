"""innet.sim.golden: one switch's reduction order and a whole embedding's, against numpy."""

import dataclasses

import numpy as np
import pytest

from innet.gen.embed import embed
from innet.gen.ops import DType, Op, combine, to_bits
from innet.gen.topology import LOCAL, polarfly, torus
from innet.hw.ceng import engine_latency, tree_shape
from innet.hw.switch import HOP_CYCLES
from innet.sim.golden import (
    embedding_partials,
    embedding_results,
    idle_latency,
    port_order,
    reduce_ports,
    reduce_switch,
)


def f32(values):
    return to_bits(np.asarray(values, dtype=np.float32), DType.FP32)


def test_port_order_puts_local_last():
    assert port_order({3, LOCAL, 0, 7}) == [0, 3, 7, LOCAL]
    assert port_order([]) == []
    with pytest.raises(ValueError, match=r"^A port must be a network port number or LOCAL "
                                         r"\(-1\), not -2$"):
        port_order({1, -2})


def test_nor_is_one_gate_over_every_operand():
    """NOR of five operands is ~(x0 | x1 | x2 | x3 | x4) in any order (not a tree of two-input
    nors, which would depend on the order); of two, the two-operand nor."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 1 << 32, (5, 64), dtype=np.uint64).astype(np.uint32)

    def nor(a, b):
        return ~(a | b)

    got = reduce_switch("nor", "uint32", list(x))
    np.testing.assert_array_equal(got, ~(x[0] | x[1] | x[2] | x[3] | x[4]))
    np.testing.assert_array_equal(reduce_switch("nor", "uint32", list(x[::-1])), got)
    np.testing.assert_array_equal(reduce_switch("nor", "int32", [x[0], x[1]]), nor(x[0], x[1]))
    assert not np.array_equal(got, nor(nor(nor(x[0], x[1]), nor(x[2], x[3])), x[4]))


def test_mul_follows_the_tree_shape():
    """fp32 mul rounds every product: five operands are ((x0 x1) (x2 x3)) x4 exactly, in
    float32, and a left fold differs somewhere."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 2.0, (5, 400)).astype(np.float32)
    want = ((x[0] * x[1]) * (x[2] * x[3])) * x[4]
    got = reduce_switch("mul", "fp32", list(f32(x)))
    np.testing.assert_array_equal(got, f32(want))
    assert tree_shape(5) == (((0, 1), (2, 3)), 4)
    assert not np.array_equal(got, f32((((x[0] * x[1]) * x[2]) * x[3]) * x[4]))


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6, 7, 8, 9, 17])
def test_fp32_add_is_one_exactly_rounded_sum_in_any_order(count):
    """Magnitudes in 2**-5 .. 2**10, random signs: no operand lies more than 16 places below
    the largest, so the sum is exactly rounded: float64 holds it exactly (at most 24 + 15 + 5
    bits) and rounds it once to float32. A permutation of the ports changes nothing."""
    rng = np.random.default_rng(count)
    sign = np.where(rng.integers(0, 2, (count, 400)), -1.0, 1.0)
    x = sign * rng.uniform(1.0, 2.0, (count, 400)) * 2.0 ** rng.integers(-5, 10, (count, 400))
    x = x.astype(np.float32)
    want = x.astype(np.float64).sum(axis=0).astype(np.float32)
    got = reduce_switch(Op.ADD, DType.FP32, list(f32(x)))
    np.testing.assert_array_equal(got, f32(want))
    shuffled = reduce_switch(Op.ADD, DType.FP32, list(f32(x[rng.permutation(count)])))
    np.testing.assert_array_equal(shuffled, got)
    # The pairwise tree in float32 rounds every level and differs somewhere.
    def evaluate(node):
        if isinstance(node, int):
            return x[node]
        return (evaluate(node[0]) + evaluate(node[1])).astype(np.float32)

    if count > 2:
        assert not np.array_equal(f32(evaluate(tree_shape(count))), got)


def test_one_operand_is_forwarded_unchanged():
    signalling_nan = np.uint32(0x7F80_0001)
    assert reduce_switch("add", "fp32", [signalling_nan]) == signalling_nan
    two = reduce_switch("add", "fp32", [signalling_nan, np.uint32(0)])
    assert two == combine("add", "fp32", signalling_nan, 0) == 0x7FC0_0000


def test_reduce_ports_orders_by_port():
    """Network ports ascending, LOCAL last: fp32 mul, which the order changes, of
    {LOCAL: a, 2: b, 0: c} is (c * b) * a."""
    rng = np.random.default_rng(3)
    a, b, c = rng.uniform(1.0, 2.0, (3, 256)).astype(np.float32)
    got = reduce_ports("mul", "fp32", {LOCAL: f32(a), 2: f32(b), 0: f32(c)})
    np.testing.assert_array_equal(got, f32((c * b) * a))
    assert not np.array_equal(got, f32((a * b) * c))


def test_switch_errors():
    with pytest.raises(ValueError, match=r"^A reduction needs at least one operand$"):
        reduce_switch("add", "int32", [])
    with pytest.raises(ValueError, match=r"^Operation and is not defined on fp32$"):
        reduce_switch("and", "fp32", [1, 2])


def test_ring_allreduce_by_hand():
    """A ring of 4, root 1: node 0 reduces node 3 and itself, the root reduces node 0's
    partial, node 2 and itself; written out by hand, each switch's sum exact in float64 (the
    operands are within a few binades of each other) and rounded once to float32."""
    topo = torus((4,))
    emb = embed(topo, op="add", dtype="fp32")
    assert emb.root == 1
    rng = np.random.default_rng(7)
    x = {u: rng.standard_normal(50).astype(np.float32) * 1e3 for u in range(4)}
    partial0 = (x[3] + x[0]).astype(np.float32)  # node 0: port 0 (node 3), then LOCAL
    result = (partial0.astype(np.float64) + x[2] + x[1]).astype(np.float32)
    inputs = {u: f32(v) for u, v in x.items()}
    partials = embedding_partials(emb, inputs)
    np.testing.assert_array_equal(partials[0], f32(partial0))
    np.testing.assert_array_equal(partials[2], inputs[2])
    got = embedding_results(emb, inputs)
    assert sorted(got) == [0, 1, 2, 3]
    for u in range(4):
        np.testing.assert_array_equal(got[u], f32(result))


@pytest.mark.parametrize(("op", "reference"), [("add", np.sum), ("max", np.max),
                                               ("min", np.min)])
def test_polarfly_integer_allreduce_matches_numpy(op, reference):
    topo = polarfly(3)
    rng = np.random.default_rng(3)
    participants = sorted(rng.choice(topo.nodes, 9, replace=False).tolist())
    emb = embed(topo, participants, op=op, dtype="int32")
    x = {u: rng.integers(-(1 << 31), 1 << 31, 40).astype(np.int32) for u in participants}
    with np.errstate(over="ignore"):
        want = reference(np.stack(list(x.values())), axis=0).astype(np.int32)
    got = embedding_results(emb, {u: to_bits(v, DType.INT32) for u, v in x.items()})
    assert sorted(got) == participants
    for vector in got.values():
        np.testing.assert_array_equal(vector, to_bits(want, DType.INT32))


def test_reduce_and_broadcast_kinds():
    topo = polarfly(2)
    x = {u: f32([u + 0.25, -u]) for u in range(topo.nodes)}
    reduce = embed(topo, kind="reduce", op="add", dtype="fp32")
    got = embedding_results(reduce, x)
    assert list(got) == [reduce.root]
    # Quarters and small integers: every partial sum is exact in fp32, whatever the tree.
    want = [sum(u + 0.25 for u in range(topo.nodes)), -sum(range(topo.nodes))]
    np.testing.assert_array_equal(got[reduce.root], f32(want))
    broadcast = embed(topo, kind="broadcast", op="add", dtype="fp32")
    got = embedding_results(broadcast, {broadcast.root: x[broadcast.root]})
    assert sorted(got) == list(range(topo.nodes))
    for vector in got.values():
        np.testing.assert_array_equal(vector, x[broadcast.root])


def test_embedding_errors():
    topo = torus((4,))
    emb = embed(topo, op="add", dtype="int32")
    x = {u: np.arange(3, dtype=np.uint32) for u in range(4)}
    with pytest.raises(ValueError, match=r"^Node 3 contributes but has no input vector$"):
        embedding_results(emb, {u: v for u, v in x.items() if u != 3})
    with pytest.raises(ValueError, match=r"^Input vectors differ in shape: \[\(2,\), \(3,\)\]$"):
        embedding_results(emb, {**x, 2: np.arange(2, dtype=np.uint32)})
    broken = dataclasses.replace(emb, links=tuple(link for link in emb.links if link[0] != 3))
    with pytest.raises(ValueError, match=r"^Port 0 of switch 0 is in req_in, but no link of "
                                         r"the embedding ends there$"):
        embedding_results(broken, x)
    root = emb.switch(emb.root)
    no_root = dataclasses.replace(emb, switches=tuple(
        dataclasses.replace(s, req_in=frozenset()) if s.node == emb.root else s
        for s in emb.switches))
    with pytest.raises(ValueError, match=rf"^The root {emb.root} has no request inputs$"):
        embedding_results(no_root, x)
    assert root.req_in
    for call in (lambda: embedding_partials(emb.to_dict(), x),
                 lambda: embedding_results(emb.to_dict(), x),
                 lambda: idle_latency(emb.to_dict(), radix=2)):
        with pytest.raises(TypeError, match=r"^Embedding must be an Embedding, not dict$"):
            call()
    with pytest.raises(TypeError, match=r"^Inputs must be a mapping of node to vector, not "
                                        r"list$"):
        embedding_results(emb, list(x.values()))


def _edit(emb, node, **changes):
    return dataclasses.replace(emb, switches=tuple(
        dataclasses.replace(s, **changes) if s.node == node else s for s in emb.switches))


def test_broken_tree_errors():
    """Ring of 4, root 1: node 0 reduces node 3 (its port 0) and itself; node 2 is a leaf."""
    emb = embed(torus((4,)), op="add", dtype="int32")
    x = {u: np.arange(3, dtype=np.uint32) for u in range(4)}
    unconfigured = dataclasses.replace(emb, switches=tuple(s for s in emb.switches
                                                           if s.node != 3))
    with pytest.raises(ValueError, match=r"^Switch 3 sends requests but is not configured$"):
        embedding_results(unconfigured, x)
    looped = _edit(dataclasses.replace(emb, links=(*emb.links, (1, 0, 0, 1))), 0,
                   req_in=frozenset({0, 1, LOCAL}))
    with pytest.raises(ValueError, match=r"^The request tree has a cycle through switch 0$"):
        embedding_results(looped, x)
    nowhere = _edit(emb, 2, resp_out=frozenset({1, LOCAL}))
    with pytest.raises(ValueError, match=r"^Port 1 of switch 2 is in resp_out, but no link of "
                                         r"the embedding starts there$"):
        embedding_results(nowhere, x)
    twice = _edit(dataclasses.replace(emb, links=(*emb.links, (3, 0, 2, 1))), 2,
                  resp_out=frozenset({1, LOCAL}))
    with pytest.raises(ValueError, match=r"^The response tree reaches switch 3 twice$"):
        embedding_results(twice, x)
    # Node 3 taken out of the request tree and the configuration, but still sent a response.
    without3 = _edit(dataclasses.replace(
        emb, links=(*(link for link in emb.links if link[0] != 3), (3, 0, 2, 1)),
        switches=tuple(s for s in emb.switches if s.node != 3)), 0, req_in=frozenset({LOCAL}))
    stray = _edit(without3, 2, resp_out=frozenset({1, LOCAL}))
    with pytest.raises(ValueError, match=r"^A response reaches switch 3, which is not "
                                         r"configured$"):
        embedding_results(stray, x)
    with pytest.raises(ValueError, match=r"^Operation xor is not defined on fp32$"):
        embedding_results(dataclasses.replace(emb, op=Op.XOR, dtype=DType.FP32), x)


def test_idle_latency_by_hand():
    """Ring of 4 (radix 2), root 1, 3 cycles per switch. Node 3 forwards: 0 + 3 +
    engine_latency(1, 2) = 7; node 0 reduces node 3 and itself: max(7, 0) + 3 +
    engine_latency(2, 2) = 27; node 2 forwards (7); the root reduces three ports: max(27, 7, 0)
    + 3 + engine_latency(3, 2) = 47; then 3 cycles per switch down. A reduction takes the 13
    cycles of the 3-leaf unit and 4 more, however many ports reduce; a product, the tree's 9
    per level."""
    assert HOP_CYCLES == 3
    assert [engine_latency(k, 2) for k in (1, 2, 3)] == [4, 17, 17]
    assert [engine_latency(k, 2, Op.MUL) for k in (1, 2, 3)] == [4, 13, 22]
    emb = embed(torus((4,)), op="add", dtype="fp32")
    assert idle_latency(emb, radix=2) == {0: 50, 1: 47, 2: 50, 3: 53}
    product = embed(torus((4,)), op="mul", dtype="fp32")
    assert idle_latency(product, radix=2) == {0: 51, 1: 48, 2: 51, 3: 54}
    # One pipeline stage per link: node 3's request crosses two links, every response one or
    # two more.
    assert idle_latency(emb, radix=2, link_latency=1) == {0: 53, 1: 49, 2: 53, 3: 57}
    with pytest.raises(ValueError, match=r"^Link latency must be a non-negative integer, "
                                         r"not -1$"):
        idle_latency(emb, radix=2, link_latency=-1)
    # Per link: the same count on every link is the uniform model. Five stages on (3, 0) only:
    # node 3's partial reaches node 0 at 7 + 5 = 12, node 0 sends at 12 + 3 + 17 = 32, the root
    # at max(32, 7, 0) + 3 + 17 = 52; down, 3 cycles per switch and 5 more to node 3.
    every = {(u, v): 1 for u, _, v, _ in emb.links}
    assert (idle_latency(emb, radix=2, link_latency=every)
            == idle_latency(emb, radix=2, link_latency=1))
    assert idle_latency(emb, radix=2, link_latency={(3, 0): 5}) == {0: 55, 1: 52, 2: 55, 3: 63}
    with pytest.raises(ValueError, match=r"^Link latency must be a non-negative integer, "
                                         r"not -2$"):
        idle_latency(emb, radix=2, link_latency={(0, 3): -2})
    with pytest.raises(ValueError, match=r"^The request tree has a cycle through switch 0$"):
        idle_latency(_edit(dataclasses.replace(emb, links=(*emb.links, (1, 0, 0, 1))), 0,
                           req_in=frozenset({0, 1, LOCAL})), radix=2)
