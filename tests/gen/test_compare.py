"""Which allreduce wins at which size: the host-style prices against closed forms and networkx
distances, the crossover's direction, and `innet embed --compare`."""

import dataclasses
import itertools
import json
import math

import networkx as nx
import pytest
from click.testing import CliRunner
from step_tables import table_alpha

from innet.gen.compare import (
    ALGORITHMS,
    HOST_ALGORITHMS,
    compare,
    host_prediction,
    host_shape,
)
from innet.gen.cost import Cost, CostModel
from innet.gen.embed import embed, embedding_cost, stripe
from innet.gen.swing import build_schedule
from innet.gen.topology import hyperx, polarfly, torus
from innet.sim.cli import main
from innet.sim.cli._parse import format_count, parse_sizes

MODEL = CostModel(link_latency=3, switch_latency=2, local_latency=1, step_overhead=10)


@pytest.mark.parametrize("p", [4, 6, 8, 11])
def test_ring_algorithm_on_a_ring(p):
    """Ring allreduce (Swing 2.3.1): 2(p - 1) one-hop steps; two rings (one per direction)
    each move a block of m/(2p) per step, so each endpoint port carries m/p per step, in two
    entries, one after the other. An endpoint that is never the bottleneck sends both at once:
    one alpha per step, and each link carries m/(2p)."""
    topo = torus(p)
    hop = 2 * MODEL.local_latency + MODEL.link_latency + 2 * MODEL.switch_latency
    entry = max(MODEL.step_overhead, hop) + hop
    got = host_prediction(topo, "ring", MODEL)
    assert got.steps == 2 * (p - 1)
    assert got.max_hops == 1
    assert got.cost.alpha == pytest.approx(2 * (p - 1) * 2 * entry)
    assert got.cost.beta == pytest.approx(2 * (p - 1) / p)  # the endpoint port, m/p per step
    # A vector of one element fills one block of one ring: one entry moves data in each step;
    # the other ring's share is empty, so its entries are in no table.
    assert got.exact_from == 2 * p
    assert got.cycles(1) == pytest.approx(2 * (p - 1) * entry + got.cost.beta)
    free = CostModel(link_latency=3, switch_latency=2, local_latency=1, step_overhead=10,
                     local_bandwidth=None)
    both = host_prediction(topo, "ring", free).cost
    assert (both.alpha, both.beta) == pytest.approx((2 * (p - 1) * (10 + hop),
                                                     2 * (p - 1) / (2 * p)))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_recursive_doubling_on_a_ring(k):
    """Latency-optimal recursive doubling on a ring of p = 2^k: step s talks to r xor 2^s,
    min(2^s, p - 2^s) hops away; alpha = sum over steps of (max(overhead, latency(hops)) +
    latency(hops)), one entry per step that moves data. Every
    message is the whole vector, and 2^s of them cross the busiest link at step s (Swing,
    Figure 1; the last step's p/2 all go the plus way), so beta = sum 2^s = p - 1."""
    p = 2**k
    got = host_prediction(torus(p), "recdoub-l", MODEL)
    hops = [min(2**s, p - 2**s) for s in range(k)]
    latencies = [2 * MODEL.local_latency + h * MODEL.link_latency
                 + (h + 1) * MODEL.switch_latency for h in hops]
    assert got.cost.alpha == pytest.approx(sum(max(MODEL.step_overhead, t) + t
                                               for t in latencies))
    assert got.cost.beta == pytest.approx(p - 1)
    assert got.max_hops == p // 2


TOPOLOGIES = [torus(8), torus((4, 4)), torus((2, 4)), torus((3, 4), mesh=True),
              hyperx((4, 4)), hyperx((2, 3)), polarfly(3)]


