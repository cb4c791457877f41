"""Several collectives at once (link-disjointness, the id planner) and multi-tree striping."""

import itertools
from collections import Counter
from dataclasses import replace
from itertools import combinations

import pytest

from innet.gen.embed import (
    CostModel,
    assign_collective_ids,
    check_disjoint,
    conflict,
    embed,
    embedding_cost,
    stripe,
    verify,
)
from innet.gen.topology import hyperx, polarfly, torus

HX = hyperx((3, 3))


def test_shared_request_link_is_named():
    a = embed(HX, [1, 4], root=4)
    b = embed(HX, [1, 7], root=4)
    port = HX.port_to(1, 4)
    message = (f"Embeddings 0 and 1 on collective id 0 share link 1->4 (port {port} of node 1) "
               f"for requests")
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")
                       + "$"):
        check_disjoint([a, b])
    assert conflict(a, b) == f"link 1->4 (port {port} of node 1) for requests"
    check_disjoint([a, replace(b, collective_id=1)])


def test_shared_response_link_and_shared_switch():
    # Two broadcasts down the same link use only the response class.
    a = embed(HX, [4, 1], root=4, kind="broadcast")
    b = embed(HX, [4, 1, 7], root=4, kind="broadcast")
    port = HX.port_to(4, 1)
    with pytest.raises(ValueError, match=rf"^Embeddings 0 and 1 on collective id 0 share link "
                                         rf"4->1 \(port {port} of node 4\) for responses$"):
        check_disjoint([a, b])
    # A reduce up 1->4 and a broadcast down 4->1 use different classes but both configure 1.
    up = embed(HX, [1, 4], root=4, kind="reduce")
    assert conflict(up, a) == "switch 1"
    with pytest.raises(ValueError, match=r"^Embeddings 0 and 1 on collective id 2 share switch "
                                         r"1$"):
        check_disjoint([replace(up, collective_id=2), replace(a, collective_id=2)])
    assert conflict(embed(HX, [0, 1]), embed(HX, [7, 8])) is None


def test_rows_and_columns_are_link_disjoint_but_share_switches():
    topo = hyperx((4, 4))
    rows = [embed(topo, [4 * r + c for c in range(4)]) for r in range(4)]
    cols = [embed(topo, [4 * r + c for r in range(4)]) for c in range(4)]
    check_disjoint(rows)  # the rows touch disjoint switches: one id is enough
    with pytest.raises(ValueError, match=r"^Embeddings 0 and 4 on collective id 0 share switch "
                                         r"0$"):
        check_disjoint(rows + cols)
    planned = assign_collective_ids(rows + cols)
    assert [e.collective_id for e in planned] == [0] * 4 + [1] * 4
    verify(list(planned), topo)
    with pytest.raises(ValueError, match=r"^Collective 4 overlaps every id in use; it needs "
                                         r"collective id 8, but only 1 ids \(7..7\) are "
                                         r"available$"):
        assign_collective_ids(rows + cols, max_ids=1, first_id=7)


def test_planner_on_random_subsets_never_shares():
    topo = torus((6, 6))
    import random

    rng = random.Random(4)
    items = [embed(topo, rng.sample(range(36), rng.randint(1, 6))) for _ in range(12)]
    planned = assign_collective_ids(items)
    check_disjoint(planned)
    for a, b in combinations(planned, 2):
        if a.collective_id == b.collective_id:
            assert conflict(a, b) is None
    # First fit: each embedding conflicts with something on every lower id.
    for i, e in enumerate(planned):
        for cid in range(e.collective_id):
            assert any(conflict(e, o) for o in planned[:i] if o.collective_id == cid)


def test_plan_errors():
    with pytest.raises(TypeError, match=r"^Expected Embeddings, not str$"):
        check_disjoint(["x"])
    with pytest.raises(TypeError, match=r"^Expected Embeddings, not int$"):
        assign_collective_ids([3])
    with pytest.raises(TypeError, match=r"^Embedding must be an Embedding, not str$"):
        conflict(embed(HX), "x")
    with pytest.raises(ValueError, match=r"^Embeddings were made for different topologies$"):
        check_disjoint([embed(HX), embed(torus((3, 3)))])
    with pytest.raises(ValueError, match=r"^Max ids must be a positive integer, not 0$"):
        assign_collective_ids([embed(HX)], max_ids=0)


