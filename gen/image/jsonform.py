"""The JSON encoding of a configuration image: the same content, readable by people.

.. code-block:: text

    {
      "format": "innet-image", "version": 1,
      "crc32": "0x1234abcd",             CRC-32 of the binary encoding of the same content
      "switch_map_digest": "...", "endpoint_map_digest": "...", "fingerprint": "...",
      "target_count": 8,
      "params": {"radix": 2, "collective_ids": 1, ...},
      "topology": {...},                  innet.gen.topology.Topology.to_dict()
      "failures": {"links": [[u, v], ...], "switches": [...]},
      "targets": [
        {"target": 0, "kind": "switch", "node": 0, "registers": [
          {"register": "node_id", "address": 5, "words": ["0x00000000"], "fields": {"id": 0}},
          {"register": "coll[0].req_in", "address": 17, "words": ["0x00000005"],
           "fields": {"ports": [0, "local"]}},
          ...]},
        ...]
    }

The bus writes are ``address`` and ``words`` (word ``i`` goes to ``address + i``). ``register``
and ``fields`` are the decoded view for people: enumerations by name (``"add"``,
``"fp32"``), switch port fields as numbers or ``"local"``, port masks as lists of ports. When
present they must agree with the words; an entry whose words do not form a register carries
``address`` and ``words`` only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from innet.gen.image.binary import crc32
from innet.gen.image.model import (
    IMAGE_VERSION,
    MAGIC,
    Header,
    Image,
    ImageError,
    MapParams,
    target_of,
)
from innet.gen.jsonio import load_json
from innet.gen.regmap import Map, MappedRegister, mask_ports

__all__ = ["FORMAT", "check_annotations", "from_json", "render_fields", "to_json"]

#: The ``"format"`` member of an image in JSON.
FORMAT = "innet-image"

_TOP = ("format", "version", "crc32", "switch_map_digest", "endpoint_map_digest", "fingerprint",
        "target_count", "params", "topology", "failures", "targets")


# -- rendering -------------------------------------------------------------------------------

def render_fields(regmap: Map, reg: MappedRegister, value: int) -> dict[str, Any]:
    """The decoded fields of a register value for people (see the module documentation).

    Raises
    ------
    ValueError
        If the value does not decode (see :meth:`MappedRegister.decode`).
    """
    codes = reg.decode(value)
    radix = regmap.params.get("radix") if regmap.name == "switch" else None
    out: dict[str, Any] = {}
    for f in reg.fields:
        code = codes[f.name]
        if f.enum is not None:
            out[f.name] = f.enum(code).name.lower()
        elif radix is not None and f.name == "ports":
            out[f.name] = ["local" if p < 0 else p for p in mask_ports(code, radix)]
        elif radix is not None and f.name == "port":
            out[f.name] = "local" if code == radix else code
        else:
            out[f.name] = code
    return out


def _groups(regmap: Map, writes) -> Iterator[tuple[int, list[int], MappedRegister | None]]:
    """Writes grouped into whole registers where they form one, else one word at a time."""
    i = 0
    while i < len(writes):
        address = writes[i][0]
        reg = regmap.at(address)
        n = reg.words if reg is not None and reg.address == address else 1
        run = writes[i:i + n]
        if n > 1 and [a for a, _ in run] != list(range(address, address + n)):
            n, run = 1, writes[i:i + 1]
        yield address, [w for _, w in run], reg if n == (reg.words if reg else 0) else None
        i += n


def _entries(image: Image, target: int) -> list[dict[str, Any]]:
    regmap = image.map(target)
    entries = []
    for address, words, reg in _groups(regmap, image.writes[target]):
        entry: dict[str, Any] = {"address": address,
                                 "words": [f"{w:#010x}" for w in words]}
        if reg is not None:
            try:
                fields = render_fields(regmap, reg, reg.join(words))
            except ValueError:
                pass
            else:
                entry = {"register": reg.name, **entry, "fields": fields}
        entries.append(entry)
    return entries


def to_dict(image: Image) -> dict[str, Any]:
    """The JSON-ready form of an image (see :func:`to_json`)."""
    p = image.params
    targets = []
    for t in range(image.target_count):
        kind, node = target_of(t, image.nodes)
        targets.append({"target": t, "kind": kind.name.lower(), "node": node,
                        "registers": _entries(image, t)})
    return {"format": FORMAT, "version": IMAGE_VERSION, "crc32": f"{crc32(image):#010x}",
            "switch_map_digest": p.switch_map.digest,
            "endpoint_map_digest": p.endpoint_map.digest,
            "fingerprint": image.fingerprint, "target_count": image.target_count,
            "params": p.as_dict(), "topology": image.topology.to_dict(),
            "failures": {"links": [list(link) for link in image.failed_links],
                         "switches": list(image.failed_switches)},
            "targets": targets}


def _scalars(value: Any) -> bool:
    return isinstance(value, list) and not any(isinstance(x, (dict, list)) for x in value)


def _inline(value: Any) -> bool:
    """Scalars, lists of scalars or of such lists, and records of those stay on one line."""
    if isinstance(value, list):
        return all(not isinstance(x, (dict, list)) or _scalars(x) for x in value)
    if isinstance(value, dict):
        return all(not isinstance(x, (dict, list)) or _scalars(x)
                   or (isinstance(x, dict) and _inline(x)) for x in value.values())
    return True


def _dumps(value: Any, indent: str = "") -> str:
    """JSON text, indented, with every :func:`_inline` value on one line."""
    if _inline(value):
        return json.dumps(value, separators=(", ", ": "))
    inner = indent + "  "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    items = [inner + _dumps(v, inner) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + indent + "]"


def to_json(image: Image) -> str:
    """The JSON encoding (see the module documentation); the same image gives the same text.

    Raises
    ------
    ValueError
        As :func:`~innet.gen.image.binary.to_bytes` (the CRC is the binary encoding's).
    """
    return _dumps(to_dict(image)) + "\n"


# -- decoding --------------------------------------------------------------------------------

def _fail(reason: str, where: str = "JSON") -> ImageError:
    return ImageError(reason, where)


def _int(value: Any, what: str, where: str = "JSON") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{what} must be an integer, not {value!r:.60}", where)
    return value


def _word(text: Any, what: str, where: str) -> int:
    if (not isinstance(text, str) or not text.startswith("0x") or not 3 <= len(text) <= 10
            or not all(c in "0123456789abcdefABCDEF" for c in text[2:])):
        raise _fail(f"{what} must be a 32-bit hex word like \"0x0000002a\", not {text!r:.60}",
                    where)
    return int(text, 16)


def _digest(value: Any, what: str) -> str:
    if (not isinstance(value, str) or len(value) != 64
            or not all(c in "0123456789abcdef" for c in value)):
        raise _fail(f"{what} must be 64 lowercase hex digits, not {value!r:.80}", "Header")
    return value


def from_json(text: str | bytes) -> tuple[Header, Image, list[list[dict[str, Any]]]]:
    """Parse the JSON encoding.

    Returns the header as recorded, the image content, and the register entries per target
    (for :func:`check_annotations`, run after validation).

    Raises
    ------
    ImageError
        If the text is not JSON, lacks a member, or holds a value of the wrong type.
    """
    try:
        data = load_json(text)
    except ValueError as error:
        raise _fail(f"malformed: {error}") from None
    if not isinstance(data, dict):
        raise _fail(f"an image must be a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise _fail(f"bad magic: format is {data.get('format')!r:.40}, expected {FORMAT!r}: "
                    f"not an innet configuration image", "Header")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _fail(f"format version must be an integer, not {version!r:.20}", "Header")
    if version != IMAGE_VERSION:
        raise _fail(f"unknown format version {version}; this innet reads version "
                    f"{IMAGE_VERSION}", "Header")
    missing = [k for k in _TOP if k not in data]
    if missing:
        raise _fail(f"lacks {', '.join(missing)}")
    unknown = sorted(set(data) - set(_TOP))
    if unknown:
        raise _fail(f"has unknown members {', '.join(unknown)}")
    crc = _word(data["crc32"], "crc32", "Header")
    targets = _int(data["target_count"], "target_count", "Header")
    header = Header(MAGIC, version, _digest(data["switch_map_digest"], "switch_map_digest"),
                    _digest(data["endpoint_map_digest"], "endpoint_map_digest"),
                    _digest(data["fingerprint"], "fingerprint"), targets, crc)
    params = data["params"]
    names = list(MapParams.__dataclass_fields__)
    if not isinstance(params, dict) or sorted(params) != sorted(names):
        raise _fail(f"params must be an object with {', '.join(names)}, not {params!r:.80}",
                    "Header")
    for name, value in params.items():
        _int(value, f"params.{name}", "Header")
    params = MapParams(**params)
    try:
        from innet.gen.topology import Topology

        topology = Topology.from_dict(data["topology"])
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            OverflowError) as error:
        raise _fail(f"not a valid topology: {error}", "Topology") from None
    if targets != 2 * topology.nodes:
        raise _fail(f"target count {targets} is not twice the {topology.nodes} nodes",
                    "Header")
    blocks = data["targets"]
    if not isinstance(blocks, list):
        raise _fail("targets must be a list")
    if len(blocks) != targets:
        raise _fail(f"lists {len(blocks)} targets, the header says {targets}")
    writes, annotations = [], []
    for expected, block in enumerate(blocks):
        where = f"Target block {expected}"
        if not isinstance(block, dict) or sorted(block) != ["kind", "node", "registers",
                                                            "target"]:
            raise _fail("must be an object with target, kind, node, registers", where)
        t = _int(block["target"], "target", where)
        if not 0 <= t < targets:
            raise _fail(f"target id {t} is out of range 0..{targets - 1}", where)
        if t != expected:
            raise _fail(f"target id {t} is out of order; expected target {expected}", where)
        kind, node = target_of(t, topology.nodes)
        if (block["kind"], block["node"]) != (kind.name.lower(), node):
            raise _fail(f"kind {block['kind']!r:.20} and node {block['node']!r:.20} do not "
                        f"match target {t}, the {kind.name.lower()} of node {node}", where)
        entries = block["registers"]
        if not isinstance(entries, list):
            raise _fail("registers must be a list", where)
        pairs = []
        for k, entry in enumerate(entries):
            at = f"{where}, entry {k}"
            if not isinstance(entry, dict) or not {"address", "words"} <= set(entry) \
                    or not set(entry) <= {"register", "address", "words", "fields"}:
                raise _fail("must be an object with address, words and optionally register, "
                            "fields", at)
            address = _int(entry["address"], "address", at)
            if not 0 <= address < 1 << 32:
                raise _fail(f"address {address} does not fit in 32 bits", at)
            words = entry["words"]
            if not isinstance(words, list) or not words:
                raise _fail("words must be a non-empty list", at)
            pairs.extend((address + i, _word(w, f"word {i}", at)) for i, w in enumerate(words))
        writes.append(tuple(pairs))
        annotations.append(entries)
    failures = data["failures"]
    if not isinstance(failures, dict) or sorted(failures) != ["links", "switches"] \
            or not isinstance(failures["links"], list) \
            or not isinstance(failures["switches"], list):
        raise _fail("failures must be an object with lists links and switches")
    try:
        image = Image(params, topology, tuple(writes), failures["links"], failures["switches"])
    except TypeError as error:
        raise _fail(str(error)) from None
    return header, image, annotations


def check_annotations(image: Image, annotations: list[list[dict[str, Any]]]) -> None:
    """Check that every entry's ``register`` and ``fields`` agree with its words.

    Raises
    ------
    ImageError
        Naming the target, the register and the member that disagrees.
    """
    for t, given in enumerate(annotations):
        truth = {e["address"]: e for e in _entries(image, t)}
        for entry in given:
            if not {"register", "fields"} & set(entry):
                continue
            known = truth.get(entry["address"], {})
            if len(known.get("words", ())) != len(entry["words"]):
                known = {}
            name = known.get("register", f"address {entry['address']:#x}")
            where = f"{image.name(t)}, {name}"
            for key in ("register", "fields"):
                if key in entry and entry[key] != known.get(key):
                    shown = json.dumps(known[key]) if key in known else "no whole register"
                    raise ImageError(f"{key} {json.dumps(entry[key])[:80]} disagrees with "
                                     f"the words, which give {shown[:80]}", where, target=t,
                                     register=known.get("register"))