@pytest.mark.parametrize("topo", TOPOLOGIES, ids=lambda t: f"{t.kind}{t.nodes}")
@pytest.mark.parametrize("algorithm", HOST_ALGORITHMS)
def test_host_latency_from_networkx_distances(topo, algorithm):
    """alpha = :func:`table_alpha`, every route as long as the shortest path between its ends
    (the routing is minimal)."""
    schedule = build_schedule(algorithm, host_shape(topo))
    dist = dict(nx.all_pairs_shortest_path_length(topo.to_networkx()))
    alpha = table_alpha(schedule, MODEL.step_overhead, lambda u, v: MODEL.latency(dist[u][v]))
    got = host_prediction(topo, algorithm, MODEL)
    assert got.cost.alpha == pytest.approx(alpha)
    # Every rank sends at least the optimal 2(p - 1)/p of the vector through its one port.
    p = topo.nodes
    lower = 2 * (p - 1) / p / MODEL.local_bandwidth
    assert got.cost.beta >= lower - 1e-9


@pytest.mark.parametrize("algorithm", ["recdoub-l", "swing-l", "ring"])
def test_host_latency_per_link_from_networkx_distances(algorithm):
    """On a PIUMA network with its levels' latencies per link and latency-shortest routing, a
    route's latency is the latency-weighted networkx distance between its ends (switches and
    endpoints at 0 cycles, so only the links count)."""
    from innet.gen.routing import routing
    from innet.gen.topology import link_cycles, piuma

    topo = piuma((2,), 2, 4)
    cycles = link_cycles(topo, 5.0)
    model = CostModel(switch_latency=0, local_latency=0, step_overhead=3,
                      link_latencies={pair: float(n) for pair, n in cycles.items()})
    graph = topo.to_networkx()
    nx.set_edge_attributes(graph, cycles, "cycles")
    dist = dict(nx.all_pairs_dijkstra_path_length(graph, weight="cycles"))
    schedule = build_schedule(algorithm, host_shape(topo))
    alpha = table_alpha(schedule, 3, lambda u, v: dist[u][v])
    route = routing(topo, "shortest-latency")
    got = host_prediction(topo, algorithm, model, route=route)
    assert got.cost.alpha == pytest.approx(alpha)
    assert alpha > host_prediction(topo, algorithm, CostModel(
        switch_latency=0, local_latency=0, step_overhead=3, link_latency=1)).cost.alpha
    in_compare = compare(topo, [64], model, algorithms=("innet", algorithm))
    assert in_compare.predictions[algorithm].cost == host_prediction(topo, algorithm,
                                                                     model).cost


@pytest.mark.parametrize("topo", [torus(8), torus((4, 4)), hyperx((3, 3)), polarfly(3)],
                         ids=lambda t: f"{t.kind}{t.nodes}")
def test_in_network_is_the_embedding_cost(topo):
    """No reduction latency: alpha = 2 x the longest leaf-root latency, from networkx
    distances to the root (PIUMA, Analysis, Eq. 1); beta = 1 element per cycle."""
    model = CostModel(link_latency=3, switch_latency=2, local_latency=1, reduce_latency=0,
                      front_latency=0)
    result = compare(topo, [0, 10], model, algorithms=["innet"])
    e = embed(topo)
    hops = nx.single_source_shortest_path_length(topo.to_networkx(), e.root)
    longest = max(1 + 3 * hops[p] + 2 * (hops[p] + 1) for p in e.participants)
    assert result.predictions["innet"].cost == Cost(2 * longest, 1.0)
    assert result.predictions["innet"].cost == embedding_cost(e, topo, model)
    assert [row["cycles"]["innet"] for row in result.rows()] == [2 * longest, 2 * longest + 10]


def crossover_size(topo, model, low, high):
    """Size where the lines of the latency-optimal ``low`` and the bandwidth-optimal ``high``
    cross; past the lengths that do not fill every block, the winner changes at the first
    whole length beyond it (a tie goes to ``low``, listed first)."""
    got = compare(topo, [], model, algorithms=[low, high])
    a, b = got.predictions[low].cost, got.predictions[high].cost
    assert a.alpha < b.alpha
    assert a.beta > b.beta
    cross = (b.alpha - a.alpha) / (a.beta - b.beta)
    pieces = got.intervals()
    assert pieces[-1][2] == high
    if cross >= max(p.exact_from for p in got.predictions.values()):
        assert pieces[-2:] == [(pieces[-2][0], math.floor(cross) + 1, low),
                               (math.floor(cross) + 1, None, high)]
    return cross


