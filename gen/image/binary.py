"""The binary encoding of a configuration image, and its ``$readmemh`` hex form.

Layout (format version 1)
-------------------------
Little-endian throughout; every section is a whole number of 32-bit words, so the image is a
sequence of words (which is what the hex form lists, one per line).

Header, 152 bytes:

====== ====== ========= ============================================================
offset bytes  type      field
====== ====== ========= ============================================================
0      8      bytes     magic ``b"INNETIMG"``
8      4      u32       format version (1)
12     4      u32       CRC-32 (:func:`zlib.crc32`) of the whole image without these 4 bytes
16     4      u32       length: bytes of the whole image
20     4      u32       target count (``2 * nodes``)
24     4      u32       nodes ``N``
28     4      u32       radix (map parameter)
32     4      u32       collective ids (map parameter)
36     4      u32       routing depth (map parameter)
40     4      u32       step depth (map parameter)
44     4      u32       vector depth (map parameter)
48     4      u32       node-id width (map parameter)
52     4      u32       bytes of the topology section
56     32     bytes     switch register-map digest (SHA-256)
88     32     bytes     endpoint register-map digest (SHA-256)
120    32     bytes     topology fingerprint (SHA-256)
====== ====== ========= ============================================================

Topology section (at 152): ``u32`` length ``J`` of the metadata, ``u32`` columns ``C`` of the
port arrays, the metadata (compact JSON with sorted keys: ``kind``, ``params``, ``labels``,
``classes`` of the topology, and the image's ``failed_links`` ``[[u, v], ...]`` and
``failed_switches``) padded with zero bytes to a multiple of 4, then ``peer`` and ``peer_port`` as
``N x C`` ``i32`` arrays in row-major order (``-1`` where a port is absent), as in
:class:`innet.gen.topology.PortMap`.

Targets, in target order (target ``n`` is the switch of node ``n``, target ``N + n`` its
endpoint): ``u32`` target id, ``u32`` write count ``W``, then ``W`` pairs ``u32`` address,
``u32`` word. The image ends right after the last target.

The hex form (``$readmemh``) is the same bytes as 32-bit words (little-endian), one per line,
eight lowercase hex digits, after one ``//`` comment line.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from innet.gen.image.model import IMAGE_VERSION, MAGIC, Header, Image, ImageError, MapParams
from innet.gen.jsonio import load_json

__all__ = [
    "HEADER_BYTES",
    "crc32",
    "from_bytes",
    "from_hex",
    "thaw",
    "to_bytes",
    "to_hex",
]

_HEAD = struct.Struct("<8sIIII8I32s32s32s")
#: Bytes of the fixed header.
HEADER_BYTES = _HEAD.size
_CRC = slice(12, 16)
_PARAMS = ("radix", "collective_ids", "routing_depth", "step_depth", "vector_depth",
           "node_id_width")
_U32 = (1 << 32) - 1


def _pad4(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def thaw(value: Any) -> Any:
    """A topology's frozen params as plain JSON data (mappings to dicts, tuples to lists)."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [thaw(v) for v in value]
    return value


_META = {"kind", "params", "labels", "classes", "failed_links", "failed_switches"}


def _topology_meta(image: Image) -> bytes:
    topology = image.topology
    meta = {"kind": topology.kind, "params": thaw(topology.params),
            "labels": [list(label) for label in topology.labels],
            "classes": list(topology.classes),
            "failed_links": [list(link) for link in image.failed_links],
            "failed_switches": list(image.failed_switches)}
    return json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()


def _u32(name: str, value: int) -> int:
    if not 0 <= value <= _U32:
        raise ValueError(f"{name} {value} does not fit in 32 bits")
    return value


def _body(image: Image) -> tuple[bytes, bytes]:
    """The header without the CRC and length patched in, and everything after it."""
    topo = image.topology
    peer = np.asarray(topo.ports.peer)
    meta = _topology_meta(image)
    section = b"".join([struct.pack("<II", len(meta), peer.shape[1]), _pad4(meta),
                        peer.astype("<i4").tobytes(),
                        np.asarray(topo.ports.peer_port).astype("<i4").tobytes()])
    parts = []
    for t, writes in enumerate(image.writes):
        parts.append(struct.pack("<II", t, len(writes)))
        for a, w in writes:
            if not (0 <= a <= _U32 and 0 <= w <= _U32):
                raise ValueError(f"Target {t}: write ({a:#x}, {w:#x}) does not fit in two "
                                 f"32-bit words")
        parts.append(np.asarray(writes, dtype=np.uint32).tobytes())
    body = section + b"".join(parts)
    p = image.params
    head = _HEAD.pack(MAGIC, IMAGE_VERSION, 0, 0, image.target_count, image.nodes,
                      *(_u32(_label(n), getattr(p, n)) for n in _PARAMS), len(section),
                      bytes.fromhex(p.switch_map.digest), bytes.fromhex(p.endpoint_map.digest),
                      bytes.fromhex(topo.fingerprint))
    return head, body


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _seal(head: bytes, body: bytes) -> bytes:
    data = bytearray(head + body)
    data[16:20] = struct.pack("<I", len(data))
    crc = zlib.crc32(bytes(data[:12] + data[16:]))
    data[_CRC] = struct.pack("<I", crc)
    return bytes(data)


