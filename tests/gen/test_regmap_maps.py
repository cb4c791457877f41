"""gen.regmap switch_map and endpoint_map: layout properties at several sizes, fields, errors."""

import hashlib
import itertools
import json
import math
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from innet.gen.ops import DType, Op
from innet.gen.regmap import (
    COLL_BURST,
    COLL_TIMEOUT,
    ERROR_FLAGS,
    FORMAT_VERSION,
    Access,
    CollectiveMode,
    Target,
    endpoint_map,
    mask_ports,
    port_code,
    port_mask,
    port_width,
    switch_map,
    to_markdown,
)

SWITCH_SIZES = [(1, 1, 1), (2, 2, 4), (8, 4, 16), (31, 3, 100), (32, 5, 7), (40, 16, 256),
                (63, 1, 1024)]
ENDPOINT_SIZES = [(1, 1, 1), (4, 8, 1024), (3, 5, 1000), (16, 64, 4096), (2, 100, 2**20)]


def check_layout(m):
    """Properties every map has, checked without the layout code."""
    used = [r.address + w for r in m for w in range(r.words)]
    assert len(used) == len(set(used)), "two registers share a word"
    assert max(used) < m.size <= 2 ** m.address_width
    assert len({r.name for r in m}) == len(m)
    for r in m:
        assert r.address % (1 << (r.words - 1).bit_length()) == 0
        spans = sorted((f.offset, f.offset + f.width) for f in r.fields)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
        assert spans[-1][1] <= 32 * r.words
        assert r.decode(r.reset) == {f.name: f.reset for f in r.fields}
    for a in m.arrays:
        assert a.stride & (a.stride - 1) == 0
        assert a.element_size <= a.stride
        assert a.base % (a.stride * (1 << (a.count - 1).bit_length())) == 0


@pytest.mark.parametrize(("radix", "cids", "depth"), SWITCH_SIZES)
def test_switch_layout(radix, cids, depth):
    m = switch_map(radix, cids, depth)
    check_layout(m)
    words = math.ceil((radix + 1) / 32)
    assert len(m) == 9 + 8 * cids + depth
    assert [r.name for r in m][:9] == ["ident", "radix", "collective_ids", "routing_depth",
                                       "node_id_width", "node_id", "errors", "coll_burst",
                                       "coll_timeout"]
    coll, route = m.arrays
    assert (coll.name, coll.count, route.name, route.count, route.stride) == \
        ("coll", cids, "route", depth, 1)
    for c in range(cids):
        base = coll.base + c * coll.stride
        found = [(r.name, r.address - base, r.words) for r in m
                 if r.name.startswith(f"coll[{c}]")]
        assert found == [
            (f"coll[{c}].ctrl", 0, 1), (f"coll[{c}].req_in", words, words),
            (f"coll[{c}].req_out", 2 * words, 1), (f"coll[{c}].resp_in", 2 * words + 1, 1),
            (f"coll[{c}].resp_out", 2 * words + 2, words),
            (f"coll[{c}].abort", 3 * words + 2, 1), (f"coll[{c}].status", 3 * words + 3, 1),
            (f"coll[{c}].missing", 3 * words + 4, words)]
    assert [m[f"route[{d}]"].address for d in range(depth)] == \
        list(range(route.base, route.base + depth))