@pytest.mark.parametrize(("topo", "low", "high"), [
    (torus(8), "recdoub-l", "recdoub-b"), (torus((4, 4)), "swing-l", "swing-b"),
    (torus((8, 8)), "swing-l", "swing-b"), (hyperx((4, 4)), "recdoub-l", "ring")])
def test_crossover_moves_with_beta(topo, low, high):
    """A larger beta (slower links and ports) makes the bandwidth term matter sooner: the
    latency-optimal variant loses at smaller sizes. Scaling every bandwidth by k scales the
    crossover by k; a larger per-step overhead moves it up."""
    sizes = [crossover_size(topo, CostModel(link_bandwidth=bw, local_bandwidth=bw), low, high)
             for bw in (4, 2, 1, 0.5, 0.25)]
    assert all(a > b for a, b in itertools.pairwise(sizes))
    assert sizes[0] == pytest.approx(16 * sizes[-1])
    slow = crossover_size(topo, CostModel(step_overhead=100), low, high)
    assert slow > crossover_size(topo, CostModel(step_overhead=8), low, high)


@pytest.mark.parametrize(("topo", "model"), [
    (torus((8, 8)), CostModel()), (torus(4), CostModel()), (polarfly(3), CostModel()),
    (hyperx((3, 3)), MODEL), (torus((4, 4)), CostModel(link_bandwidth=0.25, local_bandwidth=0.5)),
    (torus(8), CostModel(local_bandwidth=None))], ids=lambda x: getattr(x, "fingerprint", ""))
def test_intervals_name_the_winner_of_every_length(topo, model):
    """The intervals are exact: every whole length from 1 to past the last change lies in the
    interval of the algorithm that prices it fastest, each length priced on its own."""
    got = compare(topo, [], model)
    pieces = got.intervals()
    assert pieces[0][0] == 1
    assert pieces[-1][1] is None
    assert all(a[1] == b[0] and a[2] != b[2] for a, b in itertools.pairwise(pieces))
    last = max(pieces[-1][0], *(p.exact_from for p in got.predictions.values()))
    lengths = range(1, 2 * last + 2)
    expected = [min(ALGORITHMS, key=lambda n: (got.cycles(n, m), ALGORITHMS.index(n)))
                for m in lengths]
    holder = [next(name for start, stop, name in pieces if start <= m and (stop is None
                                                                           or m < stop))
              for m in lengths]
    assert holder == expected


def test_short_vectors_pay_for_the_entries_they_fill():
    """A host-style schedule of several collectives prices a vector too short for every block
    by the entries its elements fill: on a ring of 8, one element is one ring's block in each
    step, so half the entries of a vector that fills both rings' blocks move data, and the
    other ring's, which holds no element, are in no table."""
    got = compare(torus(8), [1, 16], CostModel(), algorithms=["ring"])
    ring = got.predictions["ring"]
    assert ring.exact_from == 16
    assert got.cycles("ring", 1) == pytest.approx(ring.cost.alpha / 2 + ring.cost.beta)
    assert got.cycles("ring", 16) == ring.cost.time(16)
    assert got.to_dict()["algorithms"]["ring"]["exact_from_elements"] == 16


def test_comparison_rows_and_winners():
    topo = torus((4, 4))
    got = compare(topo, [1, 64, 4096])
    assert list(got.predictions) == list(ALGORITHMS)
    assert got.sizes == (1, 64, 4096)
    for row in got.rows():
        assert row["winner"] == min(row["cycles"], key=row["cycles"].get)
        assert row["cycles"]["swing-b"] == got.predictions["swing-b"].cycles(row["elements"])
    assert got.rows()[-1]["cycles"]["swing-b"] == got.predictions["swing-b"].cost.time(4096)
    # The in-network allreduce sends each element once each way: it wins large vectors.
    assert got.rows()[-1]["winner"] == "innet"
    assert got.intervals()[-1][2] == "innet"
    data = got.to_dict()
    assert (data["unit"], data["size_unit"]) == ("cycles", "elements")
    assert data["model"] == CostModel().to_dict()
    assert [w["algorithm"] for w in data["winners"]] == [n for _, _, n in got.intervals()]
    assert "seconds" not in data["sizes"][0]
    timed = compare(topo, [8], CostModel(clock_hz=1e9), algorithms=["innet", "ring"])
    row = timed.to_dict()["sizes"][0]
    assert row["seconds"]["ring"] == pytest.approx(row["cycles"]["ring"] * 1e-9)


