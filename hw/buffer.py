"""A small FIFO: the input buffer of one (port, virtual channel).

The switch keeps one :class:`Buffer` per input port and VC (PIUMA, "Pipelined Reduction": the
buffer space a sender's credits count). :class:`BufferModel` is the deliberately simple Python
model the unit tests compare against; :func:`buffer_properties` states its formal properties
(:data:`BUFFER_PROPERTIES`, proved by :mod:`innet.sim.formal`).
"""

from __future__ import annotations

from collections import deque

from amaranth import Module, Mux, Shape, Signal, unsigned
from amaranth.hdl import Assert, Cover
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.hw.credit import MAX_DEPTH

__all__ = ["BUFFER_PROPERTIES", "RAMS", "Buffer", "BufferModel", "Bypass", "buffer_properties"]

#: The memories a :class:`Buffer` can be built in.
RAMS = ("lut", "block")


class Buffer(wiring.Component):
    """A first-in first-out buffer of ``depth`` entries.

    A circular buffer in a ``Memory``. With ``ram="lut"`` it has an asynchronous read port:
    distributed (LUT) RAM on an FPGA, an array in Verilator; the head is read combinationally
    from the read pointer (a register). With ``ram="block"`` the memory is a block RAM, read by
    a synchronous port that is transparent to the write port: its address is the head of the
    next cycle (the read pointer, or the entry after it when the head leaves), so the head is
    the port's read register and no logic cell holds an entry (an ECP5 ``DP16KD`` holds 512
    entries of 36 bits, where a LUT RAM cell of 6 logic cells holds 16 of 4). Either way
    ``r.payload`` is valid in the cycle after the write, and the two behave alike.

    Parameters
    ----------
    shape : shape-like
        Shape of one entry (a flit layout, possibly with routing information).
    depth : int
        Number of entries, at least 1.
    ram : str
        ``"lut"`` (the default) or ``"block"``.

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
        If ``depth`` is not a positive integer, or ``ram`` is neither ``"lut"`` nor
        ``"block"``.
    """

    def __init__(self, shape, depth: int, *, ram: str = "lut") -> None:
        check_int("Buffer depth", depth, low=1, high=MAX_DEPTH)
        if ram not in RAMS:
            raise ValueError(f"Buffer RAM must be one of {', '.join(RAMS)}, not {ram!r}")
        self._shape = shape
        self._depth = depth
        self._ram = ram
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

    @property
    def ram(self) -> str:
        return self._ram

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        block = self._ram == "block"
        m.submodules.storage = storage = Memory(
            shape=self._shape, depth=depth, init=[],
            attrs={"ram_style": "block"} if block else None)
        wr = storage.write_port()
        w_ptr = Signal(range(depth))
        r_ptr = Signal(range(depth))
        r_next = Mux(r_ptr == depth - 1, 0, r_ptr + 1)
        push = Signal()
        pop = Signal()
        if block:
            rd = storage.read_port(domain="sync", transparent_for=(wr,))
            m.d.comb += rd.addr.eq(Mux(pop, r_next, r_ptr))
        else:
            rd = storage.read_port(domain="comb")
            m.d.comb += rd.addr.eq(r_ptr)
        m.d.comb += [
            self.w.ready.eq(self.level != depth),
            push.eq(self.w.valid & self.w.ready),
            pop.eq(self.r.valid & self.r.ready),
            self.r.valid.eq(self.level != 0),
            self.r.payload.eq(rd.data),
            wr.addr.eq(w_ptr),
            wr.data.eq(self.w.payload),
            wr.en.eq(push),
        ]
        with m.If(push):
            m.d.sync += w_ptr.eq(Mux(w_ptr == depth - 1, 0, w_ptr + 1))
        with m.If(pop):
            m.d.sync += r_ptr.eq(r_next)
        # Both neighbours of the level ready before the handshakes, which only select one.
        level = self.level
        m.d.sync += level.eq(Mux(push, Mux(pop, level, level + 1), Mux(pop, level - 1, level)))
        return m


