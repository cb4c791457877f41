"""Verilog designs: Amaranth components emitted as Verilog with their port metadata.

A :class:`Design` is what the rest of innet hands around once RTL exists as text: the simulation
runner (:mod:`innet.sim.runner`) builds it with Verilator, ``innet verilog`` writes it to disk and
the synthesis flow reads it. Testbenches bind ports by name from the metadata, never by position.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["VERILOG_KEYWORDS", "Design", "check_module_name", "emit"]


@dataclass(frozen=True)
class Design:
    """A Verilog design.

    Parameters
    ----------
    verilog : str
        The Verilog source text.
    toplevel : str
        Name of the top module.
    ports : Mapping or None
        The top level's port metadata (``component.metadata.as_json()``).
    """

    verilog: str
    toplevel: str
    ports: Mapping | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.verilog, str) or not self.verilog.strip():
            raise ValueError("Design needs Verilog source text, not an empty string")
        check_module_name(self.toplevel)
        if not re.search(rf"^\s*module\s+{re.escape(self.toplevel)}\b", self.verilog, re.M):
            raise ValueError(f"The Verilog source has no module named {self.toplevel!r}")

    @property
    def digest(self) -> str:
        """SHA-256 of the top module name and the Verilog text."""
        h = hashlib.sha256()
        h.update(self.toplevel.encode())
        h.update(b"\0")
        h.update(self.verilog.encode())
        return h.hexdigest()

    def write(self, path: str | Path) -> tuple[Path, Path | None]:
        """Write the Verilog to ``path`` and the port metadata beside it (same stem, ``.json``).

        Returns the two paths written (the second is None when there is no metadata).
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.verilog)
        if self.ports is None:
            return path, None
        meta = path.with_suffix(".json")
        meta.write_text(json.dumps(self.ports, indent=2, sort_keys=True) + "\n")
        return path, meta


_KEYWORDS = """
    always and assign automatic begin buf bufif0 bufif1 case casex casez cell cmos config
    deassign default defparam design disable edge else end endcase endconfig endfunction
    endgenerate endmodule endprimitive endspecify endtable endtask event for force forever fork
    function generate genvar highz0 highz1 if ifnone incdir include initial inout input
    instance integer join large liblist library localparam macromodule medium module nand
    negedge nmos nor noshowcancelled not notif0 notif1 or output parameter pmos posedge
    primitive pull0 pull1 pulldown pullup pulsestyle_ondetect pulsestyle_onevent rcmos real
    realtime reg release repeat rnmos rpmos rtran rtranif0 rtranif1 scalared showcancelled
    signed small specify specparam strong0 strong1 supply0 supply1 table task time tran
    tranif0 tranif1 tri tri0 tri1 triand trior trireg unsigned use uwire vectored wait wand
    weak0 weak1 while wire wor xnor xor
"""
_SYSTEMVERILOG_KEYWORDS = """
    accept_on alias always_comb always_ff always_latch assert assume before bind bins binsof
    bit break byte chandle checker class clocking const constraint context continue cover
    covergroup coverpoint cross dist do endchecker endclass endclocking endgroup endinterface
    endpackage endprogram endproperty endsequence enum eventually expect export extends extern
    final first_match foreach forkjoin global iff ignore_bins illegal_bins implements implies
    import inside int interconnect interface intersect join_any join_none let local logic
    longint matches modport nettype new nexttime null package packed priority program property
    protected pure rand randc randcase randsequence ref reject_on restrict return s_always
    s_eventually s_nexttime s_until s_until_with sequence shortint shortreal soft solve static
    string strong struct super sync_accept_on sync_reject_on tagged this throughout
    timeprecision timeunit type typedef union unique unique0 until until_with untyped var
    virtual void wait_order weak wildcard with within
"""
#: The reserved words of Verilog (IEEE 1364-2005, Annex B) and of SystemVerilog (IEEE
#: 1800-2017, Annex B): no module may be named one (Yosys escapes such a name, ``\logic``).
VERILOG_KEYWORDS = frozenset(_KEYWORDS.split()) | frozenset(_SYSTEMVERILOG_KEYWORDS.split())


def check_module_name(name: str) -> str:
    """``name`` if it is a Verilog identifier (letters, digits and ``_``, not a digit first)
    and no reserved word; else :class:`ValueError`."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"Top module name must be a Verilog identifier, not {name!r}")
    if name in VERILOG_KEYWORDS:
        raise ValueError(f"Top module name must not be a Verilog or SystemVerilog keyword, "
                         f"not {name!r}")
    return name


def emit(component, name: str) -> Design:
    """Emit an Amaranth ``wiring.Component`` as Verilog with top module ``name``.

    The component must have plain ports (no ``always_ready``/``always_valid`` streams at the top);
    the output carries no source locations, so it is byte-stable for the same component.

    Raises
    ------
    MemoryError
        If Amaranth's Yosys (WebAssembly) cannot reserve its memory: it reserves about 4 GiB of
        address space up front, more than a ``ulimit -v`` of 3 GB allows.
    """
    from amaranth._toolchain.yosys import YosysError
    from amaranth.back import verilog
    from amaranth.lib import wiring

    if not isinstance(component, wiring.Component):
        raise TypeError(f"Component must be an amaranth.lib.wiring.Component, not {component!r}")
    check_module_name(name)  # before the conversion, which takes seconds for a large component
    try:
        text = verilog.convert(component, name=name, emit_src=False)
    except YosysError as error:
        reserve = re.search(r"mmap failed to reserve (0x[0-9a-fA-F]+) bytes", str(error))
        if reserve is None:
            raise
        gib = int(reserve.group(1), 16) / (1 << 30)
        raise MemoryError(f"Amaranth's Yosys could not reserve the {gib:.1f} GiB of address "
                          f"space it runs in (a limit such as ulimit -v?)") from error
    return Design(verilog=text, toplevel=name, ports=component.metadata.as_json())
