"""What the synthesis tools report, read back: Yosys's cell statistics, nextpnr's report and
log, and the figures of one run (:class:`SynthResult`).

The parsers take the tools' own output (``stat -json``, nextpnr's ``--report`` JSON and its
log), so that they can be checked against saved reports without running the tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "SynthResult",
    "critical_path",
    "levels_text",
    "parse_nextpnr_log",
    "parse_nextpnr_report",
    "parse_stat",
    "register_name",
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
      ``"core.buf_i4_vc1.r_ptr"`` or ``"input port i__0__payload"``;
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
    "overused_wires": int or None}``: the fmax of ``clock`` that nextpnr's timing analysis
    estimated after placement (the last one before routing starts; wire delays estimated, so
    routing only lowers it), and router2's last iteration with its count of overused wires
    (the congestion left to resolve).
    """
    placed = iteration = overused = None
    for line in text.splitlines():
        if line.startswith("Info: Routing"):
            break
        match = _LOG_FMAX.search(line)
        if match and (match.group(1) == clock or clock in match.group(1).split("$")):
            placed = round(float(match.group(2)), 2)
    for match in _LOG_ROUTER.finditer(text):
        iteration, overused = int(match.group(1)), int(match.group(2))
    return {"placed_fmax_mhz": placed, "router_iteration": iteration,
            "overused_wires": overused}


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

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)

