"""The PIUMA scale measurement script: reports what the analysis computes on the real network,
counts the network as the paper's structure does, and fails in one clear line."""

import argparse
import json
import math

import pytest

from innet.gen.analysis.piuma import TABLE1, closed_form, eq1_bound, sweep_shape
from innet.sim.bench import piuma_scale as piuma_measure


def expected_links(shape):
    """Table 1 nodes: 16 sockets of 2x4 meshes (10 links each), all-to-all sockets
    (C(16, 2)), and a HyperX of nodes (each node has S_d - 1 peers in every dimension)."""
    nodes = math.prod(shape)
    per_node = TABLE1.sockets * (2 * 3 + 4 * 1) + math.comb(TABLE1.sockets, 2)
    return nodes * per_node + sum(nodes * (s - 1) // 2 for s in shape)


@pytest.mark.parametrize("count", [1, 4])
def test_measure_reports_the_generated_analysis(count):
    report = piuma_measure.measure(count)
    shape = sweep_shape(count, 2)
    closed = closed_form(shape)
    assert report["nodes"] == list(shape)
    assert report["node_count"] == count
    assert report["switches"] == count * TABLE1.sockets * TABLE1.cores
    assert report["links"] == expected_links(shape)
    assert list(report["seconds"]) == ["build", "embed", "verify", "shortest-path tree",
                                       "host rounds"]
    assert all(s >= 0 for s in report["seconds"].values())
    assert report["total_seconds"] >= sum(report["seconds"].values()) * (1 - 1e-9)
    assert report["peak_rss_mb"] > 0
    assert report["alpha_ns"] == report["closed_form_alpha_ns"] == closed.alpha
    dims = sum(s > 1 for s in shape)
    assert report["eq1_bound_ns"] == eq1_bound(dims, 4)
    assert report["rounds_ns"] == report["closed_form_rounds_ns"] == list(closed.rounds)
    assert len(report["rounds_ns"]) == int(math.log2(report["switches"]))
    line = piuma_measure.summarise(report)
    assert line.startswith(f"{count:>6,} nodes (")
    assert line.endswith("closed form agrees")


def test_main_runs_each_size_in_a_child(capsys):
    assert piuma_measure.main(["2", "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["nodes"] == [2]
    assert report["links"] == expected_links((2,))
    assert piuma_measure.main(["1"]) == 0
    assert capsys.readouterr().out.startswith("     1 nodes (1): 128 switches, 280 links;")


def test_errors(capsys):
    with pytest.raises(ValueError, match=r"^Node count must be a power of two, not 12$"):
        piuma_measure.measure(12)
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"^Node count must be a number such as 64 or 16K, not 'lots'$"):
        piuma_measure._count("lots")
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"^Node count must be a power of two, not 3072$"):
        piuma_measure._count("3K")
    with pytest.raises(RuntimeError, match=r"^Measuring 12 nodes failed: python -m "
                       r"innet\.sim\.bench\.piuma_scale: error: argument counts: Node "
                       r"count must be a power of two, not 12$"):
        piuma_measure.measure_in_child(12)
    with pytest.raises(SystemExit, match=r"^2$"):
        piuma_measure.main(["4", "--dims", "0"])
    assert capsys.readouterr().err.endswith("error: --dims must be at least 1, not 0\n")
    assert piuma_measure._count("16k") == 16384