class Bypass:
    """A :class:`Buffer` whose writer never waits for its reader, with a bypass: a flit that
    arrives while the buffer holds none is the head at once.

    Every arriving flit is written into the buffer, so the write does not depend on what the
    reader decides in that cycle. A flit the reader takes straight from the bypass leaves its
    entry behind, which is discarded in the next cycle (``skip``). Build it with the arriving
    flits, let the reader decide from :attr:`waiting` and :attr:`head`, then give the decision
    to :meth:`take`.

    Parameters
    ----------
    m : Module
        The module of the reader (the logic is added to it).
    buffer : Buffer
        The buffer (a submodule of ``m``); its ``w`` and ``r.ready`` are driven here.
    arriving : Value
        A flit arrives in this cycle (the writer checks the buffer's room).
    payload : Value
        The arriving flit.
    name : str
        Prefix of the signals' names.
    flush : Value
        While high, the buffer's head is discarded (an arriving flit is not held back: the
        caller keeps it out of ``arriving`` if it must go too).

    Attributes
    ----------
    waiting : Signal
        The head is an entry of the buffer (not taken yet).
    head : Signal
        The buffer's head while :attr:`waiting`, else the arriving flit.
    """

    def __init__(self, m: Module, buffer: Buffer, arriving, payload, *, name: str,
                 flush=0) -> None:
        self._m, self._buffer, self._flush = m, buffer, flush
        self.skip = Signal(name=f"{name}_skip")
        self.waiting = Signal(name=f"{name}_waiting")
        self.head = Signal(buffer.shape, name=f"{name}_head")
        m.d.comb += [buffer.w.valid.eq(arriving), buffer.w.payload.eq(payload),
                     self.waiting.eq(buffer.r.valid & ~self.skip),
                     self.head.eq(Mux(self.waiting, buffer.r.payload, payload))]

    def take(self, take) -> None:
        """The reader takes the head in this cycle when ``take`` is high (call once)."""
        m, buffer = self._m, self._buffer
        m.d.comb += buffer.r.ready.eq(take & self.waiting | self.skip | self._flush)
        m.d.sync += self.skip.eq(take & ~self.waiting)


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



# -- formal properties -------------------------------------------------------------------------

#: The formal properties of :class:`Buffer`, by name (:func:`buffer_properties`).
BUFFER_PROPERTIES = {
    "no-overflow": "a write is accepted only while fewer than depth entries are held and a read "
                   "only while one is held, whatever the writer and the reader do; w.ready, "
                   "r.valid and level agree with the entries held",
    "in-order": "an entry written behind k others leaves, unchanged, as the (k + 1)-th read "
                "after its write: entries leave in the order they came, none lost or altered",
}


