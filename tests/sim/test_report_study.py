"""innet.sim.report.study: the Swing-B vs recursive-doubling-B analysis on constructed outcomes."""

from __future__ import annotations

import pytest

from innet.gen.topology import torus
from innet.sim.network import Outcome, Scenario
from innet.sim.report import study


def line(algo: str, a: float, b: float, sizes=study.STUDY_SIZES, correct=True) -> list[Outcome]:
    return [Outcome(Scenario(algo, m), correct, round(a + b * m), m / round(a + b * m), None,
                    0, 0) for m in sizes]


def test_fit_line_recovers_a_line():
    a, b = study.fit_line([(64, 164.0), (256, 356.0), (4096, 4196.0)])
    assert a == pytest.approx(100.0)
    assert b == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"^A line needs at least two distinct sizes, "
                                         r"not \[64\.0\]$"):
        study.fit_line([(64, 1.0), (64, 2.0)])


def test_schedule_facts_match_swing_eq2_on_a_ring():
    ring = torus((8,))
    swing = study.schedule_facts(ring, study.SWING)
    recdoub = study.schedule_facts(ring, study.RECDOUB)
    # Swing's peers at rho(s) = 1, -1, 3 (Eq. 2); recursive doubling's at 2^s = 1, 2, 4.
    assert swing["step_hops"] == [1, 1, 3, 3, 1, 1]
    assert recdoub["step_hops"] == [1, 2, 4, 4, 2, 1]
    assert swing["entries"] == 2 * 6  # two collectives (both ring directions) of 6 steps
    assert recdoub["entries"] == 6
    assert swing["bandwidth_term"] < recdoub["bandwidth_term"]


def test_analysis_finds_the_crossover():
    ring = torus((8,))
    outcomes = line("swing-b", 300, 1.0) + line("recdoub", 100, 2.0)
    result = study.analyse("ring of 8", ring, outcomes)
    assert [r["winner"] for r in result["sizes"]] == ["recdoub", "swing-b", "swing-b",
                                                      "swing-b"]
    assert result["sizes"][0]["speedup"] == pytest.approx(228 / 364)
    assert result["agrees"] is False
    assert result["swing_ahead_from"] == 256
    sw = result["algorithms"]["swing-b"]
    assert sw["fixed_cycles"] == pytest.approx(300, abs=0.5)
    assert sw["cycles_per_element"] == pytest.approx(1.0, abs=1e-3)
    assert sw["fixed_cycles_per_entry"] == pytest.approx(300 / 12, abs=0.1)
    text = " ".join(result["explanation"])
    assert "agrees only in part" in text
    assert "cross at about 200 elements" in text
    md = study.to_markdown({"networks": [result]})
    assert "| 64 | 364 | 228 | 0.63 | rec. doubling-B |" in md


def test_analysis_agrees_when_swing_always_wins():
    result = study.analyse("4x4 torus", torus((4, 4)),
                           line("swing-b", 100, 1.0) + line("recdoub", 120, 2.0))
    assert result["agrees"] is True
    assert result["swing_ahead_from"] == 64
    assert result["explanation"][0].startswith("The RTL agrees with the paper")


def test_analysis_needs_the_same_sizes():
    with pytest.raises(ValueError, match=r"^ring of 8: Swing-B ran sizes \[64, 256, 1024, "
                                         r"4096\] but recursive doubling \[64\]$"):
        study.analyse("ring of 8", torus((8,)),
                      line("swing-b", 1, 1) + line("recdoub", 1, 1, sizes=(64,)))
