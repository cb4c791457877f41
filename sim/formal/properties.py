"""The formal properties of the flow-control blocks, each with its harness and proof depths.

Each block states its properties beside its RTL (:func:`innet.hw.credit.credit_properties`,
:func:`innet.hw.arbiter.round_robin_properties`,
:func:`innet.hw.buffer.buffer_properties`, :func:`innet.hw.switch.switch_properties`,
:func:`innet.hw.ceng.engine.engine_properties`):
a harness that drives the unchanged block from free inputs, asserts the property, assumes what
its environment promises and covers a state that shows the property is not vacuous.
:data:`PROPERTIES` lists them with the sizes they are proved at and the k-induction depth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from innet.sim.formal.sby import ProofResult, Toolchain, check

__all__ = ["PROPERTIES", "Property", "blocks", "select"]


@dataclass(frozen=True)
class Property:
    """One property of one block.

    Attributes
    ----------
    block : str
        The block's name for ``innet prove BLOCK`` (``credit``, ``round-robin``, ...).
    name : str
        The property's name within the block.
    statement : str
        What is proved, in words.
    harness : callable
        ``harness(name, **sizes, block=cls) -> (Module, ports)``: the block's own property
        function.
    sizes : dict
        The block parameters the property is proved at.
    depth : int
        k of the k-induction (of the bounded model check, when ``bounded``).
    cover_depth : int
        Steps within which the cover must be reached.
    bounded : bool
        Checked ``depth`` steps from reset only: the block is too large for the induction to
        close in reasonable time.
    checks : str, optional
        The harness's name of the property, when ``name`` differs (the same property at other
        sizes: ``route-radix3`` checks ``route``).
    """

    block: str
    name: str
    statement: str
    harness: Callable[..., Any] = field(repr=False)
    sizes: dict[str, Any]
    depth: int
    cover_depth: int
    bounded: bool = False
    checks: str | None = None

    @property
    def key(self) -> str:
        """``"credit.in-range"``."""
        return f"{self.block}.{self.name}"

    def rtlil(self, block: type | None = None) -> str:
        """The harness as RTLIL (top module ``top``); ``block`` replaces the block's class
        (a mutation)."""
        from amaranth.back import rtlil

        extra = {} if block is None else {"block": block}
        module, ports = self.harness(self.checks or self.name, **self.sizes, **extra)
        return rtlil.convert(module, ports=ports, name="top")

    def prove(self, workdir: Path, *, block: type | None = None,
              tools: Toolchain | None = None) -> ProofResult:
        """Run the proof and the cover in ``workdir`` (see :func:`innet.sim.formal.sby.check`)."""
        return check(self.rtlil(block), workdir, depth=self.depth,
                     cover_depth=self.cover_depth, tools=tools, bounded=self.bounded)


def _properties() -> tuple[Property, ...]:
    from innet.hw.arbiter import ROUND_ROBIN_PROPERTIES, round_robin_properties
    from innet.hw.buffer import BUFFER_PROPERTIES, buffer_properties
    from innet.hw.ceng.engine import ENGINE_PROPERTIES, engine_properties
    from innet.hw.credit import CREDIT_PROPERTIES, credit_properties
    from innet.hw.switch import SWITCH_PROPERTIES, switch_properties

    table = [
        ("credit", CREDIT_PROPERTIES, credit_properties, {"depth": 5}, 8, 14),
        ("round-robin", ROUND_ROBIN_PROPERTIES, round_robin_properties, {"count": 4}, 6, 10),
        ("buffer", BUFFER_PROPERTIES, buffer_properties, {"depth": 5, "width": 4}, 6, 14),
    ]
    # The switch is checked to a bounded depth: the induction would need invariants over
    # every buffer, counter and register. Each depth is the deepest that ABC's bmc3 with
    # Glucose reaches in seconds (the delivery properties: in under a minute): a step or two
    # more cost minutes (docs/verification.md).
    switch = {"radix": 2, "depth": 5}
    engine = {"radix": 1}
    bounded = [
        ("switch", {"no-credit-no-send": SWITCH_PROPERTIES["no-credit-no-send"]},
         switch_properties, switch, 10, 6),
        ("switch", {"route": SWITCH_PROPERTIES["route"]}, switch_properties, switch, 9, 5),
        ("switch", {"multicast": SWITCH_PROPERTIES["multicast"]}, switch_properties, switch, 10,
         8),
        # The delivery properties' stall bound of 3 fails in step 6; 4 holds to 12 steps for
        # p2p flits (in six minutes) and to 14 for responses (in twelve), docs/verification.md.
        ("switch", {"delivery": SWITCH_PROPERTIES["delivery"]}, switch_properties, switch, 10,
         6),
        ("switch", {"multicast-delivery": SWITCH_PROPERTIES["multicast-delivery"]},
         switch_properties, switch, 11, 8),
        # The engine's induction does not close either (the reduction unit's pipeline would
        # need one). Its first reduced result leaves in step 18: 18 steps check forwarding
        # ids' results from step 6 on and a reduction's first (20 steps take three times as
        # long); isolation (cheaper) goes to 24 steps, past the bound of a reducing id (18
        # cycles of waiting).
        ("engine", {"in-order": ENGINE_PROPERTIES["in-order"]}, engine_properties, engine, 18, 20),
        ("engine", {"isolation": ENGINE_PROPERTIES["isolation"]}, engine_properties, engine, 24,
         16),
    ]
    found = [Property(block, name, statement, harness, sizes, depth, cover, rows is bounded)
             for rows in (table, bounded)
             for block, props, harness, sizes, depth, cover in rows
             for name, statement in props.items()]
    # The buffer's properties in block RAM too (a synchronous read port, transparent to the
    # write port).
    found += [Property("buffer", f"{name}-block", f"{BUFFER_PROPERTIES[name]} (in block RAM)",
                       buffer_properties, {"depth": 5, "width": 4, "ram": "block"}, 6, 14,
                       False, name)
              for name in BUFFER_PROPERTIES]
    # The switch's properties at radix 3 too.
    found += [Property("switch", f"{name}-radix3", f"{SWITCH_PROPERTIES[name]} (radix 3)",
                       switch_properties, {**switch, "radix": 3}, depth, cover, True, name)
              for name, depth, cover in (("no-credit-no-send", 10, 6), ("route", 7, 5),
                                         ("multicast", 8, 8))]
    order = list(dict.fromkeys(p.block for p in found))
    return tuple(sorted(found, key=lambda p: order.index(p.block)))


#: Every property, block by block.
PROPERTIES: tuple[Property, ...] = _properties()


def blocks() -> list[str]:
    """The block names, in :data:`PROPERTIES` order."""
    return list(dict.fromkeys(p.block for p in PROPERTIES))


def select(block: str | None = None) -> list[Property]:
    """The properties of ``block`` (all with ``None``); ``block`` may also name one property
    as ``block.name``.

    Raises
    ------
    ValueError
        If nothing has that name.
    """
    if block is None:
        return list(PROPERTIES)
    chosen = [p for p in PROPERTIES if block in (p.block, p.key)]
    if not chosen:
        known = [p.key for p in PROPERTIES if p.block == block.partition(".")[0]]
        if "." in block and known:
            raise ValueError(f"Property must be one of {', '.join(known)}, not {block!r}")
        raise ValueError(f"Block must be one of {', '.join(blocks())} (or BLOCK.PROPERTY), not "
                         f"{block!r}")
    return chosen
