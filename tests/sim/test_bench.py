"""innet bench: the networkx references agree with the generators; registry, report and CLI.

The references are independent implementations (networkx, plain loops), so their agreement
with innet's generators on small inputs is a correctness test of the generators as well.
"""

import json
import re

import numpy as np
import pytest

from innet.gen.embed import embed
from innet.gen.routing import routing
from innet.gen.swing import build_schedule
from innet.gen.topology import hyperx, polarfly
from innet.sim import bench
from innet.sim.bench import reference as ref
from innet.sim.bench.generators import compare
from innet.sim.bench.report import markdown, seconds_text


def _ports(topo):
    return [[int(v) for v in row if v >= 0] for row in topo.ports.peer]


def _tree(embedding):
    return {s.node: (s.req_in, s.req_out) for s in embedding.switches}


# References against the generators -------------------------------------------------------------


@pytest.mark.parametrize("q", [2, 3, 5, 7, 11])
def test_polarfly_reference_is_innets_polarfly(q):
    topo = polarfly(q)
    labels, graph = ref.polarfly_reference(q)
    assert labels == [tuple(label) for label in topo.labels]
    assert _ports(topo) == [sorted(graph[u]) for u in range(topo.nodes)]
    assert graph.number_of_edges() == len(topo.links())


def test_polarfly_reference_rows_add_only_their_edges():
    _labels, graph = ref.polarfly_reference(5, rows=[0, 7])
    assert graph.number_of_nodes() == 31
    assert {u for e in graph.edges for u in e} >= {0, 7}
    assert all(0 in e or 7 in e for e in graph.edges)
    assert graph.degree(0) == polarfly(5).degree(0)


@pytest.mark.parametrize("topo", [polarfly(5), polarfly(7), hyperx((3, 4)), hyperx((2, 3, 4))],
                         ids=["pf5", "pf7", "hx3x4", "hx2x3x4"])
def test_routing_reference_is_innets_routing(topo):
    ports = _ports(topo)
    table = ref.routing_reference(ref.graph_of(ports), ports)
    assert np.array_equal(table, routing(topo).table())


def test_routing_reference_of_some_destinations():
    topo = polarfly(5)
    ports = _ports(topo)
    table = ref.routing_reference(ref.graph_of(ports), ports, [3, 30])
    assert np.array_equal(table, routing(topo).table()[:, [3, 30]])


@pytest.mark.parametrize(("topo", "grid"), [(polarfly(5), None), (polarfly(7), None),
                                            (hyperx((4, 4)), (4, 4)), (hyperx((3, 5)), (3, 5))],
                         ids=["pf5", "pf7", "hx4x4", "hx3x5"])
@pytest.mark.parametrize("participants", [None, [0, 3, 7, 9, 10]], ids=["all", "some"])
def test_embedding_reference_is_innets_embedding(topo, grid, participants):
    ports = _ports(topo)
    parts = list(range(topo.nodes)) if participants is None else participants
    mine = ref.embedding_reference(ref.graph_of(ports), ports, parts, grid=grid)
    theirs = embed(topo, participants)
    assert mine["root"] == theirs.root
    assert mine["depth"] == theirs.depth
    assert mine["switches"] == _tree(theirs)


def test_embedding_reference_with_a_given_root_and_candidates():
    topo = polarfly(5)
    ports = _ports(topo)
    graph = ref.graph_of(ports)
    some = ref.embedding_reference(graph, ports, range(topo.nodes), candidates=[4, 9])
    assert set(some["keys"]) == {4, 9}
    assert some["root"] == min(some["keys"].values())[3]
    fixed = ref.embedding_reference(graph, ports, range(topo.nodes), root=12)
    assert fixed["keys"] == {}
    assert fixed["switches"] == _tree(embed(topo, root=12))


@pytest.mark.parametrize("shape", [(4, 4), (8, 8), (16,), (4, 4, 4)])
def test_swing_reference_is_innets_swing(shape):
    peers = ref.swing_peers_reference(shape)
    assert np.array_equal(peers, build_schedule("swing-l", shape).arrays()["send_peer"])


def test_swing_reference_of_one_collective():
    peers = ref.swing_peers_reference((4, 4), [2])
    assert (peers[[0, 1, 3]] == -1).all()
    assert peers[2, 0, 0] == 12  # mirrored: rank 0 of a 4x4 torus talks to 12 first (Fig. 5)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: ref.polarfly_reference(4), ValueError,
     r"^The reference PolarFly needs a prime q, not 4$"),
    (lambda: ref.polarfly_reference(3.0), TypeError, r"^q must be an integer, not 3\.0$"),
    (lambda: ref.swing_peers_reference((4, 8)), ValueError,
     r"^The reference Swing needs a square torus with power-of-two sides, not \[4, 8\]$"),
    (lambda: ref.swing_peers_reference((6, 6)), ValueError,
     r"^The reference Swing needs a square torus with power-of-two sides, not \[6, 6\]$"),
])
def test_reference_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# Registry, ratios and report ------------------------------------------------------------------


