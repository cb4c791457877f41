"""gen.regmap.model: declaration checks, layout, encode/decode and bus-write packing."""

import enum
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from innet.gen.ops import DType, Op
from innet.gen.regmap import Access, Array, Cluster, Field, Map, Register
from innet.gen.regmap.model import check_param


def reg(name="r", *fields, **kw):
    return Register(name, fields or [Field("f", 4)], **kw)


# -- Field ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"name": 3, "width": 1}, TypeError, "Field name must be a string, not 3"),
    ({"name": "Op", "width": 1}, ValueError,
     "Field name must be a lowercase identifier ([a-z][a-z0-9_]*), not 'Op'"),
    ({"name": "x", "width": 0}, ValueError, "Field 'x' width must be at least 1, not 0"),
    ({"name": "x", "width": 1.5}, TypeError, "Field 'x' width must be an integer, not 1.5"),
    ({"name": "x", "width": True}, TypeError, "Field 'x' width must be an integer, not True"),
    ({"name": "x", "width": 4, "offset": -1}, ValueError,
     "Field 'x' offset must be at least 0, not -1"),
    ({"name": "x", "width": 4, "access": "rx"}, ValueError,
     "Field 'x' access must be one of rw, ro, wo, rw1c, not 'rx'"),
    ({"name": "x", "width": 4, "access": 3}, TypeError,
     "Field 'x' access must be an Access, not 3"),
    ({"name": "x", "width": 4, "enum": int}, TypeError,
     "Field 'x' enum must be an IntEnum class, not <class 'int'>"),
    ({"name": "x", "width": 4, "max": -1}, ValueError, "Field 'x' max must be at least 0, not -1"),
    ({"name": "x", "width": 4, "max": 16}, ValueError, "Field 'x' max 16 does not fit in 4 bits"),
    ({"name": "x", "width": 4, "volatile": True}, ValueError,
     "Field 'x' is RW and cannot be volatile"),
    ({"name": "x", "width": 4, "reset": 16}, ValueError,
     "Field 'x' reset value 16 does not fit in 4 bits (0..15)"),
    ({"name": "x", "width": 4, "reset": 9, "max": 8}, ValueError,
     "Field 'x' reset value 9 exceeds its maximum 8"),
    ({"name": "x", "width": 4, "reset": 8, "enum": Op}, ValueError,
     ("Field 'x' reset value 8 is not a code of Op "
     "(add=0, min=1, max=2, and=3, or=4, xor=5, nor=6, mul=7)")),
    ({"name": "x", "width": 1, "access": "wo", "reset": 1}, ValueError,
     "Field 'x' is write-only; its reset must be 0, not 1"),
    ({"name": "x", "width": 1, "access": "rw1c", "reset": 1}, ValueError,
     "Field 'x' is write-one-to-clear; its reset must be 0, not 1"),
    ({"name": "x", "width": 1, "access": "rw1c", "volatile": True}, ValueError,
     "Field 'x' is RW1C and cannot be volatile"),
])
def test_field_errors(kwargs, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Field(**kwargs)


@pytest.mark.parametrize(("field", "value", "error", "message"), [
    (Field("p", 4), 16, ValueError, "Field 'p' value 16 does not fit in 4 bits (0..15)"),
    (Field("p", 4), -1, ValueError, "Field 'p' value -1 does not fit in 4 bits (0..15)"),
    (Field("p", 4, max=8), 9, ValueError, "Field 'p' value 9 exceeds its maximum 8"),
    (Field("p", 4), "3", TypeError, "Field 'p' value must be an integer, not '3'"),
    (Field("p", 4), 2.0, TypeError, "Field 'p' value must be an integer, not 2.0"),
    (Field("p", 4), Op.MAX, TypeError, "Field 'p' value must be an integer, not <Op.MAX: 2>"),
    (Field("op", 4, enum=Op), "sum", ValueError,
     "Field 'op' value 'sum' is not a name of Op (add, min, max, and, or, xor, nor, mul)"),
    (Field("op", 4, enum=Op), 9, ValueError, ("Field 'op' value 9 is not a code of Op "
     "(add=0, min=1, max=2, and=3, or=4, xor=5, nor=6, mul=7)")),
    (Field("op", 4, enum=Op), DType.FP32, TypeError,
     "Field 'op' value must be a member, name or code of Op, not <DType.FP32: 2>"),
])
def test_field_check_errors(field, value, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        field.check(value)


def test_field_check_accepts_codes_members_names_and_bools():
    op = Field("op", 4, enum=Op)
    assert op.check(Op.MUL) == op.check("mul") == op.check("MUL") == op.check(7) == 7
    assert Field("b", 1).check(True) == 1
    assert Field("a", 2, access="ro").access is Access.RO
    assert op.format(2) == "max"
    assert Field("w", 16).format(255) == "0xff"


# -- Register -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda: Register("R", [Field("a", 1)]), ValueError,
     "Register name must be a lowercase identifier ([a-z][a-z0-9_]*), not 'R'"),
    (lambda: Register("r", []), ValueError, "Register 'r' has no fields"),
    (lambda: Register("r", ["a"]), TypeError,
     "Fields of register 'r' must be Field objects, not ['a']"),
    (lambda: Register("r", 5), TypeError, "Fields of register 'r' must be Field objects, not 5"),
    (lambda: Register("r", [Field("a", 1)], offset=-2), ValueError,
     "Register 'r' offset must be at least 0, not -2"),
    (lambda: Register("r", [Field("a", 1), Field("a", 2)]), ValueError,
     "Duplicate field 'a' in register 'r'"),
    (lambda: Register("r", [Field("a", 4), Field("b", 2, offset=3)]), ValueError,
     "Field 'b' (bits 4:3) overlaps field 'a' (bits 3:0) in register 'r'"),
    (lambda: Register("r", [Field("a", 2, offset=8), Field("b", 16, offset=0)]), ValueError,
     "Field 'a' (bits 9:8) overlaps field 'b' (bits 15:0) in register 'r'"),
    (lambda: Register("r", [Field("a", 1, offset=5), Field("b", 1, offset=5)]), ValueError,
     "Field 'b' (bit 5) overlaps field 'a' (bit 5) in register 'r'"),
])
def test_register_errors(build, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        build()


def test_register_places_fields_in_order_and_counts_words():
    r = Register("r", [Field("a", 3), Field("b", 5, offset=8), Field("c", 2), Field("d", 30)])
    assert [(f.name, f.offset) for f in r.fields] == [("a", 0), ("b", 8), ("c", 13), ("d", 15)]
    assert r.words == 2
    assert r.align == 2
    assert r.mask() == (0b111 | 0b11111 << 8 | 0b11 << 13 | (2**30 - 1) << 15)
    assert Register("q", [Field("m", 65)]).words == 3
    assert Register("q", [Field("m", 65)]).align == 4
    with pytest.raises(KeyError):
        r.field("zz")


# -- Cluster, Array, Map layout ------------------------------------------------------------------

@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda: Cluster("c", []), ValueError, "Cluster 'c' has no members"),
    (lambda: Cluster("c", [Field("a", 1)]), TypeError,
     ("Members of cluster 'c' must be Register, Cluster or Array objects, "
     "not (Field(name='a', width=1, access=<Access.RW: 'rw'>, reset=0, offset=None, enum=None, "
     "volatile=False, max=None, desc=''),)")),
    (lambda: Cluster("c", [reg("a"), reg("a")]), ValueError, "Duplicate name 'a' in cluster 'c'"),
    (lambda: Cluster("c", [reg("a"), Array(reg("a"), 2)]), ValueError,
     "Duplicate name 'a' in cluster 'c'"),
    (lambda: Cluster("c", [reg("a"), reg("b", offset=0)]), ValueError,
     "Register 'b' (0x0..0x0) overlaps register 'a' (0x0..0x0) in cluster 'c'"),
    (lambda: Cluster("c", [Array(reg("t"), 8), reg("b", offset=5)]), ValueError,
     "Register 'b' (0x5..0x5) overlaps array 't' (0x0..0x7) in cluster 'c'"),
    (lambda: Cluster("c", [reg("a", offset=6), Array(reg("t"), 4, offset=4)]), ValueError,
     "Register 'a' (0x6..0x6) overlaps array 't' (0x4..0x7) in cluster 'c'"),
    (lambda: Cluster("c", [Array(reg("t"), 4, offset=6)]), ValueError,
     "Array 't' at offset 0x6 is not aligned to its 4 words"),
    (lambda: Cluster("c", [Register("w", [Field("m", 40)], offset=3)]), ValueError,
     "Register 'w' at offset 0x3 is not aligned to its 2 words"),
    (lambda: Cluster("c", [Cluster("k", [reg("a"), reg("b"), reg("c")], offset=2)]), ValueError,
     "Cluster 'k' at offset 0x2 is not aligned to its 4 words"),
    (lambda: Cluster("c", [reg()], offset=-1), ValueError,
     "Cluster 'c' offset must be at least 0, not -1"),
    (lambda: Array(Field("a", 1), 2), TypeError,
     ("Array element must be a Register or Cluster, not Field(name='a', width=1, "
     "access=<Access.RW: 'rw'>, reset=0, offset=None, enum=None, volatile=False, max=None, "
     "desc='')")),
    (lambda: Array(reg("t"), 0), ValueError, "Array 't' count must be at least 1, not 0"),
    (lambda: Array(reg("t"), 2, offset=-4), ValueError,
     "Array 't' offset must be at least 0, not -4"),
    (lambda: Array(reg("t", offset=1), 2), ValueError,
     "Array 't' element must not have an offset (the array places it)"),
    (lambda: Map("m", []), ValueError, "Map 'm' has no members"),
    (lambda: Map("M", [reg()]), ValueError,
     "Map name must be a lowercase identifier ([a-z][a-z0-9_]*), not 'M'"),
    (lambda: Map("m", [reg()], version=-1), ValueError, "Map version must be at least 0, not -1"),
    (lambda: Map("m", [reg("a"), reg("a", offset=9)]), ValueError,
     "Duplicate name 'a' in map 'm'"),
    (lambda: Map("m", [Cluster("a", [reg("b")]), reg("a_b")]), ValueError,
     "C name A_B of register 'a_b' clashes with register 'a.b' in map 'm'"),
    (lambda: Map("m", [reg("a", Field("b", 1)), reg("a_b")]), ValueError,
     "C name A_B of register 'a_b' clashes with field 'a.b' in map 'm'"),
    (lambda: Map("m", [Cluster("a", [Array(reg("b"), 2)]), Array(reg("a_b"), 2)]), ValueError,
     "C name A_B of register 'a_b[]' clashes with register 'a.b[]' in map 'm'"),
])
def test_layout_errors(build, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        build()


def test_array_c_names_clash_only_among_arrays():
    # An array of clusters and an array of registers whose stems collide, with no register clash.
    with pytest.raises(ValueError, match=r"^C name A_B of array 'a_b' clashes with array "
                                         r"'a\[\].b' in map 'm'$"):
        Map("m", [Array(Cluster("a", [Array(Cluster("b", [reg("x")]), 2)]), 2),
                  Array(Cluster("a_b", [reg("y")]), 2)])
    # An array and a register of the same stem use different C suffixes: allowed.
    Map("m", [Array(reg("route"), 4)])


def nested_map():
    """A map with every kind of block: nested arrays, multi-word registers, explicit offsets."""
    inner = Cluster("lane", [reg("cfg", Field("w", 3)), Register("mask", [Field("m", 40)])])
    unit = Cluster("unit", [reg("ctrl", Field("en", 1)), Array(inner, 3),
                            reg("stat", Field("s", 8, access="ro", volatile=True))])
    return Map("nest", [reg("id", Field("v", 8, access="ro", reset=7)), Array(unit, 2),
                        reg("tail", Field("t", 32), offset=0x80)])


def test_nested_layout_is_naturally_aligned():
    m = nested_map()
    # lane: cfg@0, mask@2 (2 words, aligned 2) -> size 4, stride 4; lane array 3x4=12 -> align 16
    # unit: ctrl@0, lane@16, stat@28 -> size 29, stride 32; unit array 2x32 -> align 64 -> @64
    assert [(r.name, r.address) for r in m.registers[:8]] == [
        ("id", 0), ("unit[0].ctrl", 64), ("unit[0].lane[0].cfg", 80),
        ("unit[0].lane[0].mask", 82), ("unit[0].lane[1].cfg", 84), ("unit[0].lane[1].mask", 86),
        ("unit[0].lane[2].cfg", 88), ("unit[0].lane[2].mask", 90)]
    assert m["unit[1].stat"].address == 64 + 32 + 28
    assert m["unit[1].lane[2].mask"].index == (1, 2)
    assert m["unit[1].lane[2].mask"].template == "unit[].lane[].mask"
    assert m["tail"].address == 0x80
    assert m.size == 0x81
    assert m.address_width == 8
    assert [(a.name, a.base, a.count, a.stride, a.element_size) for a in m.arrays] == [
        ("unit", 64, 2, 32, 29), ("unit[0].lane", 80, 3, 4, 4), ("unit[1].lane", 112, 3, 4, 4)]
    assert m.at(83) is m["unit[0].lane[0].mask"]
    assert m.at(81) is None
    assert m.at(999) is None
    assert len(m) == 1 + 2 * (2 + 3 * 2) + 1
    assert "tail" in m
    assert "nope" not in m
    assert [r.template for r in m.templates] == [
        "id", "unit[].ctrl", "unit[].lane[].cfg", "unit[].lane[].mask", "unit[].stat", "tail"]


def test_unknown_register_is_a_key_error():
    with pytest.raises(KeyError) as caught:
        nested_map().register("unit[2].ctrl")
    assert caught.value.args == ("Map 'nest' has no register 'unit[2].ctrl'",)


# -- encode / decode ------------------------------------------------------------------------------

class Mode(enum.IntEnum):
    OFF = 0
    ON = 3


def codec_map():
    return Map("codec", [
        Register("ctrl", [Field("en", 1), Field("op", 4, offset=4, enum=Op),
                          Field("mode", 2, offset=8, enum=Mode), Field("port", 5, max=20),
                          Field("st", 3, access="ro", volatile=True),
                          Field("go", 1, offset=31, access="wo")]),
        Register("wide", [Field("lo", 20), Field("mid", 30), Field("hi", 40)]),
        reg("ro", Field("v", 16, access="ro", reset=0x1234)),
    ])


def field_values(f: Field):
    if f.enum is not None:
        return st.sampled_from([int(m) for m in f.enum])
    return st.integers(0, (1 << f.width) - 1 if f.max is None else f.max)


def register_values(r):
    return st.fixed_dictionaries({f.name: field_values(f) for f in r.fields})


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_encode_decode_round_trip_and_bit_placement(data):
    m = codec_map()
    r = data.draw(st.sampled_from(m.registers))
    values = data.draw(register_values(r))
    value = r.encode(values)
    assert r.decode(value) == values
    # Independent model: the register as a bit string, bit 0 last.
    bits = format(value, f"0{r.words * 32}b")[::-1]
    for f in r.fields:
        assert int(bits[f.offset:f.offset + f.width][::-1], 2) == values[f.name]
    assert r.join(r.split(value)) == value
    assert all(0 <= w < 2**32 for w in r.split(value))
    assert len(r.split(value)) == r.words


def test_encode_fills_resets_and_accepts_names():
    m = codec_map()
    assert m["ro"].encode() == 0x1234 == m["ro"].reset
    ctrl = m["ctrl"]
    assert ctrl.encode({"op": "mul", "mode": Mode.ON, "en": True}) == 1 | 7 << 4 | 3 << 8
    assert ctrl.format(ctrl.encode({"op": "min", "port": 20})) == \
        "en=0 op=min mode=off port=20 st=0 go=0"
    assert m["wide"].split(m["wide"].encode({"hi": 2**40 - 1})) == (0, 0xFFFC0000, 0x3FFFFFF)


@pytest.mark.parametrize(("name", "value", "error", "message"), [
    ("ctrl", {"enable": 1}, ValueError,
     "Register 'ctrl' has no field 'enable' (fields: en, op, mode, port, st, go)"),
    ("ctrl", {"port": 21}, ValueError, "Field 'ctrl.port' value 21 exceeds its maximum 20"),
    ("ctrl", {"mode": 2}, ValueError,
     "Field 'ctrl.mode' value 2 is not a code of Mode (off=0, on=3)"),
    ("ctrl", {"op": None}, TypeError,
     "Field 'ctrl.op' value must be a member, name or code of Op, not None"),
    ("wide", {"hi": 2**40}, ValueError,
     "Field 'wide.hi' value 1099511627776 does not fit in 40 bits (0..1099511627775)"),
])
def test_encode_errors(name, value, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        codec_map()[name].encode(value)


@pytest.mark.parametrize(("name", "value", "error", "message"), [
    ("ctrl", "1", TypeError, "Register 'ctrl' value must be an integer, not '1'"),
    ("ctrl", 2**32, ValueError, "Register 'ctrl' value 0x100000000 does not fit in 32 bits"),
    ("ctrl", -1, ValueError, "Register 'ctrl' value -0x1 does not fit in 32 bits"),
    ("ctrl", 1 << 30, ValueError, "Register 'ctrl' value 0x40000000 sets reserved bits 0x40000000"),
    ("ctrl", 9 << 4, ValueError, ("Field 'ctrl.op' value 9 is not a code of Op "
     "(add=0, min=1, max=2, and=3, or=4, xor=5, nor=6, mul=7)")),
    ("ctrl", 21 << 10, ValueError, "Field 'ctrl.port' value 21 exceeds its maximum 20"),
    ("wide", 1 << 90, ValueError,
     ("Register 'wide' value 0x40000000000000000000000 sets reserved bits "
     "0x40000000000000000000000")),
])
def test_decode_errors(name, value, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        codec_map()[name].decode(value)


# -- pack / unpack --------------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_pack_unpack_round_trip(data):
    m = nested_map()
    chosen = data.draw(st.lists(st.sampled_from([r for r in m if r.writable]), unique=True))
    values = {r.name: data.draw(st.fixed_dictionaries(
        {f.name: field_values(f) for f in r.fields if f.access is Access.RW})) for r in chosen}
    writes = m.pack(values)
    assert [a for a, _ in writes] == sorted({a for a, _ in writes})
    assert len(writes) == sum(r.words for r in chosen)
    decoded = m.unpack(writes)
    assert list(decoded) == [r.name for r in sorted(chosen, key=lambda r: r.address)]
    for name, fields in values.items():
        assert decoded[name] == {**{f.name: f.reset for f in m[name].fields}, **fields}


@pytest.mark.parametrize(("values", "error", "message"), [
    ({"ro": {}}, ValueError, "Register 'ro' is read-only"),
    ({"ctrl": {"st": 1}}, ValueError, ("Field 'ctrl.st' is RO and cannot be written by a "
                                      "configuration")),
    ({"ctrl": {"go": 1}}, ValueError, ("Field 'ctrl.go' is WO and cannot be written by a "
                                      "configuration")),
    ({"ctrl": {"port": 99}}, ValueError,
     "Field 'ctrl.port' value 99 does not fit in 5 bits (0..31)"),
    (None, TypeError, "Register values must be a mapping, not NoneType"),
    ([("ctrl", {})], TypeError, "Register values must be a mapping, not list"),
    ({"ctrl": None}, TypeError, "Fields of register 'ctrl' must be a mapping, not NoneType"),
])
def test_pack_errors(values, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        codec_map().pack(values)


def test_pack_unknown_register():
    with pytest.raises(KeyError, match="no register 'nope'"):
        codec_map().pack({"nope": {}})


@pytest.mark.parametrize(("writes", "error", "message"), [
    ([(0, "1")], TypeError, "Word must be an integer, not '1'"),
    ([(None, 1)], TypeError, "Address must be an integer, not None"),
    ([(0, 2**32)], ValueError, "Word 0x100000000 written at address 0x0 does not fit in 32 bits"),
    ([(3, 0)], ValueError, "Address 0x3 is not a register of map 'codec'"),
    ([(8, 0)], ValueError, "Address 0x8 is not a register of map 'codec'"),
    ([(-1, 0)], ValueError, "Address -0x1 is not a register of map 'codec'"),
    ([(7, 0)], ValueError, "Register 'ro' at 0x7 is read-only"),
    ([(0, 1), (0, 1)], ValueError, "Address 0x0 (ctrl) is written twice"),
    ([(5, 0), (4, 0)], ValueError, "Register 'wide' (0x4..0x6) is missing word 2 at 0x6"),
    ([(0, 1 << 31)], ValueError, ("Field 'ctrl.go' is WO and cannot be written by a "
                                 "configuration")),
    ([(0, 1 << 17)], ValueError, ("Field 'ctrl.st' is RO and cannot be written by a "
                                 "configuration")),
    ([(0, 1 << 20)], ValueError, "Register 'ctrl' value 0x100000 sets reserved bits 0x100000"),
    ([(0, 8 << 4)], ValueError, ("Field 'ctrl.op' value 8 is not a code of Op "
     "(add=0, min=1, max=2, and=3, or=4, xor=5, nor=6, mul=7)")),
])
def test_unpack_errors(writes, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        codec_map().unpack(writes)


def flags_map():
    return Map("flags", [
        Register("ctrl", [Field("en", 1), Field("go", 1, Access.WO),
                          Field("st", 2, Access.RO, volatile=True)]),
        Register("errs", [Field("a", 1, "rw1c"), Field("b", 1, "rw1c"), Field("c", 2, "rw1c"),
                          Field("keep", 4, offset=8)]),
        Register("ro", [Field("v", 8, Access.RO, reset=3)]),
    ])


def test_rw1c_reads_and_clears_by_writing_ones():
    errs = flags_map()["errs"].register
    assert errs.mask(Access.RW1C) == 0b1111
    assert errs.reset == 0
    flags = 0b1101 | 0x5 << 8  # a, c set (c = 0b11), keep = 0x5
    assert errs.read(flags) == flags
    # Writing ones clears exactly those flags; RW bits take the data.
    assert errs.write(flags, 0b0001 | 0x5 << 8) == 0b1100 | 0x5 << 8
    assert errs.write(flags, 0b0100 | 0x5 << 8) == 0b1001 | 0x5 << 8  # one bit of c
    # Writing zeros leaves every flag as it was (and sets the RW field to 0).
    assert errs.write(flags, 0) == 0b1101
    assert errs.write(errs.write(flags, 0b1111), 0) == 0
    ctrl = flags_map()["ctrl"].register
    assert ctrl.write(0b1000, 0b11) == 0b1001  # en takes 1, go is a strobe, st is kept
    assert ctrl.read(0b1011) == 0b1001
    ro = flags_map()["ro"].register
    assert ro.write(3, 0xFF) == 3


def test_rw1c_in_images_is_a_clear():
    """A configuration image may write an RW1C register only to clear flags: pack and unpack
    take its fields (1 = clear), other bits stay reserved."""
    m = flags_map()
    assert m["errs"].writable
    assert m.pack({"errs": {"a": 1, "c": 3}}) == [(1, 0b1101)]
    assert m.unpack([(1, 0b1101 | 7 << 8)]) == {"errs": {"a": 1, "b": 0, "c": 3, "keep": 7}}
    with pytest.raises(ValueError, match=r"^Register 'errs' value 0x10 sets reserved bits "
                                         r"0x10$"):
        m.unpack([(1, 0x10)])
    with pytest.raises(ValueError, match=r"^Field 'ctrl.st' is RO and cannot be written by a "
                                         r"configuration$"):
        m.unpack([(0, 0b100)])


def test_reset_values():
    m = codec_map()
    assert [(r.name, r.address, r.words) for r in m] == [("ctrl", 0, 1), ("wide", 4, 3),
                                                         ("ro", 7, 1)]
    assert m.reset_values() == {"ctrl": 0, "wide": 0, "ro": 0x1234}


@pytest.mark.parametrize(("args", "error", "message"), [
    (("Radix", 0, 1), ValueError, "Radix must be at least 1, not 0"),
    (("Radix", 9, 1, 8), ValueError, "Radix must be at most 8, not 9"),
    (("Radix", "8", 1), TypeError, "Radix must be an integer, not '8'"),
])
def test_check_param(args, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        check_param(*args)
