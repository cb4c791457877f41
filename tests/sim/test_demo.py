"""``innet demo --quick``: the real flow end to end (Verilator), every algorithm bit-exact."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_innet

from innet.gen.image import decode
from innet.gen.topology import polarfly
from innet.sim.report import demo

pytestmark = pytest.mark.rtl


def test_demo_is_correct_and_writes_every_file_decodable(tmp_path):
    # One test for the one run (a module fixture would run the demo once per xdist worker).
    out = tmp_path / "innet-demo"
    result = run_innet("demo", "--quick", "--json", "-o", str(out))
    assert result.returncode == 0, result.stderr
    check_report(result)
    check_files(out)


def check_report(result):
    report = json.loads(result.stdout)
    assert report["correct"] is True
    assert set(report["algorithms"]) == set(demo.ALGOS)
    for algo, entry in report["algorithms"].items():
        assert entry["correct"] is True, algo
        assert set(entry["latency_cycles"]) == {"1", "64"}
        for size, cycles in entry["latency_cycles"].items():
            assert cycles > 0
            assert entry["throughput_elems_per_cycle"][size] == pytest.approx(int(size) / cycles)
            assert entry["predicted_cycles"][size] > 0
    # The table's runs with the endpoints' backpressure, then the headline's runs without it.
    runs = report["runs"]
    assert len(runs) == len(demo.ALGOS) * 2 + 2
    assert all(run["p2p_sent"] == run["p2p_received"] for run in runs)
    assert all(run["backpressure"] == 0.25 for run in runs[:-2])
    quiet = {run["scenario"]["algo"]: run for run in runs[-2:]}
    assert set(quiet) == {"innet", "swing-l"}
    assert all(run["backpressure"] == 0 and run["scenario"]["elements"] == 1 and run["correct"]
               for run in quiet.values())
    # Without backpressure the in-network result reaches every endpoint in the modelled cycle.
    assert quiet["innet"]["arrivals"] == quiet["innet"]["predicted_arrivals"]
    # The headline latency figure is measured on those runs.
    latency = report["headline"]["latency"]
    assert latency["measured"] == pytest.approx(quiet["swing-l"]["latency_cycles"]
                                                / quiet["innet"]["latency_cycles"])
    assert latency["correct"] is True
    assert report["headline"]["throughput"]["measured"] is None  # 4096 not in --quick


def check_files(out):
    assert sorted(p.name for p in out.iterdir()) == sorted(demo.FILES.values())
    topo = polarfly(3)
    images = [decode((out / "image.bin").read_bytes()), decode((out / "image.hex").read_text()),
              decode((out / "image.json").read_text())]
    assert images[0] == images[1] == images[2]
    assert images[0].topology.fingerprint == topo.fingerprint
    # The image is the simulated network's: its map parameters, the demo's tree.
    from innet.gen.image import embeddings
    from innet.sim.network import network_sizes

    sizes = network_sizes(topo, demo.MIN_MEMORY)
    assert images[0].params.vector_depth == sizes["vector_depth"]
    assert images[0].params.step_depth == sizes["step_depth"]
    assert images[0].params.collective_ids == sizes["collective_ids"]
    assert images[0].params.radix == topo.radix
    report = json.loads((out / "report.json").read_text())
    (tree,) = embeddings(images[0])
    assert tree.root == report["embedding"]["root"]
    assert len(tree.participants) == topo.nodes
    ports = json.loads((out / "network.json").read_text())
    assert ports
    assert "module " in (out / "network.v").read_text()
    assert report["network"]["nodes"] == 13
    assert report["files"] == sorted(demo.FILES.values())
    md = (out / "report.md").read_text()
    assert md.count("| ") >= 1 + 2 * len(demo.ALGOS)
    from PIL import Image

    for name in ("embedding.png", "latency.png"):
        with Image.open(out / name) as png:
            assert png.format == "PNG"
            assert min(png.size) > 300
            assert np.asarray(png.convert("L")).std() > 0