def test_compare_scales_the_measured_share():
    seen = []
    out = compare("tiny", lambda: sum(range(1000)), lambda units: seen.append(units), 100, 7,
                  "row", "test")
    units = seen[0]
    assert len(units) == len(np.unique(units)) == 7
    assert units[0] == 0
    assert units[-1] == 99
    r = out["reference"]
    assert r["units_measured"] == 7
    assert r["units_total"] == 100
    assert r["seconds"] == pytest.approx(r["seconds_measured"] * 100 / 7, rel=0.01, abs=1e-3)
    assert r["basis"] == "7 of 100 rows (evenly spaced) timed, scaled by 14.29"
    assert out["speedup"] == pytest.approx(r["seconds"] / out["seconds"], rel=0.05, abs=0.1)


def test_every_group_and_name_is_valid():
    cases = bench.select() + bench.select(quick=True)
    assert {c.group for c in cases} <= set(bench.GROUPS)
    names = [c.name for c in bench.REGISTRY]
    assert len(names) == len(set(names))
    full = {c.name for c in bench.select()}
    assert {"polarfly_q127", "polarfly_q251", "routing_q61", "routing_q127",
            "embed_polarfly_q127", "embed_hyperx_128x128", "swing_16384",
            "sim_polarfly_q3_allreduce", "endpoint_ring2", "endpoint_ring4", "piuma_scale_1k",
            "hw_switch_r4_passthrough", "hw_ceng", "hw_alu_add"} <= full
    # The hardware table: radix 4, 8, 16 with (engine) and without collective support.
    for radix in (4, 8, 16):
        assert {f"hw_switch_r{radix}_ceng", f"hw_switch_r{radix}_p2p"} <= full


def test_case_registration_errors():
    with pytest.raises(ValueError, match=r"^Group must be one of generators, analysis, "
                       r"simulation, hardware, not 'gpu'$"):
        bench.case("x", "gpu", "x")
    bench.select()  # loads the registry
    with pytest.raises(ValueError, match=r"^Benchmark 'polarfly_q127' is registered twice$"):
        bench.case("polarfly_q127", "generators", "again")
    # The cases are listed in the order their modules registered them, which depends on
    # what the test session imported first.
    quick = bench.select(quick=True)
    starts = sorted({c.name.split("_")[0] + "_" for c in quick})
    assert "polarfly_" in starts
    with pytest.raises(ValueError, match=rf"^No benchmark starts with 'nope'; the quick run's "
                       rf"{len(quick)} start with {', '.join(starts)} \(innet bench --list "
                       rf"names them\)$"):
        bench.select(quick=True, only=["nope"])


def test_run_named_refuses_an_unknown_name():
    with pytest.raises(ValueError, match=r"^No benchmark is named 'no_such_case'$"):
        bench.run_named("no_such_case", bench.Options(quick=True))