def to_bytes(image: Image) -> bytes:
    """The binary encoding (see the module documentation); the same image gives the same bytes.

    Raises
    ------
    ValueError
        If an address or word does not fit in 32 bits, or the register-map parameters are out
        of range.
    """
    return _seal(*_body(image))


def crc32(image: Image) -> int:
    """The CRC-32 field of the image's binary encoding."""
    return struct.unpack_from("<I", to_bytes(image), 12)[0]


def to_hex(image: Image) -> str:
    """The ``$readmemh`` form: one ``//`` comment line, then one 32-bit word per line."""
    data = to_bytes(image)
    words = np.frombuffer(data, dtype="<u4")
    lines = [(f"// innet configuration image, format {IMAGE_VERSION}, {len(words)} words, "
             f"{image.nodes} nodes, {image.target_count} targets")]
    lines.extend(f"{w:08x}" for w in words.tolist())
    return "\n".join(lines) + "\n"


# -- decoding ------------------------------------------------------------------------------------

def _fail(reason: str, where: str = "Header") -> ImageError:
    return ImageError(reason, where)


def read_header(data: bytes) -> tuple[Header, dict[str, int]]:
    """Check the framing of a binary image (magic, version, length, CRC) and read its header.

    Returns the :class:`Header` and the other header fields (``length``, ``nodes``, the map
    parameters, ``topology_bytes``).

    Raises
    ------
    ImageError
        For bad magic, an unknown version, a truncated header or body, trailing bytes or a
        CRC mismatch.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"A binary image must be bytes, not {type(data).__name__}")
    data = bytes(data)
    size = len(data)
    if data[:len(MAGIC)] != MAGIC[:size]:
        raise _fail(f"bad magic {data[:len(MAGIC)]!r}, expected {MAGIC!r}: not an innet "
                    f"configuration image")
    if size < 12:
        raise _fail(f"truncated: the image has {size} bytes, the header alone {HEADER_BYTES}")
    version = struct.unpack_from("<I", data, 8)[0]
    if version != IMAGE_VERSION:
        raise _fail(f"unknown format version {version}; this innet reads version "
                    f"{IMAGE_VERSION}")
    if size < HEADER_BYTES:
        raise _fail(f"truncated: the image has {size} bytes, the header alone {HEADER_BYTES}")
    (_, _, crc, length, targets, nodes, *params, topo_bytes, sw, ep,
     fp) = _HEAD.unpack_from(data)
    if size < length:
        raise _fail(f"truncated: the image has {size} bytes, its header says {length}", "Body")
    if size > length:
        raise _fail(f"{size - length} trailing bytes after the {length} bytes the header "
                    f"announces", "Body")
    actual = zlib.crc32(data[:12] + data[16:])
    if actual != crc:
        raise _fail(f"CRC mismatch: the header says {crc:#010x}, the image gives {actual:#010x}")
    header = Header(MAGIC, version, sw.hex(), ep.hex(), fp.hex(), targets, crc)
    extra = {"length": length, "nodes": nodes, "topology_bytes": topo_bytes,
             **dict(zip(_PARAMS, params, strict=True))}
    return header, extra


class _Reader:
    """Bounds-checked little-endian reads from a byte string."""

    def __init__(self, data: bytes, pos: int, end: int) -> None:
        self.data, self.pos, self.end = data, pos, end

    def take(self, count: int, what: str) -> bytes:
        if count < 0 or self.pos + count > self.end:
            raise _fail(f"{what} needs {count} bytes at offset {self.pos}, but only "
                        f"{self.end - self.pos} remain", "Body")
        chunk = self.data[self.pos:self.pos + count]
        self.pos += count
        return chunk

    def u32(self, what: str) -> int:
        return struct.unpack("<I", self.take(4, what))[0]


def _topology(data: bytes, start: int, size: int, nodes: int) -> tuple[Any, Any, Any]:
    from innet.gen.topology import PortMap, Topology

    where = "Topology section"
    if size % 4 or size < 8:
        raise _fail(f"its length {size} is not a multiple of 4 of at least 8", where)
    r = _Reader(data, start, start + size)
    meta_len, columns = r.u32("metadata length"), r.u32("port columns")
    meta_raw = r.take(meta_len, "metadata")
    pad = r.take(-meta_len % 4, "padding")
    if pad.strip(b"\0"):
        raise _fail("metadata padding is not zero", where)
    cells = nodes * columns
    if 8 * cells != r.end - r.pos:
        raise _fail(f"port arrays of {nodes} x {columns} need {8 * cells} bytes, the section "
                    f"has {r.end - r.pos} left", where)
    peer = np.frombuffer(r.take(4 * cells, "peer array"), dtype="<i4").reshape(nodes, columns)
    peer_port = np.frombuffer(r.take(4 * cells, "peer-port array"),
                              dtype="<i4").reshape(nodes, columns)
    try:
        meta = load_json(meta_raw.decode("utf-8"))
        if not isinstance(meta, dict) or set(meta) != _META:
            raise ValueError(f"metadata must be an object with {', '.join(sorted(_META))}")
        topology = Topology(kind=meta["kind"], params=meta["params"],
                            labels=tuple(tuple(label) for label in meta["labels"]),
                            ports=PortMap(peer, peer_port), classes=tuple(meta["classes"]))
        return topology, meta["failed_links"], meta["failed_switches"]
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            OverflowError) as error:
        raise _fail(f"not a valid topology: {error}", where) from None


def from_bytes(data: bytes) -> tuple[Header, Image]:
    """Parse a binary image: framing, header, topology and targets (no semantic checks).

    Returns the header as recorded and the image content;
    :func:`~innet.gen.image.validate` checks the rest.

    Raises
    ------
    ImageError
        On any structural problem (see :func:`read_header`), a target id out of range, out of
        order or repeated, or bytes left after the last target.
    """
    header, extra = read_header(data)
    data = bytes(data)
    nodes, targets = extra["nodes"], header.target_count
    if targets != 2 * nodes:
        raise _fail(f"target count {targets} is not twice the {nodes} nodes")
    topo_end = HEADER_BYTES + extra["topology_bytes"]
    if topo_end > len(data):
        raise _fail(f"the topology section of {extra['topology_bytes']} bytes runs past the "
                    f"end of the image")
    if 8 * targets > len(data) - topo_end:  # before any array of the node count is made
        raise _fail(f"the blocks of {targets} targets need at least {8 * targets} bytes, the "
                    f"image has {len(data) - topo_end} after its topology section", "Body")
    topology, links, switches = _topology(data, HEADER_BYTES, extra["topology_bytes"], nodes)
    r = _Reader(data, topo_end, len(data))
    writes = []
    for expected in range(targets):
        t = r.u32("target id")
        where = f"Target block {expected}"
        if t >= targets:
            raise _fail(f"target id {t} is out of range 0..{targets - 1}", where)
        if t != expected:
            raise _fail(f"target id {t} is out of order; expected target {expected}", where)
        count = r.u32("write count")
        raw = r.take(8 * count, f"{count} writes of target {t}")
        pairs = np.frombuffer(raw, dtype="<u4").reshape(count, 2).tolist()
        writes.append(tuple(map(tuple, pairs)))
    if r.pos != len(data):
        raise _fail(f"{len(data) - r.pos} bytes after the last target", "Body")
    params = MapParams(**{name: extra[name] for name in _PARAMS})
    try:
        image = Image(params, topology, tuple(writes), links, switches)
    except TypeError as error:
        raise _fail(str(error), "Topology section") from None
    return header, image


def from_hex(text: str) -> tuple[Header, Image]:
    """Parse the ``$readmemh`` form (see :func:`to_hex`); comments and blank lines ignored.

    Raises
    ------
    ImageError
        If a line is not a 32-bit hex word, or as :func:`from_bytes`.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("ascii")
        except UnicodeDecodeError:
            raise _fail("the hex image is not ASCII text", "Hex") from None
    words = []
    for number, line in enumerate(text.splitlines(), 1):
        token = line.split("//", 1)[0].strip()
        if not token:
            continue
        if (len(token) > 8 or token.startswith(("+", "-"))
                or not all(c in "0123456789abcdefABCDEF" for c in token)):
            raise _fail(f"line {number}: {token[:20]!r} is not a 32-bit hex word", "Hex")
        words.append(int(token, 16))
    return from_bytes(np.asarray(words, dtype="<u4").tobytes())
