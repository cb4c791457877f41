"""Image encodings: round trips, byte stability, and the documented binary layout."""

import json
import struct
import zlib

import numpy as np
import pytest
from image_samples import PARAMS, mesh, sample

from innet.gen.image import (
    HEADER_BYTES,
    IMAGE_VERSION,
    MAGIC,
    Image,
    ImageError,
    MapParams,
    collective_configs,
    decode,
    detect,
    embeddings,
    encode,
    format_for,
    target_id,
    target_name,
    target_of,
    validate,
)
from innet.gen.regmap import Target

FORMATS = ["bin", "hex", "json"]


@pytest.fixture(scope="module")
def image():
    return sample()


def test_sample_is_valid(image):
    validate(image)
    assert image.target_count == 12
    assert image.write_count == sum(len(w) for w in image.writes)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(image, fmt):
    data = encode(image, fmt)
    decoded = decode(data)
    assert decoded == image
    assert encode(decoded, fmt) == data
    assert decode(data, fmt) == image
    if isinstance(data, str):
        assert decode(data.encode()) == image


@pytest.mark.parametrize("fmt", FORMATS)
def test_encodings_are_byte_stable(fmt):
    assert encode(sample(), fmt) == encode(sample(), fmt)


def test_encodings_carry_the_same_content(image):
    decoded = [decode(encode(image, fmt)) for fmt in FORMATS]
    assert decoded[0] == decoded[1] == decoded[2] == image
    assert all(d.header == image.header for d in decoded)


def test_binary_layout_matches_the_documentation(image):
    data = encode(image)
    assert data[:8] == MAGIC == b"INNETIMG"
    version, crc, length, targets, nodes = struct.unpack_from("<5I", data, 8)
    assert (version, length, targets, nodes) == (IMAGE_VERSION, len(data), 12, 6)
    assert crc == zlib.crc32(data[:12] + data[16:]) == image.header.crc32
    params = struct.unpack_from("<6I", data, 28)
    assert params == tuple(PARAMS.as_dict().values())
    topo_bytes = struct.unpack_from("<I", data, 52)[0]
    assert data[56:88].hex() == PARAMS.switch_map.digest
    assert data[88:120].hex() == PARAMS.endpoint_map.digest
    assert data[120:152].hex() == mesh().fingerprint
    assert HEADER_BYTES == 152
    assert len(data) % 4 == 0
    # Topology section: metadata length, columns, metadata, then the two port arrays.
    meta_len, columns = struct.unpack_from("<II", data, 152)
    meta = json.loads(data[160:160 + meta_len])
    assert meta == {"kind": "torus", "params": {"shape": [2, 3], "mesh": True},
                    "labels": [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]], "classes": [],
                    "failed_links": [], "failed_switches": []}
    arrays = 160 + meta_len + (-meta_len % 4)
    peer = np.frombuffer(data, "<i4", 6 * columns, arrays).reshape(6, columns)
    assert (peer == mesh().ports.peer).all()
    # Targets: id, count, (address, word) pairs, in target order, to the end of the image.
    pos = 152 + topo_bytes
    for t in range(12):
        tid, count = struct.unpack_from("<II", data, pos)
        pairs = struct.unpack_from(f"<{2 * count}I", data, pos + 8)
        assert tid == t
        assert list(zip(pairs[::2], pairs[1::2], strict=True)) == list(image.writes[t])
        pos += 8 + 8 * count
    assert pos == len(data)


def test_hex_is_the_binary_as_readmemh_words(image):
    text = encode(image, "hex")
    lines = text.splitlines()
    assert lines[0].startswith("// innet configuration image, format 1, ")
    words = [int(line, 16) for line in lines[1:]]
    assert all(len(line) == 8 for line in lines[1:])
    assert np.asarray(words, "<u4").tobytes() == encode(image)


