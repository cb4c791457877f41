"""The pipelined multi-operand reduction unit of the collective engine: one alignment, one exact
sum and one rounding for an fp32 add of every contributing port.

PIUMA, "Collective Engine": "a pipelined tree of units to compute high radix reductions at line
rate with logarithmic latency", "reductions are computed in a fixed port order [...] This
ensures repeatability of results". Here the fp32 add of ``k`` operands does not depend on any
order at all (:func:`innet.gen.ops.sum_fp32`): the operands are aligned once to the largest
exponent, summed exactly in a carry-propagate adder tree and rounded once, so no intermediate
sum is rounded and none overflows. The other operations are associative and commutative, or
(``nor``) one gate over every operand, so the unit takes its operands where they are (a leaf per
port, with a mask of those that hold one) and nothing is gathered in front of it; for two
operands or more its results are those of :func:`innet.sim.golden.reduce_switch`.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.ops import SUM_GUARD_BITS, DType, Op
from innet.gen.regmap.switch import MAX_RADIX
from innet.hw.alu.fp32 import CANONICAL_NAN, INFINITY, unpack
from innet.hw.alu.logic import leading_zeros, low_mask
from innet.hw.alu.unit import MAX_TAG_WIDTH
from innet.hw.arbiter import any_of

__all__ = ["MultiOperandUnit", "multi_latency"]

#: Cycles of the unit that do not depend on its number of leaves: decode, alignment distance,
#: two alignment shifts, absolute value, leading-zero count, two normalising shifts and the
#: rounding.
_FIXED_STAGES = 9
#: Bits of an aligned significand: 24 and the guard bits below the largest exponent's last place.
_LANE = 24 + SUM_GUARD_BITS
#: The lane's 8-bit groups (the alignment's coarse shift moves whole groups).
_GROUPS = (_LANE + 7) // 8


def _levels(count: int) -> int:
    return (count - 1).bit_length()


def multi_latency(leaves: int) -> int:
    """Cycles from a reduction entering a :class:`MultiOperandUnit` of ``leaves`` leaves to its
    result: ``9 + ceil(log2 leaves) + ceil(log2(leaves + 1))`` (15, 17 and 19 for 5, 9 and 17
    leaves), the same for every operation and operand count.

    Raises
    ------
    TypeError, ValueError
        If ``leaves`` is not an integer of at least 2 (at most a port per port of a switch of
        :data:`~innet.gen.regmap.switch.MAX_RADIX`, and the local port).
    """
    check_int("Leaves", leaves, low=2, high=MAX_RADIX + 1)
    return _FIXED_STAGES + _levels(leaves) + _levels(leaves + 1)


class MultiOperandUnit(wiring.Component):
    """Reduces the operands on the leaves of its mask with one operation, pipelined.

    Every cycle the unit takes one reduction and :func:`multi_latency` cycles later hands out
    its result; it never stalls. Results, for the ``k`` operands on the leaves whose bit of
    ``i_mask`` is set (at least one), wherever they are:

    - ``fp32 add``: :func:`innet.gen.ops.sum_fp32`, bit for bit. The significands are aligned
      to the largest exponent and cut :data:`~innet.gen.ops.SUM_GUARD_BITS` bits below its last
      place (the bits cut off leaving a sticky bit in the lowest place kept), summed in
      ``24 + 16 + ceil(log2(leaves + 1)) + 1`` bits (the one's complements of the negative ones
      and their count), and the magnitude of the sum is normalised once (a leading-zero count
      bounded so that small sums come out subnormal) and rounded to nearest, ties to even.
    - ``int32``/``uint32 add``: the sum modulo 2**32, from the same adder tree.
    - ``min``, ``max``, ``and``, ``or``, ``xor``: a tree of two-operand cells over the leaves,
      two cycles per level (compare, then choose), beside the sum; a cell with one operand
      passes it on, and the order of the leaves does not change the result. ``min``/``max``
      compare order keys (fp32 as IEEE 754-2019 ``minimum``/``maximum``: -0 < +0, NaN if any
      operand is NaN). A cell chooses one of four functions of its two keys (the left, the
      right, their AND, their XOR), one 4-input LUT per bit: ``or`` is the complement of the
      AND of the complemented words.
    - ``nor``: the complement of the OR of the operands (the tree's AND of the complemented
      words).
    - ``mul`` and ``fp32`` bitwise operations are unsupported: ``o_unsupported``, result 0.

    Stages of the sum (``L = ceil(log2 leaves)``, ``A = ceil(log2(leaves + 1))``): (1) decode:
    effective exponents (0 for an integer, a non-finite or a masked-out operand), significands
    moved up by the guard bits (or the integer words), the words kept for the order keys;
    (2 .. L + 1) the largest exponent, one tree level per cycle, beside the order keys and the
    operand classes (stage 2), their OR (stage 3) and the count of negative operands;
    (L + 2) every operand's alignment distance and the marker that will bound normalisation;
    (L + 3) the alignment by a multiple of 8; (L + 4) the rest of it, and the negative ones
    complemented; (L + 5 .. L + A + 4) the adder tree, one level per cycle; then the
    magnitude, the leading-zero count, the normalising shift by a multiple of 8, the rest of
    it with the round decision, and the increment with the result select. The min/max/bitwise
    tree (stages 3 .. 2L + 2) waits for it in registers. Data registers have no reset; only
    the valid bits do.

    Parameters
    ----------
    leaves : int
        Operand positions, at least 2 (the engine uses ``radix + 1``).
    tag_width : int
        Bits of a side-band tag that leaves with the result (0 for none).

    Members
    -------
    i_valid : In(1)
        A reduction enters this cycle.
    i_mask : In(leaves)
        The leaves that hold an operand (at least one); the other leaves are ignored.
    i_op, i_dtype : In(4), In(2)
        :class:`innet.gen.ops.Op` and :class:`innet.gen.ops.DType` codes.
    i_leaf : In(32).array(leaves)
        Operand bit patterns.
    i_tag : In(tag_width)
        Only when ``tag_width > 0``.
    o_valid : Out(1)
        ``i_valid`` :func:`multi_latency` cycles later; reset to 0.
    o_result : Out(32), o_unsupported : Out(1), o_tag : Out(tag_width)
        The reduction's result (0 when unsupported), whether its operation is unsupported on
        its data type, and its tag; meaningful while ``o_valid`` is high.

    Raises
    ------
    TypeError, ValueError
        If ``leaves`` or ``tag_width`` is not an integer in range.
    """

    def __init__(self, leaves: int, *, tag_width: int = 0) -> None:
        self._leaves = check_int("Leaves", leaves, low=2, high=MAX_RADIX + 1)
        self._tag_width = check_int("Tag width", tag_width, low=0, high=MAX_TAG_WIDTH)
        members = {
            "i_valid": In(1), "i_mask": In(leaves), "i_op": In(4), "i_dtype": In(2),
            "i_leaf": In(32).array(leaves),
            "o_valid": Out(1), "o_result": Out(32), "o_unsupported": Out(1),
        }
        if tag_width:
            members |= {"i_tag": In(tag_width), "o_tag": Out(tag_width)}
        super().__init__(members)

    @property
    def leaves(self) -> int:
        return self._leaves

    @property
    def tag_width(self) -> int:
        return self._tag_width

    @property
    def latency(self) -> int:
        """Cycles from a reduction's entry to its result (:func:`multi_latency`)."""
        return multi_latency(self._leaves)

    def elaborate(self, platform):
        m = Module()
        n = self._leaves
        levels, add_levels = _levels(n), _levels(n + 1)
        guard = SUM_GUARD_BITS
        sum_width = _LANE + add_levels + 1  # two's complement: |sum| < (n + 1) * 2**_LANE
        magnitude_width = sum_width - 1

        def reg(value, name: str, *, keep: bool = False) -> Signal:
            # A pipeline register; only valid bits (keep=True) have a reset.
            value = Value.cast(value)
            register = Signal(value.shape(), name=name, reset_less=not keep)
            m.d.sync += register.eq(value)
            return register

        def delay(value, cycles: int, name: str, *, keep: bool = False) -> Value:
            for s in range(cycles):
                value = reg(value, f"{name}_d{s}", keep=keep)
            return value

        # ---- Stage 1: decode ---------------------------------------------------------------
        op, dtype = self.i_op, self.i_dtype
        is_fp = dtype == DType.FP32
        is_min, is_max = op == Op.MIN, op == Op.MAX
        bitwise = (op == Op.AND) | (op == Op.OR) | (op == Op.XOR) | (op == Op.NOR)
        # The cells compute AND or XOR: or and nor are the AND of the complements (the keys
        # are the complemented words), complemented back for or at the end.
        inverted = (op == Op.OR) | (op == Op.NOR)
        is_int = (dtype == DType.INT32) | (dtype == DType.UINT32)
        arithmetic = (op == Op.ADD) | is_min | is_max
        supported = Mux(is_fp, arithmetic, is_int & (arithmetic | bitwise))
        exps, lanes, negs, words, flips, presents = ([] for _ in range(6))
        for i, leaf in enumerate(self.i_leaf):
            f = unpack(m, leaf, f"x{i}")
            present = self.i_mask[i]
            summed = present & is_fp & ~(f.inf | f.nan)
            exps.append(reg(Mux(summed, f.exponent, 0), f"s1_exp{i}"))
            lanes.append(reg(Mux(summed, Cat(Const(0, guard), f.significand),
                                 Mux(present & ~is_fp, leaf, 0)), f"s1_lane{i}"))
            negs.append(reg(summed & f.sign, f"s1_neg{i}"))
            words.append(reg(leaf, f"s1_word{i}"))
            # The order key flips every bit but the sign of a negative fp32 value (-0 < +0);
            # for or and nor it is the complemented word.
            flips.append(reg(is_fp & ~bitwise & f.sign | inverted, f"s1_flip{i}"))
            presents.append(present)
        s1 = {
            "valid": reg(self.i_valid, "s1_valid", keep=True),
            "present": reg(Cat(*presents), "s1_present"),
            "is_fp": reg(is_fp, "s1_is_fp"),
            "is_add": reg(op == Op.ADD, "s1_is_add"),
            "is_max": reg(is_max, "s1_is_max"),
            "bitwise": reg(bitwise, "s1_bitwise"),
            "is_or": reg(op == Op.OR, "s1_is_or"),
            "is_xor": reg(op == Op.XOR, "s1_is_xor"),
            "signed": reg(dtype == DType.INT32, "s1_signed"),
            "supported": reg(supported, "s1_supported"),
            # The order keys' sign bit is flipped for fp32 and int32 min/max (and or, nor).
            "flip_top": reg((is_fp | (dtype == DType.INT32)) & ~bitwise | inverted,
                            "s1_flip_top"),
        }
        if self._tag_width:
            s1["tag"] = reg(self.i_tag, "s1_tag")

        # ---- Stage 2: order keys and operand classes, from the words ---------------------
        # Unsigned comparison orders the keys like the values: fp32 -0 < +0.
        keys = [reg(w ^ Cat(flip.replicate(31), s1["flip_top"]), f"s2_key{i}")
                for i, (w, flip) in enumerate(zip(words, flips, strict=True))]
        present = s1["present"]
        ones = [w[23:31].all() for w in words]
        fraction_zero = [w[:23] == 0 for w in words]
        classes = {
            "nans": Cat(*(present[i] & ones[i] & ~fraction_zero[i] for i in range(n))),
            "pos_infs": Cat(*(present[i] & ones[i] & fraction_zero[i] & ~w[31]
                              for i, w in enumerate(words))),
            "neg_infs": Cat(*(present[i] & ones[i] & fraction_zero[i] & w[31]
                              for i, w in enumerate(words))),
            "neg_zeros": Cat(*(~present[i] | (w == 0x8000_0000) for i, w in enumerate(words))),
        }
        classes = {k: reg(v, f"s2_{k}") for k, v in classes.items()}

        # ---- Stages 2 .. levels + 1: the largest exponent; the min/max/bitwise tree --------
        # The largest exponent: one tree level per cycle.
        nodes = exps
        for lv in range(1, levels + 1):
            nodes = [reg(Mux(nodes[i] >= nodes[i + 1], nodes[i], nodes[i + 1])
                         if i + 1 < len(nodes) else nodes[i], f"l{lv}_n{i // 2}_exp")
                     for i in range(0, len(nodes), 2)]
        emax = nodes[0]
        at = levels + 1  # the stage whose registers hold emax

        # The min/max/bitwise tree, from the keys of stage 2: two cycles per level. The first
        # compares the keys; the second chooses the cell's function of the two (the left key,
        # the right one, their AND or their XOR: a key goes with whether it holds an operand,
        # and a cell with one passes it on), which is one 4-input LUT per bit. The cells need
        # their reduction's operation, `2 * lv` cycles behind stage 1.
        level_meta = {k: reg(s1[k], f"s2_{k}") for k in ("is_max", "bitwise", "is_xor")}
        nodes = keys
        held = [reg(s1["present"][i], f"s2_held{i}") for i in range(n)]
        for lv in range(1, levels + 1):
            level_meta = {k: delay(v, 1 if lv == 1 else 2, f"l{lv}_{k}")
                          for k, v in level_meta.items()}
            chosen, chosen_held = [], []
            for i in range(0, len(nodes), 2):
                name = f"l{lv}_n{i // 2}"
                if i + 1 == len(nodes):
                    chosen.append(delay(nodes[i], 2, f"{name}_key"))
                    chosen_held.append(delay(held[i], 2, f"{name}_held"))
                    continue
                a_less = reg(nodes[i] < nodes[i + 1], f"{name}_less")
                has_a, has_b = reg(held[i], f"{name}_has_a"), reg(held[i + 1], f"{name}_has_b")
                ka, kb = reg(nodes[i], f"{name}_a"), reg(nodes[i + 1], f"{name}_b")
                pick_a = ~has_b | (has_a & Mux(level_meta["is_max"], ~a_less, a_less))
                both = level_meta["bitwise"] & has_a & has_b
                pick_b_or_xor = Mux(both, level_meta["is_xor"], ~pick_a)
                chosen.append(reg(Mux(both, Mux(pick_b_or_xor, ka ^ kb, ka & kb),
                                      Mux(pick_b_or_xor, kb, ka)), f"{name}_key"))
                chosen_held.append(reg(has_a | has_b, f"{name}_held"))
            nodes, held = chosen, chosen_held
        tree_key = nodes[0]
        tree_at = 2 * levels + 2  # the stage whose registers hold tree_key
        lanes = [delay(lane, levels, f"lane{i}") for i, lane in enumerate(lanes)]
        exps = [delay(e, levels, f"exp{i}") for i, e in enumerate(exps)]
        negs_now = Cat(*negs)
        ones = list(negs)
        while len(ones) > 1:  # a balanced popcount
            ones = [ones[i] + ones[i + 1] if i + 1 < len(ones) else ones[i]
                    for i in range(0, len(ones), 2)]
        neg_count = reg(ones[0], "s2_neg_count")
        # Both reach the alignment's last stage (levels + 4) in step with the shifted lanes.
        neg_count = delay(neg_count, levels + 1, "neg_count")
        negs_now = delay(negs_now, levels + 2, "negs")
        nans, pos_inf, neg_inf = (classes[k].any() for k in ("nans", "pos_infs", "neg_infs"))
        specials = {
            "any_nan": reg(nans, "s3_any_nan"),
            "nan": reg(nans | (pos_inf & neg_inf), "s3_nan"),
            "inf": reg(pos_inf | neg_inf, "s3_inf"),
            "inf_sign": reg(neg_inf, "s3_inf_sign"),
            "neg_zero": reg(classes["neg_zeros"].all(), "s3_neg_zero"),
        }

        # ---- Stage levels + 2: alignment distances -------------------------------------------
        distances = [reg((emax - e)[:8], f"s{at + 1}_d{i}") for i, e in enumerate(exps)]
        # Which 8-bit groups of each lane hold a one: the sticky bit of the coarse shift.
        groups = [reg(Cat(lane[8 * j:8 * j + 8].any() for j in range(_GROUPS)),
                      f"s{at + 1}_groups{i}") for i, lane in enumerate(lanes)]
        lanes = [reg(lane, f"s{at + 1}_lane{i}") for i, lane in enumerate(lanes)]
        # Bit b of the sum's magnitude weighs 2**(emax - 150 - guard + b); with lz leading zeros
        # its exponent field would be emax + add_levels - lz, so normalisation may shift by at
        # most emax + add_levels - 1: a marker at bit _LANE - emax bounds the count there.
        early_marker = reg(Mux(emax <= _LANE, (Const(1 << _LANE, magnitude_width) >> emax)
                               [:magnitude_width], 0), f"s{at + 1}_marker")
        emax = reg(emax, f"s{at + 1}_emax")

        # ---- Stage levels + 3: shift by the multiple of 8; nothing left from _LANE on ------
        # The groups shifted out (every group from _LANE on) leave a sticky bit.
        coarse, coarse_sticky = [], []
        for i, (lane, d, held) in enumerate(zip(lanes, distances, groups, strict=True)):
            steps = [d[3:] == k for k in range(_GROUPS)]  # a shift by 8 * k, k < _GROUPS
            gone = ~any_of(steps)
            coarse.append(reg(Mux(gone, 0, lane >> Cat(Const(0, 3), d[3:6])), f"s{at + 2}_c{i}"))
            coarse_sticky.append(reg(Mux(gone, held.any(),
                                         any_of(steps[k] & held[:k].any()
                                                for k in range(1, _GROUPS))),
                                     f"s{at + 2}_sticky{i}"))
        fine_d = [reg(d[:3], f"s{at + 2}_f{i}") for i, d in enumerate(distances)]
        emax = reg(emax, f"s{at + 2}_emax")

        # ---- Stage levels + 4: the rest of the shift; negative operands complemented -------
        addends = []
        for i, (c, d, cut) in enumerate(zip(coarse, fine_d, coarse_sticky, strict=True)):
            # The bits cut off leave a sticky bit in the lowest place kept.
            sticky = cut | (c[:7] & low_mask(d, 7)).any()
            shifted = c >> d
            aligned = Cat(shifted[0] | sticky, shifted[1:], Const(0, sum_width - _LANE))
            addends.append(reg(aligned ^ negs_now[i].replicate(sum_width), f"s{at + 3}_v{i}"))
        # The complements are one short each: their count enters as one more addend.
        addends.append(reg(Cat(neg_count, Const(0, sum_width - len(neg_count))),
                           f"s{at + 3}_v{n}"))
        emax = reg(emax, f"s{at + 3}_emax")

        # ---- Adder tree: one level per cycle ---------------------------------------------
        for lv in range(1, add_levels + 1):
            addends = [reg((addends[i] + addends[i + 1])[:sum_width], f"add_l{lv}_n{i // 2}")
                       if i + 1 < len(addends) else reg(addends[i], f"add_l{lv}_n{i // 2}")
                       for i in range(0, len(addends), 2)]
            emax = reg(emax, f"add_l{lv}_emax")
        total = addends[0]
        here = at + 3 + add_levels  # the stage whose registers hold the sum

        # ---- The magnitude of the sum ------------------------------------------------------
        negative = total[-1]
        stage = here + 1
        magnitude = reg(((total ^ negative.replicate(sum_width)) + negative)[:magnitude_width],
                        f"s{stage}_mag")
        marker = delay(early_marker, here - at, "marker")
        is_zero = reg(total == 0, f"s{stage}_zero")
        sign = reg(negative, f"s{stage}_sign")
        exp0 = reg(emax + add_levels, f"s{stage}_exp0")
        int_sum = reg(total[:32], f"s{stage}_int")

        # ---- Leading-zero count -------------------------------------------------------------
        stage += 1
        lz = reg(leading_zeros(m, magnitude | marker, name=f"s{stage}_lzc"), f"s{stage}_lz")
        magnitude = reg(magnitude, f"s{stage}_mag")
        exp0, is_zero, sign, int_sum = (reg(v, f"s{stage}_{k}") for k, v in (
            ("exp0", exp0), ("zero", is_zero), ("sign", sign), ("int", int_sum)))

        # ---- Normalising shift by the multiple of 8 ---------------------------------------
        stage += 1
        coarse_n = reg((magnitude << Cat(Const(0, 3), lz[3:]))[:magnitude_width],
                       f"s{stage}_norm")
        fine_n = reg(lz[:3], f"s{stage}_fine")
        exponent = reg((exp0 - lz)[:10], f"s{stage}_exponent")
        is_zero, sign, int_sum = (reg(v, f"s{stage}_{k}") for k, v in (
            ("zero", is_zero), ("sign", sign), ("int", int_sum)))

        # ---- The rest of the shift; round to nearest, ties to even ------------------------
        stage += 1
        normal = (coarse_n << fine_n)[:magnitude_width]
        top = magnitude_width - 1
        hidden = normal[top]
        packed = reg(Cat(normal[top - 23:top], Mux(hidden, exponent[:8], 0)), f"s{stage}_packed")
        round_up = reg(normal[top - 24] & (normal[:top - 24].any() | normal[top - 23]),
                       f"s{stage}_round_up")
        overflow = reg(hidden & (exponent >= 0xFF), f"s{stage}_overflow")
        is_zero, sign, int_sum = (reg(v, f"s{stage}_{k}") for k, v in (
            ("zero", is_zero), ("sign", sign), ("int", int_sum)))

        # ---- Increment, overflow to infinity, result select -------------------------------
        stage += 1
        latency = multi_latency(n)
        assert stage == latency, (stage, latency)
        rounded = (packed + round_up)[:31]
        fp_sum = Cat(Mux(overflow, INFINITY, rounded), sign)
        meta = {k: delay(v, latency - 2, f"meta_{k}", keep=k == "valid")
                for k, v in s1.items() if k in ("valid", "is_fp", "is_add", "signed", "bitwise",
                                                 "is_or", "supported", "tag")}
        late = {k: delay(v, latency - 4, f"late_{k}") for k, v in specials.items()}
        key = delay(tree_key, latency - 1 - tree_at, "tree_key")
        # The order key back to the value it came from.
        word = Mux(meta["is_fp"] & ~meta["bitwise"], Mux(key[31], key & 0x7FFF_FFFF, ~key),
                   Mux(meta["signed"] & ~meta["bitwise"], key ^ (1 << 31),
                       Mux(meta["is_or"], ~key, key)))
        fp_add = meta["is_fp"] & meta["is_add"]
        special = Mux(late["nan"], CANONICAL_NAN, Cat(Const(INFINITY, 31), late["inf_sign"]))
        fp_result = Mux(late["nan"] | late["inf"], special,
                        Mux(is_zero, Cat(Const(0, 31), late["neg_zero"]), fp_sum))
        nan_minmax = meta["is_fp"] & ~meta["is_add"] & late["any_nan"]
        result = Mux(~meta["supported"], 0,
                     Mux(fp_add, fp_result,
                         Mux(meta["is_add"], int_sum, Mux(nan_minmax, CANONICAL_NAN, word))))
        m.d.sync += [self.o_valid.eq(meta["valid"]), self.o_result.eq(result),
                     self.o_unsupported.eq(~meta["supported"])]
        if self._tag_width:
            m.d.sync += self.o_tag.eq(meta["tag"])
        return m