@pytest.mark.parametrize(("radix", "cids", "depth"), SWITCH_SIZES)
def test_switch_fields(radix, cids, depth):
    m = switch_map(radix, cids, depth, node_id_width=12)
    pw = math.ceil(math.log2(radix + 1))
    assert port_width(radix) == pw
    assert m["ident"].decode(m["ident"].reset) == {"version": FORMAT_VERSION,
                                                   "kind": Target.SWITCH}
    for name, value in [("radix", radix), ("collective_ids", cids), ("routing_depth", depth),
                        ("node_id_width", 12)]:
        assert m[name].decode(m[name].reset) == {"value": value}
        assert all(f.constant for f in m[name].fields)
        assert not m[name].writable
    assert {r.name for r in m if r.writable} == {
        r.name for r in m if r.address >= 5 and not r.name.endswith((".status", ".missing"))}
    status = m[f"coll[{cids - 1}].status"]
    assert [(f.name, f.access, f.volatile) for f in status.fields] == [
        ("busy", Access.RO, True), ("timed_out", Access.RO, True)]
    (missing,) = m["coll[0].missing"].fields
    assert (missing.width, missing.access, missing.volatile) == (radix + 1, Access.RO, True)
    assert [(f.name, f.access) for f in m["coll[0].abort"].fields] == [("drain", Access.RW)]
    last = m[f"coll[{cids - 1}].ctrl"]
    assert [(f.name, f.width, f.enum) for f in last.fields] == [
        ("enable", 1, None), ("op", 4, Op), ("dtype", 2, DType)]
    for mask in ("req_in", "resp_out"):
        (f,) = m[f"coll[0].{mask}"].fields
        assert (f.name, f.width, f.offset) == ("ports", radix + 1, 0)
    out = m["coll[0].req_out"]
    assert [(f.name, f.width, f.max) for f in out.fields] == [("port", pw, radix),
                                                               ("root", 1, None)]
    # The root flag and the output port are separate bits, so "both set" is visible in the value.
    assert out.decode(out.encode({"root": 1, "port": 3 % (radix + 1)})) == \
        {"root": 1, "port": 3 % (radix + 1)}
    route = m[f"route[{depth - 1}]"]
    assert route.encode({"port": radix, "valid": 1}) == radix | 1 << 31
    with pytest.raises(ValueError, match=rf"^Field 'route\[{depth - 1}\].port' value "
                                         rf"{radix + 1} (exceeds its maximum {radix}|does not "
                                         rf"fit in {pw} bits \(0..{2**pw - 1}\))$"):
        route.encode({"port": radix + 1})
    assert m["node_id"].field("id").max == min(depth, 2**12) - 1
    errors = m["errors"]
    assert [(f.name, f.width, f.offset, f.access, f.reset) for f in errors.fields] == [
        (name, 1, bit, Access.RW1C, 0) for bit, name in enumerate(ERROR_FLAGS)]
    assert all(f.desc == ERROR_FLAGS[f.name] for f in errors.fields)
    burst = m["coll_burst"].field("cycles")
    assert (burst.width, burst.access, burst.reset) == (4, Access.RW, COLL_BURST)
    timeout = m["coll_timeout"].field("cycles")
    assert (timeout.width, timeout.access, timeout.reset) == (16, Access.RW, COLL_TIMEOUT)


def test_switch_small_example_addresses():
    """The example documented in docs/regmap.md and the report."""
    m = switch_map(radix=2, collective_ids=2, routing_depth=4)
    assert [(r.name, r.address) for r in m] == [
        ("ident", 0), ("radix", 1), ("collective_ids", 2), ("routing_depth", 3),
        ("node_id_width", 4), ("node_id", 5), ("errors", 6), ("coll_burst", 7),
        ("coll_timeout", 8),
        ("coll[0].ctrl", 16), ("coll[0].req_in", 17), ("coll[0].req_out", 18),
        ("coll[0].resp_in", 19), ("coll[0].resp_out", 20), ("coll[0].abort", 21),
        ("coll[0].status", 22), ("coll[0].missing", 23),
        ("coll[1].ctrl", 24), ("coll[1].req_in", 25), ("coll[1].req_out", 26),
        ("coll[1].resp_in", 27), ("coll[1].resp_out", 28), ("coll[1].abort", 29),
        ("coll[1].status", 30), ("coll[1].missing", 31),
        ("route[0]", 32), ("route[1]", 33), ("route[2]", 34), ("route[3]", 35)]
    assert m.size == 36
    assert m.address_width == 6