def loads_by_hand(topo, striping):
    load = Counter()
    for e, share in zip(striping.embeddings, striping.shares, strict=True):
        for u, p, v, q in e.links:
            load[(u, p)] += share  # requests
            load[(v, q)] += share  # responses
    return load


@pytest.mark.parametrize("topo", [polarfly(5), hyperx((4, 4)), torus((4, 4))],
                         ids=["pf5", "hx4x4", "t4x4"])
def test_striping(topo):
    one = stripe(topo, 1)
    assert one.max_link_load == 1.0
    assert one.predicted_gain == 1.0
    assert one.embeddings[0] == embed(topo)
    fast = CostModel(local_bandwidth=None)  # endpoints faster than any one link
    s = stripe(topo, 4, first_id=2, model=fast)
    verify(list(s.embeddings), topo)
    assert [e.collective_id for e in s.embeddings] == [2, 3, 4, 5]
    assert len({e.root for e in s.embeddings}) == 4
    assert s.embeddings[0].root == embed(topo).root
    assert s.shares == (0.25,) * 4
    by_hand = loads_by_hand(topo, s)
    assert {(u, p): load for u, p, load in s.loads} == pytest.approx(dict(by_hand))
    assert s.max_link_load == pytest.approx(max(by_hand.values()))
    assert s.predicted_gain == pytest.approx(1 / s.max_link_load)
    assert s.cost.beta == pytest.approx(s.max_link_load)  # links carry 1 element per cycle
    assert s.cost.alpha == max(embedding_cost(e, topo, fast).alpha for e in s.embeddings)
    assert s.predicted_gain > 1
    assert s.element_ranges(10) == ((0, 2), (2, 5), (5, 8), (8, 10))
    assert s.load_array(topo).sum() == pytest.approx(sum(by_hand.values()))
    # An endpoint no faster than one link (the default model: the local port is one more
    # switch port) caps the gain at 1; one twice as fast at min(2, 1 / max load).
    assert stripe(topo, 4).predicted_gain == pytest.approx(1.0)
    double = stripe(topo, 4, model=CostModel(local_bandwidth=2))
    assert double.predicted_gain == pytest.approx(min(2, 1 / s.max_link_load))


def test_striping_roots_and_errors():
    s = stripe(HX, 2, roots=[0, 8], kind="reduce")
    assert [e.root for e in s.embeddings] == [0, 8]
    # A reduce loads only the request direction: each tree's channels carry half the vector.
    ups = Counter((u, p) for e in s.embeddings for u, p, _, _ in e.links)
    assert {(u, p): load for u, p, load in s.loads} == {k: c / 2 for k, c in ups.items()}
    with pytest.raises(ValueError, match=r"^Trees must be between 1 and the number of "
                                         r"participants \(2\), not 3$"):
        stripe(HX, 3, [0, 1])
    with pytest.raises(TypeError, match=r"^Trees must be an integer, not 2.0$"):
        stripe(HX, 2.0)
    with pytest.raises(ValueError, match=r"^Roots must be 2 distinct nodes, not \[1, 1\]$"):
        stripe(HX, 2, roots=[1, 1])
    with pytest.raises(ValueError, match=r"^Elements must be at least 0, not -1$"):
        s.element_ranges(-1)
    with pytest.raises(TypeError, match=r"^Elements must be an integer, not 1\.5$"):
        s.element_ranges(1.5)
    # Exactly the vector, however long (float products rounded wrongly past 2^53).
    for elements in (0, 1, 7, 10**20 + 1):
        ranges = s.element_ranges(elements)
        assert ranges[0][0] == 0
        assert ranges[-1][1] == elements
        assert all(a <= b for a, b in ranges)
        assert all(b == c for (_, b), (c, _) in itertools.pairwise(ranges))
    with pytest.raises(ValueError, match=r"^Collective id must be between 0 and 255, not "
                                         r"256$"):
        stripe(HX, 2, first_id=255)
