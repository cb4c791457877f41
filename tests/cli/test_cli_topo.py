"""``innet topo``: summaries, JSON fields, exports, plots and one-line errors."""

import json

import pytest

from innet.gen import export
from innet.gen.topology import Topology, polarfly, torus


def test_polarfly_json_follows_the_formulas(innet):
    done = innet("topo", "polarfly", "--q", "9", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    s = json.loads(done.stdout)
    q = 9
    assert s["kind"] == "polarfly"
    assert s["nodes"] == q * q + q + 1
    assert s["links"] == q * (q + 1) ** 2 // 2
    assert (s["radix"], s["min_degree"], s["diameter"]) == (q + 1, q, 2)
    assert s["moore_bound"] == 1 + (q + 1) + (q + 1) * q
    assert s["moore_efficiency"] == pytest.approx(s["nodes"] / s["moore_bound"])
    assert s["avg_shortest_path"] == pytest.approx(2 - 2 * s["links"] / (s["nodes"] * (s["nodes"]
                                                                                        - 1)))
    assert s["triangles"] == (q + 1) * q * (q - 1) // 6
    assert (s["quadrics"], s["v1"], s["v2"]) == (q + 1, q * (q + 1) // 2, q * (q - 1) // 2)
    assert s["clusters"] == [q + 1] + [q] * q
    assert s["fingerprint"] == polarfly(9).fingerprint


def test_expanded_polarfly_and_analyses(innet):
    done = innet("topo", "polarfly", "--q", "5", "--r0", "1", "--r1", "2", "--json", "--bisection",
                 "--failures", "--runs", "3")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    assert s["nodes"] == 31 + 6 + 2 * 5
    assert s["diameter"] == 3
    assert s["params"] == {"q": 5, "r0": 1, "r1": 2, "starter": s["starter"]}
    assert s["clusters"] == [6, 5, 5, 5, 5, 5, 6, 5, 5]
    assert 0 < s["bisection"]["fraction"] < 1
    assert len(s["failures"]["disconnection_ratios"]) == 3


@pytest.mark.parametrize(("args", "nodes", "diameter", "radix"), [
    (["torus", "--shape", "8x8"], 64, 8, 4),
    (["torus", "--shape", "8x8", "--mesh"], 64, 14, 4),
    (["torus", "--shape", "6"], 6, 3, 2),
    (["hyperx", "--shape", "4x4x4"], 64, 3, 9),
])
def test_grids(innet, args, nodes, diameter, radix):
    done = innet("topo", *args, "--json")
    assert done.returncode == 0, done.stderr
    s = json.loads(done.stdout)
    assert (s["nodes"], s["diameter"], s["radix"]) == (nodes, diameter, radix)
    assert "quadrics" not in s


def test_readable_summary_agrees_with_json(innet):
    text = innet("topo", "polarfly", "--q", "7").stdout.splitlines()
    s = json.loads(innet("topo", "polarfly", "--q", "7", "--json").stdout)
    assert text[0] == "PolarFly q=7 (ER_7)"
    rows = {line.split()[0]: line.split(None, 1)[1] for line in text[1:]}
    assert rows["nodes"] == str(s["nodes"])
    assert rows["links"] == str(s["links"])
    assert rows["triangles"].startswith(f"{s['triangles']} (21 intra-cluster, 35 inter-cluster)")
    assert rows["fingerprint"] == s["fingerprint"]
    assert rows["clusters"] == f"C0: 8, C1-C7: 7 (starter quadric {s['starter']})"


def test_exports_and_plot(innet, tmp_path):
    target = tmp_path / "out" / "pf.json"
    plot = tmp_path / "pf.png"
    done = innet("topo", "polarfly", "--q", "5", "--export", "json", "-o", str(target),
                 "--plot", str(plot))
    assert done.returncode == 0, done.stderr
    assert Topology.from_json(target.read_text()) == polarfly(5)
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert f"wrote export: {target}" in done.stdout
    graphml = tmp_path / "t.graphml"
    assert innet("topo", "torus", "--shape", "3x3", "-o", str(graphml)).returncode == 0
    assert export.from_graphml(graphml.read_text()) == torus((3, 3))
    anynet = tmp_path / "t.txt"
    done = innet("topo", "torus", "--shape", "3x3", "--export", "anynet", "--endpoints", "2", "-o",
                 str(anynet), "--json")
    assert json.loads(done.stdout)["written"] == {"export": str(anynet)}
    assert anynet.read_text() == export.anynet(torus((3, 3)), 2)


@pytest.mark.parametrize(("args", "message"), [
    (["polarfly", "--q", "6"], "q must be a prime power, not 6"),
    (["polarfly", "--q", "1"], "q must be between 2 and 512, not 1"),
    (["polarfly", "--q", "7", "--r1", "8"], "r1 must be between 0 and q=7, not 8"),
    (["polarfly", "--q", "8", "--r1", "1"],
     "Non-quadric cluster replication needs odd q (Proposition V.4), not q=8"),
    (["torus", "--shape", "4x0"], "Dimension 1 of shape 4x0 must be at least 1, not 0"),
    (["hyperx", "--shape", "abc"], "Shape must be sizes joined by 'x' such as 4x4x4, not 'abc'"),
    (["hyperx", "--q", "3"], "--q does not apply to hyperx, which takes --shape"),
    (["piuma", "--sockets", "2"], "piuma needs --nodes, such as 2x2"),
    (["torus", "--shape", "4", "--starter", "1"], "--starter applies to polarfly, not torus"),
    (["torus", "--shape", "4x4", "--failures", "--seed", "-1"],
     "Invalid value for '--seed': -1 is not in the range 0<=x<=4294967295."),
])
def test_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    out = tmp_path / "x.json"
    extra = ["--plot", str(tmp_path / "x.png")] if args[0] == "polarfly" else []
    done = innet("topo", *args, "-o", str(out), *extra)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "message"), [
    (["torus", "--shape", "4", "--export", "json"], "--export json needs -o PATH"),
    (["torus", "--shape", "4", "-o", "x.foo"],
     "Cannot tell the export format from 'x.foo'; name it with --export"),
])
def test_usage_errors(innet, tmp_path, args, message):
    done = innet("topo", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []
