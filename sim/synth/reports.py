"""What the synthesis tools report, read back: Yosys's cell statistics, nextpnr's report and
log, and the figures of one run (:class:`SynthResult`).

The parsers take the tools' own output (``stat -json``, nextpnr's ``--report`` JSON and its
log), so that they can be checked against saved reports without running the tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "BLOCK_KINDS",
    "BLOCK_LABELS",
    "PACKER",
    "TOP_LEVEL",
    "SynthResult",
    "block_cells",
    "block_label",
    "breakdown",
    "critical_path",
    "levels_text",
    "parse_nextpnr_log",
    "parse_nextpnr_report",
    "parse_stat",
    "register_name",
    "seed_summary",
    "worst_paths",
]

#: Cell types per family: (lut4, carry, ff prefixes, bram, dsp, lut ram).
_CELLS = {
    "ecp5": {"lut4": ("LUT4",), "carry": ("CCU2C",), "ff": ("TRELLIS_FF",),
             "bram": ("DP16KD", "PDPW16KD"), "dsp": ("MULT18X18D", "ALU54B"),
             "lutram": ("TRELLIS_DPR16X4",)},
    "ice40": {"lut4": ("SB_LUT4",), "carry": ("SB_CARRY",), "ff": ("SB_DFF",),
              "bram": ("SB_RAM40_4K",), "dsp": ("SB_MAC16",), "lutram": ()},
}


def parse_stat(report: str | Mapping, family: str | None = None,
               module: str | None = None) -> dict[str, Any]:
    """Cell counts from Yosys's ``stat -json`` output (text or parsed).

    Returns ``{"cells": total, "by_type": {...}}`` for the whole design (Yosys's ``design``
    section when there is one, else the single module), or for ``module``'s own cells alone,
    without ``$scopeinfo`` bookkeeping cells and the port wrapper's register instances; with
    ``family`` also ``lut4``, ``carry``, ``ff``, ``bram``, ``dsp`` and ``lutram``.

    Raises
    ------
    ValueError
        If the report has no module, or not the one named.
    """
    data = json.loads(report) if isinstance(report, str) else report
    section = data.get("design")
    if module is not None:
        section = data.get("modules", {}).get(f"\\{module}", data.get("modules", {}).get(module))
        if section is None:
            raise ValueError(f"Yosys stat report has no module {module!r}")
    elif section is None:
        modules = list(data.get("modules", {}).values())
        if len(modules) != 1:
            raise ValueError(f"Yosys stat report must describe one design, not {len(modules)} "
                             f"modules without a design total")
        section = modules[0]
    by_type = {k: int(v) for k, v in section.get("num_cells_by_type", {}).items()
               if not k.startswith("$scopeinfo") and "innet_synth_" not in k}
    out: dict[str, Any] = {"cells": sum(by_type.values()), "by_type": dict(sorted(by_type.items()))}
    if family is not None:
        for key, names in _CELLS[family].items():
            out[key] = sum(n for t, n in by_type.items()
                           if any(t == name or (key == "ff" and t.startswith(name))
                                  for name in names))
    return out


#: Input ports through which a logic step only ripples a carry chain (ECP5 CCU2C halves,
#: iCE40 SB_CARRY): such steps are carry bits, not logic levels.
_CARRY_IN = frozenset({"FCI", "CI", "CIN"})

_FF_CELL = re.compile(r"^(?P<name>.+?)_(?:TRELLIS_FF|SB_DFF[A-Z]*)_Q(?:_.*)?$")
_PORT_REG = re.compile(r"^(?P<port>[A-Za-z_][A-Za-z0-9_$]*)__reg\.q$")


def register_name(cell: str, end: str = "start") -> str:
    """The register a flip-flop cell of a routed design belongs to, as a designer names it.

    Yosys names a mapped flip-flop after the signal it drives plus a suffix
    (``dut.core.r_ptr_TRELLIS_FF_Q_3``: bit 3 of ``dut.core.r_ptr``; on iCE40 the packed
    logic cell, ``o_SB_DFFSR_Q_D_SB_LUT4_O_LC``); the suffix is dropped.
    A register of the port wrapper (:func:`~innet.sim.synth.wrapper.io_wrapper`) is named by
    its port: ``"input port a"`` at the ``"start"`` of a path, ``"output port o"`` at its
    ``"end"``. A cell that is not a flip-flop (a block RAM, a DSP) keeps its name.
    """
    match = _FF_CELL.match(cell)
    name = match["name"] if match else cell
    port = _PORT_REG.match(name)
    if port:
        return f"{'input' if end == 'start' else 'output'} port {port['port']}"
    return name.removeprefix("dut.")


def critical_path(path: Mapping) -> dict[str, Any]:
    """A designer's summary of one critical path of nextpnr's ``--report`` JSON.

    Returns a dict with

    - ``from``, ``to``: the source and sink cells (nextpnr's names);
    - ``start``, ``end``: the registers they belong to (:func:`register_name`), e.g.
      ``"core.resp_i4.r_ptr"`` or ``"input port i__0__payload"``;
    - ``logic_levels``: logic steps other than carry ripple (LUTs, a carry chain's entry,
      DSP and RAM cells): what pipelining or restructuring shortens;
    - ``carry_bits``: steps that only ripple a carry (``FCI``/``CI`` inputs), the length of
      the carry chains on the path;
    - ``through``: the cells of the logic levels, in path order;
    - ``ns``, ``logic_ns``, ``routing_ns``: total delay and its logic (clock-to-output, cells,
      setup) and routing parts.
    """
    steps = path.get("path") or []
    if not steps:
        raise ValueError("nextpnr critical path has no steps")
    total = sum(float(p["delay"]) for p in steps)
    routing = sum(float(p["delay"]) for p in steps if p.get("type") == "routing")
    logic = [p for p in steps if p.get("type") == "logic"]
    levels = [p for p in logic if p["from"].get("port") not in _CARRY_IN]
    first, last = steps[0]["from"]["cell"], steps[-1]["to"]["cell"]
    return {"from": first, "to": last, "start": register_name(first, "start"),
            "end": register_name(last, "end"), "logic_levels": len(levels),
            "carry_bits": len(logic) - len(levels),
            "through": [p["from"]["cell"] for p in levels],
            "ns": round(total, 2), "logic_ns": round(total - routing, 2),
            "routing_ns": round(routing, 2)}


def levels_text(path: Mapping) -> str:
    """A critical path's depth in words: ``"2 logic levels + 15 carry bits"``."""
    def count(n: int, what: str) -> str:
        return f"{n} {what}{'s' * (n != 1)}"

    text = count(path["logic_levels"], "logic level")
    if path["carry_bits"]:
        text += f" + {count(path['carry_bits'], 'carry bit')}"
    return text


def parse_nextpnr_report(report: str | Mapping, clock: str = "clk") -> dict[str, Any]:
    """Utilisation and fmax from nextpnr's ``--report`` JSON.

    Returns ``{"fmax_mhz": float or None, "constraint_mhz": ..., "used": {cell: n},
    "critical_path": ...}``: only cell types in use; the critical path of ``clock`` (from a
    register of it to a register of it) summarised by :func:`critical_path`, or None.
    """
    data = json.loads(report) if isinstance(report, str) else report
    fmax = data.get("fmax", {})
    # In context the clock net is renamed after its pin buffer and global network
    # ("$glbnet$clk$TRELLIS_IO_IN").
    entry = fmax.get(clock) or next((v for k, v in fmax.items() if clock in k.split("$")), None)
    if entry is None and len(fmax) == 1:
        entry = next(iter(fmax.values()))
    used = {k: int(v["used"]) for k, v in data.get("utilization", {}).items() if v.get("used")}
    critical = None
    for path in data.get("critical_paths", []):
        if (path.get("path") and clock in str(path.get("from", ""))
                and clock in str(path.get("to", ""))):
            critical = critical_path(path)
            break
    return {"fmax_mhz": None if entry is None else round(float(entry["achieved"]), 2),
            "constraint_mhz": None if entry is None else float(entry["constraint"]),
            "used": dict(sorted(used.items())), "critical_path": critical}


_LOG_FMAX = re.compile(r"Max frequency for clock '([^']*)': ([0-9.]+) MHz")
_LOG_ROUTER = re.compile(r"iter=(\d+) wires=\d+ overused=(\d+)")


def parse_nextpnr_log(text: str, clock: str = "clk") -> dict[str, Any]:
    """What nextpnr's log says before its report exists (a place and route stopped on timeout).

    Returns ``{"placed_fmax_mhz": float or None, "router_iteration": int or None,
    "overused_wires": int or None, "fewest_overused": int or None, "fewest_iteration": int or
    None}``: the fmax of ``clock`` that nextpnr's timing analysis estimated after placement
    (the last one before routing starts; wire delays estimated, so routing only lowers it),
    router2's last iteration with its count of overused wires (the congestion left to
    resolve), and the fewest overused wires of any iteration with the first iteration that had
    them (below the last count: the router came closer before, and is not converging).
    """
    placed = iteration = overused = fewest = fewest_at = None
    for line in text.splitlines():
        if line.startswith("Info: Routing"):
            break
        match = _LOG_FMAX.search(line)
        if match and (match.group(1) == clock or clock in match.group(1).split("$")):
            placed = round(float(match.group(2)), 2)
    for match in _LOG_ROUTER.finditer(text):
        iteration, overused = int(match.group(1)), int(match.group(2))
        if fewest is None or overused < fewest:
            fewest, fewest_at = overused, iteration
    return {"placed_fmax_mhz": placed, "router_iteration": iteration,
            "overused_wires": overused, "fewest_overused": fewest,
            "fewest_iteration": fewest_at}


#: What a breakdown counts per block (:func:`block_cells`): the family's LUTs, flip-flops,
#: distributed-RAM cells, block RAMs and carry cells, every other mapped cell (``other``:
#: ECP5's PFUMX and L6MUX21 wide-function multiplexers, DSPs), and the logic cells of
#: nextpnr's packing (``TRELLIS_COMB`` on ECP5, ``ICESTORM_LC`` on iCE40).
BLOCK_KINDS = ("lut4", "ff", "lutram", "bram", "carry", "other", "logic_cells")

#: The column heading of each of :data:`BLOCK_KINDS` in a table (ECP5's name for its carry
#: cell, ``CCU2C``; :func:`block_label` gives another family's).
BLOCK_LABELS = {"lut4": "LUT4", "ff": "FF", "lutram": "LUT RAM", "bram": "BRAM",
                "carry": "CCU2C", "other": "other", "logic_cells": "logic cells"}


def block_label(kind: str, ecp5: bool = True) -> str:
    """The column heading of ``kind`` (one of :data:`BLOCK_KINDS`): ``carry`` off ECP5."""
    return BLOCK_LABELS[kind] if ecp5 or kind != "carry" else "carry"

#: Block of the cells of the design's top module itself (in no submodule).
TOP_LEVEL = "(top level)"

#: Block of the logic cells nextpnr's packer adds (a carry chain's feed-in and feed-out).
PACKER = "(nextpnr packing)"

_PACKED_TYPES = ("TRELLIS_COMB", "ICESTORM_LC")


def _cell_kind(family: str, cell_type: str) -> str:
    for kind in ("lut4", "ff", "lutram", "bram", "carry"):
        if any(cell_type == name or (kind == "ff" and cell_type.startswith(name))
               for name in _CELLS[family][kind]):
            return kind
    return "other"


def _top_cells(netlist: Mapping, top: str) -> Mapping[str, Mapping]:
    modules = netlist.get("modules", {})
    module = modules.get(top, modules.get(f"\\{top}"))
    if module is None:
        raise ValueError(f"Netlist has no module {top!r}")
    return module.get("cells", {})


def block_cells(netlist: str | Mapping, top: str, *, family: str = "ecp5",
                prefix: str = "", packed: str | Mapping | None = None
                ) -> dict[str, dict[str, int]]:
    """The cells of a flattened netlist per block of the design's hierarchy.

    Yosys records every flattened submodule as a ``$scopeinfo`` cell, and names every cell
    it maps after the signal it connects to, instance path included: a flip-flop or LUT
    after the signal it drives (``dut.core.resp_i0.r_ptr_TRELLIS_FF_Q``), a cell of a
    cone that technology mapping made after the named cell or signal the cone leads to
    (``dut.core.resp_i4.storage.0.19_DI_1_LUT4_Z``: a LUT of the logic that feeds the
    write data of that buffer's RAM). Each cell of ``top`` is given to the deepest submodule
    whose path starts its name; cells of no submodule are :data:`TOP_LEVEL`'s. Logic that
    joins two blocks (a crossbar reading buffers) so counts in the block its name leads to.
    The port wrapper's register instances are not counted.

    Parameters
    ----------
    netlist : str or Mapping
        Yosys's ``write_json`` netlist after technology mapping (``mapped.json``).
    top : str
        The module holding the flattened design (the wrapper's when the design is wrapped).
    family : str
        The FPGA family, for the cell kinds (:data:`BLOCK_KINDS`).
    prefix : str
        The design's instance name in ``top`` (``"dut"`` inside the port wrapper), or ""
        when ``top`` is the design.
    packed : str or Mapping, optional
        nextpnr's netlist after packing (``--pack-only --write``): each logic cell counts in
        the block of the mapped cell it was packed from (nextpnr keeps that cell's name, with
        a ``$`` suffix where one cell takes several); those nextpnr made for itself (a carry
        chain's feed-in, constant drivers) are :data:`PACKER`'s; the wrapper's are not
        counted.

    Returns
    -------
    dict
        Block path relative to the design (``"core.resp_i0"``), :data:`TOP_LEVEL` or
        :data:`PACKER` -> counts of every kind of :data:`BLOCK_KINDS`.

    Raises
    ------
    ValueError
        If the netlist has no module ``top``.
    """
    data = json.loads(netlist) if isinstance(netlist, str) else netlist
    cells = _top_cells(data, top)
    lead = f"{prefix}." if prefix else ""
    scopes = {prefix: TOP_LEVEL} if prefix else {}
    wrapper = set()
    for name, cell in cells.items():
        if cell["type"] == "$scopeinfo" and name != prefix and name.startswith(lead):
            scopes[name] = name[len(lead):]
        elif "innet_synth_" in cell["type"]:
            wrapper.add(name)

    def scope_of(name: str) -> str:
        end = len(name)
        while (end := name.rfind(".", 0, end)) > 0:
            found = scopes.get(name[:end])
            if found is not None:
                return found
        return TOP_LEVEL

    blocks = {name: scope_of(name) for name, cell in cells.items()
              if cell["type"] != "$scopeinfo" and name not in wrapper}
    counts: dict[str, dict[str, int]] = {}

    def add(where: str, kind: str) -> None:
        counts.setdefault(where, dict.fromkeys(BLOCK_KINDS, 0))[kind] += 1

    for name, where in blocks.items():
        add(where, _cell_kind(family, cells[name]["type"]))
    if packed is not None:
        packed_data = json.loads(packed) if isinstance(packed, str) else packed
        for module in packed_data.get("modules", {}).values():
            for name, cell in module.get("cells", {}).items():
                if cell["type"] not in _PACKED_TYPES:
                    continue
                base = name if name in blocks else name.partition("$")[0]
                if base in blocks:
                    add(blocks[base], "logic_cells")
                elif name.split(".", 1)[0] not in wrapper:
                    add(PACKER, "logic_cells")
    return dict(sorted(counts.items()))


def breakdown(blocks: Mapping[str, Mapping[str, int]], depth: int = 2
              ) -> list[dict[str, Any]]:
    """Per-block counts (:func:`block_cells`) summed up to ``depth`` levels of hierarchy.

    Every cell of a block deeper than ``depth`` is counted in its ancestor at ``depth``, so
    the rows sum to the design's totals. A row whose block also has rows of its own
    submodules (``core`` beside ``core.resp_i0``) counts only the cells of no listed
    submodule and says so with ``own`` True. Rows are sorted by logic cells, then LUT4,
    largest first; :data:`TOP_LEVEL` and :data:`PACKER` come last.

    Raises
    ------
    ValueError
        If ``depth`` is less than 1.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"Breakdown depth must be a whole number of at least 1, not "
                         f"{depth!r}")
    rows: dict[str, dict[str, int]] = {}
    for path, counts in blocks.items():
        key = path if path in (TOP_LEVEL, PACKER) else ".".join(path.split(".")[:depth])
        row = rows.setdefault(key, dict.fromkeys(BLOCK_KINDS, 0))
        for kind in BLOCK_KINDS:
            row[kind] += counts.get(kind, 0)
    parents = {key.rsplit(".", 1)[0] for key in rows if "." in key}
    ordered = sorted(rows.items(), key=lambda kv: (kv[0] in (TOP_LEVEL, PACKER),
                                                   kv[0] == PACKER, -kv[1]["logic_cells"],
                                                   -kv[1]["lut4"], kv[0]))
    return [{"block": key, "own": key in parents, **counts} for key, counts in ordered]


def _clock_event(event: Any, clock: str) -> bool:
    """Whether nextpnr's clock event name (``"posedge $glbnet$clk$TRELLIS_IO_IN"``) is an
    edge of ``clock``."""
    edge, _, net = str(event).partition(" ")
    return edge in ("posedge", "negedge") and (net == clock or clock in net.split("$"))


#: A cell of the port wrapper's register instances (``a__reg.s_TRELLIS_FF_Q_3``).
_WRAPPER_CELL = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*__(?:reg|scan)\.")


def worst_paths(report: str | Mapping, clock: str = "clk", count: int = 20
                ) -> list[dict[str, Any]]:
    """The ``count`` worst register-to-register endpoints of ``clock``, worst first.

    nextpnr traces one critical path per clock (``critical_paths`` of its ``--report``);
    with ``--detailed-timing-report`` the report also gives, per net, the arrival time at
    each timing endpoint it feeds (``detailed_net_timings``: the longest path from a register
    of the launching clock to that flip-flop input, clock-to-output and every logic and
    routing delay on the way, without the setup time). Those arrivals are ranked here, one
    row per end register (its worst bit), so that the rows are the distinct registers that
    limit fmax, not the bits of one bus. Paths within the port wrapper (its scan chain into
    an input port register) are left out; those from an input port register into the
    design and from the design into an output port register are kept.

    Each row has ``end`` (:func:`register_name`), ``to`` and ``port`` (the flip-flop cell
    and input of the worst bit), ``arrival_ns`` and ``bits`` (the register's flip-flops
    whose arrival is within 0.1 ns of its worst). The row of the critical path's end register
    also has that path's summary (:func:`critical_path`: ``start``, ``logic_levels``,
    ``carry_bits``, ``ns``, ``logic_ns``, ``routing_ns``, ...); nextpnr traces no other
    path, so the other rows have ``start`` None. Empty when the report has no detailed
    timing.
    """
    data = json.loads(report) if isinstance(report, str) else report
    arrivals: dict[str, list[tuple[float, str, str]]] = {}
    for net in data.get("detailed_net_timings") or []:
        if not _clock_event(net.get("event"), clock):
            continue
        inside = _WRAPPER_CELL.match(str(net.get("driver", "")))
        for sink in net.get("endpoints", []):
            if inside and _WRAPPER_CELL.match(sink["cell"]):
                continue  # the wrapper's scan chain, not a path of the design
            if _clock_event(sink.get("event"), clock):
                arrivals.setdefault(register_name(sink["cell"], "end"), []).append(
                    (float(sink["delay"][-1]), sink["cell"], sink["port"]))
    critical = parse_nextpnr_report(data, clock)["critical_path"]
    rows = []
    for end, sinks in arrivals.items():
        worst = max(sinks)
        rows.append({"end": end, "to": worst[1], "port": worst[2],
                     "arrival_ns": round(worst[0], 2),
                     "bits": len({s[1] for s in sinks if s[0] >= worst[0] - 0.1})})
    rows.sort(key=lambda r: (-r["arrival_ns"], r["end"]))
    for row in rows[:count]:
        traced = critical is not None and critical["end"] == row["end"]
        row.update({**critical, "to": row["to"]} if traced else {"start": None})
    return rows[:count]


def seed_summary(results: list[Mapping[str, Any]]) -> dict[str, Any]:
    """fmax over the seeds of one design: ``{"seeds": [...], "fmax_mhz": [...], "routed",
    "min_mhz", "median_mhz", "max_mhz", "met", "clock_mhz"}``; ``met`` counts the seeds
    whose fmax reaches the clock place and route aimed at. The statistics are None when no
    seed routed."""
    import statistics

    fmax = [r.get("fmax_mhz") for r in results]
    routed = [f for f in fmax if f is not None]
    clock = results[0]["clock_mhz"] if results else None
    return {"seeds": [r["seed"] for r in results], "fmax_mhz": fmax, "routed": len(routed),
            "min_mhz": min(routed) if routed else None,
            "median_mhz": round(statistics.median(routed), 2) if routed else None,
            "max_mhz": max(routed) if routed else None,
            "met": sum(f >= clock for f in routed), "clock_mhz": clock}


@dataclass(frozen=True)
class SynthResult:
    """Size and speed of one design on one target.

    Attributes
    ----------
    design : str
        The top module synthesised (inside the wrapper).
    target : str
        The target name.
    seed : int
        nextpnr's placement seed.
    lut4, ccu2c, carry, ff, bram, dsp, lutram : int
        Cells after technology mapping: LUT4, ECP5 carry cells (``CCU2C``; 0 on iCE40), the
        family's carry cells, flip-flops of the design (the wrapper's excluded), block RAMs,
        DSP blocks, distributed-RAM cells (``TRELLIS_DPR16X4``).
    wrapper_ff : int
        Flip-flops of the port-register wrapper, not counted in ``ff``.
    logic_cells : int or None
        LUT slots used after nextpnr's packing (``TRELLIS_COMB``: a LUT4 takes one, a CCU2C
        two, distributed RAM its slices'); None if packing failed.
    generic_cells : int
        Cells of the design alone (no wrapper) after technology-independent ``synth -flatten``
        (Yosys's internal gates and flip-flops): a size that does not depend on an FPGA family.
    fmax_mhz : float or None
        The clock's fmax after place and route (None when not routed).
    critical_path : Mapping or None
        The routed critical path (:func:`critical_path`): its start and end registers, logic
        levels and carry bits, the cells of its levels, total, logic and routing delay (ns).
    clock_mhz : float
        The target clock place and route aimed at.
    pnr : str
        ``"routed"``, ``"skipped"`` (``pnr=False``), ``"timeout"``, ``"does not fit"`` or
        ``"failed"``.
    note : str
        Why place and route did not give an fmax, or "".
    tool_seconds : Mapping
        Wall time of each step (``synth``, ``pack``, ``pnr``); 0 when cached or skipped.
    cells : Mapping
        Every cell type after technology mapping, with its count.
    placed_fmax_mhz : float or None
        The clock's fmax as nextpnr estimated it after placement, before routing
        (:func:`parse_nextpnr_log`): an upper bound of the routed figure, kept when place and
        route was placed but not routed (a timeout).
    blocks : Mapping
        The cells per block of the design's hierarchy at full depth (:func:`block_cells`),
        logic cells included; :func:`breakdown` sums them to a depth.
    paths : list
        The worst endpoints of the clock after routing (:func:`worst_paths`), worst first,
        the first traced in full; empty when not routed.
    """

    design: str
    target: str
    seed: int
    lut4: int
    ccu2c: int
    carry: int
    ff: int
    bram: int
    dsp: int
    lutram: int
    wrapper_ff: int
    logic_cells: int | None
    generic_cells: int
    fmax_mhz: float | None
    critical_path: Mapping[str, Any] | None
    clock_mhz: float
    pnr: str
    note: str
    tool_seconds: Mapping[str, float]
    cells: Mapping[str, int]
    cached: bool = False
    placed_fmax_mhz: float | None = None
    blocks: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    paths: list[Mapping[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)

