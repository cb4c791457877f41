"""`innet embed`: the JSON contract, output files, and one-line errors."""

import json

import pytest
from click.testing import CliRunner

from innet.gen.embed import CostModel, Embedding, embed, embedding_cost, verify
from innet.gen.routing import booksim_routing_table, routing
from innet.gen.topology import hyperx, polarfly, torus
from innet.sim.cli import main


def run(*args):
    done = CliRunner().invoke(main, ["embed", *args])
    return done.exit_code, done.output




def test_json_contract_polarfly():
    code, out = run("polarfly", "--q", "3", "--json")
    assert code == 0, out
    data = json.loads(out)
    topo = polarfly(3)
    e = embed(topo)
    assert data["root"] == e.root
    assert data["depth"] == e.depth == 2
    assert data["collective_id"] == 0
    assert all(set(s) == {"node", "req_in", "req_out", "resp_in", "resp_out"}
               for s in data["switches"])
    root = next(s for s in data["switches"] if s["node"] == e.root)
    assert root["req_out"] is None
    assert root["resp_in"] is None
    assert "local" in root["req_in"]
    assert data["links_used"] == [list(link) for link in e.links]
    cost = embedding_cost(e, topo, CostModel())
    assert data["predicted_latency_cycles"] == cost.time(1)
    assert data["predicted"] == {"alpha_cycles": cost.alpha,
                                 "beta_cycles_per_element": cost.beta, "elements": 1}
    assert data["topology"] == topo.fingerprint
    assert data["network"] == {"kind": "polarfly", "params": {"q": 3, "r0": 0, "r1": 0},
                               "nodes": 13, "links": 24, "radix": 4}
    rebuilt = Embedding.from_dict(data)
    assert rebuilt == e
    verify(rebuilt, topo)


def test_json_options_hyperx_and_torus():
    code, out = run("hyperx", "--shape", "4x4", "--participants", "0-3,9", "--root", "2",
                    "--collective-id", "5", "--op", "max", "--dtype", "fp32",
                    "--collective-kind", "reduce", "--elements", "100", "--link-latency", "2",
                    "--switch-latency", "3", "--local-latency", "0", "--json")
    assert code == 0, out
    data = json.loads(out)
    topo = hyperx((4, 4))
    e = embed(topo, [0, 1, 2, 3, 9], root=2, collective_id=5, op="max", dtype="fp32",
              kind="reduce")
    assert Embedding.from_dict(data) == e
    cost = embedding_cost(e, topo, CostModel(link_latency=2, switch_latency=3, local_latency=0))
    assert data["predicted_latency_cycles"] == cost.time(100)
    code, out = run("torus", "--shape", "3x4", "--mesh", "--fail-links", "0-1,5-6", "--json")
    assert code == 0, out
    mesh = torus((3, 4), mesh=True)
    data = json.loads(out)
    assert Embedding.from_dict(data) == embed(mesh, failed_links=[(0, 1), (5, 6)])
    assert data["failed_links"] == [[0, 1], [5, 6]]
    code, out = run("polarfly", "--q", "3", "--r0", "1", "--json")
    assert code == 0, out
    assert Embedding.from_dict(json.loads(out)) == embed(polarfly(3, r0=1))


