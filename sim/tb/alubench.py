"""Test top level for :class:`innet.hw.alu.ALU`: the operand stream and its checks in the design.

A test fixture. The stream runs in the simulated design, so that no Python runs per cycle
(cocotb's step of a cycle costs far more than the unit's): the testbench fills the memories,
starts the stream and waits for ``done``. The bench has

- the pairs and their expected results in two memories the simulator fills from files
  (:data:`PAIRS_FILE`, :data:`WANT_FILE`, Verilog ``$readmemh`` on ``load``; rows from
  :func:`pair_row` and :func:`want_row`);
- random ``en`` stalls and idle cycles from an on-chip xorshift generator (probabilities
  ``stall_rate / 256`` and ``idle_rate / 256``); while ``en`` is low the inputs carry random
  junk marked valid, which the unit must ignore;
- the checks of every enabled cycle: a result is present exactly when a pair went in
  ``latency`` enabled cycles before (a shift register of the enabled cycles' valid bits),
  and then it is the next pair's result, unsupported flag and tag (the pair's index); while
  ``en`` is low the outputs hold; the stream ends with ``latency + 3`` enabled cycles that
  must bring out nothing more.

Every error is counted and the first is latched with its kind (:data:`ERRORS`), the pair's
index and the outputs, for the testbench to name.

Ports (``I`` index bits, ``T`` tag bits):

=====================  ======  ==============================================================
``load``               in 1    fill both memories from their files (in the cycle it is high)
``start``              in 1    run the stream of ``total`` pairs (one cycle's pulse)
``total``              in I
``stall_rate``         in 8    ``en`` low in a cycle with probability ``/ 256``
``idle_rate``          in 8    no pair in an enabled cycle with probability ``/ 256``
``rng_seed``           in 32   generator seed, loaded while ``rng_load`` is high
``rng_load``           in 1
``done``               out 1   the stream and its drain are over
``checked``            out I   results compared
``enabled``            out 32  rising edges with ``en`` high while running
``error_count``        out I
``first_kind``         out 3   :data:`ERRORS` code of the first error (0: none)
``first_index``        out I   the index of the pair it concerns
``first_result``       out 32  the outputs then
``first_unsupported``  out 1
``first_tag``          out T
=====================  ======  ==============================================================
"""

from __future__ import annotations

from collections.abc import Callable

from amaranth import Cat, ClockSignal, Const, Instance, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.hw.alu import ALU, LATENCY
from innet.hw.testing import xorshift32
from innet.hw.verilog import Design, emit

__all__ = ["ERRORS", "PAIRS_FILE", "WANT_FILE", "ALUBench", "alu_bench", "pair_row", "want_row"]

#: The files (in the simulator's working directory) the memories are filled from.
PAIRS_FILE = "innet_alu_pairs.hex"
WANT_FILE = "innet_alu_want.hex"

#: Error kinds: code -> what the check saw.
ERRORS = {1: "wrong result", 2: "wrong tag", 3: "no result where one was due",
          4: "a result where none was due", 5: "outputs changed while en was low"}

#: A memory filled from ``FILE`` in the cycle ``load`` is high, read asynchronously.
_ROM = """
module innet_alu_rom #(parameter WIDTH = 1, parameter DEPTH = 1, parameter ABITS = 1,
                       parameter FILE = "") (
    input  wire             clk,
    input  wire             load,
    input  wire [ABITS-1:0] addr,
    output wire [WIDTH-1:0] data
);
    reg [WIDTH-1:0] mem [0:DEPTH-1];
    always @(posedge clk)
        if (load) $readmemh(FILE, mem);
    assign data = mem[addr];
endmodule
"""


def pair_row(op: int, dtype: int, a: int, b: int) -> int:
    """A row of the pairs memory: ``op`` at bit 0, ``dtype`` at 4, ``a`` at 6, ``b`` at 38."""
    return op | dtype << 4 | a << 6 | b << 38


def want_row(result: int, unsupported: int) -> int:
    """A row of the expected-results memory: ``result`` at bit 0, ``unsupported`` at 32."""
    return result | unsupported << 32


