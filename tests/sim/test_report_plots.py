"""innet.sim.report.plots: the embedding and latency PNGs decode and show what they should."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest

from innet.gen import export
from innet.gen.analysis.piuma import closed_form, figure
from innet.gen.embed import embed
from innet.gen.topology import polarfly, torus
from innet.sim.network import Outcome, Scenario
from innet.sim.report import plots


def decode(data: bytes) -> np.ndarray:
    from PIL import Image

    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB")).astype(int)


def pixels(image: np.ndarray, colour: str, tolerance: int = 12) -> int:
    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(image - rgb).max(axis=2) <= tolerance).sum())


@pytest.mark.parametrize("topo", [polarfly(3), torus((4, 4)), torus(8)],
                         ids=["polarfly3", "torus4x4", "ring8"])
def test_embedding_png_draws_the_tree_and_the_root(topo):
    data = plots.embedding_png(topo, embed(topo))
    image = decode(data)
    assert image.shape[0] > 300
    assert image.shape[1] > 300
    assert pixels(image, plots._TREE) > 500
    assert pixels(image, plots._ROOT) > 50
    assert plots.embedding_png(topo, embed(topo)) == data  # byte-stable


def test_embedding_png_changes_with_the_tree():
    topo = polarfly(3)
    assert plots.embedding_png(topo, embed(topo, root=5)) != plots.embedding_png(
        topo, embed(topo, root=0))
    subset = decode(plots.embedding_png(topo, embed(topo, participants=[1, 2])))
    whole = decode(plots.embedding_png(topo, embed(topo)))
    assert pixels(subset, plots._TREE) < pixels(whole, plots._TREE)


def test_embedding_png_rejects_another_topology():
    with pytest.raises(ValueError, match=r"^The embedding was made for another topology "
                                         r"\(its fingerprint differs\)$"):
        plots.embedding_png(polarfly(3), embed(torus((4, 4))))


def test_grid_positions_are_row_major():
    pos = plots.node_positions(torus((2, 3)))
    assert pos.tolist() == [[0, 0], [1, 0], [2, 0], [0, -1], [1, -1], [2, -1]]
    ring = plots.node_positions(torus(4))
    assert np.allclose(np.linalg.norm(ring, axis=1), 1.0)


def run(algo: str, elements: int, latency: int, *, background: float = 0.0) -> Outcome:
    return Outcome(Scenario(algo, elements, background=background), True, latency,
                   elements / latency, latency * 0.9, 0, 0)


def test_latency_png_has_a_line_per_algorithm():
    outcomes = [run(a, m, c * m + 50) for a, c in (("innet", 1), ("ring", 8))
                for m in (1, 64, 1024)]
    image = decode(plots.latency_png(outcomes))
    assert pixels(image, plots._COLOURS["innet"]) > 100
    assert pixels(image, plots._COLOURS["ring"]) > 100
    assert pixels(image, plots._COLOURS["swing-l"]) == 0
    with_swing = decode(plots.latency_png([*outcomes, run("swing-l", 1, 400),
                                           run("swing-l", 64, 900)]))
    assert pixels(with_swing, plots._COLOURS["swing-l"]) > 100


def test_latency_png_needs_an_allreduce():
    with pytest.raises(ValueError, match=r"^No allreduce over every node to plot$"):
        plots.latency_png([run("innet", 4, 40, background=0.5)])


PLOTS = {
    "layout": lambda: export.plot_layout(polarfly(3)),
    "piuma-figure": lambda: figure([closed_form((1,)), closed_form((2,))], throughput_nodes=2),
    "embedding": lambda: plots.embedding_png(torus(4), embed(torus(4))),
    "latency": lambda: plots.latency_png([run("innet", 1, 40), run("innet", 64, 120)]),
}


@pytest.mark.parametrize("name", PLOTS)
def test_plotting_leaves_the_backend_alone(name):
    """A plot is drawn on its own Figure: the caller's backend (a notebook's) stays."""
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        assert PLOTS[name]().startswith(b"\x89PNG\r\n\x1a\n")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