def test_json_names_registers_and_decodes_fields(image):
    data = json.loads(encode(image, "json"))
    assert data["format"] == "innet-image"
    assert data["version"] == IMAGE_VERSION
    assert data["crc32"] == f"{image.header.crc32:#010x}"
    root = data["targets"][1]
    assert (root["target"], root["kind"], root["node"]) == (1, "switch", 1)
    entries = {e["register"]: e for e in root["registers"]}
    assert entries["coll[0].ctrl"]["fields"] == {"enable": 1, "op": "add", "dtype": "int32"}
    assert entries["coll[0].req_out"]["fields"] == {"port": 0, "root": 1}
    # node 1 has children 0, 2 and 4 behind its three ports, plus its own endpoint
    assert entries["coll[0].req_in"]["fields"] == {"ports": [0, 1, 2, "local"]}
    assert entries["route[1]"]["fields"] == {"port": "local", "valid": 1}
    endpoint = {e["register"]: e for e in data["targets"][6]["registers"]}
    assert endpoint["step[0].flags"]["fields"] == {"send": 1, "recv": 1, "reduce": 1, "cid": 0}
    for target in data["targets"]:
        writes = [(e["address"] + i, int(w, 16)) for e in target["registers"]
                  for i, w in enumerate(e["words"])]
        assert tuple(writes) == image.writes[target["target"]]


def test_multiword_port_masks_round_trip():
    """A radix-40 switch has 41-bit masks: two words per register, in every encoding."""
    from innet.gen.topology import LOCAL, Topology

    ports = [[(k + 1, 0) for k in range(40)]] + [[(0, k)] for k in range(40)]
    topo = Topology("star", {"leaves": 40}, [(u,) for u in range(41)], ports)
    params = MapParams(radix=40, collective_ids=1, routing_depth=41, step_depth=1,
                       vector_depth=1)
    smap, emap = params.switch_map, params.endpoint_map
    mask = (1 << 40) | (1 << 39) | 1
    writes = [smap.pack({"node_id": {"id": 0}, "coll[0].ctrl": {"enable": 1},
                         "coll[0].req_in": {"ports": mask}, "coll[0].req_out": {"root": 1},
                         "coll[0].resp_out": {"ports": mask}})]
    for leaf in range(1, 41):
        config = {"node_id": {"id": leaf}}
        if leaf in (1, 40):
            config.update({"coll[0].ctrl": {"enable": 1}, "coll[0].req_in": {"ports": 1 << 40},
                           "coll[0].resp_out": {"ports": 1 << 40}})
        writes.append(smap.pack(config))
    writes += [emap.pack({"node_id": {"id": u}}) for u in range(41)]
    image = Image(params, topo, writes)
    assert len(smap["coll[0].req_in"].split(mask)) == 2
    for fmt in FORMATS:
        assert decode(encode(image, fmt)) == image
    data = json.loads(encode(image, "json"))
    entry = next(e for e in data["targets"][0]["registers"] if e["register"] == "coll[0].req_in")
    assert entry["words"] == ["0x00000001", "0x00000180"]
    assert entry["fields"] == {"ports": [0, 39, "local"]}
    assert LOCAL == -1


def test_failures_are_part_of_the_content():
    import dataclasses

    image = dataclasses.replace(sample(), failed_links=((5, 2), (0, 3), (2, 5)),
                                failed_switches=(5,))
    assert image.failed_links == ((0, 3), (2, 5))
    assert image.failed_switches == (5,)
    for fmt in FORMATS:
        from innet.gen.image.binary import from_bytes
        from innet.gen.image.jsonform import from_json

        data = encode(image, fmt)
        parsed = (from_json(data)[1] if fmt == "json" else from_bytes(encode(image))[1])
        assert parsed == image
    assert encode(image) != encode(sample())
    with pytest.raises(TypeError, match=r"^Failed links must be \(u, v\) pairs and failed "
                                        r"switches node ids, not \[\(1, 2, 3\)\] and \(\)$"):
        Image(PARAMS, mesh(), sample().writes, [(1, 2, 3)])


