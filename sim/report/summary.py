"""Measurement reports of whole-network simulations: comparison table, headline figures, JSON,
Markdown.

From a list of :class:`innet.sim.network.Outcome` (one per simulated scenario) this module
builds one JSON-ready report (:func:`build_report`) and renders it as Markdown
(:func:`to_markdown`) or on a terminal with rich (:func:`render`). Everything printed is derived
from the report dictionary, so ``report.json``, ``report.md`` and the console always agree.

The comparison table puts the in-network allreduce (PIUMA, "In-network Allreduce") next to the
host-style schedules of the Swing paper (Swing-L, Swing-B, recursive doubling, ring; De Sensi
et al., NSDI'24, Section 2.3) on the same RTL network: latency in cycles from the first start to
the last ``done``, throughput in elements per cycle, the :mod:`innet.gen.cost` prediction
(``T(m) = alpha + beta * m``) and the ratio measured / predicted, and each algorithm's latency
as a multiple of the in-network one at the same size.

Two headline figures of the network itself (:func:`headline`), so measured on allreduces over
every node without background traffic and without endpoint backpressure:

- ``latency``: how many times lower the single-element in-network allreduce latency is than
  Swing latency-optimal's (``swing-l``) on the same network;
- ``throughput``: the in-network allreduce throughput, in elements per cycle, on
  :data:`THROUGHPUT_ELEMENTS` elements.

A figure is ``None`` (not measured) when the runs it needs are missing, and says whether those
runs were bit-exact.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALGORITHM_ORDER",
    "LABELS",
    "THROUGHPUT_ELEMENTS",
    "Measurement",
    "Row",
    "build_report",
    "comparison_rows",
    "headline",
    "network_summary",
    "render",
    "to_markdown",
]

#: Table order of the algorithms (:data:`innet.sim.network.ALGOS`).
ALGORITHM_ORDER = ("innet", "swing-l", "swing-b", "recdoub", "recdoub-l", "recdoub-b", "ring")
#: Readable names.
LABELS = {"innet": "in-network", "swing-l": "Swing-L", "swing-b": "Swing-B",
          "recdoub": "rec. doubling", "recdoub-l": "rec. doubling-L",
          "recdoub-b": "rec. doubling-B", "ring": "ring"}
#: Vector size of the throughput figure.
THROUGHPUT_ELEMENTS = 4096


def _order(algo: str) -> int:
    return ALGORITHM_ORDER.index(algo) if algo in ALGORITHM_ORDER else len(ALGORITHM_ORDER)


def _comparable(outcome: Any) -> bool:
    """An allreduce over every node: the runs the comparison table and the headline use."""
    s = outcome.scenario
    return s.kind == "allreduce" and s.participants is None


def _context(outcome: Any) -> tuple:
    """What two runs must share to be compared: size, type, operation, background and the
    endpoints' backpressure."""
    s = outcome.scenario
    return (s.elements, s.dtype, s.op, s.background, s.pattern, outcome.backpressure)


@dataclass(frozen=True)
class Row:
    """One line of the comparison table.

    Attributes
    ----------
    algo : str
    elements : int
    dtype, op : str
    background : float
        Background p2p load of the run.
    correct : bool
    latency_cycles : int
    throughput_elems_per_cycle : float
    predicted_cycles : float or None
    measured_over_predicted : float or None
        ``latency_cycles / predicted_cycles``.
    vs_innet : float or None
        ``latency_cycles`` over the in-network latency of the same size, type, operation and
        background (``None`` without such an in-network run).
    """

    algo: str
    elements: int
    dtype: str
    op: str
    background: float
    correct: bool
    latency_cycles: int
    throughput_elems_per_cycle: float
    predicted_cycles: float | None
    measured_over_predicted: float | None
    vs_innet: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"algo": self.algo, "elements": self.elements, "dtype": self.dtype,
                "op": self.op, "background": self.background, "correct": self.correct,
                "latency_cycles": self.latency_cycles,
                "throughput_elems_per_cycle": self.throughput_elems_per_cycle,
                "predicted_cycles": self.predicted_cycles,
                "measured_over_predicted": self.measured_over_predicted,
                "vs_innet": self.vs_innet}


def _ratio(num: float, den: float | None) -> float | None:
    if den is None or den <= 0 or not math.isfinite(den):
        return None
    return float(num) / float(den)


def comparison_rows(outcomes: Iterable[Any]) -> list[Row]:
    """The comparison table: every allreduce over all nodes, by size, then algorithm order.

    Other runs (subsets, reduce, broadcast, barrier) are left out: they have no host-style
    counterpart.
    """
    runs = [o for o in outcomes if _comparable(o)]
    innet = {}
    for o in runs:
        if o.scenario.algo == "innet":
            innet.setdefault(_context(o), o)
    rows = []
    for o in sorted(runs, key=lambda o: (o.scenario.elements, o.scenario.background,
                                         _order(o.scenario.algo))):
        s = o.scenario
        base = innet.get(_context(o))
        rows.append(Row(
            algo=s.algo, elements=s.elements, dtype=s.dtype, op=s.op, background=s.background,
            correct=bool(o.correct), latency_cycles=int(o.latency_cycles),
            throughput_elems_per_cycle=float(o.throughput_elems_per_cycle),
            predicted_cycles=None if o.predicted_cycles is None else float(o.predicted_cycles),
            measured_over_predicted=_ratio(o.latency_cycles, o.predicted_cycles),
            vs_innet=None if base is None else _ratio(o.latency_cycles, base.latency_cycles)))
    return rows


