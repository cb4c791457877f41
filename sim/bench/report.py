"""The Markdown form of an ``innet bench`` report (the tables of docs/synthesis-bench.md)."""

from __future__ import annotations

from typing import Any

__all__ = ["TARGET_MHZ", "critical_text", "markdown", "seconds_text", "targets",
           "timing_text"]


def seconds_text(seconds: float) -> str:
    """``0.0123`` -> ``"12.3 ms"``, ``81.2`` -> ``"81.2 s"``, ``4000`` -> ``"1.1 h"``."""
    if seconds < 1:
        return f"{seconds * 1000:.3g} ms"
    if seconds < 600:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def _not_ok(result: dict[str, Any]) -> str:
    if result["status"] == "unavailable":
        return f"not measured: {result['reason']}"
    return f"error: {result.get('error', '?')}"


def _generators(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| benchmark | size | innet | networkx reference | speed-up |",
             "|---|---|---:|---|---:|"]
    for r in results:
        if r["status"] != "ok":
            lines.append(f"| {r['title']} | | | {_not_ok(r)} | |")
            continue
        ref = r["reference"]
        basis = "" if ref["basis"] == "whole input" else f" ({ref['basis']})"
        lines.append(f"| {r['title']} | {r['size']} | {seconds_text(r['seconds'])} | "
                     f"{seconds_text(ref['seconds'])}{basis} | {r['speedup']:,.1f}x |")
    return lines