def test_trees_json():
    code, out = run("torus", "--shape", "4x4", "--trees", "3", "--collective-id", "2", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert [t["collective_id"] for t in data["trees"]] == [2, 3, 4]
    assert len({t["root"] for t in data["trees"]}) == 3
    assert data["max_link_load"] == max(load for _, _, load in data["link_load"])
    assert data["predicted_gain"] == pytest.approx(1 / data["max_link_load"])
    assert data["predicted_latency_cycles"] == pytest.approx(
        data["predicted"]["alpha_cycles"] + data["max_link_load"])
    verify([Embedding.from_dict(t) for t in data["trees"]], torus((4, 4)))
    # Endpoints that are never the bottleneck: the gain is the link-load gain.
    code, out = run("hyperx", "--shape", "8x8", "--trees", "4", "--local-bandwidth", "inf",
                    "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["max_link_load"] < 1
    assert data["predicted_gain"] == pytest.approx(1 / data["max_link_load"])
    code, out = run("hyperx", "--shape", "8x8", "--trees", "4", "--json")
    assert json.loads(out)["predicted_gain"] == pytest.approx(1.0)  # one local port


def test_readable_summary_and_files(innet, tmp_path):
    done = innet("embed", "polarfly", "--q", "2", "-o", "out", "--booksim-routing", "pf2.route",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    e = embed(polarfly(2))
    assert lines[0] == "PolarFly q=2: 7 switches, 9 links, radix 3"
    assert lines[1] == (f"allreduce add int32 on collective id 0: 7 participants, root {e.root}, "
                        f"depth 2, 7 switches, 6 links")
    assert lines[3].split() == ["node", "req_in", "req_out", "resp_in", "resp_out"]
    assert lines[4 + e.root].split()[2:4] == ["root", "root"]
    assert lines[-2:] == ["wrote out/embedding.json", "wrote pf2.route (BookSim2 routing table)"]
    written = json.loads((tmp_path / "out" / "embedding.json").read_text())
    _code, out = run("polarfly", "--q", "2", "--json")
    assert written == json.loads(out)
    assert (tmp_path / "pf2.route").read_text() == booksim_routing_table(routing(polarfly(2)))


@pytest.mark.parametrize(("args", "message"), [
    (["polarfly", "--q", "6"], "q must be a prime power, not 6"),
    (["polarfly", "--q", "3", "--participants", "a"],
     "--participants must be node ids such as 0,3,5 or 0-7, not 'a'"),
    (["polarfly", "--q", "3", "--participants", "5-2"],
     "--participants must be node ids such as 0,3,5 or 0-7, not '5-2'"),
    (["polarfly", "--q", "3", "--fail-links", "0:1"],
     "--fail-links must be links u-v separated by commas, not '0:1'"),
    (["polarfly", "--q", "3", "--root", "x"], "--root must be auto or a node id, not 'x'"),
    (["polarfly", "--q", "3", "--trees", "0"], "--trees must be at least 1, not 0"),
    (["polarfly", "--q", "3", "--trees", "14"],
     "--trees must be at most the number of participants (13), not 14"),
    (["polarfly", "--q", "3", "--trees", "4", "--participants", "0-2"],
     "--trees must be at most the number of participants (3), not 4"),
    (["polarfly", "--q", "3", "--trees", "13", "--fail-switches", "5"],
     "--trees must be at most the number of participants (12), not 13"),
    (["polarfly", "--q", "3", "--elements", "-1"],
     "--elements must be a size such as 64, 4K or 1Mi, not '-1'"),
    (["polarfly", "--q", "3", "--root", "1", "--trees", "2"],
     "--root and --trees > 1 cannot be combined: each tree has its own root"),
    (["polarfly", "--q", "3", "--participants", "0,20"],
     "--participants names node 20, outside 0..12"),
    (["polarfly", "--q", "3", "--participants", "0-999999999"],
     "--participants names node 999999999, outside 0..12"),
    (["polarfly", "--q", "3", "--root", "13"], "--root names node 13, outside 0..12"),
    (["polarfly", "--q", "3", "--fail-links", "0-99"], "--fail-links names node 99, outside 0..12"),
    (["polarfly", "--q", "3", "--fail-switches", "1" * 5000],
     f"--fail-switches names node {'1' * 40}, outside 0..12"),
    (["torus", "--shape", "6", "--participants", "0,3", "--root", "0", "--fail-switches", "1,5"],
     "Participant 3 cannot reach root 0: the failed links and switches cut it off"),
    (["hyperx", "--shape", "4x0"], "Dimension 1 of shape 4x0 must be at least 1, not 0"),
    (["hyperx", "--shape", "4x4", "--op", "xor", "--dtype", "fp32"],
     "Operation xor is not defined on fp32"),
    (["torus", "--shape", "256x256", "--booksim-routing", "t.route"],
     ("A routing table of 65,536 x 65,536 entries is too large; at most 2,147,483,648 are "
      "supported")),
    (["torus", "--shape", "3x3", "--participants", "0,1", "--fail-switches", "4",
      "--booksim-routing", "t.route"],
     "Node 4 cannot be reached from node 0; the table has no register form"),
])
def test_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    done = innet("embed", *args, "-o", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []
