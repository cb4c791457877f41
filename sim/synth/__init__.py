"""The FPGA flow: size and speed of a Verilog design from Yosys and nextpnr (YoWASP, from PyPI).

:func:`synthesize` runs the flow (:mod:`~innet.sim.synth.flow`) on a target of ``constraints/``
(:mod:`~innet.sim.synth.targets`), with the design inside a port-register wrapper
(:mod:`~innet.sim.synth.wrapper`), and reads the tools' reports back into a
:class:`SynthResult` (:mod:`~innet.sim.synth.reports`).

The tools are the ``synth`` extra (``pip install 'innet[synth]'``); without them
:func:`check_tools` raises :class:`ToolsMissing` saying so.
"""

from innet.sim.synth.flow import FLOW_VERSION, NotCached, SynthError, cache_dir, synthesize
from innet.sim.synth.reports import (
    SynthResult,
    critical_path,
    levels_text,
    parse_nextpnr_log,
    parse_nextpnr_report,
    parse_stat,
    register_name,
)
from innet.sim.synth.targets import TARGETS, Target, ToolsMissing, check_tools, load_target
from innet.sim.synth.wrapper import SCAN_PINS, io_wrapper, top_ports

__all__ = [
    "FLOW_VERSION",
    "SCAN_PINS",
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
