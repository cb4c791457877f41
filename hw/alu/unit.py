"""The pipelined two-operand reduction unit: the endpoints' step engines and the collective
engine's tree of multipliers reduce with it."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.ops import DType, Op
from innet.hw.alu.fp32 import CANONICAL_NAN, INFINITY, unpack
from innet.hw.alu.logic import carry_save_add, leading_zeros, low_mask
from innet.hw.arbiter import any_of

__all__ = ["ALU", "LATENCY", "MAX_TAG_WIDTH"]

#: Cycles from an accepted operand pair to its result, for every operation.
LATENCY = 9

#: Widest tag the reduction units carry beside their operands (a collective id and an element
#: index take at most 40 bits).
MAX_TAG_WIDTH = 64


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
    latency, :data:`LATENCY` = 9 enabled cycles, so a tree of units stays aligned: operands
    presented in cycle ``t`` (with ``en`` high) are on ``o_*`` in cycle ``t + 9`` if ``en``
    stays high (each low cycle in between adds one). Stages, each ending in a register, each at
    most about three LUT levels or one carry chain deep, so that the unit runs at 160 MHz on an
    ECP5: (1) decode, partial operand classes, magnitude compare, integer sum, truth table of
    the bitwise operation; (2) operand classes, the fp32 addends put in order, the alignment
    distance, which 4-bit groups of the smaller addend are not zero, the min/max choice, the
    integer or bitwise word; (3) the result that needs no floating-point datapath (integers,
    min/max, NaN and infinity) from one-hot selects, the alignment shift by a multiple of 4,
    the sticky bit of the groups shifted out; (4) the rest of the shift, the marker that bounds
    normalisation, the multiplier's four partial products; (5) significand add/subtract (one
    carry chain, the subtrahend's complement and carry in entering as addends), or the product
    sum; (6) leading-zero count (bounded so that results below the normal range come out
    subnormal), or the right shift of a product below it; (7) normalising shift by a multiple
    of 4; (8) the rest of the shift, round to nearest, ties to even; (9) increment, overflow to
    infinity, result select. Data registers have no reset; only the valid bits do.

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
        If ``tag_width`` is negative or above :data:`MAX_TAG_WIDTH`.
    """

    def __init__(self, *, mul: bool = True, tag_width: int = 0) -> None:
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        self._tag_width = check_int("Tag width", tag_width, low=0, high=MAX_TAG_WIDTH)
        self._mul = mul
        members = {
            "en": In(1), "i_valid": In(1), "i_op": In(4), "i_dtype": In(2),
            "i_a": In(32), "i_b": In(32),
            "o_valid": Out(1), "o_result": Out(32), "o_unsupported": Out(1),
        }
        if self._tag_width:
            members |= {"i_tag": In(self._tag_width), "o_tag": Out(self._tag_width)}
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

        # ---- Stage 1: decode, partial classes, magnitude compare, integer sum --------------
        is_fp = dtype == DType.FP32
        is_int = (dtype == DType.INT32) | (dtype == DType.UINT32)
        op_mul = (op == Op.MUL) if mul else Const(0)
        supported = Mux(is_fp, (op == Op.ADD) | (op == Op.MIN) | (op == Op.MAX) | op_mul,
                        is_int & ((op <= Op.NOR) | op_mul))
        fa, fb = unpack(m, a, "a"), unpack(m, b, "b")
        # ea + eb - 127 = (ea + eb + 1) - 128 in ten bits: one adder (the +1 enters as a low
        # bit), then -128 only decrements bits 9..7, which plain logic does.
        biased = Signal(10)
        m.d.comb += biased.eq((Cat(Const(1, 1), fa.exponent) + Cat(Const(1, 1), fb.exponent))[1:])
        exp_product = Cat(biased[:7], ~biased[7], ~(biased[8] ^ biased[7]),
                          biased[9] ^ ~(biased[8] | biased[7]))
        # The bitwise operations as a truth table over (a bit, b bit) = bit a * 2 + b; 0 for
        # any other operation.
        truth = Signal(4)
        with m.Switch(op):
            for code, table in ((Op.AND, 0b1000), (Op.OR, 0b1110), (Op.XOR, 0b0110),
                                (Op.NOR, 0b0001)):
                with m.Case(code):
                    m.d.comb += truth.eq(table)
        # The magnitudes' equality in 8-bit parts, combined in stage 2.
        same = [a[at:min(at + 8, 31)] == b[at:min(at + 8, 31)] for at in range(0, 31, 8)]
        s1 = through(
            1,
            valid=self.i_valid,
            is_add=op == Op.ADD,
            is_min=op == Op.MIN,
            is_max=op == Op.MAX,
            is_fp=is_fp,
            supported=supported,
            a=a,
            b=b,
            signed=dtype == DType.INT32,
            int_sum=(a + b)[:32],
            truth=truth,
            # The operand classes come in stage 2 from these parts (fp32.unpack's terms).
            a_ones=a[23:31].all(), b_ones=b[23:31].all(),
            a_frac_zero=a[:23] == 0, b_frac_zero=b[:23] == 0,
            a_sig=fa.significand,
            b_sig=fb.significand,
            # fp32 add orders the operands by magnitude (bits 30..0 compare like the
            # magnitudes), so that |x| >= |y| and the exponent difference is never negative.
            a_big=a[:31] >= b[:31],
            same_parts=Cat(*same),
            eff_sub=fa.sign ^ fb.sign,
            # exp1 + 1: the biased exponent of bit 47 of the 48-bit significand of stage 5.
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

        # ---- Stage 2: classes, operands in order, distance, group flags, min/max ----------
        a1, b1 = s1["a"], s1["b"]
        a_big1, is_mul1 = s1["a_big"], s1["is_mul"]
        a_sign, b_sign = a1[31], b1[31]
        a_zero = ~s1["a_sig"][23] & s1["a_frac_zero"]
        b_zero = ~s1["b_sig"][23] & s1["b_frac_zero"]
        a_inf, b_inf = s1["a_ones"] & s1["a_frac_zero"], s1["b_ones"] & s1["b_frac_zero"]
        a_nan, b_nan = s1["a_ones"] & ~s1["a_frac_zero"], s1["b_ones"] & ~s1["b_frac_zero"]
        # min/max: order from the magnitude comparison of stage 1 and the sign bits. Integers
        # of different signs: the negative one is less (signed) or greater (unsigned); fp32 of
        # different signs: the negative one is less (-0 < +0); both negative: the larger
        # magnitude is less.
        same_magnitude = s1["same_parts"].all()
        mag_less = ~a_big1
        mag_greater = a_big1 & ~same_magnitude
        a_less = Signal()
        m.d.comb += a_less.eq(Mux(
            a_sign ^ b_sign,
            Mux(s1["is_fp"] | s1["signed"], a_sign, b_sign),
            Mux(s1["is_fp"] & a_sign, mag_greater, mag_less)))
        # Which 4-bit groups of y << 3 (significand, guard, round, sticky) are not zero: the
        # alignment's sticky bit in stage 3.
        groups = {n: Cat(*(Cat(Const(0, 3), s1[f"{n}_sig"])[at:at + 4].any()
                           for at in range(0, 27, 4))) for n in ("a", "b")}
        # Stage 3's result without the fp datapath: one of a, b, the special value and the
        # word, chosen by one-hot selects from here.
        is_minmax = s1["is_min"] | s1["is_max"]
        fp_arith = s1["is_fp"] & (s1["is_add"] | is_mul1)
        special_pick = ~is_minmax & (fp_arith | is_mul1)  # integer mul: the product, later
        pick_a = is_minmax & (a_less ^ s1["is_max"])
        s2 = carry(2, s1, "valid", "tag", "is_fp", "supported", "eff_sub", "a_big", "a", "b",
                   "is_mul", "ma", "mb")
        s2 |= through(
            2,
            any_nan=a_nan | b_nan,
            # Special results of fp32 add and mul: NaN (a NaN operand, inf - inf, 0 * inf) and
            # infinity. Zero products need no special case: the datapath packs them as +-0.
            nan=a_nan | b_nan | Mux(is_mul1, (a_inf & b_zero) | (a_zero & b_inf),
                                    a_inf & b_inf & s1["eff_sub"]),
            inf=a_inf | b_inf,
            inf_sign=Mux(is_mul1, a_sign ^ b_sign, Mux(a_inf, a_sign, b_sign)),
            y_groups=Mux(a_big1, groups["b"], groups["a"]),
            x=Mux(a_big1, s1["a_sig"], s1["b_sig"]),
            y=Mux(a_big1, s1["b_sig"], s1["a_sig"]),
            # |ea - eb|: the larger exponent belongs to the larger magnitude (equal exponents
            # give 0 either way).
            d=Mux(a_big1, s1["a_exp"] - s1["b_exp"], s1["b_exp"] - s1["a_exp"])[:8],
            exp1=Mux(is_mul1, s1["exp_product"], Mux(a_big1, s1["a_exp"], s1["b_exp"])
                     ).as_signed(),
            sign=Mux(is_mul1, a_sign ^ b_sign, Mux(a_big1, a_sign, b_sign)),
            same_magnitude=same_magnitude,
            fp_arith=fp_arith,
            nan_pick=is_minmax & s1["is_fp"],  # a NaN operand: the canonical NaN
            pick_a=pick_a,
            pick_b=is_minmax & ~pick_a,
            pick_special=special_pick,
            pick_word=~is_minmax & ~special_pick,
            # The result of an integer add or a bitwise operation.
            word=Mux(s1["is_add"], s1["int_sum"],
                     Cat(s1["truth"].bit_select(Cat(b1[i], a1[i]), 1) for i in range(32))),
        )

        # ---- Stage 3: results without the fp datapath; coarse alignment; sticky bit --------
        special = s2["nan"] | s2["inf"]
        special_bits = Mux(s2["nan"], CANONICAL_NAN, Cat(Const(INFINITY, 31), s2["inf_sign"]))
        fp_arith = s2["fp_arith"]
        bypass = (s2["pick_a"].replicate(32) & s2["a"] | s2["pick_b"].replicate(32) & s2["b"]
                  | s2["pick_special"].replicate(32) & special_bits
                  | s2["pick_word"].replicate(32) & s2["word"])
        use_dp = s2["supported"] & fp_arith & ~special
        # x + (-x) is +0 in round to nearest (-0 + -0 stays -0 through the datapath).
        cancel = use_dp & ~s2["is_mul"] & s2["eff_sub"] & s2["same_magnitude"]
        # Align y to x: shift right by d, here by 4k, its multiple of 4, in stage 4 by the rest;
        # from 32 on every bit of y is sticky. The bits shifted out leave a sticky bit: here
        # those of the k lowest 4-bit groups (any of y's, from 32 on), in stage 4 the rest.
        y27 = Cat(Const(0, 3), s2["y"])  # significand, guard, round, sticky
        d_low, d_big = s2["d"][:5], s2["d"][5:].any()
        k, groups = d_low[2:], s2["y_groups"]
        exp1 = s2["exp1"]
        s3 = carry(3, s2, "valid", "tag", "eff_sub", "exp1", "sign", "is_mul", "ma", "mb")
        s3 |= through(
            3,
            unsupported=~s2["supported"],
            bypass=bypass,
            keep_bypass=s2["supported"] & ~cancel,
            nan_bypass=s2["nan_pick"] & s2["any_nan"],
            use_dp=use_dp & ~cancel,
            int_mul=s2["supported"] & ~s2["is_fp"] & s2["is_mul"],
            x=Cat(Const(0, 3), s2["x"], Const(0, 1)),
            y_coarse=Mux(d_big, 0, (y27 >> Cat(Const(0, 2), d_low[2:]))[:27]),
            d_fine=d_low[:2],
            y_sticky=Mux(d_big, groups.any(), any_of(groups[j] & (k > j) for j in range(7))),
        )
        if mul:
            # Products below the smallest exponent shift right instead (subnormal or zero).
            distance = (-exp1)[:10]
            s3 |= through(3, right=exp1 < 0,
                          rshift=Mux(exp1 < 0, Mux(distance[6:].any(), 63, distance[:6]), 0))

        # ---- Stage 4: fine alignment; the subnormal marker; partial products ---------------
        y_fine = (s3["y_coarse"] >> s3["d_fine"])[:27]
        fine_out = (s3["y_coarse"][:3] & low_mask(s3["d_fine"], 3)).any()
        s4 = carry(4, s3, "valid", "tag", "unsupported", "use_dp", "int_mul", "sign", "eff_sub",
                   "is_mul", "x", "right", "rshift")
        # Normalisation may shift left only as far as the smallest exponent allows: a marker bit
        # at position 47 - exp1 stops the leading-zero count there (subnormal results).
        s4 |= through(
            4,
            bypass=Mux(s3["keep_bypass"],
                       Mux(s3["nan_bypass"], CANONICAL_NAN, s3["bypass"]), 0),
            # Subtraction as x - y = x + ~y + 1: y is complemented here, the 1 is the carry in
            # of stage 5's adder.
            y=Cat(y_fine[0] | s3["y_sticky"] | fine_out, y_fine[1:], Const(0, 1))
              ^ s3["eff_sub"].replicate(28),
            marker=(Const(1 << 47, 48) >> s3["exp1"].as_unsigned())[:48],
            exp0=(s3["exp1"] + 1)[:10].as_signed(),
        )
        if mul:
            al, ah, bl, bh = s3["ma"][:16], s3["ma"][16:], s3["mb"][:16], s3["mb"][16:]
            # Integers need the low word only; fp32 significands have at most 8 high bits.
            s4 |= through(4, ll=al * bl, lh=(al * bh)[:24], hl=(ah * bl)[:24],
                          hh=ah[:8] * bh[:8], right_mask=low_mask(s3["rshift"], 48))

        # ---- Stage 5: add or subtract the significands, sum the partial products -----------
        # The carry in enters as a low bit of both addends: 1 + eff_sub carries eff_sub.
        total = (Cat(Const(1, 1), s4["x"]) + Cat(s4["eff_sub"], s4["y"]))[1:29]
        significand = Cat(Const(0, 20), total)
        bypass5 = s4["bypass"]
        if mul:
            product = carry_save_add(Cat(s4["ll"], s4["hh"]), s4["lh"] << 16, s4["hl"] << 16, 48)
            significand = Mux(s4["is_mul"], product, significand)
            bypass5 = Mux(s4["int_mul"], product[:32], bypass5)
        s5 = carry(5, s4, "valid", "tag", "unsupported", "use_dp", "sign", "exp0", "right",
                   "rshift", "right_mask")
        s5 |= through(5, bypass=bypass5, significand=significand,
                      lzc_in=significand | s4["marker"])

        # ---- Stage 6: leading-zero count; right shift of tiny products ---------------------
        # Sums occupy bits 47..20 and have at most 27 leading zeros (a zero sum is the cancel
        # case above), so without products the count looks at those 28 bits only.
        lz = leading_zeros(m, s5["lzc_in"] if mul else s5["lzc_in"][20:], name="s6_lzc")
        s6 = carry(6, s5, "valid", "tag", "unsupported", "use_dp", "bypass", "exp0", "sign",
                   "significand", "right")
        s6 |= through(6, lz=lz[:6])
        if mul:
            sig = s5["significand"]
            s6 |= through(6, shifted_right=(sig >> s5["rshift"])[:48],
                          sticky_right=(sig & s5["right_mask"]).any())

        # ---- Stage 7: normalising shift by the multiple of 4 of the count ------------------
        if mul:
            width, lz, significand = 48, s6["lz"], s6["significand"]
        else:
            # Sums occupy bits 47..20: 28 bits shift by at most 28 places.
            width, lz, significand = 28, s6["lz"][:5], s6["significand"][20:]
        coarse = (significand << Cat(Const(0, 2), lz[2:]))[:width]
        fine = lz[:2]
        exponent = (s6["exp0"] - s6["lz"])[:10]
        if mul:
            coarse = Mux(s6["right"], s6["shifted_right"], coarse)
            fine = Mux(s6["right"], 0, fine)
            exponent = Mux(s6["right"], 1, exponent)
        s7 = carry(7, s6, "valid", "tag", "unsupported", "use_dp", "bypass", "sign",
                   "sticky_right")
        s7 |= through(7, coarse=coarse, fine=fine, exponent=exponent)

        # ---- Stage 8: normalising shift by the rest; round to nearest, ties to even --------
        normal = (s7["coarse"] << s7["fine"])[:width]
        if not mul:
            normal = Cat(Const(0, 20), normal)
        hidden = normal[47]
        sticky = normal[:23].any()
        if mul:
            sticky |= s7["sticky_right"]
        s8 = carry(8, s7, "valid", "tag", "unsupported", "use_dp", "bypass", "sign")
        s8 |= through(
            8,
            # The exponent field is 0 for a subnormal result (no hidden bit; exponent 1).
            packed=Cat(normal[24:47], Mux(hidden, s7["exponent"][:8], 0)),
            round_up=normal[23] & (sticky | normal[24]),
            overflow=hidden & (s7["exponent"] >= 0xFF),
        )

        # ---- Stage 9: increment, overflow to infinity, select the result ------------------
        # A carry out of the fraction increments the exponent field: the largest subnormal
        # rounds up to the smallest normal number, 1.11...1 * 2**e to 2**(e + 1), and the
        # largest finite number to infinity (exponent 255, fraction 0).
        packed = (s8["packed"] + s8["round_up"])[:31]
        fp_result = Cat(Mux(s8["overflow"], INFINITY, packed), s8["sign"])
        s9 = carry(9, s8, "valid", "tag", "unsupported")
        s9 |= through(9, result=Mux(s8["use_dp"], fp_result, s8["bypass"]))

        m.d.comb += [self.o_valid.eq(s9["valid"]), self.o_result.eq(s9["result"]),
                     self.o_unsupported.eq(s9["unsupported"])]
        if self._tag_width:
            m.d.comb += self.o_tag.eq(s9["tag"])
        with m.If(self.en):
            m.d.sync += advance
        return m