def test_failing_cases_are_reported_and_the_others_run():
    def boom(options):
        raise ValueError("no luck")

    cases = [bench.Case("boom", "generators", "Boom", boom),
             bench.Case("fine", "generators", "Fine",
                        lambda o: {**compare("3 units", lambda: None, lambda u: None, 3, 3,
                                             "unit", "nothing"), "value": 3}),
             bench.Case("ring", "simulation", "Ring", lambda o: {"result": "1 element/cycle"}),
             bench.Case("scale", "analysis", "Scale", lambda o: {
                 "size": "2 nodes", "seconds": {"build": 0.5}, "total_seconds": 0.75,
                 "peak_rss_mb": 1234.4})]
    out = bench.run(cases, bench.Options(quick=True))
    assert out[0]["status"] == "error"
    assert out[0]["error"] == "ValueError: no luck"
    assert out[1]["status"] == "ok"
    assert out[1]["value"] == 3
    report = {"date": "today", "options": {"quick": True, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": out}
    text = markdown(report)
    assert "| Boom | | | error: ValueError: no luck | |" in text
    assert "| Fine | 3 units | " in text
    assert "| Ring | 1 element/cycle |" in text
    assert "| Scale | 2 nodes | build 500 ms | 750 ms | 1,234 MB |" in text


@pytest.mark.parametrize(("seconds", "text"), [(0.01234, "12.3 ms"), (81.2, "81.2 s"),
                                               (1500, "25 min"), (9000, "2.5 h")])
def test_seconds_text(seconds, text):
    assert seconds_text(seconds) == text


# The command ----------------------------------------------------------------------------------


@pytest.mark.synth
def test_bench_quick_json_has_the_documented_fields(innet, tmp_path):
    import os

    env = {**os.environ, "INNET_CACHE": str(tmp_path / "cache")}
    done = innet("bench", "--quick", "--json", "-o", str(tmp_path / "out"), env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert json.loads((tmp_path / "out" / "bench.json").read_text()) == report
    md = (tmp_path / "out" / "bench.md").read_text()
    assert {"innet", "date", "options", "machine", "results"} <= set(report)
    assert report["options"]["quick"] is True
    results = {r["name"]: r for r in report["results"]}
    assert set(results) == {c.name for c in bench.select(quick=True)}
    for r in results.values():
        assert r["status"] == "ok", r
        assert r["title"] in md
    generators = [r for r in results.values() if r["group"] == "generators"]
    assert {r["name"].split("_")[0] for r in generators} == {"polarfly", "routing", "embed",
                                                              "swing", "image"}
    assert results["piuma_scale_16"]["agrees"] is True
    for r in generators:
        assert r["seconds"] > 0
        assert r["speedup"] > 0
        assert set(r["reference"]) == {"what", "unit", "units_total", "units_measured",
                                       "seconds_measured", "seconds", "basis"}
    assert results["embed_hyperx_16x16"]["trees_agree"] is True
    assert results["image_polarfly_q5"]["images_agree"] is True
    hw = results["hw_muladd"]
    for key in ("fmax_mhz", "lut4", "ccu2c", "ff", "bram", "dsp", "logic_cells",
                "generic_cells", "seed"):
        assert key in hw
    assert hw["pnr"] == "routed"
    assert hw["fmax_mhz"] > 0
    assert hw["ff"] == 9  # MulAdd(8): o and o_valid


def test_bench_list_and_bad_prefix(innet):
    done = innet("bench", "--list")
    assert done.returncode == 0
    for name in ("hw_ceng", "endpoint_ring4", "piuma_scale_4k"):
        assert name in done.stdout
    listed = innet("bench", "--list", "--json", "--only", "hw_", "--only", "endpoint_")
    assert listed.returncode == 0, listed.stderr
    cases = json.loads(listed.stdout)["cases"]
    assert {c["name"] for c in cases} == {c.name for c in bench.select(only=["hw_", "endpoint_"])}
    assert all(c["group"] and c["title"] for c in cases)
    bad = innet("bench", "--only", "nope")
    assert bad.returncode == 2
    assert bad.stderr.startswith("innet: error: No benchmark starts with 'nope'; the full run")
    assert len(bad.stderr.splitlines()) == 1
    # An empty prefix (an unset shell variable) would start every benchmark.
    empty = innet("bench", "--only", "", "--list")
    assert (empty.returncode, empty.stdout) == (2, "")
    assert empty.stderr == ("innet: error: An empty prefix would run every benchmark: name one "
                            "(innet bench --list names them), or leave --only out\n")


@pytest.mark.synth  # emits three switches through Yosys (tens of seconds)
def test_switch_variants_are_ordered_by_size():
    from innet.hw.variants import make_switch, switch_collective
    from innet.hw.verilog import emit

    sizes = {}
    for variant in ("none", "pass", "engine"):
        top, _ = make_switch(2, collective_ids=1, collective=switch_collective(variant))
        sizes[variant] = len(emit(top, "innet_switch").verilog)
    assert switch_collective("none") is None
    assert sizes["none"] < sizes["pass"] < sizes["engine"]


def test_collective_path_errors():
    from innet.hw.variants import switch_collective

    with pytest.raises(ValueError, match=r"^Collective path must be one of engine, pass, none, "
                       r"not 'x'$"):
        switch_collective("x")
    with pytest.raises(ValueError, match=r"^The collective engine reduces 32-bit payloads, not "
                       r"16-bit ones \(use --collective pass\)$"):
        switch_collective("engine", payload_width=16)
    for name in ("pass", "none"):
        with pytest.raises(ValueError, match=rf"^--mul adds multipliers to the collective "
                                             rf"engine, not to --collective {name}$"):
            switch_collective(name, mul=True)


@pytest.mark.parametrize("radix", [8, 16])
def test_switches_are_placed_unless_the_run_says_not(radix, monkeypatch):
    import innet.hw.verilog
    from innet.sim import synth
    from innet.sim.bench import hardware

    seen = {}

    def synthesize(design, target, **kwargs):
        seen.update(kwargs, design=design)
        raise RuntimeError("stop")

    def emit(top, name):
        top._MustUse__silence = True  # never elaborated here: no UnusedElaboratable at GC
        return top, name

    monkeypatch.setattr(innet.hw.verilog, "emit", emit)
    monkeypatch.setattr(synth, "synthesize", synthesize)
    with pytest.raises(RuntimeError, match=r"^stop$"):
        hardware._switch(radix, "none", bench.Options())
    assert seen["pnr"] is True
    assert seen["design"][0].radix == radix
    with pytest.raises(RuntimeError, match=r"^stop$"):
        hardware._switch(radix, "none", bench.Options(pnr=False))
    assert seen["pnr"] is False


def test_each_radix_has_the_round_robin_of_its_outputs(monkeypatch):
    """``hw_round_robin_<n>`` synthesises the arbiter of a radix-(n - 1) switch's local output:
    a requester per input port."""
    from innet.hw.arbiter import RoundRobin
    from innet.sim.bench import hardware

    seen = []

    def synth_case(component, name, params, options):
        component._MustUse__silence = True  # never elaborated here
        seen.append((type(component), component.count, params))
        return {}

    monkeypatch.setattr(hardware, "synth_case", synth_case)
    names = [c.name for c in bench.select(only=["hw_round_robin_"])]
    assert names == [f"hw_round_robin_{r + 1}" for r in hardware.RADICES]
    for c in bench.select(only=["hw_round_robin_"]):
        c.func(bench.Options())
    assert seen == [(RoundRobin, r + 1, {"count": r + 1}) for r in hardware.RADICES]


def test_each_radix_has_its_reduction_datapaths(monkeypatch):
    """``hw_reduction_<datapath>_<n>`` synthesises the engine's reduction of a radix-(n - 1)
    switch, the multi-operand unit or the tree of pairwise ALUs, n operands."""
    from innet.hw.alu.multi import MultiOperandUnit
    from innet.hw.ceng.tree import ReductionTree
    from innet.sim.bench import hardware

    seen = []

    def synth_case(component, name, params, options):
        component._MustUse__silence = True  # never elaborated here
        seen.append((type(component), component.leaves, name, params))
        return {}

    monkeypatch.setattr(hardware, "synth_case", synth_case)
    cases = bench.select(only=["hw_reduction_"])
    assert [c.name for c in cases] == [f"hw_reduction_{d}_{r + 1}" for r in hardware.RADICES
                                       for d in ("multi", "tree")]
    for c in cases:
        c.func(bench.Options())
    assert seen == [(kind, r + 1, "innet_reduction",
                     {"leaves": r + 1, "datapath": d, "mul": False})
                    for r in hardware.RADICES
                    for kind, d in ((MultiOperandUnit, "multi"), (ReductionTree, "tree"))]


def _hw(name, logic_cells, fmax, path=None):
    return {"name": name, "group": "hardware", "title": name, "status": "ok", "lut4": 1,
            "ccu2c": 0, "ff": 1, "lutram": 0, "bram": 0, "dsp": 0, "logic_cells": logic_cells,
            "generic_cells": 1, "fmax_mhz": fmax, "pnr": "routed", "note": "",
            "critical_path": path, "tool_seconds": {"pnr": 1.0}}


@pytest.mark.parametrize(("p2p", "engine", "fmax"), [(1000, 1900, 151.0), (1000, 2001, 149.9),
                                                     (1000, 2000, 150.0)])
def test_targets_are_rows_of_measured_against_goal(p2p, engine, fmax):
    from innet.sim.bench.report import TARGET_MHZ, targets

    results = [_hw("hw_switch_r8_p2p", p2p, 200.0), _hw("hw_switch_r8_ceng", engine, fmax),
               _hw("hw_switch_r4_p2p", 10, 300.0)]  # radix 4 without its engine: not judged
    judged = targets(results)
    rows = {t["target"]: t for t in judged}
    speed = rows["radix-8 switch (collective engine), 32-bit, 4 ids: fmax"]
    cost = rows["radix-8 collective support: logic cells added to the p2p switch"]
    assert not any(t["target"].startswith("radix-4") for t in judged)
    assert speed["met"] is (fmax >= TARGET_MHZ)
    assert cost["met"] is (engine - p2p <= p2p)
    assert cost["target"].startswith("radix-8 ")
    assert f"{engine - p2p:,} (" in cost["measured"]
    assert speed["measured"] == f"{fmax:.1f} MHz"
    assert speed["goal"] == ">= 150 MHz"
    assert {tuple(row) for row in judged} == {("target", "measured", "goal", "met")}
    # Not routed: no fmax row (its logic cells are judged all the same).
    assert [t["target"] for t in targets([_hw("hw_switch_r8_ceng", engine, None)])] == [
        "radix-8 switch (collective engine), 32-bit, 4 ids: logic cells"]


@pytest.mark.parametrize(("through", "met"), [(1150, True), (1151, False)])
def test_the_pass_through_switch_is_judged_against_the_p2p_switch(through, met):
    from innet.sim.bench.report import targets

    results = [_hw("hw_switch_r8_p2p", 1000, 200.0),
               _hw("hw_switch_r8_passthrough", through, 190.0)]
    what = "radix-8 switch with the pass-through collective path: logic cells"
    row, = (t for t in targets(results) if t["target"] == what)
    assert row["met"] is met
    assert row["measured"] == f"{through:,} ({through / 1000:.2f}x the p2p switch)"
    assert row["goal"] == "<= 1.15x the p2p switch (1,150)"
    assert not any(t["target"] == what for t in targets(results[1:]))


@pytest.mark.parametrize(("q3", "met"), [(20_000.0, True), (19_999.4, False)])
def test_simulation_speed_is_judged_against_its_goal(q3, met):
    from innet.sim.bench.report import SIM_TARGETS, targets

    def sim(name, speed):
        return {"name": name, "group": "simulation", "title": f"{name} title", "status": "ok",
                "cycles": 100, "seconds": 1.0, "cycles_per_second": speed,
                "fixed_seconds": 1.0, "load": "backdoor"}

    results = [sim("sim_polarfly_q3_threads", q3), sim("sim_polarfly_q7", 900.0),
               sim("sim_hyperx_4x4x4", 500.0)]  # no target: not judged
    q3_row, q7_row = targets(results)
    assert q3_row == {"target": "sim_polarfly_q3_threads title",
                      "measured": f"{q3:,.0f} cycles/s", "goal": ">= 20,000 cycles/s",
                      "met": met}
    assert q7_row["met"] is False
    assert q7_row["goal"] == f">= {SIM_TARGETS['sim_polarfly_q7']:,} cycles/s"
    report = {"date": "today", "options": {"quick": False, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": results}
    text = markdown(report)
    assert text.index("**Simulation**") < text.index("**Targets**")
    row = (f"| sim_polarfly_q3_threads title | {q3:,.0f} cycles/s | >= 20,000 cycles/s | "
           f"{'yes' if met else 'no'} |")
    assert row in text


def test_a_placed_but_unrouted_switch_shows_its_placement_estimate():
    """A timed-out place and route: the table shows the placement estimate as such, and the
    fmax target can be judged missed on it (routing only lowers it), never met."""
    from innet.sim.bench.report import targets

    def unrouted(placed):
        r = _hw("hw_switch_r8_ceng", 1500, None)
        return {**r, "pnr": "timeout", "placed_fmax_mhz": placed,
                "tool_seconds": {"pnr": 3600.0}}

    report = {"date": "today", "options": {"quick": False, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": [unrouted(27.48)]}
    assert "| 27.5 placed, not routed in 3600 s |" in markdown(report)

    def fmax_rows(results):
        return [t for t in targets(results) if t["target"].endswith(": fmax")]

    (speed,) = fmax_rows([unrouted(27.48)])
    assert speed["measured"] == "at most 27.5 MHz (placed, not routed)"
    assert speed["met"] is False
    assert fmax_rows([unrouted(160.0)]) == []  # an estimate above the goal proves nothing
    no_estimate = {**unrouted(None)}
    report["results"] = [no_estimate]
    assert "| timeout (3600 s) |" in markdown(report)
    assert fmax_rows([no_estimate]) == []


def test_markdown_names_critical_paths_and_targets():
    path = {"start": "input port a", "end": "core.x", "logic_levels": 3, "carry_bits": 4,
            "ns": 8.0, "routing_ns": 2.0, "logic_ns": 6.0}
    results = [_hw("hw_switch_r8_p2p", 1000, 200.0),
               _hw("hw_switch_r8_ceng", 1500, 125.0, path)]
    report = {"date": "today", "options": {"quick": False, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": results}
    text = markdown(report)
    assert ("- hw_switch_r8_ceng: input port a -> core.x: 3 logic levels + 4 carry bits, "
            "8.00 ns (25 % routing)") in text
    assert "| radix-8 switch (collective engine), 32-bit, 4 ids: fmax | 125.0 MHz | " in text
    assert "| no |" in text  # 125 MHz
    assert "| yes |" in text  # 500 more cells than the p2p switch's 1,000


@pytest.mark.synth  # emits the ALU through Yosys before it looks in the cache
def test_cached_only_reports_what_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("INNET_CACHE", str(tmp_path))
    cases = bench.select(only=["hw_alu_add"])
    out = bench.run(cases, bench.Options(cached=True))
    assert out[0]["status"] == "unavailable"
    assert out[0]["reason"] == ("innet_alu (seed 1, ecp5) is not in the synthesis cache "
                                "(--cached)")
    assert list(tmp_path.iterdir()) == []


def test_endpoint_case_reports_the_rings_figures(monkeypatch):
    """The endpoint cases condense :func:`measure`'s report (here a made-up one) into a row."""
    from innet.sim.bench import endpoint

    def run(elements, cycles, entries):
        timeline = {}
        for e in range(entries):
            timeline[f"0:{e}:cts"] = [10 * e, 10 * e, 1]
            timeline[f"0:{e}:data"] = [10 * e + 1, 10 * e + 4, 4]
        return {"elements": elements, "cycles": cycles, "data": 8, "cts": 2, "start": 0,
                "timeline": timeline}

    report = {"nodes": 2, "elements": 64,
              "intrinsic": [{"cycles": 80, "timeline": {"0:0:request": [0, 63, 64],
                                                        "0:0:response_in": [5, 68, 64]}}],
              "runs": [run(2, 50, 2), run(1, 30, 1), run(64, 128, 2), run(64, 100, 2),
                       run(64, 256, 4)]}
    monkeypatch.setattr(endpoint, "measure", lambda nodes, elements: report)
    (ring2,) = bench.select(only=["endpoint_ring2"])
    (out,) = bench.run([ring2], bench.Options())
    assert out["status"] == "ok", out
    assert out["intrinsic_elements_per_cycle"] == 0.8
    assert out["cycles_per_entry"] == {"swing-l": 25.0, "recdoub-l": 30.0}
    assert out["elements_per_cycle"] == {"swing-b": 0.5, "recdoub-b": 0.64, "ring": 0.25}
    assert out["result"] == ("2 nodes: intrinsic broadcast 0.800 elements/cycle; swing-l 25 "
                             "cycles per entry, recdoub-l 30 cycles per entry; swing-b 0.500 "
                             "elements/cycle, recdoub-b 0.640 elements/cycle, ring 0.250 "
                             "elements/cycle")
    assert out["summary"] == endpoint.summarise(report)
    assert f"| {ring2.title} | {out['result']} |" in markdown(
        {"date": "today", "options": {"quick": False, "seed": 1},
         "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
         "results": [out]})


def test_timing_case_places_the_radix4_p2p_switch_on_three_seeds(monkeypatch):
    """The timing case is the switch `innet synth switch --radix 4 --collective-ids 1
    --collective none` builds, synthesised once and placed and routed on seeds 1, 2, 3."""
    import innet.hw.verilog
    from innet.hw.variants import make_switch
    from innet.sim import synth
    from innet.sim.bench import hardware

    assert "hw_timing_r4_p2p" in {c.name for c in bench.select()}
    assert "hw_timing_r4_p2p" not in {c.name for c in bench.select(quick=True)}
    seen = {}

    def synthesize_seeds(design, target, seeds, **kwargs):
        seen.update(kwargs, design=design, seeds=seeds, target=target)
        raise RuntimeError("stop")

    def emit(top, name):
        top._MustUse__silence = True  # never elaborated here: no UnusedElaboratable at GC
        return top, name

    monkeypatch.setattr(innet.hw.verilog, "emit", emit)
    monkeypatch.setattr(synth, "synthesize_seeds", synthesize_seeds)
    (timing,) = bench.select(only=["hw_timing_r4_p2p"])
    (out,) = bench.run([timing], bench.Options(timeout=700.0))
    assert out["error"] == "RuntimeError: stop"
    assert seen["seeds"] == hardware.TIMING_SEEDS == (1, 2, 3)
    assert seen["jobs"] == 3
    assert (seen["pnr"], seen["timeout"], seen["target"]) == (True, 700.0, "ecp5")
    top, name = seen["design"]
    _reference, params = make_switch(4, collective_ids=1, collective=None)
    _reference._MustUse__silence = True
    assert (name, top.radix, top.params.collective_ids) == ("innet_switch", 4, 1)
    assert params["radix"] == 4


def _timing(fmax, goal=150.0, seed_goal=140.0, needed=2):
    seeds = [{"seed": s, "fmax_mhz": f, "pnr": "routed" if f else "timeout",
              "placed_fmax_mhz": None, "note": "", "pnr_seconds": 300.0, "cached": False,
              "critical_path": None, "paths": []} for s, f in enumerate(fmax, 1)]
    from innet.sim.synth import seed_summary

    r = _hw("hw_timing_r4_p2p", 5000, fmax[0])
    return {**r, "clock_mhz": 150.0, "seeds": seeds,
            "seed_summary": seed_summary([{**s, "clock_mhz": 150.0} for s in seeds]),
            "breakdown": [], "goal_mhz": goal, "seed_goal_mhz": seed_goal,
            "seeds_needed": needed}


@pytest.mark.parametrize(("fmax", "first", "seeds"), [
    ((151.0, 139.0, 141.0), True, True), ((149.9, 139.9, 140.0), False, True),
    ((149.9, 139.9, 120.0), False, False),
    ((None, 145.0, 150.0), None, True), ((150.0, None, None), True, False)])
def test_timing_case_targets_use_the_goals_of_its_data(fmax, first, seeds):
    from innet.sim.bench.report import targets

    judged = targets([_timing(fmax)])
    if first is None:
        (row,) = judged
    else:
        speed, row = judged
        assert speed["met"] is first
        assert speed["goal"] == ">= 150 MHz"
        assert speed["target"] == "radix-4 p2p switch (timing case): fmax, seed 1"
    assert row["met"] is seeds
    assert row["target"] == "radix-4 p2p switch (timing case): seeds 1, 2, 3 at 140 MHz or more"
    assert row["goal"] == ">= 2 of 3"
    # The goals are the case's data, not constants of the report.
    (loose,) = targets([_timing((None, 100.0, 100.0), seed_goal=90.0, needed=3)])
    assert loose["met"] is False
    assert loose["measured"] == "2 of 3"
    # Not placed and routed (--no-pnr): nothing to judge.
    unplaced = _timing((None, None, None))
    for s in unplaced["seeds"]:
        s["pnr"] = "skipped"
    assert targets([unplaced]) == []


def test_markdown_shows_the_timing_case():
    row = {"block": "core", "own": False, "lut4": 10, "ff": 2, "lutram": 1, "bram": 3,
           "carry": 0, "other": 0, "logic_cells": 16}
    path = {"end": "core.x", "to": "dut.core.x_TRELLIS_FF_Q", "port": "DI", "arrival_ns": 7.9,
            "bits": 2, "start": "core.y", "logic_levels": 3, "carry_bits": 0, "ns": 8.0,
            "routing_ns": 6.0, "logic_ns": 2.0}
    timing = _timing((125.0, 130.0, None))
    timing["breakdown"] = [row, {**row, "block": "(top level)", "lut4": 1, "logic_cells": 1}]
    timing["seeds"][0]["paths"] = [path, {**path, "end": "core.z", "start": None,
                                          "arrival_ns": 7.5}]
    report = {"date": "today", "options": {"quick": False, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": [timing]}
    text = markdown(report)
    assert ("hw_timing_r4_p2p: fmax (MHz) seed 1 125.0, seed 2 130.0, seed 3 timeout (300 s); "
            "min 125.0, median 127.5, max 130.0; 5,000 logic cells.") in text
    assert "| block | LUT4 | FF | LUT RAM | BRAM | CCU2C | other | logic cells |" in text
    assert "| core | 10 | 2 | 1 | 3 | 0 | 0 | 16 |" in text
    assert "| total | 11 | 4 | 2 | 6 | 0 | 0 | 17 |" in text
    assert ("- 7.90 ns at core.x (2 bits): core.y -> core.x: 3 logic levels, 8.00 ns "
            "(75 % routing)") in text
    assert "- 7.50 ns at core.z (2 bits)\n" in text
    assert ("| radix-4 p2p switch (timing case): fmax, seed 1 | 125.0 MHz | >= 150 MHz | no |"
            in text)


def test_simulation_cases_report_how_they_loaded(monkeypatch):
    """The load each network ran with is the one its figures report, also in the table."""
    from types import SimpleNamespace

    from innet.sim.bench import Options, simulation

    loads = []

    def timed(topo, runs, **args):
        loads.append(args.get("load", "backdoor"))
        done = [SimpleNamespace(correct=True, p2p_sent=5, p2p_received=5, latency_cycles=100,
                                run_seconds=0.01) for _ in runs]
        return done, 0.5

    monkeypatch.setattr(simulation, "_timed", timed)
    monkeypatch.setattr(simulation, "_warm", lambda topo, threads=1: 0.0)
    matrix = simulation._matrix16(Options(quick=True))
    assert loads == ["backdoor", "bus"]
    assert matrix["load"] == "backdoor (HyperX 4x4), bus (torus 4x4)"
    assert simulation._polarfly3(Options(quick=True))["load"] == "backdoor"
    row = {"name": "sim_matrix_16", "group": "simulation", "title": "matrix", "status": "ok",
           **matrix}
    report = {"date": "today", "options": {"quick": True, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": [row]}
    assert ("fixed cost per simulation; loaded by backdoor (HyperX 4x4), bus (torus 4x4)) |"
            in markdown(report))


def _ran(scenario, correct=True, sent=5, received=5, latency=100):
    from types import SimpleNamespace

    return SimpleNamespace(scenario=scenario, correct=correct, p2p_sent=sent,
                           p2p_received=received, latency_cycles=latency, run_seconds=0.01,
                           detail="" if correct else "endpoint 2 element 7: got 0x1, expected 0x2")


def test_simulation_speed_refuses_a_wrong_result_or_a_lost_flit():
    """A simulation case reports no speed for a run whose result was wrong or that lost p2p
    flits: the first such run is named."""
    from innet.sim.bench import simulation
    from innet.sim.network import Scenario

    good, bad = Scenario("innet", 64), Scenario("ring", 64, background=0.5)
    message = f"{bad} was wrong: endpoint 2 element 7: got 0x1, expected 0x2"
    with pytest.raises(RuntimeError, match="^" + re.escape(message) + "$"):
        simulation._speed([_ran(good), _ran(bad, correct=False), _ran(good, correct=False)], 1.0)
    message = f"{bad}: 9 p2p flits sent, 8 received"
    with pytest.raises(RuntimeError, match="^" + re.escape(message) + "$"):
        simulation._speed([_ran(good), _ran(bad, sent=9, received=8)], 1.0)
    assert simulation._speed([_ran(good), _ran(bad)], 1.0)["cycles"] == 200


def test_a_soak_that_runs_short_of_its_cycles_is_an_error(monkeypatch):
    """The soak sizes its runs on a probe; if the runs then take fewer cycles than the
    target, it says so rather than reporting a short soak (no simulation: stand-ins)."""
    from innet.sim.bench import Options, simulation

    calls = []

    def timed(topo, runs, **args):
        calls.append(len(runs))
        latency = 1000 if len(calls) == 1 else 10  # the probe, then the soak itself
        return [_ran(s, latency=latency) for g in runs for s in g], 0.5

    monkeypatch.setattr(simulation, "_timed", timed)
    monkeypatch.setattr(simulation, "_warm", lambda topo, threads=1: 0.0)
    with pytest.raises(RuntimeError) as raised:
        simulation._soak(Options(quick=True))
    probe, runs = calls
    # Sized on the probe's 1,000 cycles a run, the soak's runs cover the target with room.
    assert probe == 1
    assert 20_000 <= runs * 1000 <= 30_000
    assert str(raised.value) == f"The soak ran {runs * 10:,} cycles, fewer than 20,000"


# The collective latency case ---------------------------------------------------------------------


def _outcome(elements, latency, arrivals=None, predicted=None, correct=True):
    from innet.sim.network import Outcome, Scenario

    return Outcome(scenario=Scenario("innet", elements, dtype="fp32"), correct=correct,
                   latency_cycles=latency, throughput_elems_per_cycle=elements / latency,
                   predicted_cycles=None, p2p_sent=0, p2p_received=0,
                   detail="" if correct else "endpoint 3 element 0: got 0x1, expected 0x2",
                   arrivals=arrivals, predicted_arrivals=predicted)


def test_latency_case_reads_the_hop_off_the_modelled_tree():
    """On the arrivals of the idle-latency model of PolarFly q = 3's allreduce tree, the case
    finds the switch's per-hop latency (each level of the response tree one hop later) and
    the tree's bound; the ratio and the long run's rate are the outcomes' own."""
    from innet.hw.switch import HOP_CYCLES
    from innet.sim.bench.latency import measure
    from innet.sim.golden import idle_latency

    model = idle_latency(embed(polarfly(3), None, root="auto", kind="allreduce", op="add",
                               dtype="fp32"), radix=polarfly(3).radix)
    bound = max(model.values())
    got = measure(_outcome(1, bound + 7, dict(model), model), _outcome(4096, 4200))
    assert got == {"latency_cycles": bound + 7, "bound_cycles": bound,
                   "bound_ratio": round((bound + 7) / bound, 3), "arrivals_exact": True,
                   "hop_cycles": HOP_CYCLES, "elements": 4096, "cycles": 4200,
                   "elements_per_cycle": round(4096 / 4200, 4)}
    late = {u: c + (u == min(model)) for u, c in model.items()}
    assert measure(_outcome(1, bound, late, model), _outcome(8, 8))["arrivals_exact"] is False
    single = measure(_outcome(1, 9, {0: 5}, {0: 5}), _outcome(8, 8))
    assert single["hop_cycles"] is None  # one receiver: no level to compare


def test_latency_case_refuses_a_wrong_result_or_a_run_without_arrivals():
    from innet.sim.bench.latency import measure

    good = _outcome(1, 10, {0: 4, 1: 7}, {0: 4, 1: 7})
    with pytest.raises(RuntimeError, match=r"was wrong: endpoint 3 element 0: got 0x1"):
        measure(good, _outcome(64, 80, correct=False))
    with pytest.raises(RuntimeError, match=r"has no arrivals: not an in-network allreduce$"):
        measure(_outcome(1, 10), _outcome(64, 80))


def _latency(hop=3, latency=52, bound=48, rate=0.99):
    return {"name": "latency_polarfly_q3", "group": "simulation", "title": "latency",
            "status": "ok", "latency_cycles": latency, "bound_cycles": bound,
            "bound_ratio": round(latency / bound, 3), "arrivals_exact": True, "hop_cycles": hop,
            "elements": 4096, "cycles": 4137, "elements_per_cycle": rate, "result": "-"}


@pytest.mark.parametrize(("fmax", "hop", "latency", "bound", "rate", "met"), [
    (150.0, 3, 52, 48, 0.99, [True, True, True, True, True]),
    (149.9, 3, 53, 48, 0.9899, [True, False, False, False, False]),
    (300.0, 4, 105, 96, 0.999, [False, True, True, True, True]),
])
def test_latency_targets_take_the_cycles_at_the_switches_fmax(fmax, hop, latency, bound, rate,
                                                               met):
    """Cycles of the latency case turn into nanoseconds at the routed fmax of the switch each
    target names: the radix-8 p2p switch for a hop, the radix-4 engine switch (PolarFly q = 3's
    radix) for the allreduce."""
    from innet.sim.bench.report import targets

    results = [_latency(hop, latency, bound, rate), _hw("hw_switch_r8_p2p", 1000, fmax),
               _hw("hw_switch_r4_ceng", 4000, fmax)]
    rows = [t for t in targets(results) if "latency" in t["target"]
            or "throughput" in t["target"]]
    assert [t["met"] for t in rows] == met
    hop_row, ns_row, allreduce, ratio, rate_row = rows
    assert hop_row["measured"] == f"{hop} cycles"
    assert ns_row["measured"] == f"{hop * 1000 / fmax:.1f} ns ({hop} cycles at {fmax:.1f} MHz)"
    assert ns_row["goal"] == "<= 20 ns"
    assert allreduce["measured"].endswith(f" ns ({latency} cycles at {fmax:.1f} MHz)")
    assert allreduce["goal"] == "<= 350 ns"
    assert ratio["measured"] == f"{latency / bound:.2f}x ({latency} cycles, bound {bound})"
    assert rate_row["target"].startswith("4,096-element in-network allreduce")
    # Without the switches' fmax only the cycles are judged.
    alone = [t["target"] for t in targets([_latency()])]
    assert len(alone) == 3
    assert not any("fmax" in t for t in alone)


@pytest.mark.parametrize(("p2p", "engine", "fmax", "met"), [
    (10_000, 25_000, 150.0, [True, True, True, True]),
    (10_001, 25_001, 149.9, [False, False, False, False]),
])
def test_size_targets_of_the_radix8_switches(p2p, engine, fmax, met):
    from innet.sim.bench.report import targets

    results = [_hw("hw_switch_r8_p2p", p2p, fmax), _hw("hw_switch_r8_passthrough", 1, fmax),
               _hw("hw_switch_r8_ceng", engine, None)]
    rows = {t["target"]: t for t in targets(results)}
    judged = [rows["radix-8 p2p switch: fmax"]["met"],
              rows["radix-8 switch with the pass-through collective path: fmax"]["met"],
              rows["radix-8 p2p switch: logic cells"]["met"],
              rows["radix-8 switch (collective engine), 32-bit, 4 ids: logic cells"]["met"]]
    assert judged == met
    assert rows["radix-8 p2p switch: logic cells"]["goal"] == "<= 10,000"


def test_the_radix16_switches_are_judged_on_whether_they_route():
    from innet.sim.bench.report import targets

    def r16(name, pnr, fmax=None):
        return {**_hw(name, 74_321, fmax), "pnr": pnr, "tool_seconds": {"pnr": 6300.0}}

    rows = targets([r16("hw_switch_r16_p2p", "routed", 46.0),
                    r16("hw_switch_r16_ceng", "timeout")])
    routed, unrouted = (t for t in rows if t["target"].endswith(": routes"))
    assert routed == {"target": "radix-16 p2p switch: routes",
                      "measured": "routed at 46.0 MHz (74,321 logic cells)",
                      "goal": "routed, fmax reported", "met": True}
    assert unrouted["measured"] == "placed, not routed in 6300 s (74,321 logic cells)"
    assert unrouted["met"] is False
    (big,) = (t for t in targets([r16("hw_switch_r16_ceng", "does not fit")])
              if t["target"].endswith(": routes"))
    assert big["measured"] == "does not fit (74,321 logic cells)"
    assert big["met"] is False
    skipped = targets([r16("hw_switch_r16_ceng", "skipped")])
    assert not any(t["target"].endswith(": routes") for t in skipped)  # --no-pnr: not judged


def test_markdown_judges_the_targets_once_over_every_group():
    """One table of targets ends the report, so a target measured by a simulation case at a
    hardware case's fmax is judged."""
    results = [_latency(), _hw("hw_switch_r8_p2p", 1000, 150.0)]
    report = {"date": "today", "options": {"quick": False, "seed": 1},
              "machine": {"cpu": "cpu", "cores": 2, "python": "3", "load_average": None},
              "results": results}
    text = markdown(report)
    assert text.count("**Targets**") == 1
    assert text.index("**Hardware cost") < text.index("**Targets**")
    assert ("| idle per-hop latency at the radix-8 p2p switch's fmax | 20.0 ns (3 cycles at "
            "150.0 MHz) | <= 20 ns | yes |") in text
