"""The pipelined two-operand reduction unit of the collective engine."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.ops import DType, Op
from innet.hw.alu.fp32 import CANONICAL_NAN, INFINITY, unpack
from innet.hw.alu.logic import carry_save_add, leading_zeros, low_mask, trailing_zeros

__all__ = ["ALU", "LATENCY"]

#: Cycles from an accepted operand pair to its result, for every operation.
LATENCY = 7


class ALU(wiring.Component):
    """One reduction step ``a op b`` for every operation of :mod:`innet.gen.ops`, pipelined.

    The unit computes :func:`innet.gen.ops.combine` bit for bit: ``int32``/``uint32`` ``add``,
    ``min``, ``max``, ``and``, ``or``, ``xor``, ``nor`` and ``mul`` (low word), and ``fp32``
    ``add``, ``mul`` (IEEE 754 binary32, round to nearest even, subnormal inputs and outputs,
    canonical quiet NaN ``0x7FC00000`` for every NaN result), ``min`` and ``max`` (IEEE
    754-2019 ``minimum``/``maximum``: NaN if either operand is NaN, -0 < +0). The operation and
    the data type travel with each operand pair, so operations of different collectives may be in
    flight together (PIUMA, "Collective Engine": "a pipelined tree of units to compute high radix
    reductions at line rate").

    The pipeline accepts one operand pair per enabled cycle and every operation has the same
    latency, :data:`LATENCY` = 7 enabled cycles, so a tree of units stays aligned: operands
    presented in cycle ``t`` (with ``en`` high) are on ``o_*`` in cycle ``t + 7`` if ``en``
    stays high (each low cycle in between adds one). Stages, each ending in a register: (1)
    decode, classify, compare magnitudes, integer sum, exponent difference; (2) results
    that need no floating-point datapath (integers, min/max, NaN and infinity), the fp32 addends
    put in order and the smaller aligned with a sticky bit, or the multiplier's four partial
    products; (3) significand add/subtract, or the
    product sum; (4) leading-zero count (bounded so that results below the normal range come out
    subnormal), or the right shift of a product below it; (5) normalising shift; (6) round to
    nearest, ties to even; (7) increment, overflow to infinity, result select. Data registers
    have no reset; only the valid bits do.

    Parameters
    ----------
    mul : bool
        Build the multiplier (four partial products of at most 16x16 bits: four DSP multipliers
        on an ECP5). Without it, ``mul`` on any data type is unsupported (see ``o_unsupported``) and
        the unit is smaller and faster.
    tag_width : int
        Width of a side-band tag carried unchanged from ``i_tag`` to ``o_tag`` alongside the
        operands (0 for none: the tag ports are then absent).

    Members
    -------
    en : In(1)
        Pipeline advance. While ``en`` is high every stage moves one step on each rising edge
        and the operands on the ``i_*`` ports are taken (if ``i_valid``). While ``en`` is low
        every stage, including the outputs, holds its contents and the inputs are ignored. A
        result on the ``o_*`` ports is consumed by the rising edge at which ``en`` is high.
    i_valid : In(1)
        The operands are valid.
    i_op : In(4)
        The operation, an :class:`innet.gen.ops.Op` code.
    i_dtype : In(2)
        The data type, an :class:`innet.gen.ops.DType` code.
    i_a, i_b : In(32)
        The operand bit patterns; ``a`` is the one from the lower port.
    i_tag : In(tag_width)
        Side-band data that leaves with the result (only when ``tag_width > 0``).
    o_valid : Out(1)
        A result is present. ``i_valid`` delayed by :data:`LATENCY` enabled cycles; reset to 0.
    o_result : Out(32)
        ``combine(op, dtype, a, b)``; 0 when the pair is unsupported. Like the other ``o_*``
        data ports, meaningful only while ``o_valid`` is high.
    o_unsupported : Out(1)
        The operation is not defined on the data type (a bitwise operation on ``fp32``, an
        unknown code, or ``mul`` when the unit is built without a multiplier).
    o_tag : Out(tag_width)
        The tag that entered with the operands (only when ``tag_width > 0``).

    Raises
    ------
    TypeError
        If ``mul`` is not a bool or ``tag_width`` not an integer.
    ValueError
        If ``tag_width`` is negative.
    """

    def __init__(self, *, mul: bool = True, tag_width: int = 0) -> None:
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        if not isinstance(tag_width, int) or isinstance(tag_width, bool):
            raise TypeError(f"Tag width must be an integer, not {tag_width!r}")
        if tag_width < 0:
            raise ValueError(f"Tag width must be zero or positive, not {tag_width}")
        self._mul = mul
        self._tag_width = tag_width
        members = {
            "en": In(1), "i_valid": In(1), "i_op": In(4), "i_dtype": In(2),
            "i_a": In(32), "i_b": In(32),
            "o_valid": Out(1), "o_result": Out(32), "o_unsupported": Out(1),
        }
        if tag_width:
            members |= {"i_tag": In(tag_width), "o_tag": Out(tag_width)}
        super().__init__(members)

    @property
    def latency(self) -> int:
        """Enabled cycles from an accepted operand pair to its result (:data:`LATENCY`)."""
        return LATENCY

    @property
    def mul(self) -> bool:
        """Whether the unit implements ``mul``."""
        return self._mul

    @property
    def tag_width(self) -> int:
        """Width of the side-band tag (0: no tag ports)."""
        return self._tag_width

    def elaborate(self, platform):
        m = Module()
        advance: list = []

        def reg(value, name: str, *, keep: bool = False) -> Signal:
            # A pipeline register loaded from `value` on every enabled cycle. Only valid bits
            # (keep=True) are reset; data registers need no reset and cost less without one.
            value = Value.cast(value)
            register = Signal(value.shape(), name=name, reset_less=not keep)
            advance.append(register.eq(value))
            return register

        def through(stage: int, **values) -> dict:
            # Registers that load the given values (`valid` is the one with a reset).
            return {key: reg(value, f"s{stage}_{key}", keep=key == "valid")
                    for key, value in values.items()}

        def carry(stage: int, previous: dict, *keys: str) -> dict:
            # Registers that pass values of the previous stage on unchanged.
            return through(stage, **{key: previous[key] for key in keys if key in previous})

        mul = self._mul
        op, dtype, a, b = self.i_op, self.i_dtype, self.i_a, self.i_b

        # ---- Stage 1: decode, classify, compare, integer sum, operand swap ----------------
        is_fp = dtype == DType.FP32
        is_int = (dtype == DType.INT32) | (dtype == DType.UINT32)
        op_mul = (op == Op.MUL) if mul else Const(0)
        supported = Mux(is_fp, (op == Op.ADD) | (op == Op.MIN) | (op == Op.MAX) | op_mul,
                        is_int & ((op <= Op.NOR) | op_mul))
        fa, fb = unpack(m, a, "a"), unpack(m, b, "b")

        # fp32 add orders the operands by magnitude (bits 30..0 compare like the magnitudes),
        # so that |x| >= |y| and the exponent difference d is never negative.
        a_big = Signal()
        m.d.comb += a_big.eq(a[:31] >= b[:31])
        # ea + eb - 127 = (ea + eb + 1) - 128 in ten bits: one adder (the +1 enters as a low
        # bit), then -128 only decrements bits 9..7, which plain logic does.
        biased = Signal(10)
        m.d.comb += biased.eq((Cat(Const(1, 1), fa.exponent) + Cat(Const(1, 1), fb.exponent))[1:])
        exp_product = Cat(biased[:7], ~biased[7], ~(biased[8] ^ biased[7]),
                          biased[9] ^ ~(biased[8] | biased[7]))
        # The alignment's sticky bit: the bits of y27 = y << 3 that a right shift by d moves
        # out are not all zero when y is not zero and its trailing zeros are fewer than d.
        tz_a, tz_b = (trailing_zeros(m, Cat(Const(0, 3), f.significand), name=f"{n}_tzc")
                      for f, n in ((fa, "a"), (fb, "b")))
        s1 = through(
            1,
            valid=self.i_valid,
            op=op,
            is_fp=is_fp,
            supported=supported,
            a=a,
            b=b,
            signed=dtype == DType.INT32,
            int_sum=(a + b)[:32],
            any_nan=fa.nan | fb.nan,
            # Special results of fp32 add and mul: NaN (a NaN operand, inf - inf, 0 * inf) and
            # infinity. Zero products need no special case: the datapath packs them as +-0.
            nan=fa.nan | fb.nan | Mux(op_mul, (fa.inf & fb.zero) | (fa.zero & fb.inf),
                                      fa.inf & fb.inf & (fa.sign ^ fb.sign)),
            inf=fa.inf | fb.inf,
            inf_sign=Mux(op_mul, fa.sign ^ fb.sign, Mux(fa.inf, fa.sign, fb.sign)),
            a_zero=fa.zero, b_zero=fb.zero,
            # The operands are put in order in stage 2, from the registered comparison: the
            # 31-bit compare then drives registers only, not the 24-bit swap muxes.
            a_sig=fa.significand,
            b_sig=fb.significand,
            a_big=a_big,
            a_tz=tz_a,
            b_tz=tz_b,
            # |ea - eb|: the larger exponent belongs to the larger magnitude (equal exponents
            # give 0 either way), so the alignment distance needs only the 8-bit compare.
            d=Mux(fa.exponent >= fb.exponent, fa.exponent - fb.exponent,
                  fb.exponent - fa.exponent)[:8],
            eff_sub=fa.sign ^ fb.sign,
            same_magnitude=a[:31] == b[:31],
            # exp1 + 1: the biased exponent of bit 47 of the 48-bit significand of stage 3.
            exp_product=exp_product,
            a_exp=fa.exponent,
            b_exp=fb.exponent,
            is_mul=op_mul,
        )
        if mul:
            # Multiplier operands: the significands for fp32, the words for integers.
            s1 |= through(1, ma=Mux(is_fp, fa.significand, a), mb=Mux(is_fp, fb.significand, b))
        if self._tag_width:
            s1["tag"] = reg(self.i_tag, "s1_tag")

        # ---- Stage 2: results without the fp datapath; alignment; partial products ---------
        a1, b1, op1 = s1["a"], s1["b"], s1["op"]
        a_big1, is_mul1 = s1["a_big"], s1["is_mul"]
        s1["x"] = Mux(a_big1, s1["a_sig"], s1["b_sig"])
        s1["y"] = Mux(a_big1, s1["b_sig"], s1["a_sig"])
        s1["exp1"] = Mux(is_mul1, s1["exp_product"],
                         Mux(a_big1, s1["a_exp"], s1["b_exp"])).as_signed()
        s1["sign"] = Mux(is_mul1, a1[31] ^ b1[31], Mux(a_big1, a1[31], b1[31]))
        any_nan, nan, inf = s1["any_nan"], s1["nan"], s1["inf"]
        a_sign, b_sign = a1[31], b1[31]
        special = nan | inf
        special_bits = Mux(nan, CANONICAL_NAN, Cat(Const(INFINITY, 31), s1["inf_sign"]))
        # min/max: order from the magnitude comparison of stage 1 and the sign bits. Integers
        # of different signs: the negative one is less (signed) or greater (unsigned); fp32 of
        # different signs: the negative one is less (-0 < +0); both negative: the larger
        # magnitude is less.
        mag_less = ~s1["a_big"]
        mag_greater = s1["a_big"] & ~s1["same_magnitude"]
        a_less = Signal()
        m.d.comb += a_less.eq(Mux(
            a_sign ^ b_sign,
            Mux(s1["is_fp"] | s1["signed"], a_sign, b_sign),
            Mux(s1["is_fp"] & a_sign, mag_greater, mag_less)))
        bypass = Signal(32)
        with m.Switch(op1):
            with m.Case(Op.ADD):
                m.d.comb += bypass.eq(Mux(s1["is_fp"], special_bits, s1["int_sum"]))
            with m.Case(Op.MIN):
                m.d.comb += bypass.eq(Mux(s1["is_fp"] & any_nan, CANONICAL_NAN,
                                          Mux(a_less, a1, b1)))
            with m.Case(Op.MAX):
                m.d.comb += bypass.eq(Mux(s1["is_fp"] & any_nan, CANONICAL_NAN,
                                          Mux(a_less, b1, a1)))
            with m.Case(Op.AND):
                m.d.comb += bypass.eq(a1 & b1)
            with m.Case(Op.OR):
                m.d.comb += bypass.eq(a1 | b1)
            with m.Case(Op.XOR):
                m.d.comb += bypass.eq(a1 ^ b1)
            with m.Case(Op.NOR):
                m.d.comb += bypass.eq(~(a1 | b1))
            with m.Case(Op.MUL):
                m.d.comb += bypass.eq(special_bits)  # integers: replaced by the product later
        fp_arith = s1["is_fp"] & ((op1 == Op.ADD) | s1["is_mul"])

        # Align y to x: shift right by d; the bits shifted out of y leave a sticky bit.
        y27 = Cat(Const(0, 3), s1["y"])  # significand, guard, round, sticky
        # Shift by the low five bits of d; from 32 on, every bit of y is sticky.
        d_low, d_big = s1["d"][:5], s1["d"][5:].any()
        y_shifted = Mux(d_big, 0, (y27 >> d_low)[:27])
        y_sticky = Mux(s1["a_big"], ~s1["b_zero"] & (d_big | (s1["b_tz"] < d_low)),
                       ~s1["a_zero"] & (d_big | (s1["a_tz"] < d_low)))
        exp1 = s1["exp1"]
        use_dp = s1["supported"] & fp_arith & ~special
        # x + (-x) is +0 in round to nearest (-0 + -0 stays -0 through the datapath).
        cancel = use_dp & ~s1["is_mul"] & s1["eff_sub"] & s1["same_magnitude"]
        s2 = carry(2, s1, "valid", "tag", "eff_sub", "exp1", "sign", "is_mul")
        s2 |= through(
            2,
            unsupported=~s1["supported"],
            bypass=Mux(s1["supported"] & ~cancel, bypass, 0),
            use_dp=use_dp & ~cancel,
            int_mul=s1["supported"] & ~s1["is_fp"] & s1["is_mul"],
            # Subtraction as x - y = ~(~x + y): x is complemented here and the sum in stage 3,
            # so that the adder has neither a carry in nor constant low bits.
            x=Cat(Const(0, 3), s1["x"], Const(0, 1)) ^ s1["eff_sub"].replicate(28),
            y=Cat(y_shifted[0] | y_sticky, y_shifted[1:]),
        )
        if mul:
            al, ah, bl, bh = s1["ma"][:16], s1["ma"][16:], s1["mb"][:16], s1["mb"][16:]
            # Integers need the low word only; fp32 significands have at most 8 high bits.
            s2 |= through(2, ll=al * bl, lh=(al * bh)[:24], hl=(ah * bl)[:24],
                          hh=ah[:8] * bh[:8])
            # Products below the smallest exponent shift right instead (subnormal or zero).
            right = exp1 < 0
            distance = (-exp1)[:10]
            s2 |= through(2, right=right,
                          rshift=Mux(right, Mux(distance[6:].any(), 63, distance[:6]), 0))

        # ---- Stage 3: add or subtract the significands, sum the partial products -----------
        total = (s2["x"] + s2["y"])[:28] ^ s2["eff_sub"].replicate(28)
        significand = Cat(Const(0, 20), total)
        bypass3 = s2["bypass"]
        if mul:
            product = carry_save_add(Cat(s2["ll"], s2["hh"]), s2["lh"] << 16, s2["hl"] << 16, 48)
            significand = Mux(s2["is_mul"], product, significand)
            bypass3 = Mux(s2["int_mul"], product[:32], bypass3)
        # Normalisation may shift left only as far as the smallest exponent allows: a marker bit
        # at position 47 - exp1 stops the leading-zero count there (subnormal results).
        marker = (Const(1 << 47, 48) >> s2["exp1"].as_unsigned())[:48]
        s3 = carry(3, s2, "valid", "tag", "unsupported", "use_dp", "sign", "right",
                   "rshift")
        s3 |= through(3, bypass=bypass3, significand=significand, lzc_in=significand | marker,
                      exp0=(s2["exp1"] + 1)[:10].as_signed())
        if mul:
            s3 |= through(3, right_mask=low_mask(s2["rshift"], 48))

        # ---- Stage 4: leading-zero count; right shift of tiny products ---------------------
        # Sums occupy bits 47..20 and have at most 27 leading zeros (a zero sum is the cancel
        # case above), so without products the count looks at those 28 bits only.
        lz = leading_zeros(m, s3["lzc_in"] if mul else s3["lzc_in"][20:], name="s4_lzc")
        s4 = carry(4, s3, "valid", "tag", "unsupported", "use_dp", "bypass", "exp0", "sign",
                   "significand", "right")
        s4 |= through(4, lz=lz[:6])
        if mul:
            sig = s3["significand"]
            s4 |= through(4, shifted_right=(sig >> s3["rshift"])[:48],
                          sticky_right=(sig & s3["right_mask"]).any())

        # ---- Stage 5: normalising shift ----------------------------------------------------
        normal = (s4["significand"] << s4["lz"])[:48]
        exponent = (s4["exp0"] - s4["lz"])[:10]
        if mul:
            normal = Mux(s4["right"], s4["shifted_right"], normal)
            exponent = Mux(s4["right"], 1, exponent)
        s5 = carry(5, s4, "valid", "tag", "unsupported", "use_dp", "bypass", "sign",
                   "sticky_right")
        s5 |= through(5, normal=normal, exponent=exponent[:8], exp_big=exponent >= 0xFF)

        # ---- Stage 6: round to nearest, ties to even ---------------------------------------
        normal = s5["normal"]
        hidden = normal[47]
        sticky = normal[:23].any()
        if mul:
            sticky |= s5["sticky_right"]
        s6 = carry(6, s5, "valid", "tag", "unsupported", "use_dp", "bypass", "sign")
        s6 |= through(
            6,
            # The exponent field is 0 for a subnormal result (no hidden bit; exponent 1).
            packed=Cat(normal[24:47], Mux(hidden, s5["exponent"], 0)),
            round_up=normal[23] & (sticky | normal[24]),
            overflow=hidden & s5["exp_big"],
        )

        # ---- Stage 7: increment, overflow to infinity, select the result ------------------
        # A carry out of the fraction increments the exponent field: the largest subnormal
        # rounds up to the smallest normal number, 1.11...1 * 2**e to 2**(e + 1), and the
        # largest finite number to infinity (exponent 255, fraction 0).
        packed = (s6["packed"] + s6["round_up"])[:31]
        fp_result = Cat(Mux(s6["overflow"], INFINITY, packed), s6["sign"])
        s7 = carry(7, s6, "valid", "tag", "unsupported")
        s7 |= through(7, result=Mux(s6["use_dp"], fp_result, s6["bypass"]))

        m.d.comb += [self.o_valid.eq(s7["valid"]), self.o_result.eq(s7["result"]),
                     self.o_unsupported.eq(s7["unsupported"])]
        if self._tag_width:
            m.d.comb += self.o_tag.eq(s7["tag"])
        with m.If(self.en):
            m.d.sync += advance
        return m