class ALUBench(wiring.Component):
    """The unit with its stream generator and checker (see the module documentation).

    Parameters
    ----------
    index_width : int
        Bits of a pair's index: streams of up to ``2**index_width - 1`` pairs.
    tag_width : int
        The unit's tag width; the tag carries the pair's index, modulo ``2**tag_width``.
    unit : callable
        Makes the unit from ``tag_width=``: :class:`~innet.hw.alu.ALU` (with its multiplier),
        or a deliberately broken one, to show that the checks catch it.
    """

    def __init__(self, *, index_width: int, tag_width: int,
                 unit: Callable[..., wiring.Component] = ALU) -> None:
        self.index_width, self.tag_width, self.unit = index_width, tag_width, unit
        i = index_width
        super().__init__({
            "load": In(1), "start": In(1), "total": In(i), "stall_rate": In(8),
            "idle_rate": In(8), "rng_seed": In(32), "rng_load": In(1),
            "done": Out(1), "checked": Out(i), "enabled": Out(32), "error_count": Out(i),
            "first_kind": Out(3), "first_index": Out(i), "first_result": Out(32),
            "first_unsupported": Out(1), "first_tag": Out(tag_width),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.alu = alu = self.unit(tag_width=self.tag_width)
        i, depth = self.index_width, 1 << self.index_width
        sent, recv = Signal(i), Signal(i)
        pair, want = Signal(70), Signal(33)
        for name, data, addr, file in (("pairs", pair, sent, PAIRS_FILE),
                                       ("want", want, recv, WANT_FILE)):
            m.submodules[name] = Instance(
                "innet_alu_rom", p_WIDTH=len(data), p_DEPTH=depth, p_ABITS=i, p_FILE=file,
                i_clk=ClockSignal(), i_load=self.load, i_addr=addr, o_data=data)

        rng = Signal(32, init=1)
        m.d.sync += rng.eq(Mux(self.rng_load, self.rng_seed | 1, xorshift32(rng)))
        running, draining = Signal(), Signal(range(LATENCY + 3))
        stall = running & (rng[:8] < self.stall_rate)
        idle = rng[8:16] < self.idle_rate
        send = running & ~idle & (sent != self.total)
        en = ~stall
        m.d.comb += alu.en.eq(en)
        with m.If(stall):  # junk marked valid, which the unit must not take
            m.d.comb += [alu.i_valid.eq(1), alu.i_op.eq(rng[:4]), alu.i_dtype.eq(rng[4:6]),
                         alu.i_a.eq(rng), alu.i_b.eq(~rng)]
        with m.Else():
            m.d.comb += [alu.i_valid.eq(send), alu.i_op.eq(pair[:4]),
                         alu.i_dtype.eq(pair[4:6]), alu.i_a.eq(pair[6:38]),
                         alu.i_b.eq(pair[38:70])]
        if self.tag_width:
            m.d.comb += alu.i_tag.eq(sent)

        # Valid bits of the enabled cycles: a result is due when a pair went in LATENCY
        # enabled cycles before.
        due = Signal(LATENCY)
        outputs = Cat(alu.o_valid, alu.o_result, alu.o_unsupported,
                      *([alu.o_tag] if self.tag_width else []))
        held, was_stalled = Signal(len(outputs)), Signal()
        m.d.sync += [held.eq(outputs), was_stalled.eq(stall)]
        kind = Signal(3)
        tag_ok = Const(1) if not self.tag_width else alu.o_tag == recv[:self.tag_width]
        with m.If(running & was_stalled & (outputs != held)):
            m.d.comb += kind.eq(5)
        with m.Elif(running & en):
            with m.If(alu.o_valid & ~due[-1]):
                m.d.comb += kind.eq(4)
            with m.Elif(~alu.o_valid & due[-1]):
                m.d.comb += kind.eq(3)
            with m.Elif(alu.o_valid & ~tag_ok):
                m.d.comb += kind.eq(2)
            with m.Elif(alu.o_valid & (Cat(alu.o_result, alu.o_unsupported) != want)):
                m.d.comb += kind.eq(1)

        with m.If(self.start):
            m.d.sync += [running.eq(1), self.done.eq(0), sent.eq(0), recv.eq(0), due.eq(0),
                         draining.eq(0), self.checked.eq(0), self.enabled.eq(0),
                         self.error_count.eq(0), self.first_kind.eq(0)]
        with m.Elif(running & en):
            m.d.sync += [due.eq(Cat(send, due[:-1])), self.enabled.eq(self.enabled + 1)]
            with m.If(send):
                m.d.sync += sent.eq(sent + 1)
            with m.If(due[-1]):
                m.d.sync += recv.eq(recv + 1)
            with m.If(alu.o_valid & due[-1]):
                m.d.sync += self.checked.eq(self.checked + 1)
            with m.If((sent == self.total) & (recv == self.total)):
                m.d.sync += draining.eq(draining + 1)
                with m.If(draining == LATENCY + 2):
                    m.d.sync += [running.eq(0), self.done.eq(1)]
        with m.If(~self.start & (kind != 0)):
            m.d.sync += self.error_count.eq(self.error_count + 1)
            with m.If(self.first_kind == 0):
                m.d.sync += [self.first_kind.eq(kind), self.first_index.eq(recv),
                             self.first_result.eq(alu.o_result),
                             self.first_unsupported.eq(alu.o_unsupported)]
                if self.tag_width:
                    m.d.sync += self.first_tag.eq(alu.o_tag)
        return m


def alu_bench(*, index_width: int, tag_width: int, unit: Callable[..., wiring.Component] = ALU,
              name: str = "innet_alu_bench") -> Design:
    """The Verilog of :class:`ALUBench` (the same arguments) with its memory module."""
    design = emit(ALUBench(index_width=index_width, tag_width=tag_width, unit=unit), name)
    return Design(_ROM + design.verilog, name, design.ports)