def test_target_numbering():
    assert [target_of(t, 6) for t in (0, 5, 6, 11)] == [
        (Target.SWITCH, 0), (Target.SWITCH, 5), (Target.ENDPOINT, 0), (Target.ENDPOINT, 5)]
    assert all(target_id(*target_of(t, 6), 6) == t for t in range(12))
    assert target_id("endpoint", 2, 6) == 8
    assert target_name(8, 6) == "Endpoint 2 (target 8)"
    image = sample()
    assert image.kind(3) is Target.SWITCH
    assert image.node(9) == 3
    assert image.target("switch", 4) == 4
    assert list(image.endpoints()) == list(range(6, 12))


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: target_of(12, 6), ValueError, r"^Target 12 is out of range 0\.\.11$"),
    (lambda: target_id("router", 0, 6), ValueError,
     r"^Target kind must be switch or endpoint, not 'router'$"),
    (lambda: target_id("switch", 6, 6), ValueError, r"^Node 6 is out of range 0\.\.5$"),
    (lambda: MapParams(3, 2, 8, 4, "16"), TypeError,
     r"^Vector depth must be an integer, not '16'$"),
    (lambda: Image("params", mesh(), ()), TypeError, r"^Params must be a MapParams, not str$"),
    (lambda: Image(PARAMS, "mesh", ()), TypeError, r"^Topology must be a Topology, not str$"),
    (lambda: Image(PARAMS, mesh(), 5), TypeError,
     r"^Writes must be a sequence of write lists, not 5$"),
    (lambda: Image(PARAMS, mesh(), [()] * 11), ValueError,
     r"^Writes must have one list per target \(12\), not 11$"),
    (lambda: encode(sample(), "elf"), ValueError,
     r"^Image format must be one of bin, hex, json, not 'elf'$"),
    (lambda: encode("image"), TypeError, r"^Expected an Image, not 'image'$"),
    (lambda: decode(12), TypeError, r"^Image data must be bytes or str, not int$"),
    (lambda: detect(None), TypeError, r"^Image data must be bytes or str, not NoneType$"),
    (lambda: validate(None), TypeError, r"^Expected an Image, not None$"),
    (lambda: validate(sample(), "header"), TypeError, r"^Header must be a Header, not 'header'$"),
    (lambda: embeddings(None), TypeError, r"^Expected an Image, not None$"),
    (lambda: collective_configs(sample(), 99), ValueError,
     rf"^Collective id must be at most {sample().params.collective_ids - 1}, not 99$"),
    (lambda: target_id("switch", 1.5, 4), TypeError, r"^Node must be an integer, not 1\.5$"),
])
def test_api_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_encoding_a_word_that_does_not_fit_is_refused():
    from image_samples import set_writes

    bad = set_writes(sample(), 0, [(5, 1 << 32)])
    with pytest.raises(ValueError, match=r"^Target 0: write \(0x5, 0x100000000\) does not fit "
                                         r"in two 32-bit words$"):
        encode(bad)


def test_detect_and_suffixes(image):
    assert [detect(encode(image, f)) for f in FORMATS] == FORMATS
    assert detect(encode(image, "json").encode()) == "json"
    assert detect(encode(image, "hex").encode()) == "hex"
    assert detect(b"\x00\x01") == "bin"
    for wrapped in (bytearray, memoryview):  # as a file's buffer may come
        data = encode(image, "bin")
        assert detect(wrapped(data)) == "bin"
        assert encode(decode(wrapped(data)), "bin") == data
        assert detect(wrapped(encode(image, "json").encode())) == "json"
    assert [format_for(p) for p in ("a.img", "a.BIN", "a.hex", "a.mem", "a.json", "a")] == [
        "bin", "bin", "hex", "hex", "json", "bin"]


def test_binary_text_is_refused():
    with pytest.raises(ImageError, match=r"^Header: a binary image must be bytes, not text$"):
        decode("INNETIMG", "bin")
