"""innet.sim.report.summary: comparison rows, ratios, headline figures and renderings on
constructed outcomes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from innet.sim.network import Outcome, Scenario
from innet.sim.report import summary as rep


def outcome(algo: str, elements: int, latency: int, predicted: float | None = None, *,
            correct: bool = True, **scenario) -> Outcome:
    return Outcome(scenario=Scenario(algo=algo, elements=elements, **scenario), correct=correct,
                   latency_cycles=latency, throughput_elems_per_cycle=elements / latency,
                   predicted_cycles=predicted, p2p_sent=0, p2p_received=0,
                   detail="" if correct else "node 3 element 0: 5 != 6")


def runs(*, innet1: int = 40, swing1: int = 400, innet4k: int = 4200,
         correct: bool = True) -> list[Outcome]:
    return [outcome("swing-l", 1, swing1, 380.0), outcome("innet", 1, innet1, 36.0),
            outcome("innet", 4096, innet4k, 4140.0, correct=correct),
            outcome("ring", 4096, 20000, 16000.0), outcome("swing-b", 4096, 9000, None)]


def test_rows_sorted_with_ratios_against_prediction_and_innet():
    rows = rep.comparison_rows(runs())
    assert [(r.elements, r.algo) for r in rows] == [
        (1, "innet"), (1, "swing-l"), (4096, "innet"), (4096, "swing-b"), (4096, "ring")]
    by = {(r.elements, r.algo): r for r in rows}
    assert by[1, "swing-l"].vs_innet == pytest.approx(10.0)
    assert by[1, "innet"].vs_innet == pytest.approx(1.0)
    assert by[1, "innet"].measured_over_predicted == pytest.approx(40 / 36)
    assert by[4096, "ring"].measured_over_predicted == pytest.approx(1.25)
    assert by[4096, "ring"].vs_innet == pytest.approx(20000 / 4200)
    assert by[4096, "swing-b"].measured_over_predicted is None
    assert by[4096, "innet"].throughput_elems_per_cycle == pytest.approx(4096 / 4200)


def test_rows_leave_out_subsets_and_compare_only_same_background():
    extra = [outcome("innet", 1, 30, participants=(0, 1, 2)),
             outcome("innet", 1, 35, kind="reduce"),
             outcome("swing-l", 1, 800, background=0.5)]
    rows = rep.comparison_rows(runs() + extra)
    assert len(rows) == 6
    loaded = next(r for r in rows if r.background == 0.5)
    assert loaded.vs_innet is None  # no in-network run at 50 % load to compare with


def test_headline_figures():
    latency, throughput = rep.headline(runs(innet1=40, swing1=250, innet4k=4311))
    assert latency.measured == pytest.approx(250 / 40)
    assert latency.correct is True
    assert latency.evidence == "Swing-L 250 / in-network 40 cycles"
    assert throughput.measured == pytest.approx(4096 / 4311)
    assert throughput.correct is True
    assert throughput.evidence == "4096 elements in 4311 cycles"


def test_wrong_result_marks_its_figure_and_the_report():
    report = rep.build_report(runs(correct=False))
    assert report["headline"]["throughput"]["correct"] is False
    assert report["headline"]["throughput"]["evidence"] == (
        "4096 elements in 4200 cycles (the result is wrong)")
    assert report["headline"]["latency"]["correct"] is True
    assert report["correct"] is False
    assert report["algorithms"]["innet"]["correct"] is False
    assert report["algorithms"]["swing-l"]["correct"] is True


def test_missing_runs_leave_figures_unmeasured():
    report = rep.build_report([outcome("innet", 64, 100)])
    assert report["headline"]["latency"]["measured"] is None
    assert report["headline"]["latency"]["correct"] is None
    assert report["headline"]["throughput"]["measured"] is None
    md = rep.to_markdown(report)
    assert "not measured" in md
    assert "measured on a quiet network" not in md


def test_the_quiet_network_line_follows_the_measured_figures_only():
    # A 1-element pair measures the latency figure, not the 4,096-element throughput.
    report = rep.build_report([o for o in runs() if o.scenario.elements == 1])
    lines = [line for line in rep.to_markdown(report).splitlines() if line.startswith("- ")]
    assert [line.split(":")[0] for line in lines] == [
        "- Swing-L latency over in-network latency, 1 element",
        "- measured on a quiet network",
        "- in-network throughput, 4096 elements, elements/cycle"]
    assert lines[2].endswith(": not measured (needs a quiet 4096-element run)")


def test_report_json_has_the_contract_keys_per_algorithm():
    report = json.loads(json.dumps(rep.build_report(runs(), network={"kind": "polarfly"},
                                                    extra={"wall_seconds": 1.5})))
    assert report["correct"] is True
    assert set(report["headline"]) == {"latency", "throughput"}
    assert report["wall_seconds"] == 1.5
    assert set(report["algorithms"]) == {"innet", "swing-l", "swing-b", "ring"}
    innet = report["algorithms"]["innet"]
    assert innet["latency_cycles"] == {"1": 40, "4096": 4200}
    assert innet["throughput_elems_per_cycle"]["4096"] == pytest.approx(4096 / 4200)
    assert innet["predicted_cycles"] == {"1": 36.0, "4096": 4140.0}
    assert report["algorithms"]["swing-b"]["predicted_cycles"] == {"4096": None}
    assert len(report["runs"]) == 5
    assert report["runs"][0]["scenario"]["algo"] == "swing-l"


def test_markdown_and_console_show_every_row_and_the_figures():
    from rich.console import Console

    report = rep.build_report(runs(swing1=100), network={
        "kind": "polarfly", "params": {"q": 3}, "nodes": 13, "links": 26, "radix": 4})
    md = rep.to_markdown(report)
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + 5
    assert "| 1 | Swing-L | yes | 100 | 380 | 0.26 | 0.010 | 2.5x |" in md
    assert ("- Swing-L latency over in-network latency, 1 element: 2.5 (Swing-L 100 / "
            "in-network 40 cycles)") in md
    assert ("- in-network throughput, 4096 elements, elements/cycle: 0.975 (4096 elements in "
            "4200 cycles)") in md
    assert "PASS" not in md
    assert "FAIL" not in md
    assert "PolarFly q=3: 13 switches, 26 links, radix 4" in md
    console = Console(record=True, width=140)
    rep.render(report, console)
    text = console.export_text()
    assert "Swing-B" in text
    assert "rec." not in text
    assert "Swing-L latency over in-network latency, 1 element: 2.5 " in text
    assert "2.5x" in text


def test_network_summary_names_the_topology():
    from innet.gen.topology import polarfly, torus

    summary = rep.network_summary(polarfly(3))
    assert summary["nodes"] == 13
    assert summary["links"] == (9 * 4 + 4 * 3) // 2  # q + 1 = 4 quadrics have degree q
    assert summary["radix"] == 4
    line = rep.to_markdown(rep.build_report(runs(), network=rep.network_summary(torus((4, 4)))))
    assert "torus 4x4: 16 switches, 32 links, radix 4" in line


def test_headline_needs_runs_without_backpressure():
    """The headline figures are the network's own: runs with endpoint backpressure do not
    count, runs given as quiet_runs do, and they stay out of the table."""
    stalled = [dataclasses.replace(o, backpressure=0.25) for o in runs()]
    report = rep.build_report(stalled, extra={"backpressure": 0.25})
    assert report["headline"]["latency"]["measured"] is None
    assert report["headline"]["latency"]["evidence"] == (
        "needs quiet 1-element in-network and Swing-L runs")
    assert ("- in-network throughput, 4096 elements, elements/cycle: not measured (needs a "
            "quiet 4096-element run)") in rep.to_markdown(report)
    quiet = runs(innet1=50, swing1=300)[:3]
    both = rep.build_report(stalled, extra={"backpressure": 0.25}, quiet_runs=quiet)
    assert both["headline"]["latency"]["measured"] == pytest.approx(6.0)
    assert both["headline"]["throughput"]["measured"] == pytest.approx(4096 / 4200)
    assert both["comparison"] == report["comparison"]
    assert len(both["runs"]) == len(stalled) + len(quiet)
    md = rep.to_markdown(both)
    assert ("- measured on a quiet network: no background traffic, no endpoint "
            "backpressure") in md
    assert ("- the table: random backpressure 0.25 at every endpoint, which slows injection "
            "and delivery") in md
    assert "the table:" not in rep.to_markdown(rep.build_report(runs()))
    wrong = rep.build_report(stalled, quiet_runs=runs(correct=False))
    assert wrong["correct"] is False


def test_vs_innet_compares_runs_of_the_same_backpressure():
    stalled = [dataclasses.replace(o, backpressure=0.25) for o in runs()]
    rows = rep.comparison_rows([*stalled[:1], *runs()[1:2]])  # swing-l stalled, innet quiet
    assert [r.vs_innet for r in rows] == [1.0, None]