def test_striped_in_network_and_failed_links():
    topo = hyperx((4, 4))
    model = CostModel(local_bandwidth=None)
    s = stripe(topo, 2, model=model)
    got = compare(topo, [16], model, innet=s, algorithms=["innet", "swing-b"])
    assert got.predictions["innet"].cost == s.cost
    ring = torus(8)
    detour = compare(ring, [16], MODEL, algorithms=["ring"], failed_links=[(0, 1)])
    plain = compare(ring, [16], MODEL, algorithms=["ring"])
    # The message from 0 to 1 now goes the long way round: 7 hops.
    assert detour.predictions["ring"].max_hops == 7
    assert detour.cycles("ring", 16) > plain.cycles("ring", 16)
    grid = torus((4, 4))  # the default embedding avoids the failed links too
    slow = dataclasses.replace(MODEL, link_latencies={(7, 11): 20})  # the tree's link (7, 11)
    tree = compare(grid, [1], slow, algorithms=["innet"], failed_links=[(7, 11)])
    assert tree.predictions["innet"].cost == embedding_cost(
        embed(grid, failed_links=[(7, 11)]), grid, slow)
    assert tree.predictions["innet"].cost != embedding_cost(embed(grid), grid, slow)


def test_skipped_algorithms_are_reported(monkeypatch):
    import innet.gen.swing as swing

    real = swing.build_schedule

    def refuse_ring(name, *args, **kwargs):
        if name == "ring":
            raise ValueError("Too many entries")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(swing, "build_schedule", refuse_ring)
    got = compare(torus(4), [1], algorithms=["ring", "swing-l"])
    assert got.skipped == {"ring": "Too many entries"}
    assert list(got.predictions) == ["swing-l"]
    with pytest.raises(ValueError, match=r"^No algorithm could be priced on this network: "
                                         r"ring: Too many entries$"):
        compare(torus(4), [1], algorithms=["ring"])


def test_compare_errors():
    topo = torus(4)
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not str$"):
        compare("torus", [1])
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not NoneType$"):
        host_shape(None)
    with pytest.raises(TypeError, match=r"^Model must be a CostModel, not str$"):
        host_prediction(topo, "ring", model="x")
    with pytest.raises(ValueError, match=r"^Sizes must be non-negative element counts, "
                                         r"not -1$"):
        compare(topo, [-1])
    with pytest.raises(ValueError, match=r"^Sizes must be at most 9007199254740992 elements, "
                                         r"not a 1027-bit integer$"):
        compare(topo, [10**309])
    with pytest.raises(ValueError, match=r"^Non-power-of-two mode must be one of auto, paper, "
                                         r"fold, not 'bogus'$"):
        compare(topo, [1], nonpow2="bogus")
    with pytest.raises(ValueError, match=r"^Algorithm must be one of innet, swing-l, swing-b, "
                                         r"recdoub-l, recdoub-b, ring, bucket, not 'tree'$"):
        compare(topo, [1], algorithms=["tree"])
    with pytest.raises(ValueError, match=r"^Algorithms must be distinct and at least one, "
                                         r"not \('ring', 'ring'\)$"):
        compare(topo, [1], algorithms=["ring", "ring"])
    with pytest.raises(ValueError, match=r"^Compare prices allreduces, not a reduce$"):
        compare(topo, [1], innet=embed(topo, kind="reduce"))
    with pytest.raises(ValueError, match=r"^Host-style schedules run on every node, so compare "
                                         r"needs an allreduce over all 4 nodes, not 2$"):
        compare(topo, [1], innet=embed(topo, [0, 1]))
    with pytest.raises(TypeError, match=r"^In-network collective must be an Embedding or a "
                                        r"Striping, not int$"):
        compare(topo, [1], innet=3)


def run(*args):
    done = CliRunner().invoke(main, ["embed", *args])
    return done.exit_code, done.output


