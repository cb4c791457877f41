"""A stand-alone top level of the collective engine, for Verilog and synthesis on its own."""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow

from innet.hw.ceng.engine import CollectiveEngine

__all__ = ["EngineTop"]


class EngineTop(wiring.Component):
    """:class:`CollectiveEngine` with plain ports, optionally registered on every port.

    ``innet verilog ceng`` emits this. With ``registered=False`` it is the engine itself
    (same ports, same behaviour). With ``registered=True`` every input and output passes
    through one register, so that out-of-context synthesis times the engine's paths as they
    start and end in the switch (buffer heads, credit counters and output registers are
    registers there); a timing harness only: the extra cycle breaks the same-cycle
    ``valid``/``ready`` handshake, so do not simulate it as an engine.

    Parameters
    ----------
    engine : CollectiveEngine
        The engine to wrap.
    registered : bool
        Put a register on every port.

    Members
    -------
    As :class:`CollectiveEngine`.
    """

    def __init__(self, engine: CollectiveEngine, *, registered: bool = False) -> None:
        if not isinstance(engine, CollectiveEngine):
            raise TypeError(f"Engine must be a CollectiveEngine, not {engine!r}")
        if not isinstance(registered, bool):
            raise TypeError(f"Registered must be a bool, not {registered!r}")
        self._engine = engine
        self._registered = registered
        super().__init__(dict(engine.signature.members.items()))

    @property
    def engine(self) -> CollectiveEngine:
        return self._engine

    @property
    def registered(self) -> bool:
        return self._registered

    def elaborate(self, platform):
        m = Module()
        m.submodules.engine = engine = self._engine
        outer = {path: value for path, _, value in self.signature.flatten(self)}
        for path, member, inner in engine.signature.flatten(engine):
            mine = outer[path]
            name = "_".join(str(part) for part in path)
            src, dst = (mine, inner) if member.flow == Flow.In else (inner, mine)
            if self._registered:
                stage = Signal.like(src, name=f"reg_{name}")
                m.d.sync += stage.eq(src)
                src = stage
            m.d.comb += dst.eq(src)
        return m
