"""A sweep's results as files: ``results.csv``, ``results.json`` and the plots.

The records (:func:`innet.sim.sweep.points.run_point`) are kept in the points' order, so two
runs of one spec give files that compare line by line; :func:`comparable` drops what differs
between runs of the same points (wall-clock seconds, whether a result came from the cache).
Every file is written through a rename (:func:`innet.gen.files.write_atomic`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from innet.gen.files import write_atomic

__all__ = ["HEAD", "comparable", "csv_text", "pareto_front", "summary", "write_results"]

#: The first columns of ``results.csv``; the parameters (``param.NAME``) and measurements
#: (``result.NAME``) of every point follow, in order of first appearance.
HEAD = ("id", "kind", "label", "status", "reason", "cached", "seconds")

_RUN_KEYS = ("cached", "seconds", "traceback")


def comparable(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` without the keys of one run (``cached``, ``seconds``, ``traceback``)."""
    return [{k: v for k, v in r.items() if k not in _RUN_KEYS} for r in records]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def csv_text(records: Sequence[dict[str, Any]]) -> str:
    """The records as CSV: :data:`HEAD`, then ``param.*`` and ``result.*`` columns."""
    params = list(dict.fromkeys(k for r in records for k in r["params"]))
    results = list(dict.fromkeys(k for r in records for k in r["result"]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*HEAD, *(f"param.{k}" for k in params), *(f"result.{k}" for k in results)])
    for r in records:
        writer.writerow([_cell(r.get(k)) for k in HEAD]
                        + [_cell(r["params"].get(k)) for k in params]
                        + [_cell(r["result"].get(k)) for k in results])
    return buffer.getvalue()


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """The indices of the points ``(cost, value)`` no other point dominates (one with a cost
    no higher and a value no lower, and better in one), in order of cost: the trade-offs
    worth having, here logic cells against fmax. Equal points are all on the front."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    front: list[int] = []
    best = None
    for i in order:
        cost, value = points[i]
        if best is None or value > best[1] or (value == best[1] and cost == best[0]):
            front.append(i)
            best = (cost, value) if best is None or value > best[1] else best
    return front


def summary(records: Sequence[dict[str, Any]], seconds: float) -> str:
    """One line: points, how many ran and came from the cache, failed, wall-clock time."""
    ran = sum(not r.get("cached") for r in records)
    failed = sum(r["status"] != "ok" for r in records)
    return (f"{len(records)} point{'s' * (len(records) != 1)}: {ran} run, "
            f"{len(records) - ran} cached, {failed} failed, {seconds:.1f} s")


def write_results(out: str | os.PathLike, records: Sequence[dict[str, Any]],
                  spec: str = "") -> list[Path]:
    """Write ``results.csv``, ``results.json`` and the plots (``hardware.png`` with the
    hardware points, ``network.png`` with the network points; see
    :mod:`~innet.sim.sweep.plots`) into ``out``; return the paths written."""
    from innet.sim.sweep.plots import hardware_png, network_png

    out = Path(out)
    written = [write_atomic(out / "results.csv", csv_text(records)),
               write_atomic(out / "results.json",
                            json.dumps({"spec": spec, "points": list(records)}, indent=1,
                                       sort_keys=True) + "\n")]
    hardware = [r for r in records if r["kind"] == "hardware"]
    network = [r for r in records if r["kind"] == "network"]
    if hardware:
        written.append(write_atomic(out / "hardware.png", hardware_png(hardware)))
    if network:
        written.append(write_atomic(out / "network.png", network_png(network)))
    return written
