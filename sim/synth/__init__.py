"""The FPGA flow: size and speed of a Verilog design from Yosys and nextpnr (YoWASP, from PyPI).

:func:`synthesize` (:func:`synthesize_seeds` for several placement seeds) runs the flow
(:mod:`~innet.sim.synth.flow`) on a target of ``constraints/`` (:mod:`~innet.sim.synth.targets`),
with the design inside a port-register wrapper
(:mod:`~innet.sim.synth.wrapper`), each tool's first run in a process under a lock
(:mod:`~innet.sim.synth.wasm`), and reads the tools' reports back into a
:class:`SynthResult` (:mod:`~innet.sim.synth.reports`): the cells per block of the design's
hierarchy (:func:`breakdown`) and the worst paths after routing (:func:`worst_paths`) with
them.

The tools are the ``synth`` extra (``pip install 'innet[synth]'``); without them
:func:`check_tools` raises :class:`ToolsMissing` saying so.
"""

from innet.sim.synth.flow import (
    FLOW_VERSION,
    PATHS_KEPT,
    NotCached,
    SynthError,
    cache_dir,
    synthesize,
    synthesize_seeds,
)
from innet.sim.synth.reports import (
    BLOCK_KINDS,
    BLOCK_LABELS,
    PACKER,
    TOP_LEVEL,
    SynthResult,
    block_cells,
    breakdown,
    critical_path,
    levels_text,
    parse_nextpnr_log,
    parse_nextpnr_report,
    parse_stat,
    register_name,
    seed_summary,
    worst_paths,
)
from innet.sim.synth.targets import TARGETS, Target, ToolsMissing, check_tools, load_target
from innet.sim.synth.wrapper import SCAN_PINS, io_wrapper, top_ports

__all__ = [
    "BLOCK_KINDS",
    "BLOCK_LABELS",
    "FLOW_VERSION",
    "PACKER",
    "PATHS_KEPT",
    "SCAN_PINS",
    "TARGETS",
    "TOP_LEVEL",
    "NotCached",
    "SynthError",
    "SynthResult",
    "Target",
    "ToolsMissing",
    "block_cells",
    "breakdown",
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
    "seed_summary",
    "synthesize",
    "synthesize_seeds",
    "top_ports",
    "worst_paths",
]
