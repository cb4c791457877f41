"""``innet topo piuma`` and ``innet analyze piuma``: JSON against the library, files, errors."""

import json
import math

import pytest

from innet.gen.analysis.piuma import SystemParams, closed_form
from innet.gen.topology import piuma


def test_topo_piuma_json(innet):
    done = innet("topo", "piuma", "--nodes", "3x2", "--sockets", "3", "--cores", "4",
                 "--latency-core", "2ns", "--latency-socket", "0.01us", "--json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    topo = piuma((3, 2), 3, 4, latency_core=2, latency_socket=10)
    assert s["kind"] == "piuma"
    assert s["fingerprint"] == topo.fingerprint
    assert s["nodes"] == 6 * 3 * 4
    assert s["links"] == topo.num_links
    p = s["piuma"]
    assert p["latency_ns"] == {"core": 2.0, "socket": 10.0, "node": 50.0}
    assert p["links_by_level"] == {"core": 6 * 3 * 4, "socket": 6 * math.comb(3, 2),
                                   "node": 2 * 3 + 3}
    assert p["level_diameters"] == {"core": 2, "socket": 1, "node": 2}


def test_topo_piuma_text_and_export(innet, tmp_path):
    out = tmp_path / "p.json"
    done = innet("topo", "piuma", "--nodes", "2", "--sockets", "2", "--cores", "2",
                 "--placement", "hub", "-o", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "PIUMA 2 nodes x 2 sockets x 2 cores (1x2 mesh), hub placement"
    assert any(line.split()[:2] == ["links", "by"] for line in lines)
    assert json.loads(out.read_text())["kind"] == "piuma"


def test_embed_piuma_compare_prices_host_routes_by_level(innet):
    """innet embed piuma --compare: the host-style schedules are priced route by route with
    every link's level latency, as innet.gen.compare.compare does with the same model."""
    from innet.gen.compare import compare
    from innet.gen.cost import CostModel
    from innet.gen.topology import link_latencies

    done = innet("embed", "piuma", "--nodes", "2", "--sockets", "2", "--cores", "4",
                 "--compare", "--sizes", "1,64", "--json")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)["compare"]["algorithms"]
    topo = piuma((2,), 2, 4)
    model = CostModel(link_latencies=link_latencies(topo), clock_hz=1e9)  # 1 cycle per ns
    want = compare(topo, [1, 64], model).predictions
    assert set(got) == set(want)
    for name, prediction in want.items():
        assert got[name]["alpha_cycles"] == pytest.approx(prediction.cost.alpha)
        assert got[name]["beta_cycles_per_element"] == pytest.approx(prediction.cost.beta)
    # The 50 ns link between the two nodes is on recursive doubling's last step's routes.
    hops_only = compare(topo, [1], CostModel(), algorithms=("recdoub-l",)).predictions
    assert got["recdoub-l"]["alpha_cycles"] > hops_only["recdoub-l"].cost.alpha + 50


@pytest.mark.parametrize("clock_mhz", [None, "2500"])
def test_embed_piuma_prices_links_by_level(innet, clock_mhz, tmp_path):
    """innet embed piuma: the library's tree (PIUMA's Fig. 2/3 embedding), each link costing its
    level's latency at the clock; with switches, endpoints and engines free its alpha is
    twice the longest leaf-to-root latency, the analysis' alpha (Eq. 1's quantity)."""
    from innet.gen.embed import embed
    from innet.gen.topology import link_latencies

    clock = ["--clock-mhz", clock_mhz] if clock_mhz else []
    done = innet("embed", "piuma", "--nodes", "2x2", "--sockets", "2", "--cores", "4",
                 "--latency-node", "40ns", "--switch-latency", "0", "--local-latency", "0",
                 "--front-latency", "0", "--reduce-latency", "0", "--json", "-o", str(tmp_path),
                 *clock)
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    topo = piuma((2, 2), 2, 4, latency_node=40)
    e = embed(topo)
    assert s["topology"] == topo.fingerprint
    assert s["root"] == e.root
    assert [tuple(link) for link in s["links_used"]] == [tuple(link) for link in e.links]
    lat = link_latencies(topo)
    parent = {child: (par, lat[min(child, par), max(child, par)])
              for child, _, par, _ in s["links_used"]}

    def up(u):
        return 0.0 if u == s["root"] else parent[u][1] + up(parent[u][0])

    per_ns = float(clock_mhz or 1000) / 1000
    alpha = 2 * max(up(u) for u in range(topo.nodes)) * per_ns
    assert s["predicted"]["alpha_cycles"] == pytest.approx(alpha, rel=1e-12)
    closed = closed_form((2, 2), SystemParams(sockets=2, cores=4, latency_node=40))
    assert alpha == pytest.approx(closed.alpha * per_ns, rel=1e-12)
    assert json.loads((tmp_path / "embedding.json").read_text()) == s


def test_analyze_one_network_json(innet, tmp_path):
    done = innet("analyze", "piuma", "--nodes", "2x2", "--sockets", "2", "--cores", "4",
                 "--json", "-o", str(tmp_path / "a.json"))
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    assert json.loads((tmp_path / "a.json").read_text()) == s
    (point,) = s["points"]
    closed = closed_form((2, 2), SystemParams(sockets=2, cores=4))
    assert point["source"] == "generated"
    assert point["alpha_ns"] == closed.alpha
    assert point["round_latencies_ns"] == list(closed.rounds)
    assert point["eq1_bound_ns"] == closed.bound
    assert "claims" not in s


def test_analyze_sweep_text_json_and_plot(innet, tmp_path):
    plot = tmp_path / "fig4.png"
    args = ("analyze", "piuma", "--sockets", "2", "--cores", "2", "--max-nodes", "16",
            "--generate-up-to", "4")
    done = innet(*args, "--plot", str(plot), "--json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    assert [p["node_count"] for p in s["points"]] == [1, 2, 4, 8, 16]
    assert [p["source"] for p in s["points"]] == ["generated"] * 3 + ["closed form"] * 2
    assert {c["key"] for c in s["claims"]} >= {"latency", "latency-ratio", "throughput-ratio",
                                               "128k-one-node", "drop-innet", "drop-host"}
    assert set(s["implied_round_overhead_ns"]) == {"latency-ratio", "128k-one-node",
                                                   "drop-host"}
    assert plot.read_bytes()[:4] == b"\x89PNG"
    text = innet(*args)
    assert text.returncode == 0, text.stderr
    assert "the paper's claims" in text.stdout.splitlines()


@pytest.mark.parametrize(("args", "message"), [
    (["topo", "piuma", "--nodes", "4y4"], ("Nodes must be sizes joined by 'x' such as 4x4, "
                                          "not '4y4'")),
    (["topo", "piuma", "--nodes", "2", "--latency-node", "fast"],
     "--latency-node must be a time such as 5ns or 0.5us, not 'fast'"),
    (["topo", "piuma", "--nodes", "2", "--core-mesh", "2by4"],
     "Core mesh must be rows x cols such as 2x4, not '2by4'"),
    (["analyze", "piuma", "--max-nodes", "12"], "Node count must be a power of two, not 12"),
    (["analyze", "piuma", "--bw-mem", "51.2GB"],
     "--bw-mem must be a bandwidth such as 51.2Gbps, not '51.2GB'"),
    (["analyze", "piuma", "--vector", "0"], "--vector must be at least 1, not '0'"),
    (["analyze", "piuma", "--generate-up-to", "many"],
     "--generate-up-to must be a size such as 64, 4K or 1Mi, not 'many'"),
    (["analyze", "piuma", "--max-nodes", "4M"], "--max-nodes must be at most 1,048,576, not '4M'"),
    (["analyze", "piuma", "--flags", "2000"],
     "Invalid value for '--flags': 2000 is not in the range 0<=x<=1024."),
    (["analyze", "piuma", "--max-nodes", "16KiB"],
     "--max-nodes must be a size such as 64, 4K or 1Mi, not '16KiB'"),
    (["analyze", "piuma", "--nodes", "2", "--latency-core", "0ns"],
     "Latency of the core level must be finite and > 0 ns, not 0.0"),
    (["analyze", "piuma", "--nodes", "2", "--cores", "8", "--core-mesh", "3x3"],
     "Mesh 3x3 has 9 places, not one for each of the 8 cores"),
    (["analyze", "piuma", "--nodes", "2", "--max-nodes", "4"],
     "--max-nodes applies to the sweep, not to one network given by --nodes"),
    (["analyze", "piuma", "--nodes", "2", "--dims", "2"],
     "--dims applies to the sweep, not to one network given by --nodes"),
    (["embed", "piuma", "--nodes", "2", "--latency-socket", "-1ns"],
     "--latency-socket must be a time such as 5ns or 0.5us, not '-1ns'"),
    (["embed", "piuma", "--nodes", "2", "--link-latency", "3"],
     ("--link-latency does not apply to piuma: every link costs its level's latency at "
      "--clock-mhz")),
])
def test_errors_are_one_line(innet, args, message, tmp_path):
    plot = tmp_path / "never.png"
    done = innet(*args, "--plot", str(plot)) if args[0] == "analyze" else innet(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"innet: error: {message}\n"
    assert not plot.exists()