@dataclass(frozen=True)
class Measurement:
    """One headline figure.

    Attributes
    ----------
    key : str
        ``"latency"`` or ``"throughput"``.
    description : str
        What is measured, with its unit.
    measured : float or None
        The figure (``None``: the runs it needs are missing).
    correct : bool or None
        Every run it uses was bit-exact (``None``: not measured).
    evidence : str
        The numbers it comes from, or the runs it needs.
    """

    key: str
    description: str
    measured: float | None
    correct: bool | None
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"description": self.description, "measured": self.measured,
                "correct": self.correct, "evidence": self.evidence}


def _find(outcomes: Sequence[Any], algo: str, elements: int) -> Any:
    """The first allreduce of ``algo`` on ``elements`` over every node on a quiet network: no
    background traffic, no endpoint backpressure."""
    for o in outcomes:
        s = o.scenario
        if (_comparable(o) and s.algo == algo and s.elements == elements
                and s.background == 0 and o.backpressure == 0):
            return o
    return None


def headline(outcomes: Iterable[Any]) -> tuple[Measurement, Measurement]:
    """The latency and throughput figures (module documentation)."""
    outcomes = list(outcomes)
    innet1, swing1 = _find(outcomes, "innet", 1), _find(outcomes, "swing-l", 1)
    latency_text = "Swing-L latency over in-network latency, 1 element"
    if innet1 is None or swing1 is None or innet1.latency_cycles <= 0:
        latency = Measurement("latency", latency_text, None, None,
                              "needs quiet 1-element in-network and Swing-L runs")
    else:
        ok = bool(innet1.correct and swing1.correct)
        latency = Measurement("latency", latency_text,
                              swing1.latency_cycles / innet1.latency_cycles, ok,
                              f"Swing-L {swing1.latency_cycles} / in-network "
                              f"{innet1.latency_cycles} cycles"
                              + ("" if ok else " (a result is wrong)"))
    big = _find(outcomes, "innet", THROUGHPUT_ELEMENTS)
    throughput_text = (f"in-network throughput, {THROUGHPUT_ELEMENTS} elements, "
                       f"elements/cycle")
    if big is None:
        throughput = Measurement("throughput", throughput_text, None, None,
                                 f"needs a quiet {THROUGHPUT_ELEMENTS}-element run")
    else:
        throughput = Measurement("throughput", throughput_text,
                                 float(big.throughput_elems_per_cycle), bool(big.correct),
                                 f"{THROUGHPUT_ELEMENTS} elements in {big.latency_cycles} "
                                 f"cycles" + ("" if big.correct else " (the result is wrong)"))
    return latency, throughput


def network_summary(topo: Any) -> dict[str, Any]:
    """What a report says about the simulated network: ``kind``, ``params``, ``nodes``,
    ``links``, ``radix`` and ``fingerprint`` of a :class:`innet.gen.topology.Topology`."""
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in topo.params.items()}
    return {"kind": topo.kind, "params": params, "nodes": topo.nodes,
            "links": len(topo.links()), "radix": topo.radix, "fingerprint": topo.fingerprint}


def _key(elements: int) -> str:
    return str(int(elements))