@pytest.mark.parametrize(("args", "kwargs", "error", "message"), [
    ((0, 4, 16), {}, ValueError, "Radix must be at least 1, not 0"),
    ((-3, 4, 16), {}, ValueError, "Radix must be at least 1, not -3"),
    (("8", 4, 16), {}, TypeError, "Radix must be an integer, not '8'"),
    ((8, 0, 16), {}, ValueError, "Collective ids must be at least 1, not 0"),
    ((8, 257, 16), {}, ValueError, "Collective ids must be at most 256, not 257"),
    ((8, 4, 0), {}, ValueError, "Routing depth must be at least 1, not 0"),
    ((8, 4, 257), {"node_id_width": 8}, ValueError,
     "Routing depth must be at most 256 (the node ids of 8 bits), not 257"),
    ((8, 4, 16), {"node_id_width": 0}, ValueError, "Node id width must be at least 1, not 0"),
    ((8, 4, 16), {"node_id_width": 33}, ValueError, "Node id width must be at most 32, not 33"),
    ((8, 4, 2.0), {}, TypeError, "Routing depth must be an integer, not 2.0"),
])
def test_switch_map_errors(args, kwargs, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        switch_map(*args, **kwargs)


# -- port encodings -------------------------------------------------------------------------------

def test_port_encodings():
    assert port_code(-1, 8) == 8
    assert port_code(0, 8) == 0
    assert port_code(7, 8) == 7
    assert port_mask([0, 3, -1], 8) == 0b1_0000_1001
    assert mask_ports(0b1_0000_1001, 8) == [0, 3, -1]
    assert port_mask([], 1) == 0
    assert mask_ports(0b11, 1) == [0, -1]


@given(st.integers(1, 80).flatmap(
    lambda r: st.tuples(st.just(r), st.sets(st.integers(-1, r - 1)))))
def test_port_mask_round_trip(case):
    radix, ports = case
    mask = port_mask(ports, radix)
    assert mask_ports(mask, radix) == sorted(p for p in ports if p >= 0) + (
        [-1] if -1 in ports else [])
    assert mask.bit_count() == len(ports)
    assert mask < 2 ** (radix + 1)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: port_code(8, 8), ValueError,
     "Port 8 does not exist on a radix-8 switch (network ports 0..7 and LOCAL = -1)"),
    (lambda: port_code(-2, 8), ValueError,
     "Port -2 does not exist on a radix-8 switch (network ports 0..7 and LOCAL = -1)"),
    (lambda: port_code("1", 8), TypeError, "Port must be an integer, not '1'"),
    (lambda: port_code(0, 0), ValueError, "Radix must be at least 1, not 0"),
    (lambda: port_mask([1, 9], 4), ValueError,
     "Port 9 does not exist on a radix-4 switch (network ports 0..3 and LOCAL = -1)"),
    (lambda: mask_ports(0b100000, 4), ValueError,
     "Port mask 0x20 names ports beyond the local port 4 of a radix-4 switch"),
    (lambda: mask_ports(-1, 4), ValueError,
     "Port mask -0x1 names ports beyond the local port 4 of a radix-4 switch"),
    (lambda: mask_ports(None, 4), TypeError, "Port mask must be an integer, not None"),
    (lambda: port_width(0), ValueError, "Radix must be at least 1, not 0"),
])
def test_port_encoding_errors(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


# -- endpoint -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("cids", "steps", "vector"), ENDPOINT_SIZES)
def test_endpoint_layout_and_fields(cids, steps, vector):
    m = endpoint_map(cids, steps, vector, node_id_width=10)
    check_layout(m)
    assert len(m) == 8 + 6 + 4 + 7 * steps
    iw = math.floor(math.log2(vector)) + 1  # bits of the largest count, vector_depth itself
    cw = max(1, math.ceil(math.log2(cids)))
    sw = math.floor(math.log2(steps)) + 1
    assert m["ident"].decode(m["ident"].reset) == {"version": FORMAT_VERSION,
                                                   "kind": Target.ENDPOINT}
    for name, value in [("collective_ids", cids), ("step_depth", steps),
                        ("vector_depth", vector), ("node_id_width", 10)]:
        assert m[name].decode(m[name].reset) == {"value": value}

    def fields(name):
        return [(f.name, f.offset, f.width, f.access, f.max) for f in m[name].fields]

    rw = Access.RW
    assert fields("vec_base") == [("index", 0, iw, rw, vector - 1)]
    assert fields("vec_len") == [("count", 0, iw, rw, vector)]
    assert fields("coll.cmd") == [("cid", 0, cw, rw, cids - 1), ("op", 16, 4, rw, None),
                                  ("dtype", 20, 2, rw, None), ("mode", 24, 2, rw, None)]
    assert m["coll.cmd"].decode(3 << 24)["mode"] == CollectiveMode.BARRIER
    assert fields("engine.cfg") == [("steps", 0, sw, rw, steps), ("op", 16, 4, rw, None),
                                    ("dtype", 20, 2, rw, None)]
    for strobe in ("coll.ctrl", "engine.ctrl"):
        assert fields(strobe) == [("start", 0, 1, Access.WO, None)]
    for status in ("coll.status", "engine.status", "coll.sent", "coll.received",
                   "engine.current"):
        assert all(f.access is Access.RO and f.volatile for f in m[status].fields)
    last = steps - 1
    assert fields(f"step[{last}].flags") == [
        ("send", 0, 1, rw, None), ("recv", 1, 1, rw, None), ("reduce", 2, 1, rw, None),
        ("cid", 16, cw, rw, cids - 1)]
    for peer in ("send_peer", "recv_peer"):
        assert fields(f"step[{last}].{peer}") == [("node", 0, 10, rw, None)]
    for side in ("send", "recv"):
        assert fields(f"step[{last}].{side}_first") == [("index", 0, iw, rw, vector - 1)]
        assert fields(f"step[{last}].{side}_count") == [("count", 0, iw, rw, vector)]
    (table,) = m.arrays
    assert (table.name, table.count, table.stride) == ("step", steps, 8)
    assert m[f"step[{last}].flags"].address == table.base + 8 * last
    writes = m.pack({"vec_len": {"count": vector}, f"step[{last}].send_count": {"count": vector}})
    assert m.unpack(writes) == {"vec_len": {"count": vector},
                                f"step[{last}].send_count": {"count": vector}}


def test_endpoint_small_example_addresses():
    m = endpoint_map(collective_ids=2, step_depth=2, vector_depth=64)
    assert [(r.name, r.address) for r in m if r.address < 32] == [
        ("ident", 0), ("collective_ids", 1), ("step_depth", 2), ("vector_depth", 3),
        ("node_id_width", 4), ("node_id", 5), ("vec_base", 6), ("vec_len", 7),
        ("coll.cmd", 8), ("coll.count", 9), ("coll.ctrl", 10), ("coll.status", 11),
        ("coll.sent", 12), ("coll.received", 13),
        ("engine.cfg", 16), ("engine.ctrl", 17), ("engine.status", 18), ("engine.current", 19)]
    assert [(r.name, r.address) for r in m if r.index == (1,)] == [
        ("step[1].flags", 40), ("step[1].send_peer", 41), ("step[1].send_first", 42),
        ("step[1].send_count", 43), ("step[1].recv_peer", 44), ("step[1].recv_first", 45),
        ("step[1].recv_count", 46)]
    assert m.size == 48


@pytest.mark.parametrize(("args", "kwargs", "error", "message"), [
    ((0, 8, 64), {}, ValueError, "Collective ids must be at least 1, not 0"),
    ((257, 8, 64), {}, ValueError, "Collective ids must be at most 256, not 257"),
    ((4, 0, 64), {}, ValueError, "Step depth must be at least 1, not 0"),
    ((4, 65536, 64), {}, ValueError, "Step depth must be at most 65535, not 65536"),
    ((4, 8, 0), {}, ValueError, "Vector depth must be at least 1, not 0"),
    ((4, 8, 2**20 + 1), {}, ValueError, "Vector depth must be at most 1048576, not 1048577"),
    ((4, 8, 64), {"node_id_width": 0}, ValueError, "Node id width must be at least 1, not 0"),
    ((4, None, 64), {}, TypeError, "Step depth must be an integer, not None"),
])
def test_endpoint_map_errors(args, kwargs, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        endpoint_map(*args, **kwargs)


def _digest_maps():
    return [switch_map(*size) for size in SWITCH_SIZES] + [
        endpoint_map(*size) for size in ENDPOINT_SIZES] + [switch_map(8, 4, 16, node_id_width=8)]


def _without_docs(value):
    """A map's documented description (``as_dict()``) without its documentation: every
    ``desc``, and the ``digest``, ``registers``, ``templates`` and ``memory`` (the memory
    window, derived from the parameters) that only it lists."""
    if isinstance(value, dict):
        return {k: _without_docs(v) for k, v in value.items()
                if k not in ("desc", "digest", "registers", "templates", "memory")}
    if isinstance(value, list):
        return [_without_docs(v) for v in value]
    return value


def test_digests_differ_between_sizes():
    maps = _digest_maps()
    digests = [m.digest for m in maps]
    assert len(set(digests)) == len(digests)
    assert all(re.fullmatch(r"[0-9a-f]{64}", d) for d in digests)
    for m in maps:
        # SHA-256 of the canonical JSON (sorted keys, no spaces) without the descriptions
        canonical = _without_docs(m.as_dict())
        assert m.as_dict(docs=False) == canonical
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
        assert m.digest == hashlib.sha256(text.encode()).hexdigest()
        assert m.as_dict()["digest"] == m.digest


def test_digests_are_the_same_in_another_process():
    """Another interpreter, with another string-hash seed, gives every map the same digest."""
    code = ("import json, sys\n"
            "from innet.gen.regmap import endpoint_map, switch_map\n"
            "switches, endpoints = json.loads(sys.argv[1])\n"
            "maps = [switch_map(*s) for s in switches] + [endpoint_map(*s) for s in endpoints]\n"
            "maps.append(switch_map(8, 4, 16, node_id_width=8))\n"
            "print(' '.join(m.digest for m in maps))\n")
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    out = subprocess.run([sys.executable, "-c", code, json.dumps([SWITCH_SIZES, ENDPOINT_SIZES])],
                         env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == [m.digest for m in _digest_maps()]


def test_package_docstring_example():
    import doctest

    import innet.gen.regmap

    result = doctest.testmod(innet.gen.regmap)
    assert (result.failed, result.attempted) == (0, 4)


def test_numpy_integers_give_the_same_maps():
    import numpy as np

    assert switch_map(np.int64(4), np.uint8(2), np.int32(16)).as_dict() == \
        switch_map(4, 2, 16).as_dict()
    assert endpoint_map(np.int64(2), np.int16(4), np.uint32(16)).as_dict() == \
        endpoint_map(2, 4, 16).as_dict()


@pytest.mark.parametrize(("ids", "steps", "depth"), [
    (1, 1, 1), (2, 3, 200), (4, 16, 255), (4, 16, 256), (4, 16, 257), (2, 1000, 64),
    (256, 65535, 1 << 20)])
def test_the_endpoint_memory_window_follows_the_registers(ids, steps, depth):
    """The vector memory's window: a power of two at or above the registers and the memory, so
    one address bit tells them apart, on a bus just wide enough for its last word."""
    m = endpoint_map(ids, steps, depth)
    base, width = m.memory_base, m.bus_address_width
    assert m.memory_depth == depth == m.params["vector_depth"]
    assert base & (base - 1) == 0
    assert base >= m.size
    assert base >= depth
    assert base // 2 < max(m.size, depth)  # the smallest such power of two
    assert 1 << (width - 1) <= base + depth - 1 < 1 << width
    assert m.as_dict()["memory"] == {"base": base, "depth": depth, "bus_address_width": width}
    assert f"address has {width} bits" in to_markdown(m)
    assert switch_map(2, 2, 4).memory_base is None
    assert "memory" not in switch_map(2, 2, 4).as_dict()
