"""Small RTL blocks that exist for tests and tools, not for a network.

:class:`MulAdd` is the design ``innet doctor`` builds to check the toolchain end to end (and a
quick synthesis case). :class:`CreditThrottle` holds back returned credits at random (``go`` from
:func:`xorshift32`): the random backpressure that simulation wrappers put on a link.
:func:`free_constant` is the free input of a formal harness that keeps its first value;
:func:`wrap` connects a component to one of the same signature inside it (a mutation that
changes a few of its ports).
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Component, In, Out

from innet.gen.checks import check_int

__all__ = ["MAX_MULADD_WIDTH", "CreditThrottle", "MulAdd", "free_constant", "muladd_model", "wrap",
           "xorshift32"]

#: The widest :class:`MulAdd`.
MAX_MULADD_WIDTH = 64


class MulAdd(wiring.Component):
    """A registered multiply-add, ``o = (a * b + c) mod 2**width``, one cycle of latency.

    Parameters
    ----------
    width : int
        Operand and result width in bits.

    Members
    -------
    a, b, c : In(width)
        Operands, sampled on every rising edge while ``i_valid`` is high.
    i_valid : In(1)
        The operands are valid.
    o : Out(width)
        The result for the operands sampled on the previous edge.
    o_valid : Out(1)
        ``i_valid`` delayed by one cycle; reset to 0.

    Raises
    ------
    TypeError, ValueError
        If ``width`` is not an integer from 1 to :data:`MAX_MULADD_WIDTH`.
    """

    def __init__(self, width: int = 32) -> None:
        self._width = check_int("Width", width, low=1, high=MAX_MULADD_WIDTH)
        super().__init__({
            "a": In(width), "b": In(width), "c": In(width), "i_valid": In(1),
            "o": Out(width), "o_valid": Out(1),
        })

    @property
    def width(self) -> int:
        return self._width

    def elaborate(self, platform):
        m = Module()
        product = Signal(2 * self._width)
        m.d.comb += product.eq(self.a * self.b + self.c)
        m.d.sync += [self.o.eq(product[:self._width]), self.o_valid.eq(self.i_valid)]
        return m


def muladd_model(a: int, b: int, c: int, width: int = 32) -> int:
    """Python model of :class:`MulAdd`."""
    return (a * b + c) % (1 << width)


class CreditThrottle(wiring.Component):
    """Random backpressure on a credit link: holds back the credits its receiver returns.

    Each VC counts the credits the receiver returned (``credit_in``) and passes at most one per
    cycle on to the sender (``credit_out``, in the same cycle while nothing is owed), only
    while ``go`` is high; the sender then stalls for want of credits exactly as if the receiver
    were slow to drain its buffer. With ``go`` always high the throttle is transparent.

    Parameters
    ----------
    vcs : int
        Virtual channels.
    depth : int
        The receiver's buffer per VC (the most credits that can be owed).

    Members
    -------
    credit_in : In(vcs)
    credit_out : Out(vcs)
    go : In(1)
    quiet : Out(1)
        No credit is held back.

    Raises
    ------
    TypeError, ValueError
        If ``vcs`` or ``depth`` is not a positive integer.
    """

    def __init__(self, vcs: int, depth: int) -> None:
        self._vcs = check_int("Throttle VCs", vcs, low=1)
        self._depth = check_int("Throttle depth", depth, low=1)
        super().__init__({"credit_in": In(vcs), "credit_out": Out(vcs), "go": In(1),
                          "quiet": Out(1)})

    @property
    def vcs(self) -> int:
        return self._vcs

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        owed = [Signal(range(self._depth + 1), name=f"owed{v}") for v in range(self._vcs)]
        for v, count in enumerate(owed):
            # A credit passes straight through while go is high (no added latency).
            release = self.go & ((count != 0) | self.credit_in[v])
            m.d.comb += self.credit_out[v].eq(release)
            m.d.sync += count.eq(count + self.credit_in[v] - release)
        m.d.comb += self.quiet.eq(Cat(count == 0 for count in owed).all())
        return m


def xorshift32(state):
    """One step of a 32-bit xorshift generator (as an Amaranth expression)."""
    x = state ^ (state << 13)[:32]
    x = x ^ (x >> 17)
    return x ^ (x << 5)[:32]


def free_constant(m: Module, shape, label: str, started, free: list):
    """A free input of a formal harness that keeps the value it has in the first cycle: a
    signal ``label`` of ``shape``, assumed equal to its previous value once ``started`` is
    high, and appended to ``free`` (the harness's inputs)."""
    from amaranth import Value
    from amaranth.hdl import Assume

    now, before = Signal(shape, name=label), Signal(shape, name=f"{label}_before")
    m.d.sync += before.eq(now)
    m.d.comb += Assume(~started | (Value.cast(now) == Value.cast(before)))
    free.append(Value.cast(now))
    return now


def wrap(m: Module, outer: Component, inner: Component, replace: dict | None = None) -> None:
    """Connect every port of ``outer`` to the same port of ``inner``, a component of the same
    signature inside it (its inputs in, its outputs out), except that a port whose path (as
    ``Signature.flatten`` names it: ``("req", 0, "valid")``) is a key of ``replace`` is driven
    by the value there instead.

    Raises
    ------
    KeyError
        If a path of ``replace`` is not a port of ``outer``.
    """
    replace = dict(replace or {})
    inner_ports = {path: value for path, _, value in inner.signature.flatten(inner)}
    for path, member, value in outer.signature.flatten(outer):
        target, source = ((inner_ports[path], value) if member.flow == In
                          else (value, inner_ports[path]))
        m.d.comb += target.eq(replace.pop(path, source))
    if replace:
        raise KeyError(f"No port {next(iter(replace))} to replace")