def build_report(outcomes: Iterable[Any], *, network: dict[str, Any] | None = None,
                 title: str = "innet", extra: dict[str, Any] | None = None,
                 quiet_runs: Iterable[Any] = ()) -> dict[str, Any]:
    """The JSON-ready report of a set of simulated runs.

    Parameters
    ----------
    outcomes : iterable of Outcome
        The runs of the comparison table.
    quiet_runs : iterable of Outcome
        More runs for the headline figures only (without the endpoints' backpressure): left
        out of the table, listed in ``runs`` and counted in ``correct``.
    network : dict, optional
        What was simulated (kind, params, nodes, links, radix, fingerprint), copied as is.
    title : str
        Heading of the rendered report.
    extra : dict, optional
        More members (e.g. the files written, the wall time), copied as is.

    Returns
    -------
    dict
        ``correct`` (every run bit-exact), ``algorithms`` (per algorithm: ``correct``,
        ``latency_cycles``, ``throughput_elems_per_cycle``, ``predicted_cycles`` and
        ``measured_over_predicted``, each keyed by the vector size as a string, for the
        allreduces over all nodes without background), ``comparison`` (the table's rows),
        ``headline`` (``latency`` and ``throughput``: ``description``, ``measured``,
        ``correct``, ``evidence``), ``runs`` (every :meth:`Outcome.to_dict`), plus
        ``network``, ``title`` and ``extra``'s members.
    """
    outcomes = list(outcomes)
    extra_runs = list(quiet_runs)
    rows = comparison_rows(outcomes)
    algorithms: dict[str, dict[str, Any]] = {}
    for o in sorted(outcomes, key=lambda o: _order(o.scenario.algo)):
        entry = algorithms.setdefault(o.scenario.algo, {
            "correct": True, "latency_cycles": {}, "throughput_elems_per_cycle": {},
            "predicted_cycles": {}, "measured_over_predicted": {}})
        entry["correct"] = entry["correct"] and bool(o.correct)
    for row in rows:
        entry = algorithms[row.algo]
        k = _key(row.elements)
        if row.background != 0 or k in entry["latency_cycles"]:
            continue
        entry["latency_cycles"][k] = row.latency_cycles
        entry["throughput_elems_per_cycle"][k] = row.throughput_elems_per_cycle
        entry["predicted_cycles"][k] = row.predicted_cycles
        entry["measured_over_predicted"][k] = row.measured_over_predicted
    found = headline([*outcomes, *extra_runs])
    report: dict[str, Any] = {
        "title": title,
        "network": network,
        "correct": all(o.correct for o in [*outcomes, *extra_runs]) and bool(outcomes),
        "algorithms": algorithms,
        "comparison": [r.to_dict() for r in rows],
        "headline": {m.key: m.to_dict() for m in found},
        "runs": [o.to_dict() for o in [*outcomes, *extra_runs]],
    }
    report.update(extra or {})
    return report


# -- rendering -----------------------------------------------------------------------------------

_HEADERS = ("elements", "algorithm", "correct", "latency (cycles)", "predicted", "meas./pred.",
            "elements/cycle", "vs in-network")


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def _cells(row: dict[str, Any]) -> list[str]:
    label = LABELS.get(row["algo"], row["algo"])
    if row["background"]:
        label += f" (+{100 * row['background']:g}% p2p)"
    return [f"{row['elements']:,}", label, "yes" if row["correct"] else "NO",
            f"{row['latency_cycles']:,}", _fmt(row["predicted_cycles"], ",.0f"),
            _fmt(row["measured_over_predicted"], ".2f"),
            _fmt(row["throughput_elems_per_cycle"], ".3f"),
            _fmt(row["vs_innet"], ".1f", "x")]


def _headline_lines(report: dict[str, Any]) -> list[str]:
    figures = list(report["headline"].values())
    lines = [f"{f['description']}: {f['measured']:.3g} ({f['evidence']})"
             for f in figures if f["measured"] is not None]
    if lines:
        lines.append("measured on a quiet network: no background traffic, no endpoint "
                     "backpressure")
    lines += [f"{f['description']}: not measured ({f['evidence']})"
              for f in figures if f["measured"] is None]
    stall = report.get("backpressure") or 0
    if stall and report["comparison"]:
        lines.append(f"the table: random backpressure {stall:g} at every endpoint, which slows "
                     f"injection and delivery")
    return lines


def _network_line(report: dict[str, Any], *, named: bool = True) -> str | None:
    """``PolarFly q=3: 13 switches, 24 links, radix 4`` (without the name unless ``named``)."""
    net = report.get("network")
    if not net:
        return None
    from innet.gen.topology import title

    counts = (f"{net.get('nodes', '?')} switches, {net.get('links', '?')} links, radix "
              f"{net.get('radix', '?')}")
    return f"{title(net.get('kind', '?'), net.get('params', {}))}: {counts}" if named else counts


def to_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: network, correctness, the comparison table, the headline."""
    out = [f"# {report['title']}", ""]
    line = _network_line(report)
    if line:
        out += [f"Network: {line}.", ""]
    out += [f"Every result bit-exact: **{'yes' if report['correct'] else 'NO'}**.", ""]
    out += ["| " + " | ".join(_HEADERS) + " |",
            "|" + "|".join("---:" if i not in (1, 2) else "---" for i in
                           range(len(_HEADERS))) + "|"]
    out += ["| " + " | ".join(_cells(row)) + " |" for row in report["comparison"]]
    out += ["", "Headline:", ""]
    out += [f"- {line}" for line in _headline_lines(report)]
    return "\n".join(out) + "\n"


def render(report: dict[str, Any], console: Any) -> None:
    """Print the report on a rich console: the comparison table and the headline."""
    from rich.table import Table

    line = _network_line(report, named=False)
    table = Table(title=report["title"] + (f" ({line})" if line else ""), title_justify="left")
    for i, header in enumerate(_HEADERS):
        table.add_column(header, justify="left" if i in (1, 2) else "right")
    previous = None
    for row in report["comparison"]:
        if previous is not None and row["elements"] != previous:
            table.add_section()
        previous = row["elements"]
        style = None if row["correct"] else "bold red"
        table.add_row(*_cells(row), style=style)
    console.print(table)
    console.print(f"every result bit-exact: {'yes' if report['correct'] else 'NO'}")
    for text in _headline_lines(report):
        console.print(text)
