"""Combinational building blocks of the ALU datapath: leading-zero count, masks, carry-save add.

Each helper adds combinational logic to a module ``m`` and returns the resulting value. They are
written for shallow logic on an FPGA (log-depth trees, no long priority chains), because the
reduction runs at line rate.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value

__all__ = ["carry_save_add", "leading_zeros", "low_mask", "trailing_zeros"]


def leading_zeros(m: Module, value: Value, name: str = "lzc") -> Signal:
    """The number of leading zeros of ``value`` (``len(value)`` when it is zero).

    A binary tree: each node counts the leading zeros of its two halves and takes the upper
    half's count unless that half is all zero; ``ceil(log2(len(value) + 1))`` 2:1 mux levels.
    """
    width = len(value)
    size = 1
    while size < width + 1:
        size *= 2
    # Pad below with ones (at least one): a zero value then counts exactly `width` leading zeros.
    padded = Cat(Const((1 << (size - width)) - 1, size - width), value)

    def node(bits: Value, path: str) -> tuple[Value, Value]:
        # Returns (all_zero, count) where count has log2(len(bits)) bits. Every node is a
        # signal, so that the netlist shares it instead of repeating its expression.
        if len(bits) == 1:
            return ~bits[0], Cat()
        zero = Signal(name=f"{name}_{path}_zero")
        count = Signal((len(bits) - 1).bit_length(), name=f"{name}_{path}_count")
        half = len(bits) // 2
        lo_zero, lo_count = node(bits[:half], path + "l")
        hi_zero, hi_count = node(bits[half:], path + "h")
        m.d.comb += [
            zero.eq(hi_zero & lo_zero),
            count.eq(Cat(Mux(hi_zero, lo_count, hi_count), hi_zero)),
        ]
        return zero, count

    _, count = node(padded, "t")
    result = Signal(range(width + 1), name=name)
    m.d.comb += result.eq(count)
    return result


def trailing_zeros(m: Module, value: Value, name: str = "tzc") -> Signal:
    """The number of trailing zeros of ``value`` (``len(value)`` when it is zero)."""
    return leading_zeros(m, value[::-1], name=name)


def low_mask(amount: Value, width: int) -> Value:
    """A ``width``-bit mask with the ``amount`` lowest bits set (all if ``amount >= width``)."""
    return ~(Const((1 << width) - 1, width) << amount)[:width]


def carry_save_add(x: Value, y: Value, z: Value, width: int) -> Value:
    """``(x + y + z) mod 2**width`` as one 3:2 compressor level and one carry-propagate adder."""
    x, y, z = (v.as_unsigned() for v in (x, y, z))
    partial = (x ^ y ^ z)[:width]
    carries = Cat(Const(0, 1), ((x & y) | (x & z) | (y & z))[:width - 1])
    return (partial + carries)[:width]
