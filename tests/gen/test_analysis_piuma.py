"""PIUMA's analysis: Eq. 1 and 2, host rounds against the recursive-doubling schedules and
networkx, closed form against generated networks, claims, Figure 4."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from innet.gen.analysis.piuma import (
    TABLE1,
    SystemParams,
    claims,
    closed_form,
    eq1_bound,
    figure,
    generated,
    implied_overheads,
    innet_beta,
    structure,
    sweep,
    sweep_shape,
    wiring_bound,
    with_overhead,
)
from innet.gen.routing import paths, routing
from innet.gen.routing.latency import path_latency
from innet.gen.swing import build_schedule
from innet.gen.topology import link_latencies, link_latency_array, piuma

SMALL = SystemParams(sockets=2, cores=4)


def weighted(topo):
    graph = topo.to_networkx()
    for (u, v), lat in link_latencies(topo).items():
        graph.edges[u, v]["w"] = lat
    return graph


def test_eq1_and_eq2_with_table1():
    assert (TABLE1.sockets, TABLE1.cores, TABLE1.mesh) == (16, 8, (2, 4))
    for d, d_max in itertools.product(range(5), range(1, 6)):
        paper = 2 * (50 * d + 25 * (d + 1) + 5 * d_max * (2 * d + 1))
        assert eq1_bound(d, d_max) == paper
        assert wiring_bound(d, d_max) == paper + 2 * 5 * d_max
    # Eq. 2: 4-byte elements read and written at 51.2 Gbit/s; links 2 x 64 Gbit/s both ways
    assert innet_beta() == max(2 * 4 * 8 / (2 * 64), 2 * 4 * 8 / 51.2) == 1.25
    assert innet_beta(SystemParams(bw_mem=1000)) == 2 * 4 * 8 / 128


@pytest.mark.parametrize(("nodes", "params"), [
    ((1,), TABLE1),
    ((2, 2), SMALL),
    ((4, 2), SystemParams(sockets=4, cores=2, placement="hub")),
    ((2, 2, 2), SystemParams(sockets=2, cores=2, latency_core=3, latency_socket=7,
                             latency_node=40)),
    ((3, 2), SystemParams(sockets=3, cores=4)),
])
def test_closed_form_equals_the_generated_network(nodes, params):
    built = generated(nodes, params, check=False)
    closed = closed_form(nodes, params)
    assert built.source == "generated"
    assert closed.source == "closed form"
    assert built.alpha == pytest.approx(closed.alpha)
    assert built.rounds == pytest.approx(closed.rounds) if closed.rounds else (
        built.rounds is None)
    assert built.alpha <= built.any_wiring_bound
    assert built.spt_alpha <= built.alpha + 1e-9
    generated(nodes, params)  # and the built-in check agrees


def test_host_rounds_follow_the_schedules_and_networkx():
    nodes, params = (2, 2), SMALL
    topo = params.topology(nodes)
    point = generated(nodes, params)
    n = topo.nodes
    route = routing(topo)
    weights = link_latency_array(topo)
    # recursive doubling (latency) and Rabenseifner (throughput) of gen.swing, rank r on node r
    rd = build_schedule("recdoub-l", (n,)).arrays()["send_peer"][0]
    assert len(point.rounds) == rd.shape[0] == int(math.log2(n))
    for k, peers in enumerate(rd):
        walked = paths(route, np.arange(n), peers)
        assert point.rounds[k] == pytest.approx(
            path_latency(weights, walked.nodes, walked.ports).max())
    rab = build_schedule("recdoub-b", (n,))
    arrays = rab.arrays()
    sent = arrays["send"][0]
    fraction = (sent[:, :, 1] - sent[:, :, 0]).max(axis=1) / rab.blocks[0]
    assert fraction.sum() == pytest.approx(2 * (1 - 1 / n))  # 7 m (1 - 1/n) accesses: 5 + 2
    partner_rounds = [point.rounds[int(p[0]).bit_length() - 1] for p in arrays["send_peer"][0]]
    assert sum(partner_rounds) == pytest.approx(2 * sum(point.rounds))
    # true shortest paths between the partners, by networkx over the whole network
    truth = dict(nx.all_pairs_dijkstra_path_length(weighted(topo), weight="w"))
    for k in range(len(point.rounds)):
        best = max(truth[r][r ^ (1 << k)] for r in range(n))
        assert point.shortest_rounds[k] == pytest.approx(best)
        assert point.shortest_rounds[k] <= point.rounds[k] + 1e-9
    assert point.spt_alpha == pytest.approx(2 * max(truth[point.root].values()))


def test_host_and_innet_times_follow_the_model():
    point = closed_form((4, 4), TABLE1)
    s, n, k = 4, point.ranks, len(point.rounds)
    assert (n, k) == (2048, 11)
    lam = sum(point.rounds)
    mem, link = 51.2, 64.0
    for m in (1, 1000, 10**6):
        assert point.innet_time(m) == pytest.approx(point.alpha + 1.25 * m)
        assert point.rd_time(m) == pytest.approx(
            2 * lam + k * m * max(5 * s * 8 / mem, s * 8 / link))
        assert point.rab_time(m) == pytest.approx(
            2 * 2 * lam + m * (1 - 1 / n) * (max(5 * s * 8 / mem, s * 8 / link)
                                             + max(2 * s * 8 / mem, s * 8 / link)))
    slow = closed_form((4, 4), SystemParams(round_overhead=100, flags=2))
    assert slow.rd_time(1) == pytest.approx(3 * lam + k * 100 + k * 5 * s * 8 / mem)
    # the large-vector throughput ratio is the 7 against 2 memory accesses of the model
    assert point.throughput("innet", 2**34) / point.throughput("rabenseifner", 2**34) == \
        pytest.approx(3.5 * (1 - 1 / n), rel=1e-3)
    assert closed_form((3, 3), TABLE1).rounds is None


def test_claims_and_the_overheads_they_imply():
    points = sweep(SMALL, max_nodes=8, dims=2, generate_up_to=2)
    assert [p.source for p in points] == ["generated", "generated", "closed form",
                                          "closed form"]
    assert [p.nodes for p in points] == [(1,), (2,), (2, 2), (4, 2)]
    found = {c.key: c for c in claims(points, throughput_nodes=4)}
    big, one = points[-1], points[0]
    vec = 128 * 1024 / 4
    assert found["latency"].ours == big.innet_time(1)
    assert found["latency-ratio"].ours == pytest.approx(big.rd_time(1) / big.innet_time(1))
    assert found["128k-one-node"].ours == pytest.approx(one.rab_time(vec) / one.innet_time(vec))
    assert found["drop-host"].ours == pytest.approx(
        100 * (1 - one.rab_time(vec) / big.rab_time(vec)))
    assert found["throughput-ratio"].ours == pytest.approx(3.5 * (1 - 1 / points[2].ranks))
    assert found["throughput-ratio"].agrees
    # each implied overhead makes its claim exact
    implied = implied_overheads(points)
    redo = {key: {c.key: c for c in claims(with_overhead(points, value), throughput_nodes=4)}
            for key, value in implied.items() if value is not None}
    assert set(redo) == {"latency-ratio", "128k-one-node", "drop-host"}
    assert redo["latency-ratio"]["latency-ratio"].ours == pytest.approx(40.0)
    assert redo["128k-one-node"]["128k-one-node"].ours == pytest.approx(3.9)
    assert redo["drop-host"]["drop-host"].ours == pytest.approx(26.0)
    assert {c.key: c.to_dict() for c in claims(points)}["latency"]["paper"] == 1000.0


def test_figure_is_a_png():
    points = [closed_form((1,), SMALL), closed_form((2,), SMALL)]
    image = figure(points, throughput_nodes=2)
    assert image[:8] == b"\x89PNG\r\n\x1a\n"


def test_structure_against_networkx():
    topo = piuma((3, 2), 3, 4)
    s = structure(topo)
    graph = weighted(topo)
    lengths = dict(nx.all_pairs_dijkstra_path_length(graph, weight="w"))
    assert s["latency_diameter_ns"] == pytest.approx(max(max(row.values())
                                                         for row in lengths.values()))
    path = s["latency_diameter_path"]
    assert path["core"] * 5 + path["socket"] * 25 + path["node"] * 50 == \
        pytest.approx(s["latency_diameter_ns"])
    assert s["links_by_level"] == {"core": 6 * 3 * 4, "socket": 6 * 3,
                                   "node": 2 * math.comb(3, 2) + 3 * 1}
    assert s["level_diameters"] == {"core": 2, "socket": 1, "node": 2}
    assert sum(s["ports_by_level"]["node"].values()) == topo.nodes


def test_sweep_shape_and_errors():
    assert sweep_shape(16384, 2) == (128, 128)
    assert sweep_shape(16384, 3) == (32, 32, 16)
    assert sweep_shape(8, 2) == (4, 2)
    assert sweep_shape(1, 2) == (1,)
    assert sweep_shape(2, 3) == (2,)
    with pytest.raises(ValueError, match=r"^Node count must be a power of two, not 12$"):
        sweep_shape(12, 2)
    with pytest.raises(ValueError, match=r"^Dimensions must be at least 1, not 0$"):
        sweep_shape(16, 0)
    with pytest.raises(ValueError, match=r"^Generate up to must be a node count >= 0, not -1$"):
        sweep(SMALL, max_nodes=2, generate_up_to=-1)
    with pytest.raises(ValueError, match=r"^Claims need at least one analysed network$"):
        claims([])
    with pytest.raises(ValueError, match=r"^A figure needs at least one analysed network$"):
        figure([])
    with pytest.raises(ValueError, match=r"^Memory bandwidth must be finite and > 0, not 0.0$"):
        SystemParams(bw_mem=0)
    with pytest.raises(TypeError, match=r"^Link bandwidth must be a number, not '64'$"):
        SystemParams(bw_link="64")
    with pytest.raises(ValueError, match=r"^Round overhead must be finite and >= 0, not -1.0$"):
        SystemParams(round_overhead=-1)
    with pytest.raises(ValueError, match=r"^Flags must be at least 0, not -1$"):
        SystemParams(flags=-1)
    with pytest.raises(TypeError, match=r"^Element bytes must be an integer, not 4.0$"):
        SystemParams(element_bytes=4.0)
    with pytest.raises(ValueError, match=r"^Element bytes must be at most 1048576, not a "
                                         r"5000-bit integer$"):
        SystemParams(element_bytes=1 << 4999)
    with pytest.raises(ValueError, match=r"^Flags must be at most 1024, not 1025$"):
        SystemParams(flags=1025)
    with pytest.raises(ValueError, match=r"^Generate up to 65,536 nodes builds 32,768 nodes of "
                                         r"128 switches; at most 2,097,152 switches are built$"):
        sweep(TABLE1, max_nodes=32768, generate_up_to=65536)
    with pytest.raises(ValueError, match=r"^Placement must be one of spread, hub, not 'x'$"):
        SystemParams(placement="x")
    with pytest.raises(ValueError, match=r"^Latency of the core level must be finite and > 0 "
                                         r"ns, not -5.0$"):
        SystemParams(latency_core=-5)
