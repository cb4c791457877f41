"""A small FIFO: the input buffer of one (port, virtual channel).

The switch keeps one :class:`Buffer` per input port and VC (PIUMA, "Pipelined Reduction": the
buffer space a sender's credits count). :class:`BufferModel` is the deliberately simple Python
model the unit tests compare against.
"""

from __future__ import annotations

from collections import deque

from amaranth import Module, Mux, Shape, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int

__all__ = ["Buffer", "BufferModel"]


class Buffer(wiring.Component):
    """A first-in first-out buffer of ``depth`` entries.

    A circular buffer in a ``Memory`` with an asynchronous read port: distributed (LUT) RAM on
    an FPGA, an array in Verilator. The head is read combinationally from the read pointer (a
    register), so ``r.payload`` is valid in the cycle after the write.

    Parameters
    ----------
    shape : shape-like
        Shape of one entry (a flit layout, possibly with routing information).
    depth : int
        Number of entries, at least 1.

    Members
    -------
    w : In(stream.Signature(shape))
        Write side. ``w.ready`` is high while the buffer is not full (it does not depend on
        ``r.ready``). An entry written on a rising edge is readable from the next cycle.
    r : Out(stream.Signature(shape))
        Read side; ``r.valid`` depends only on registers (never on ``w``). Writing and reading
        in the same cycle sustains one entry per cycle.
    level : Out(range(depth + 1))
        Number of entries held (registered). Reset: 0.

    Raises
    ------
    TypeError, ValueError
        If ``depth`` is not a positive integer.
    """

    def __init__(self, shape, depth: int) -> None:
        check_int("Buffer depth", depth, low=1)
        self._shape = shape
        self._depth = depth
        Shape.cast(shape)
        super().__init__({
            "w": In(stream.Signature(shape)),
            "r": Out(stream.Signature(shape)),
            "level": Out(range(depth + 1)),
        })

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def shape(self):
        return self._shape

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        m.submodules.storage = storage = Memory(shape=self._shape, depth=depth, init=[])
        wr = storage.write_port()
        rd = storage.read_port(domain="comb")
        w_ptr = Signal(range(depth))
        r_ptr = Signal(range(depth))
        push = Signal()
        pop = Signal()
        m.d.comb += [
            self.w.ready.eq(self.level != depth),
            push.eq(self.w.valid & self.w.ready),
            pop.eq(self.r.valid & self.r.ready),
            self.r.valid.eq(self.level != 0),
            rd.addr.eq(r_ptr),
            self.r.payload.eq(rd.data),
            wr.addr.eq(w_ptr),
            wr.data.eq(self.w.payload),
            wr.en.eq(push),
        ]
        with m.If(push):
            m.d.sync += w_ptr.eq(Mux(w_ptr == depth - 1, 0, w_ptr + 1))
        with m.If(pop):
            m.d.sync += r_ptr.eq(Mux(r_ptr == depth - 1, 0, r_ptr + 1))
        m.d.sync += self.level.eq(self.level + push - pop)
        return m


class BufferModel:
    """Python model of :class:`Buffer`, one call of :meth:`step` per clock edge."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.items: deque = deque()

    @property
    def w_ready(self) -> bool:
        return len(self.items) < self.depth

    @property
    def r_valid(self) -> bool:
        return bool(self.items)

    @property
    def head(self):
        return self.items[0] if self.items else None

    def step(self, w_valid: bool, w_payload, r_ready: bool) -> None:
        """Advance one edge with the given write and read handshake inputs."""
        pop = r_ready and self.r_valid
        push = w_valid and self.w_ready
        if pop:
            self.items.popleft()
        if push:
            self.items.append(w_payload)

