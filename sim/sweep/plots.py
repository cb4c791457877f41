"""PNG plots of a sweep: hardware trade-offs and network scaling.

- :func:`hardware_png`: fmax against logic cells, one labelled dot per point, the Pareto
  front (:func:`~innet.sim.sweep.output.pareto_front`: fewest cells for the fmax) drawn as a
  step line. Points without an fmax (synthesis without place and route) sit on a strip under
  the axis, at their logic cells, labelled too.
- :func:`network_png`: latency (cycles) and throughput (elements per cycle) against vector size,
  one line per algorithm and topology, on log-log axes.

Only points whose status is ``"ok"`` are drawn. Figures are :class:`matplotlib.figure.Figure`
objects saved straight to PNG without software or date metadata (as
:mod:`innet.sim.report.plots`): no pyplot, the caller's backend is left as it is.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from innet.sim.sweep.output import pareto_front

__all__ = ["hardware_png", "network_png"]


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def hardware_png(records: Sequence[dict[str, Any]]) -> bytes:
    """fmax against logic cells of the hardware ``records`` (module documentation)."""
    from matplotlib.figure import Figure

    ok = [r for r in records if r["status"] == "ok" and r["result"].get("logic_cells")]
    routed = [r for r in ok if r["result"].get("fmax_mhz") is not None]
    unrouted = [r for r in ok if r["result"].get("fmax_mhz") is None]
    fig = Figure(figsize=(8, 6), dpi=100)
    if unrouted:
        ax, strip = fig.subplots(2, 1, sharex=True, height_ratios=[5, 1])
    else:
        ax, strip = fig.add_subplot(), None
    ax.set_title("fmax against logic cells (Pareto front: fewest cells for the fmax)")
    ax.set_ylabel("fmax (MHz)")
    (strip or ax).set_xlabel("logic cells")
    if routed:
        xy = [(r["result"]["logic_cells"], r["result"]["fmax_mhz"]) for r in routed]
        ax.scatter([x for x, _ in xy], [y for _, y in xy], c="#1f77b4", s=30, zorder=3)
        front = pareto_front(xy)
        fx, fy = [xy[i][0] for i in front], [xy[i][1] for i in front]
        ax.step(fx, fy, where="post", color="#d62728", zorder=2, label="Pareto front")
        ax.scatter(fx, fy, facecolors="none", edgecolors="#d62728", s=90, zorder=4)
        for r, (x, y) in zip(routed, xy, strict=True):
            ax.annotate(f"{r['id']} {r['label']}", (x, y), textcoords="offset points",
                        xytext=(4, 4), fontsize=7)
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
    else:
        ax.text(0.5, 0.5, "no point placed and routed (no fmax)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_yticks([])
    if strip is not None:
        xs = [r["result"]["logic_cells"] for r in unrouted]
        strip.scatter(xs, [0] * len(xs), marker="x", c="#7f7f7f", zorder=3)
        for r, x in zip(unrouted, xs, strict=True):
            strip.annotate(f"{r['id']} {r['label']}", (x, 0), textcoords="offset points",
                           xytext=(4, 4), fontsize=7, rotation=15)
        strip.set_yticks([0], ["no fmax"])
        strip.set_ylim(-1, 3)
        if not routed:  # room for the labels right of the largest design
            ax.set_xlim(0, max(xs) * 1.6)
    fig.tight_layout()
    return _png(fig)


def network_png(records: Sequence[dict[str, Any]]) -> bytes:
    """Latency and throughput against vector size of the network ``records`` (module
    documentation)."""
    from matplotlib.figure import Figure

    ok = [r for r in records if r["status"] == "ok"]
    lines: dict[str, list[tuple[int, float, float]]] = {}
    for r in ok:
        p = r["params"]
        where = f"q={p['q']}" if p["q"] is not None else p["shape"]
        name = f"{p['algo']}, {p['topology']} {where}"
        lines.setdefault(name, []).append((p["elements"], r["result"]["latency_cycles"],
                                           r["result"]["throughput_elems_per_cycle"]))
    fig = Figure(figsize=(11, 4.5), dpi=100)
    latency, throughput = fig.subplots(1, 2)
    latency.set_title("allreduce latency")
    latency.set_ylabel("cycles")
    throughput.set_title("allreduce throughput")
    throughput.set_ylabel("elements per cycle")
    if not lines:
        _empty(latency, "no network point finished")
        _empty(throughput, "no network point finished")
    for name, rows in sorted(lines.items()):
        rows.sort()
        xs = [n for n, _, _ in rows]
        latency.plot(xs, [c for _, c, _ in rows], marker="o", label=name)
        throughput.plot(xs, [t for _, _, t in rows], marker="o", label=name)
    for ax in (latency, throughput):
        ax.set_xlabel("vector size (elements per node)")
        if lines:
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.grid(alpha=0.3, which="both")
    if lines:
        throughput.legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)
