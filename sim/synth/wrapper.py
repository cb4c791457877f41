"""The port-register wrapper: a register on every port of a design, or a scan chain of them.

Out-of-context place and route does not time ports, and a design may have more port bits than
the package has pins. :func:`io_wrapper` puts the design inside a top module that registers
every port, so that the logic between a port and the first register is timed; with ``scan``
the port registers form a scan chain on four pins, so that the design is placed in context.
"""

from __future__ import annotations

import re

from innet.hw.verilog import Design

__all__ = ["SCAN_PINS", "io_wrapper", "top_ports"]

_WRAPPER = "innet_synth_top"

_DECL = re.compile(r"^\s*(input|output)\s+(?:(?:wire|reg|signed)\s+)*"
                   r"(?:\[(\d+):(\d+)\]\s*)?([A-Za-z_][A-Za-z0-9_$]*)\s*;", re.M)


def top_ports(design: Design) -> list[tuple[str, str, int]]:
    """The top module's ports as ``(direction, name, width)``, in declaration order.

    Read from the Verilog text: :attr:`Design.ports <innet.hw.verilog.Design.ports>` holds the
    component's signature only, without the clock and reset ports its domain adds and without
    the order the ports are declared in, and a design given as text (the wrapper itself) has
    none.
    """
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
