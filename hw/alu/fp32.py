"""IEEE-754 binary32 fields and classes as Amaranth logic.

The encoding (IEEE 754-2019, clause 3.4): bit 31 is the sign, bits 30..23 the biased exponent,
bits 22..0 the trailing significand field. Exponent 0 holds zeros and subnormals (value
``0.frac * 2**-126``), exponent 255 holds infinities (fraction 0) and NaNs (fraction non-zero).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth import Cat, Module, Signal, Value

from innet.gen.ops import CANONICAL_NAN

__all__ = ["BIAS", "CANONICAL_NAN", "INFINITY", "Fp32Fields", "unpack"]

#: Exponent bias of binary32.
BIAS = 127
#: The bit pattern of +infinity (OR in bit 31 for -infinity).
INFINITY = 0x7F80_0000


@dataclass(frozen=True)
class Fp32Fields:
    """The fields and classes of one binary32 operand (combinational values).

    Attributes
    ----------
    sign : Value
        Bit 31.
    exponent : Value
        The *effective* biased exponent (8 bits): the exponent field, or 1 for zeros and
        subnormals, so that the value is ``significand * 2**(exponent - 127 - 23)`` for every
        finite operand.
    significand : Value
        24 bits: the fraction with the hidden bit (1 for normal numbers, 0 for zeros and
        subnormals) on top.
    zero, inf, nan : Value
        The operand is +-0, +-infinity, a NaN (quiet or signalling).
    """

    sign: Value
    exponent: Value
    significand: Value
    zero: Value
    inf: Value
    nan: Value


def unpack(m: Module, bits: Value, name: str) -> Fp32Fields:
    """Split the 32-bit pattern ``bits`` into its :class:`Fp32Fields`."""
    exponent, fraction = bits[23:31], bits[:23]
    fields = {
        "sign": Signal(name=f"{name}_sign"),
        "exponent": Signal(8, name=f"{name}_exponent"),
        "significand": Signal(24, name=f"{name}_significand"),
        "zero": Signal(name=f"{name}_zero"),
        "inf": Signal(name=f"{name}_inf"),
        "nan": Signal(name=f"{name}_nan"),
    }
    exp_zero = Signal(name=f"{name}_exp_zero")
    exp_ones = Signal(name=f"{name}_exp_ones")
    frac_zero = Signal(name=f"{name}_frac_zero")
    m.d.comb += [
        exp_zero.eq(exponent == 0),
        exp_ones.eq(exponent.all()),
        frac_zero.eq(fraction == 0),
        fields["sign"].eq(bits[31]),
        fields["exponent"].eq(Cat(exponent[0] | exp_zero, exponent[1:])),
        fields["significand"].eq(Cat(fraction, ~exp_zero)),
        fields["zero"].eq(exp_zero & frac_zero),
        fields["inf"].eq(exp_ones & frac_zero),
        fields["nan"].eq(exp_ones & ~frac_zero),
    ]
    return Fp32Fields(**fields)