def _analysis(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| benchmark | size | stages | total | peak memory |", "|---|---|---|---:|---:|"]
    for r in results:
        if r["status"] != "ok":
            lines.append(f"| {r['title']} | {_not_ok(r)} | | | |")
            continue
        stages = ", ".join(f"{name} {seconds_text(sec)}" for name, sec in r["seconds"].items())
        lines.append(f"| {r['title']} | {r['size']} | {stages} | "
                     f"{seconds_text(r['total_seconds'])} | {r['peak_rss_mb']:,.0f} MB |")
    return lines


def _simulation(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| benchmark | result |", "|---|---|"]
    for r in results:
        if r["status"] != "ok":
            lines.append(f"| {r['title']} | {_not_ok(r)} |")
        elif "cycles_per_second" in r:
            lines.append(f"| {r['title']} | {r['cycles_per_second']:,.0f} cycles/s "
                         f"({r['cycles']:,} cycles in {seconds_text(r['seconds'])}; "
                         f"{seconds_text(r['fixed_seconds'])} fixed cost per simulation; "
                         f"loaded by {r['load']}) |")
        else:
            lines.append(f"| {r['title']} | {r['result']} |")
    return lines


def _fmax(r: dict[str, Any]) -> str:
    if r["fmax_mhz"] is not None:
        return f"{r['fmax_mhz']:.1f}"
    if r["pnr"] == "skipped":
        return "not placed"
    if r["pnr"] == "timeout":
        placed = r.get("placed_fmax_mhz")
        if placed is not None:
            return f"{placed:.1f} placed, not routed in {r['tool_seconds']['pnr']:.0f} s"
        return f"timeout ({r['tool_seconds']['pnr']:.0f} s)"
    if r["pnr"] == "does not fit":
        return "does not fit"
    return r["pnr"]


def _hardware(results: list[dict[str, Any]]) -> list[str]:
    lines = [("| component | LUT4 | CCU2C | FF | LUT RAM | BRAM | DSP | logic cells | "
             "generic cells | fmax (MHz) |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if r["status"] != "ok":
            lines.append(f"| {r['title']} | {_not_ok(r)} | | | | | | | | |")
            continue
        cells = "-" if r["logic_cells"] is None else f"{r['logic_cells']:,}"
        lines.append(f"| {r['title']} | {r['lut4']:,} | {r['ccu2c']:,} | {r['ff']:,} | "
                     f"{r['lutram']:,} | {r['bram']:,} | {r['dsp']:,} | {cells} | "
                     f"{r['generic_cells']:,} | {_fmax(r)} |")
    return lines


def critical_text(path: dict[str, Any]) -> str:
    """One line on a critical path: ``"input port a -> o: 2 logic levels + 15 carry bits,
    8.35 ns (31 % routing)"``."""
    share = 100 * path["routing_ns"] / path["ns"] if path["ns"] else 0.0
    from innet.sim.synth import levels_text

    return (f"{path['start']} -> {path['end']}: {levels_text(path)}, {path['ns']:.2f} ns "
            f"({share:.0f} % routing)")


#: Target fmax of the radix-8 switch: the ECP5 target's clock (``constraints/ecp5.toml``).
TARGET_MHZ = 150.0
#: The radix-8 switch with the pass-through collective path: at most this many times the
#: logic cells of the p2p switch.
PASSTHROUGH_RATIO = 1.15

#: The radix-8 p2p switch and the radix-8 switch with its engine: at most this many logic cells.
P2P_CELLS = 10_000
ENGINE_CELLS = 25_000
#: A switch's idle per-hop latency: at most this many cycles, and nanoseconds at the radix-8
#: p2p switch's fmax.
HOP_CYCLES_GOAL = 3
HOP_NS = 20.0
#: The 1-element in-network allreduce on PolarFly q = 3: at most this many nanoseconds at the
#: radix-4 engine switch's fmax, and this many times its tree's zero-load bound; the long one
#: at least this many elements per cycle.
ALLREDUCE_NS = 350.0
BOUND_RATIO = 1.1
ELEMENTS_PER_CYCLE = 0.99

#: The switch the flagship targets name.
_ENGINE_R8 = "radix-8 switch (collective engine), 32-bit, 4 ids"

#: Simulated cycles per second the whole-network simulations aim at, by benchmark.
SIM_TARGETS = {"sim_polarfly_q3_allreduce": 20_000, "sim_polarfly_q3_threads": 20_000,
               "sim_polarfly_q7": 5_000, "sim_polarfly_q7_threads": 5_000}

#: Blocks of a timing case's breakdown listed by name (the others are summed in one row).
BREAKDOWN_ROWS = 8


def _mhz(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def timing_text(r: dict[str, Any]) -> list[str]:
    """The Markdown of a timing case (:func:`innet.sim.bench.hardware.timing_case`): fmax per
    seed and over the seeds, its largest blocks, and the worst endpoints of its first seed."""
    from innet.sim.synth.reports import BLOCK_KINDS, BLOCK_LABELS

    summary = r["seed_summary"]
    seeds = ", ".join(f"seed {s['seed']} {_fmax({**s, 'tool_seconds': {'pnr': s['pnr_seconds']}})}"
                      for s in r["seeds"])
    out = [f"{r['title']}: fmax (MHz) {seeds}"]
    if summary["routed"]:
        out[0] += (f"; min {summary['min_mhz']:.1f}, median {summary['median_mhz']:.1f}, max "
                   f"{summary['max_mhz']:.1f}")
    cells = "-" if r["logic_cells"] is None else f"{r['logic_cells']:,}"
    out[0] += f"; {cells} logic cells."
    rows = r["breakdown"]
    if rows:
        special = [x for x in rows if x["block"].startswith("(")]
        named = [x for x in rows if not x["block"].startswith("(")]
        shown = named[:BREAKDOWN_ROWS]
        rest = named[BREAKDOWN_ROWS:]
        out += ["", "| block | " + " | ".join(BLOCK_LABELS[k] for k in BLOCK_KINDS) + " |",
                "|---|" + "---:|" * len(BLOCK_KINDS)]
        for x in shown:
            name = f"{x['block']} (own)" if x["own"] else x["block"]
            out.append(f"| {name} | " + " | ".join(f"{x[k]:,}" for k in BLOCK_KINDS) + " |")
        if rest:
            out.append(f"| {len(rest)} other blocks | "
                       + " | ".join(f"{sum(x[k] for x in rest):,}" for k in BLOCK_KINDS) + " |")
        for x in special:
            out.append(f"| {x['block']} | " + " | ".join(f"{x[k]:,}" for k in BLOCK_KINDS) + " |")
        out.append("| total | " + " | ".join(f"{sum(x[k] for x in rows):,}" for k in BLOCK_KINDS)
                   + " |")
    paths = r["seeds"][0]["paths"] if r["seeds"] else []
    if paths:
        seed = r["seeds"][0]["seed"]
        out += ["", (f"Worst endpoints, seed {seed} (arrival at the register input; the first "
                     f"traced in full):"), ""]
        for p in paths:
            bits = f"{p['bits']} bit{'s' * (p['bits'] != 1)}"
            line = f"- {p['arrival_ns']:.2f} ns at {p['end']} ({bits})"
            if p.get("start") is not None:
                line += f": {critical_text(p)}"
            out.append(line)
    return out


def targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The project's hardware and simulation targets, judged on the results of a run.

    - ``fmax``: the radix-8, 32-bit, 4-collective-id switch with the collective engine at
      :data:`TARGET_MHZ` or more (if it was placed but not routed, the placement estimate,
      which routing only lowers, can show a miss, not a pass);
    - ``collective cost``: per radix, the logic the collective engine adds to the p2p switch
      (logic cells of the switch with the engine minus those of the switch without a
      collective path) is no more than the p2p switch's own.
    - ``pass-through cost``: the radix-8 switch with the pass-through collective path is at
      most :data:`PASSTHROUGH_RATIO` times the logic cells of the p2p switch;
    - ``size``: the radix-8 p2p switch and the one with the pass-through path route at
      :data:`TARGET_MHZ` or more, the radix-8 p2p switch is at most :data:`P2P_CELLS` logic
      cells and the one with its engine at most :data:`ENGINE_CELLS`; the radix-16 p2p switch
      and the one with its engine route (a place and route skipped is not judged);
    - ``latency`` (the case ``latency_polarfly_q3``): the idle per-hop latency is at most
      :data:`HOP_CYCLES_GOAL` cycles and :data:`HOP_NS` ns at the radix-8 p2p switch's fmax;
      the 1-element in-network allreduce takes at most :data:`ALLREDUCE_NS` ns at the radix-4
      engine switch's fmax (PolarFly q = 3 has radix 4) and at most :data:`BOUND_RATIO` times
      its tree's zero-load bound in cycles; the long one moves at least
      :data:`ELEMENTS_PER_CYCLE` elements per cycle;
    - ``simulation speed``: the whole-network simulations of :data:`SIM_TARGETS` run at their
      simulated cycles per second or more.

    A target whose results are missing from the run (not measured, not routed) is left out.
    Each entry is a row: ``target`` (what), ``measured``, ``goal``, ``met`` (bool).
    """
    ok = {r["name"]: r for r in results if r.get("status") == "ok"}
    out = []
    r = ok.get("hw_switch_r8_ceng")
    what = f"{_ENGINE_R8}: fmax"
    if r is not None and r.get("fmax_mhz") is not None:
        out.append({"target": what, "measured": f"{r['fmax_mhz']:.1f} MHz",
                    "goal": f">= {TARGET_MHZ:g} MHz", "met": r["fmax_mhz"] >= TARGET_MHZ})
    elif r is not None and (r.get("placed_fmax_mhz") or TARGET_MHZ) < TARGET_MHZ:
        out.append({"target": what,
                    "measured": f"at most {r['placed_fmax_mhz']:.1f} MHz (placed, not "
                                f"routed)",
                    "goal": f">= {TARGET_MHZ:g} MHz", "met": False})
    timing = ok.get("hw_timing_r4_p2p")
    if timing is not None and timing.get("seeds"):
        out += _timing_targets(timing)
    through, p2p = ok.get("hw_switch_r8_passthrough"), ok.get("hw_switch_r8_p2p")
    if through is not None and p2p is not None and through["logic_cells"] and p2p["logic_cells"]:
        ratio = through["logic_cells"] / p2p["logic_cells"]
        out.append({"target": "radix-8 switch with the pass-through collective path: logic "
                              "cells",
                    "measured": f"{through['logic_cells']:,} ({ratio:.2f}x the p2p switch)",
                    "goal": f"<= {PASSTHROUGH_RATIO:g}x the p2p switch "
                            f"({p2p['logic_cells'] * PASSTHROUGH_RATIO:,.0f})",
                    "met": ratio <= PASSTHROUGH_RATIO})
    for radix in (4, 8, 16):
        full, p2p = ok.get(f"hw_switch_r{radix}_ceng"), ok.get(f"hw_switch_r{radix}_p2p")
        if full is None or p2p is None or not full["logic_cells"] or not p2p["logic_cells"]:
            continue
        extra = full["logic_cells"] - p2p["logic_cells"]
        out.append({"target": f"radix-{radix} collective support: logic cells added to the "
                              f"p2p switch",
                    "measured": f"{extra:,} ({extra / p2p['logic_cells']:.2f}x the p2p "
                                f"switch)",
                    "goal": f"<= {p2p['logic_cells']:,} (the p2p switch)",
                    "met": extra <= p2p["logic_cells"]})
    out += _size_targets(ok)
    out += _latency_targets(ok)
    for name, goal in SIM_TARGETS.items():
        r = ok.get(name)
        if r is None or not r.get("cycles_per_second"):
            continue
        out.append({"target": r["title"], "measured": f"{r['cycles_per_second']:,.0f} cycles/s",
                    "goal": f">= {goal:,} cycles/s", "met": r["cycles_per_second"] >= goal})
    return out


def _routed(r: dict[str, Any] | None) -> float | None:
    """The routed fmax of a hardware result, or None."""
    return None if r is None else r.get("fmax_mhz")


def _size_targets(ok: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows on the radix-8 switches' fmax and logic cells, and on whether the radix-16 ones
    route."""
    out = []
    p2p, through = ok.get("hw_switch_r8_p2p"), ok.get("hw_switch_r8_passthrough")
    for r, what in ((p2p, "radix-8 p2p switch"),
                    (through, "radix-8 switch with the pass-through collective path")):
        if _routed(r) is not None:
            out.append({"target": f"{what}: fmax", "measured": f"{r['fmax_mhz']:.1f} MHz",
                        "goal": f">= {TARGET_MHZ:g} MHz", "met": r["fmax_mhz"] >= TARGET_MHZ})
    for r, what, goal in ((p2p, "radix-8 p2p switch", P2P_CELLS),
                          (ok.get("hw_switch_r8_ceng"), _ENGINE_R8, ENGINE_CELLS)):
        if r is not None and r["logic_cells"]:
            out.append({"target": f"{what}: logic cells", "measured": f"{r['logic_cells']:,}",
                        "goal": f"<= {goal:,}", "met": r["logic_cells"] <= goal})
    for name, what in (("hw_switch_r16_p2p", "radix-16 p2p switch: routes"),
                       ("hw_switch_r16_ceng", "radix-16 switch (collective engine): routes")):
        r = ok.get(name)
        if r is None or r["pnr"] == "skipped":
            continue
        cells = "-" if r["logic_cells"] is None else f"{r['logic_cells']:,}"
        if r["fmax_mhz"] is not None:
            measured = f"routed at {r['fmax_mhz']:.1f} MHz ({cells} logic cells)"
        elif r["pnr"] == "timeout":
            seconds = r["tool_seconds"]["pnr"]
            measured = f"placed, not routed in {seconds:.0f} s ({cells} logic cells)"
        else:
            measured = f"{r['pnr']} ({cells} logic cells)"
        out.append({"target": what, "measured": measured, "goal": "routed, fmax reported",
                    "met": r["fmax_mhz"] is not None})
    return out


def _latency_targets(ok: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows on the collective latency case (:mod:`innet.sim.bench.latency`): its cycles, and
    its nanoseconds at the fmax of the switches the hardware cases routed."""
    r = ok.get("latency_polarfly_q3")
    if r is None:
        return []
    out = []
    hop = r["hop_cycles"]
    if hop is not None:
        out.append({"target": "idle per-hop latency (PolarFly q = 3, quiet)",
                    "measured": f"{hop} cycles", "goal": f"<= {HOP_CYCLES_GOAL} cycles",
                    "met": hop <= HOP_CYCLES_GOAL})
        fmax = _routed(ok.get("hw_switch_r8_p2p"))
        if fmax is not None:
            ns = hop * 1000 / fmax
            out.append({"target": "idle per-hop latency at the radix-8 p2p switch's fmax",
                        "measured": f"{ns:.1f} ns ({hop} cycles at {fmax:.1f} MHz)",
                        "goal": f"<= {HOP_NS:g} ns", "met": ns <= HOP_NS})
    what = "1-element in-network allreduce on PolarFly q = 3"
    fmax = _routed(ok.get("hw_switch_r4_ceng"))
    if fmax is not None:
        ns = r["latency_cycles"] * 1000 / fmax
        out.append({"target": f"{what}: latency at the radix-4 engine switch's fmax",
                    "measured": f"{ns:,.0f} ns ({r['latency_cycles']} cycles at {fmax:.1f} MHz)",
                    "goal": f"<= {ALLREDUCE_NS:g} ns", "met": ns <= ALLREDUCE_NS})
    out.append({"target": f"{what}: latency against its tree's zero-load bound",
                "measured": f"{r['bound_ratio']:.2f}x ({r['latency_cycles']} cycles, bound "
                            f"{r['bound_cycles']})",
                "goal": f"<= {BOUND_RATIO:g}x", "met": r["bound_ratio"] <= BOUND_RATIO})
    out.append({"target": f"{r['elements']:,}-element in-network allreduce on PolarFly q = 3 "
                          f"(quiet): throughput",
                "measured": f"{r['elements_per_cycle']:.3f} elements/cycle",
                "goal": f">= {ELEMENTS_PER_CYCLE:g} elements/cycle",
                "met": r["elements_per_cycle"] >= ELEMENTS_PER_CYCLE})
    return out


def _timing_targets(r: dict[str, Any]) -> list[dict[str, Any]]:
    """The timing case's rows: fmax of the first seed at ``goal_mhz``, and ``seeds_needed``
    of the seeds at ``seed_goal_mhz`` (goals from the case's data). A seed placed but not
    routed counts as missing the goal; the first row is left out if the first seed did not
    route, both if a seed was not placed and routed at all (``--no-pnr``, does not fit)."""
    if any(s["pnr"] not in ("routed", "timeout", "failed") for s in r["seeds"]):
        return []
    out = []
    first = r["seeds"][0]
    what = "radix-4 p2p switch (timing case)"
    if first["fmax_mhz"] is not None:
        out.append({"target": f"{what}: fmax, seed {first['seed']}",
                    "measured": f"{first['fmax_mhz']:.1f} MHz",
                    "goal": f">= {r['goal_mhz']:g} MHz",
                    "met": first["fmax_mhz"] >= r["goal_mhz"]})
    reached = sum(s["fmax_mhz"] is not None and s["fmax_mhz"] >= r["seed_goal_mhz"]
                  for s in r["seeds"])
    seeds = ", ".join(str(s["seed"]) for s in r["seeds"])
    out.append({"target": f"{what}: seeds {seeds} at {r['seed_goal_mhz']:g} MHz or more",
                "measured": f"{reached} of {len(r['seeds'])}",
                "goal": f">= {r['seeds_needed']} of {len(r['seeds'])}",
                "met": reached >= r["seeds_needed"]})
    return out


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: a line on the machine, one table per group, then the targets
    judged on the whole run (:func:`targets`)."""
    m = report["machine"]
    load = m.get("load_average")
    load_text = "" if load is None else f", load average {' / '.join(map(str, load))} at start"
    opts = report["options"]
    out = [(f"Measured {report['date']} on {m['cpu']} ({m['cores']} cores{load_text}; a "
           f"shared machine: times are noisy, ratios less so), Python {m['python']}"
           f"{', quick sizes' if opts['quick'] else ''}."), ""]
    groups = {"generators": ("Generators", _generators),
              "analysis": ("Analysis at scale", _analysis),
              "simulation": ("Simulation", _simulation),
              "hardware": ("Hardware cost", _hardware)}
    for group, (title, table) in groups.items():
        results = [r for r in report["results"] if r["group"] == group]
        if not results:
            continue
        heading = title
        if group == "hardware":
            heading += (f" (ECP5 LFE5U-85F speed 6, every port registered on a scan chain, seed "
                        f"{opts['seed']}, target 150 MHz)")
        out += [f"**{heading}**", "", *table(results), ""]
        notes = [f"- {r['title']}: {r['note']}" for r in results
                 if r.get("status") == "ok" and r.get("note")]
        if notes:
            out += [*notes, ""]
        for r in results:
            if r.get("status") == "ok" and r.get("table"):
                out += [f"{r['title']}:", "", *r["table"], ""]
        if group == "hardware":
            paths = [f"- {r['title']}: {critical_text(r['critical_path'])}" for r in results
                     if r.get("status") == "ok" and r.get("critical_path")]
            if paths:
                out += ["Critical paths (start register -> end register):", "", *paths, ""]
            for r in results:
                if r.get("status") == "ok" and r.get("seeds"):
                    out += [*timing_text(r), ""]
    # One table of targets at the end: some are judged on results of several groups (a
    # latency in cycles at a switch's fmax).
    judged = targets(report["results"])
    if judged:
        out += ["**Targets**", "", "| target | measured | goal | met |", "|---|---:|---:|---|",
                *(f"| {t['target']} | {t['measured']} | {t['goal']} | "
                  f"{'yes' if t['met'] else 'no'} |" for t in judged), ""]
    return "\n".join(out).rstrip() + "\n"
