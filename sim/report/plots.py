"""PNG plots of a simulated network: the embedding on its layout, latency against vector size.

- :func:`embedding_png`: the in-network reduction tree of an embedding (PIUMA, "Allreduce
  Embedding") drawn on the topology. A PolarFly is drawn on its cluster layout (PolarFly,
  Algorithm 1 and Figs. 6 and 13; :func:`innet.gen.export.layout_figure`), a torus, mesh or
  2-D HyperX on its grid, anything else on a circle. Tree links point from child to parent,
  the root is ringed, and participants are outlined.
- :func:`latency_png`: measured allreduce latency against vector size per algorithm on log-log
  axes, with the cost model's prediction (:mod:`innet.gen.cost`) dashed in the same colour.

Figures are :class:`matplotlib.figure.Figure` objects saved straight to PNG: no pyplot, and the
caller's matplotlib backend is left as it is. The PNGs carry no software or date metadata, so
the same input gives the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

import numpy as np

from innet.sim.report.summary import ALGORITHM_ORDER, LABELS

__all__ = ["embedding_png", "latency_png", "node_positions"]

_TREE = "#ff7f0e"
_ROOT = "#d62728"
_COLOURS = {"innet": "#ff7f0e", "swing-l": "#1f77b4", "swing-b": "#2ca02c",
            "recdoub": "#9467bd", "recdoub-l": "#9467bd", "recdoub-b": "#8c564b",
            "ring": "#7f7f7f"}


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def node_positions(topo: Any) -> np.ndarray:
    """``(N, 2)`` drawing positions for a topology that is not a PolarFly: the grid of a 2-D
    torus, mesh or HyperX (row-major node ids, row 0 on top), a circle otherwise."""
    shape = tuple(topo.params.get("shape", ())) if topo.kind in ("torus", "hyperx") else ()
    n = topo.nodes
    if len(shape) == 2:
        ids = np.arange(n)
        return np.stack([ids % shape[1], -(ids // shape[1])], axis=1).astype(float)
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / max(n, 1)
    return np.stack([np.cos(angle), np.sin(angle)], axis=1)


def _generic_figure(topo: Any) -> tuple[Any, Any, np.ndarray]:
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    pos = node_positions(topo)
    fig = Figure(figsize=(7, 7), dpi=100)
    ax = fig.add_subplot()
    links = topo.link_array()
    if len(links):
        ax.add_collection(LineCollection(pos[links[:, [0, 2]]], colors="#bbbbbb",
                                         linewidths=0.8, zorder=1))
    ax.scatter(pos[:, 0], pos[:, 1], c="#1f77b4", s=60, zorder=3, edgecolors="none")
    ax.set_title(f"{topo.title}: {topo.nodes} nodes")
    ax.set_aspect("equal")
    ax.margins(0.1)
    ax.set_xticks([])
    ax.set_yticks([])
    return fig, ax, pos


def embedding_png(topo: Any, embedding: Any) -> bytes:
    """A PNG of ``embedding``'s reduction tree on ``topo`` (module documentation).

    Raises
    ------
    ValueError
        If the embedding was made for another topology.
    """
    if getattr(embedding, "topology", topo.fingerprint) != topo.fingerprint:
        raise ValueError("The embedding was made for another topology (its fingerprint "
                         "differs)")
    from matplotlib.lines import Line2D

    if topo.kind == "polarfly":
        from innet.gen.export import layout_figure

        fig, ax, pos = layout_figure(topo)
    else:
        fig, ax, pos = _generic_figure(topo)
    # Slightly bent arrows: a straight one could run over a node between child and parent.
    for child, _, parent, _ in embedding.links:
        ax.annotate("", xy=pos[parent], xytext=pos[child], zorder=4,
                    arrowprops={"arrowstyle": "-|>", "color": _TREE, "lw": 2.2,
                                "shrinkA": 6, "shrinkB": 6, "mutation_scale": 12,
                                "connectionstyle": "arc3,rad=0.12"})
    if topo.nodes <= 64:
        for u, (x, y) in enumerate(pos):
            ax.annotate(str(u), (x, y), xytext=(-9, 4), textcoords="offset points",
                        fontsize=7, ha="right", zorder=6)
    members = list(embedding.participants)
    ax.scatter(pos[members, 0], pos[members, 1], s=90, facecolors="none", edgecolors="black",
               linewidths=1.0, zorder=5)
    root = embedding.root
    ax.scatter([pos[root, 0]], [pos[root, 1]], s=380, facecolors="none", edgecolors=_ROOT,
               linewidths=2.5, zorder=6)
    ax.annotate(f"root {root}", pos[root], xytext=(10, 10), textcoords="offset points",
                color=_ROOT, fontsize="small", fontweight="bold", zorder=6)
    handles = [Line2D([], [], color=_TREE, lw=2.2, label="reduction tree (child -> parent)"),
               Line2D([], [], marker="o", ls="", ms=12, mfc="none", mec=_ROOT, mew=2.5,
                      label="root"),
               Line2D([], [], marker="o", ls="", ms=8, mfc="none", mec="black",
                      label="participant")]
    previous, _ = ax.get_legend_handles_labels()
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + 1.2)
    ax.legend(handles=previous + handles, loc="upper center", bbox_to_anchor=(0.5, -0.1),
              fontsize="small", ncols=4, frameon=False)
    fig.tight_layout()
    kind = getattr(embedding, "kind", "allreduce")
    ax.set_title(f"{ax.get_title()}\nin-network {kind}: {len(members)} participants, "
                 f"root {root}, depth {embedding.depth}, collective id "
                 f"{embedding.collective_id}", fontsize="medium")
    return _png(fig)


def latency_png(outcomes: Iterable[Any], title: str = "allreduce latency") -> bytes:
    """A log-log PNG of latency (cycles) against vector size (elements) per algorithm.

    Uses the allreduces over every node without background traffic; the prediction is dashed.

    Raises
    ------
    ValueError
        If there is no such run with at least one element.
    """
    from matplotlib.figure import Figure

    series: dict[str, dict[int, tuple[int, float | None, bool]]] = {}
    for o in outcomes:
        s = o.scenario
        if (s.kind != "allreduce" or s.participants is not None or s.background
                or s.elements < 1):
            continue
        series.setdefault(s.algo, {}).setdefault(
            s.elements, (o.latency_cycles, o.predicted_cycles, bool(o.correct)))
    if not series:
        raise ValueError("No allreduce over every node to plot")
    fig = Figure(figsize=(8, 5.5), dpi=100)
    ax = fig.add_subplot()
    order = sorted(series, key=lambda a: (ALGORITHM_ORDER.index(a) if a in ALGORITHM_ORDER
                                          else len(ALGORITHM_ORDER), a))
    for algo in order:
        points = sorted(series[algo].items())
        m = [e for e, _ in points]
        colour = _COLOURS.get(algo)
        ax.plot(m, [v[0] for _, v in points], marker="o", color=colour,
                label=LABELS.get(algo, algo))
        bad = [(e, v[0]) for e, v in points if not v[2]]
        if bad:
            ax.scatter(*zip(*bad, strict=True), marker="x", s=80, color="red", zorder=5)
        predicted = [(e, v[1]) for e, v in points if v[1] is not None]
        if predicted:
            ax.plot(*zip(*predicted, strict=True), ls="--", lw=1, color=colour, alpha=0.7)
    ax.plot([], [], ls="--", lw=1, color="black", label="cost model (dashed)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("vector size (elements per node)")
    ax.set_ylabel("latency (cycles, first start to last done)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return _png(fig)
