"""The congestion model's bookkeeping and Eq. 1 times.

The Figure 1 check routes on a bare ring with a next-hop function written here (shortest way
round, the only minimal route for distances below p/2); the deficiencies on real networks,
routed with the project's routing tables, are in test_swing_congestion.py.
"""

import math

import numpy as np
import pytest
from step_tables import table_alpha

from innet.gen.cost import Cost, CostModel
from innet.gen.routing import routing
from innet.gen.swing import build_schedule
from innet.gen.swing.cost import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_HOP_LATENCY,
    EMPTY_ENTRY,
    Congestion,
    busy_entries,
    congestion,
    covered_steps,
    model_table,
)
from innet.gen.topology import torus


def ring(p):
    """Peer table of a ring (port 0: minus neighbour, port 1: plus) and shortest-way routing."""
    peer = np.stack([(np.arange(p) - 1) % p, (np.arange(p) + 1) % p], axis=1)

    def next_port(nodes, dst):
        forward = (dst - nodes) % p
        return np.where(forward <= p // 2, 1, 0)

    return peer, next_port


def test_figure_1_link_loads():
    """16-node ring, one port: recursive doubling puts 1, 2, 4 messages on a link in its first
    three steps, Swing 1, 1, 2 (Section 1)."""
    peer, route = ring(16)
    recdoub = congestion(build_schedule("recdoub-b", 16), peer, route)
    swing = congestion(build_schedule("swing-b", 16, multiport=False), peer, route)
    messages = [1 / 2, 1 / 4, 1 / 8]
    assert np.allclose(np.array(recdoub.step_load[:3]) / messages, [1, 2, 4])
    assert np.allclose(np.array(swing.step_load[:3]) / messages, [1, 1, 2])
    assert recdoub.step_hops[:3] == (1, 2, 4)
    assert swing.step_hops[:4] == (1, 1, 3, 5)
    assert swing.max_hops == 5
    assert swing.congestion_deficiency < recdoub.congestion_deficiency


def test_ring_algorithm_has_no_congestion():
    peer, route = ring(12)
    model = congestion(build_schedule("ring", 12), peer, route)
    assert model.congestion_deficiency == pytest.approx(1.0)
    assert model.bandwidth_deficiency == pytest.approx(11 / 12)  # both ports, optimal volume
    assert model.max_hops == 1
    assert model.steps == 22
    assert model.latency_deficiency == pytest.approx(22 / math.log2(12))


def test_eq_1_time():
    peer, route = ring(8)
    model = congestion(build_schedule("swing-l", 8), peer, route)
    # Three steps of 1, 1 and 3 hops; each message is half the vector (two collectives), and
    # in the 3-hop step every link carries delta(2) = 3 of them (plain and mirrored together).
    assert model.step_hops == (1, 1, 3)
    assert model.step_load == pytest.approx((0.5, 0.5, 1.5))
    size = 1 << 20
    expected = sum(DEFAULT_ALPHA + h * DEFAULT_HOP_LATENCY + size * DEFAULT_BETA * load
                   for h, load in ((1, 0.5), (1, 0.5), (3, 1.5)))
    assert model.time(size) == pytest.approx(expected)
    assert model.time(size, alpha=0, beta=0, hop_latency=0) == 0


def test_model_table_picks_the_fastest():
    peer, route = ring(16)
    models = {name: congestion(build_schedule(name, 16), peer, route)
              for name in ("swing-l", "swing-b", "ring")}
    table = model_table(models, [32, 1 << 30])
    assert [row["size"] for row in table] == [32, 1 << 30]
    for row in table:
        assert row["best"] == min(row["times"], key=row["times"].get)
    assert table[0]["best"] == "swing-l"  # few steps win on small vectors
    assert table[1]["best"] in ("swing-b", "ring")  # little data wins on large ones


@pytest.mark.parametrize(("peer", "route", "message"), [
    (np.zeros((5, 2), dtype=int), None, r"^The schedule has 8 ranks but the network has 5 nodes$"),
    (None, lambda u, d: np.full(len(u), 2), (r"^Routing at node 0 toward node 1 chose port 2, "
                                            r"which the node does not have$")),
    (None, lambda u, d: u % 2, (r"^Routing from node \d to node \d does not arrive within "
                               r"8 hops$")),
])
def test_bad_networks(peer, route, message):
    ring_peer, ring_route = ring(8)
    with pytest.raises(ValueError, match=message):
        congestion(build_schedule("swing-b", 8), ring_peer if peer is None else peer,
                   route or ring_route)


def test_a_port_past_the_degree_is_refused():
    peer, _ = ring(4)
    peer = np.concatenate([peer, np.full((4, 1), -1)], axis=1)
    with pytest.raises(ValueError, match=r"chose port 2, which the node does not have$"):
        congestion(build_schedule("swing-l", 4), peer, lambda u, d: np.full(len(u), 2))


def test_local_port_loads_and_cycle_cost():
    """Each rank's one local port carries all its collectives' messages of a step: over the
    whole schedule that is the fraction of the vector the rank sends (Swing: 2(p-1)/p), in
    one entry per collective, which the endpoint runs one after another."""
    peer, route = ring(8)
    schedule = build_schedule("swing-b", 8)
    model = congestion(schedule, peer, route)
    assert schedule.collectives == 2
    assert model.step_inject[0] == pytest.approx(0.5)  # half of each collective's share
    assert sum(model.step_inject) == pytest.approx(max(schedule.fraction_sent()))
    assert sum(model.step_inject) == pytest.approx(2 * 7 / 8)
    assert model.step_eject == pytest.approx(model.step_inject)
    cycles = CostModel(link_latency=1, switch_latency=2, local_latency=1, step_overhead=5)
    steps = model.step_costs(cycles)
    assert busy_entries(schedule).tolist() == [2] * schedule.steps  # both, in every step
    for cost, hops, load, inject in zip(steps, model.step_hops, model.step_load,
                                        model.step_inject, strict=True):
        latency = 2 + hops + 2 * (hops + 1)
        assert cost.alpha == 2 * (max(5, latency) + latency)
        assert cost.beta == max(load, inject)  # one element per cycle on links and ports
    assert model.cost(cycles) == Cost(sum(c.alpha for c in steps), sum(c.beta for c in steps))
    assert model.cost() == model.cost(CostModel())
    with pytest.raises(ValueError, match=r"^A cost model with per-link latencies prices the "
                                         r"routes congestion\(\) priced with it: pass it as "
                                         r"congestion\(\.\.\., model=model\)$"):
        model.cost(CostModel(link_latencies={(0, 1): 2}))


def walk(peer, next_port, src, dst):
    """The route from ``src`` to ``dst`` as a list of (node, next node), one hop at a time."""
    route = []
    while src != dst:
        port = int(next_port(np.array([src]), np.array([dst]))[0])
        route.append((src, int(peer[src, port])))
        src = route[-1][1]
    return route


@pytest.mark.parametrize("algorithm", ["swing-b", "recdoub-l", "ring"])
def test_per_link_latencies_price_each_route(algorithm):
    """With per-link latencies a step costs its slowest route, every route walked here link
    by link; the step's longest route in hops is not always its slowest."""
    peer, route = ring(8)
    latencies = {(3, 4): 10.0, (0, 7): 4.0}  # two slow links, the others 1 cycle
    cycles = CostModel(link_latency=1, switch_latency=2, local_latency=1, step_overhead=5,
                       link_latencies=latencies)
    schedule = build_schedule(algorithm, 8)
    priced = congestion(schedule, peer, route, model=cycles)
    plain = congestion(schedule, peer, route)
    assert priced.step_hops == plain.step_hops
    assert priced.step_load == plain.step_load
    send_peer = schedule.arrays()["send_peer"]

    def latency(src, dst):
        hops = walk(peer, route, src, dst)
        links = sum(latencies.get((min(u, v), max(u, v)), 1.0) for u, v in hops)
        return 2 * 1 + links + (len(hops) + 1) * 2

    for step in range(schedule.steps):
        slowest = max((latency(int(src), int(send_peer[c, step, src])) for c, src in
                       zip(*np.nonzero(send_peer[:, step] >= 0), strict=True)), default=0.0)
        assert priced.step_latency[step] == slowest
    assert priced.cost(cycles).alpha == table_alpha(schedule, 5, latency)
    # Every link at the same latency as overrides: the hop-count model's cost, exactly.
    same = CostModel(link_latency=3, link_latencies={(u, (u + 1) % 8): 3 for u in range(8)})
    assert congestion(schedule, peer, route, model=same).cost(same) == \
        plain.cost(CostModel(link_latency=3))
    with pytest.raises(ValueError, match=r"^A cost model with per-link latencies prices"):
        priced.cost(CostModel(link_latency=2, link_latencies=latencies))  # not the routed one


def test_steps_that_move_nothing():
    """A step in which nothing moves (hop count 0) adds no latency and no bandwidth term to
    Swing's hosts (no port limit); the endpoint runs its empty entries, EMPTY_ENTRY cycles
    each, and a vector of no elements leaves every entry out of the tables."""
    model = Congestion(algorithm="x", ranks=4, dimensions=1, steps=1, max_hops=2,
                       bandwidth_term=0.5, contention_free_term=0.5, step_hops=(0, 2),
                       step_load=(0.0, 0.5), step_inject=(0.0, 0.25), step_eject=(0.0, 0.75))
    free = CostModel(step_overhead=3, local_bandwidth=None)
    assert model.step_costs(free) == (Cost(0.0, 0.0), Cost(3 + free.latency(2), 0.5))
    assert model.cost(free) == Cost(3 + free.latency(2), 0.5)
    peer, route = ring(8)
    schedule = build_schedule("swing-b", 8)
    loads = congestion(schedule, peer, route)
    assert loads.cost(CostModel(), 0).alpha == 0
    assert [schedule.table(r, 0) for r in range(schedule.ranks)] == [()] * schedule.ranks


@pytest.mark.parametrize("algorithm", ["swing-b", "swing-l", "ring", "recdoub-b"])
@pytest.mark.parametrize("elements", [0, 1, 3, 8, 64])
def test_entries_of_a_vector_are_those_holding_its_elements(algorithm, elements):
    """With a vector length, a step's entries are those whose block ranges hold elements of it
    (Schedule.elements, entry by entry); the tables leave out the step's entries of a
    collective none of whose ranks moves an element; a vector that fills every block pays for
    them all."""
    peer, route = ring(8)
    schedule = build_schedule(algorithm, 8)
    loads = congestion(schedule, peer, route)

    def moves(e):
        return not e.idle and (_holds(schedule, e.collective, e.send, elements)
                               or _holds(schedule, e.collective, e.recv, elements))

    expected, tabled = [], []
    for step in range(schedule.steps):
        expected.append(max(sum(1 for e in schedule.table(r) if e.step == step and moves(e))
                            for r in range(schedule.ranks)))
        tabled.append(len({e.collective for r in range(schedule.ranks)
                           for e in schedule.table(r) if e.step == step and moves(e)}))
    assert busy_entries(schedule, elements).tolist() == expected
    # Every rank's table holds the same steps and collectives, those of the moving entries.
    for r in range(schedule.ranks):
        assert [(e.step, e.collective) for e in schedule.table(r, elements)] == [
            (step, c) for step in range(schedule.steps) for c in range(schedule.collectives)
            if any(moves(e) for q in range(schedule.ranks) for e in schedule.table(q)
                   if (e.step, e.collective) == (step, c))]
    cycles = CostModel(step_overhead=5)
    short = loads.step_costs(cycles, elements)
    for cost, full, busy, held, hops in zip(short, loads.step_costs(cycles), expected, tabled,
                                            loads.step_hops, strict=True):
        assert cost.beta == full.beta
        latency = cycles.latency(hops)
        moving = busy * (max(5, latency) + latency) if hops else 0.0
        assert cost.alpha == moving + (held - busy) * EMPTY_ENTRY
    if elements >= 64:  # at least a block of every collective's share is nonempty
        assert loads.cost(cycles, elements) == loads.cost(cycles)


@pytest.mark.parametrize("algorithm", ["swing-b", "swing-l", "ring", "recdoub-b", "bucket"])
@pytest.mark.parametrize("shape", [(8,), (6,), (4, 4)], ids=str)
def test_short_vectors_are_bounded_by_the_covered_steps(algorithm, shape):
    """A step is covered when one collective's entries hold every one of its blocks, checked
    block by block from the step tables. Every vector of at least one element per collective
    pays at least one entry in each covered step (``least_cost``) and at most every entry
    (``cost``); from ``exact_from`` on it pays every entry."""
    schedule = build_schedule(algorithm, shape)
    covered = []
    for step in range(schedule.steps):
        held = [set() for _ in range(schedule.collectives)]
        for r in range(schedule.ranks):
            for e in schedule.table(r):
                if e.step == step:
                    held[e.collective].update(range(*e.send), range(*e.recv))
        covered.append(any(len(h) == b for h, b in zip(held, schedule.blocks, strict=True)))
    assert covered_steps(schedule).tolist() == covered
    topo = torus(shape)
    loads = congestion(schedule, topo.ports.peer, routing(topo).next_port)
    model = CostModel(step_overhead=7)
    exact = loads.exact_from(model)
    assert exact == schedule.collectives * max(schedule.blocks)
    least, full = loads.least_cost(model), loads.cost(model)
    assert least.beta == full.beta
    for m in range(schedule.collectives, exact + 3):
        alpha = loads.cost(model, m).alpha
        assert least.alpha <= alpha <= full.alpha
        if m >= exact:
            assert alpha == full.alpha
    assert loads.exact_from(CostModel(local_bandwidth=None)) == 0


def _holds(schedule, collective, blocks, elements):
    lo, hi = schedule.elements(collective, blocks, elements)
    return hi > lo


def test_an_endpoint_port_needs_the_schedule():
    model = Congestion(algorithm="x", ranks=4, dimensions=1, steps=1, max_hops=2,
                       bandwidth_term=0.5, contention_free_term=0.5, step_hops=(2,),
                       step_load=(0.5,), step_inject=(0.25,), step_eject=(0.75,))
    with pytest.raises(ValueError, match=r"^Pricing the entries of an endpoint port needs the "
                                         r"loads' schedule: route it with congestion\(\)$"):
        model.cost(CostModel(), elements=4)
    with pytest.raises(ValueError, match=r"^Pricing the entries of an endpoint port needs"):
        model.cost(CostModel())
    with pytest.raises(ValueError, match=r"^Pricing the entries of an endpoint port needs"):
        model.exact_from(CostModel())
    assert model.exact_from(CostModel(local_bandwidth=None)) == 0
    with pytest.raises(ValueError, match=r"^Vector length must be at least 0, not -1$"):
        busy_entries(build_schedule("ring", 4), -1)