def test_cli_compare_table():
    code, out = run("torus", "--shape", "4x4", "--compare", "--sizes", "1,64,4K")
    assert code == 0, out
    text = out[out.index("which allreduce wins"):]
    got = compare(torus((4, 4)), [1, 64, 4096])
    header = next(line for line in text.splitlines() if "innet" in line and "swing-l" in line)
    assert header.split() == list(ALGORITHMS)
    for row in got.rows():
        line = next(line for line in text.splitlines()
                    if line.split()[:1] == [format_count(row["elements"])])
        cells = line.split()
        assert cells[-1] == row["winner"]
        assert [float(c) for c in cells[1:-1]] == [round(row["cycles"][n]) for n in ALGORITHMS]
    fastest = text[text.index("fastest: ") + 9:].splitlines()[0].removesuffix(" elements")
    parts = fastest.split(", ")
    assert len(parts) == len(got.intervals())
    for part, (start, stop, name) in zip(parts, got.intervals(), strict=True):
        assert part.split()[0] == name
        assert (format_count(start) in part.split()) == (start > 1 or stop == 2)
        assert (stop is None) == part.endswith(" on")


def test_cli_compare_prices_mul_through_the_multipliers():
    from innet.gen.embed import embed, embedding_cost

    code, out = run("torus", "--shape", "3x3", "--op", "mul", "--compare", "--sizes", "1")
    assert code == 0, out
    assert ("engine front end 4, reduction 9 cycles per level of ceil(log2 k) for k ports (mul);"
            in out)
    alpha = embedding_cost(embed(torus((3, 3)), op="mul"), torus((3, 3))).alpha
    assert f"predicted: alpha {alpha:g} cycles" in out
    assert alpha > embedding_cost(embed(torus((3, 3))), torus((3, 3))).alpha


def test_cli_compare_json():
    code, out = run("polarfly", "--q", "3", "--compare", "--sizes", "1..1K", "--json",
                    "--step-overhead", "40", "--link-latency", "1", "--clock-mhz", "500")
    assert code == 0, out
    data = json.loads(out)
    model = CostModel(step_overhead=40, link_latency=1, clock_hz=500e6)
    expected = compare(polarfly(3), parse_sizes("1..1K"), model).to_dict()
    assert data["compare"] == json.loads(json.dumps(expected))
    assert data["compare"]["sizes"][0]["seconds"]["innet"] == pytest.approx(
        data["compare"]["sizes"][0]["cycles"]["innet"] * 2e-9)
    assert data["predicted"]["alpha_cycles"] == expected["algorithms"]["innet"]["alpha_cycles"]


def test_cli_compare_striped():
    code, out = run("hyperx", "--shape", "4x4", "--trees", "2", "--compare", "--json",
                    "--local-bandwidth", "inf")
    assert code == 0, out
    data = json.loads(out)
    assert data["compare"]["algorithms"]["innet"]["beta_cycles_per_element"] == \
        data["predicted"]["beta_cycles_per_element"]


@pytest.mark.parametrize(("args", "message"), [
    (["--compare", "--collective-kind", "reduce"],
     "--compare prices allreduces, not --collective-kind reduce"),
    (["--compare", "--participants", "0-3"],
     ("--compare cannot be combined with --participants: host-style schedules run on every "
      "node")),
    (["--compare", "--fail-switches", "3"],
     ("--compare cannot be combined with --fail-switches: host-style schedules run on every "
      "node")),
    (["--sizes", "1,2"], "--sizes applies to --compare; add --compare"),
    (["--clock-mhz", "500"],
     ("--clock-mhz applies to --compare and to piuma, not to torus without --compare; add "
      "--compare")),
    (["--compare", "--sizes", "1,x"], "--sizes must be a size such as 64, 4K or 1Mi, not 'x'"),
])
def test_cli_compare_errors(args, message):
    code, out = run("torus", "--shape", "4x4", *args)
    assert code == 2
    assert out.strip().splitlines()[-1] == f"innet: error: {message}"


def test_cli_help_documents_compare():
    code, out = run("torus", "--help")
    assert code == 0
    for option in ("--compare", "--sizes", "--step-overhead", "--front-latency", "--reduce-latency",
                   "--link-bandwidth", "--local-bandwidth", "--clock-mhz"):
        assert option in out
    assert math.isfinite(CostModel().step_overhead)
