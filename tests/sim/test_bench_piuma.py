"""The PIUMA scale benchmarks: report what the analysis computes on the real network, count the
network as the paper's structure does, measure each size in its own process, and fail in one
clear line."""

import math

import pytest

from innet.gen.analysis.piuma import TABLE1, closed_form, eq1_bound, sweep_shape
from innet.sim import bench
from innet.sim.bench import piuma_scale


def expected_links(shape):
    """Table 1 nodes: 16 sockets of 2x4 meshes (10 links each), all-to-all sockets
    (C(16, 2)), and a HyperX of nodes (each node has S_d - 1 peers in every dimension)."""
    nodes = math.prod(shape)
    per_node = TABLE1.sockets * (2 * 3 + 4 * 1) + math.comb(TABLE1.sockets, 2)
    return nodes * per_node + sum(nodes * (s - 1) // 2 for s in shape)


@pytest.mark.parametrize("count", [1, 4])
def test_measure_reports_the_generated_analysis(count):
    report = piuma_scale.measure(count)
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
    line = piuma_scale.summarise(report)
    assert line.startswith(f"{count:>6,} nodes (")
    assert line.endswith("closed form agrees")


def test_the_quick_case_measures_in_a_child_process():
    (only,) = bench.select(quick=True, only=["piuma_scale"])
    (result,) = bench.run([only], bench.Options(quick=True))
    assert result["status"] == "ok", result
    assert result["group"] == "analysis"
    assert result["nodes"] == [4, 4]
    assert result["links"] == expected_links((4, 4))
    assert result["size"] == "16 nodes (4x4): 2,048 switches, 4,528 links"
    assert result["summary"].startswith("    16 nodes (4x4): 2,048 switches, 4,528 links;")
    full = {c.name for c in bench.select() if c.group == "analysis"}
    assert full == {"piuma_scale_1k", "piuma_scale_4k"}


def test_errors():
    with pytest.raises(ValueError, match=r"^Node count must be a power of two, not 12$"):
        piuma_scale.measure(12)
    with pytest.raises(RuntimeError, match=r"^Measuring 12 nodes failed: ValueError: Node "
                                           r"count must be a power of two, not 12$"):
        piuma_scale.measure_in_child(12)