def buffer_properties(name: str, depth: int = 5, width: int = 4, *, block: type = Buffer,
                      ram: str = "lut", strengthen: bool = True) -> tuple[Module, list[Signal]]:
    """A formal harness: ``block(unsigned(width), depth, ram=ram)`` driven by free inputs, with the
    property ``name`` of :data:`BUFFER_PROPERTIES` as ``Assert`` and a ``Cover`` that shows it
    is not vacuous (for ``no-overflow``: the buffer filled, then emptied; for ``in-order``: an
    entry written behind ``depth - 1`` others read out).

    ``in-order`` watches one entry, chosen by the free input ``watch`` when it is written: the
    harness keeps its value and the number of entries ahead of it, counts that down on every
    read, and asserts the read that takes it out returns the value (Wolper's data-independence
    argument: one symbolic entry stands for all). The buffer's own logic is unchanged; to make
    the induction close, the harness adds a read port to its memory at the watched entry's
    place and asserts that the pointers agree with ``level`` and that the memory holds the
    watched value there (in block RAM, also that the read register holds the head).
    ``block`` may be a variant (a mutation) with the same interface.

    Parameters
    ----------
    strengthen : bool
        Assert those invariants of the memory (``in-order``). Without them the property
        still holds within any bound, but the induction does not close.

    Returns
    -------
    (Module, list of Signal)
        The harness and its free inputs.

    Raises
    ------
    ValueError
        If ``name`` is not a property of :data:`BUFFER_PROPERTIES`.
    """
    if name not in BUFFER_PROPERTIES:
        raise ValueError(f"Buffer property must be one of {', '.join(BUFFER_PROPERTIES)}, "
                         f"not {name!r}")
    m = Module()
    watch = Signal(name="watch")
    watching = Signal(name="watching")
    value = Signal(width, name="watched_value")
    ahead = Signal(range(depth + 1), name="watched_ahead")  # entries in front of it
    behind = Signal(range(depth + 1), name="watched_behind_at_write")

    class Probed(block):
        """The block, elaborated unchanged, with the invariants of its memory asserted."""

        def elaborate(self, platform):
            inner = super().elaborate(platform)
            storage = getattr(inner.submodules, "storage", None)
            if (name == "in-order" and strengthen and isinstance(storage, Memory)
                    and storage.read_ports and storage.write_ports):
                _strengthen(inner, storage, self)
            return inner

    def wrap(at):
        return Mux(at >= depth, at - depth, at)

    def _strengthen(inner: Module, storage: Memory, dut: Buffer) -> None:
        # The write pointer is in range, the head ``level`` entries behind it (modulo depth),
        # the read port's address is the head's (in block RAM: the next cycle's), and the
        # memory holds the watched value ``ahead`` places after the head.
        read, w_ptr, level = storage.read_ports[0], storage.write_ports[0].addr, dut.level
        inner.d.comb += [Assert(w_ptr < depth), Assert(level <= depth)]
        head = Signal(range(depth), name="head_at")
        inner.d.comb += head.eq(Mux(w_ptr >= level, w_ptr - level, w_ptr + depth - level))
        peek, peek_head = storage.read_port(domain="comb"), storage.read_port(domain="comb")
        inner.d.comb += [peek.addr.eq(wrap(head + ahead)), peek_head.addr.eq(head),
                         Assert(~watching | (peek.data == value))]
        if read.domain == "comb":
            inner.d.comb += Assert(read.addr == head)
        else:
            pop = dut.r.valid & dut.r.ready
            inner.d.comb += [Assert(read.addr == Mux(pop, wrap(head + 1), head)),
                             Assert((level == 0) | (read.data == peek_head.data))]

    m.submodules.dut = dut = Probed(unsigned(width), depth, ram=ram)
    w_valid, r_ready = Signal(name="w_valid"), Signal(name="r_ready")
    w_payload = Signal(width, name="w_payload")
    m.d.comb += [dut.w.valid.eq(w_valid), dut.w.payload.eq(w_payload),
                 dut.r.ready.eq(r_ready)]
    push = dut.w.valid & dut.w.ready
    pop = dut.r.valid & dut.r.ready
    if name == "no-overflow":
        # Entries held, counted by the harness from the handshakes alone.
        held = Signal(range(2 * depth + 2), name="held")
        m.d.sync += held.eq(held + push - pop)
        was_full = Signal(name="was_full")
        with m.If(held == depth):
            m.d.sync += was_full.eq(1)
        m.d.comb += [
            Assert(~push | (held != depth)),
            Assert(~pop | (held != 0)),
            Assert(held <= depth),
            Assert(dut.level == held),
            Assert(dut.w.ready == (held != depth)),
            Assert(dut.r.valid == (held != 0)),
            Cover(was_full & (held == 0)),
        ]
        return m, [w_valid, w_payload, r_ready]
    with m.If(watching & pop):
        with m.If(ahead == 0):
            m.d.sync += watching.eq(0)
        with m.Else():
            m.d.sync += ahead.eq(ahead - 1)
    with m.Elif(~watching & push & watch):
        m.d.sync += [watching.eq(1), value.eq(w_payload), ahead.eq(dut.level - pop),
                     behind.eq(dut.level - pop)]
    m.d.comb += [
        Assert(~(watching & pop & (ahead == 0)) | (dut.r.payload == value)),
        Assert(~watching | (ahead < dut.level)),
        Cover(watching & pop & (ahead == 0) & (behind == depth - 1)),
    ]
    return m, [w_valid, w_payload, r_ready, watch]
