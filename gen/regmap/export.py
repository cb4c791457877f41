"""Exports of a register map: canonical JSON, a C header and a Markdown table.

All three are generated from a :class:`~innet.gen.regmap.addrmap.Map` and are byte-stable: the
same map gives the same bytes (no timestamps, no paths, sorted JSON keys), so they can be
committed and diffed. The C header follows LiteX's ``csr.h`` naming (``..._OFFSET``,
``..._SIZE``) with field ``..._SHIFT``, ``..._WIDTH``, ``..._MASK`` and ``..._RESET``; arrays
get ``..._BASE``, ``..._COUNT`` and ``..._STRIDE``, and their registers' ``..._OFFSET`` is a
function-like macro of the element index.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from innet.gen.checks import check_type
from innet.gen.regmap.addrmap import Map, c_stem
from innet.gen.regmap.model import Array, Cluster, Field, Register

__all__ = ["to_c_header", "to_json", "to_markdown"]

_INDEX_NAMES = "ijklmn"


def to_json(regmap: Map) -> str:
    """The canonical JSON register map (:meth:`Map.as_dict`), indented, sorted keys.

    Raises
    ------
    TypeError
        If ``regmap`` is not a :class:`Map`.
    """
    regmap = check_type("Register map", regmap, Map)
    return json.dumps(regmap.as_dict(), indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class _Entry:
    """A register or array of the declaration, once, with its address as a function of indices."""

    display: str  # "coll[i].ctrl"
    template: str  # "coll[].ctrl"
    address: int  # with every index 0
    strides: tuple[int, ...]  # of the enclosing arrays, outermost first
    counts: tuple[int, ...]
    node: Register | Array

    @property
    def indices(self) -> tuple[str, ...]:
        return tuple(_INDEX_NAMES[k] for k in range(len(self.strides)))


def _entries(placed, base: int = 0, display: str = "", template: str = "",
             strides: tuple[int, ...] = (), counts: tuple[int, ...] = ()) -> Iterator[_Entry]:
    for offset, m in placed:
        address = base + offset
        name, tname = display + m.name, template + m.name
        if isinstance(m, Register):
            yield _Entry(name, tname, address, strides, counts, m)
        elif isinstance(m, Cluster):
            yield from _entries(m.placed, address, name + ".", tname + ".", strides, counts)
        else:
            yield _Entry(name, tname, address, strides, counts, m)
            var = _INDEX_NAMES[len(strides)]
            inner = (*strides, m.stride), (*counts, m.count)
            if isinstance(m.element, Register):
                yield _Entry(f"{name}[{var}]", f"{tname}[]", address, *inner, m.element)
            else:
                yield from _entries(m.element.placed, address, f"{name}[{var}].",
                                    f"{tname}[].", *inner)


def _access(register: Register) -> str:
    return "/".join(dict.fromkeys(f.access.name for f in register.fields))


def _field_access(f: Field) -> str:
    return "RO volatile" if f.volatile else f.access.name


def _enums(regmap: Map) -> list[type[enum.IntEnum]]:
    found: dict[str, type[enum.IntEnum]] = {}
    for r in regmap.templates:
        for f in r.fields:
            if f.enum is not None:
                found.setdefault(f.enum.__name__, f.enum)
    return list(found.values())


# -- C header ------------------------------------------------------------------------------------

def _c_int(value: int) -> str | None:
    if value <= 0xFFFF_FFFF:
        return f"{value:#x}u" if value > 9 else f"{value}u"
    if value <= 0xFFFF_FFFF_FFFF_FFFF:
        return f"{value:#x}ull"
    return None


def _c_desc(desc: str) -> str:
    return f": {desc.replace('*/', '* /')}" if desc else ""


def _c_address(entry: _Entry, address: int, digits: int) -> str:
    base = f"0x{address:0{digits}x}u"
    if not entry.strides:
        return base
    terms = " + ".join(f"{s}u * ({v})" for s, v in zip(entry.strides, entry.indices,
                                                         strict=True))
    return f"({base} + {terms})"


def to_c_header(regmap: Map, prefix: str = "INNET") -> str:
    """A C header with every address, size, field shift, width, mask and reset of ``regmap``.

    Names are ``{prefix}_{MAP}_{PATH}_...`` with the path's dots and array brackets turned into
    underscores (``coll[i].ctrl`` -> ``INNET_SWITCH_COLL_CTRL_OFFSET(i)``). ``_MASK`` and
    ``_RESET`` are emitted when they fit in 64 bits (``u`` or ``ull`` literals). Enumerations
    used by fields get ``{prefix}_{ENUM}_{MEMBER}`` constants, guarded so that the headers of
    several maps can be included together.

    Raises
    ------
    TypeError
        If ``regmap`` is not a :class:`Map`.
    """
    check_type("Register map", regmap, Map)
    if not isinstance(prefix, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
        raise ValueError(f"Prefix must be a C identifier such as INNET, not {prefix!r:.60}")
    p = f"{prefix}_{regmap.name.upper()}"
    digits = max(2, -(-regmap.address_width // 4))
    params = " ".join(f"{k}={v}" for k, v in sorted(regmap.params.items()))
    lines = [
        (f"/* {regmap.name} register map, format version {regmap.version}. Generated by innet "
         "regmap; do not edit."),
        f" * {regmap.desc}" if regmap.desc else " *",
        f" * Parameters: {params}" if params else " * Parameters: none",
        " *",
        " * The configuration bus is word-addressed: _OFFSET and _BASE count 32-bit words",
        " * (byte address = 4 * offset), _SIZE and _STRIDE count words. A register of several",
        " * words holds bits 31..0 in its first word. A field's _SHIFT and _MASK place it in",
        " * the register value; _MASK and _RESET are given when they fit in 64 bits.",
        " */",
        f"#ifndef {p}_REGMAP_H",
        f"#define {p}_REGMAP_H",
        "",
        f"#define {p}_VERSION {regmap.version}u",
        f'#define {p}_DIGEST "{regmap.digest}"',
        f"#define {p}_SIZE {_c_int(regmap.size)}",
        f"#define {p}_ADDRESS_WIDTH {regmap.address_width}u",
    ]
    if regmap.memory_depth is not None:
        lines += [
            f"/* The memory window: word {p}_MEMORY_BASE + e is word e of the memory; the bus's",
            f" * address has {p}_BUS_ADDRESS_WIDTH bits. */",
            f"#define {p}_MEMORY_BASE {_c_int(regmap.memory_base)}",
            f"#define {p}_MEMORY_DEPTH {_c_int(regmap.memory_depth)}",
            f"#define {p}_BUS_ADDRESS_WIDTH {regmap.bus_address_width}u",
        ]
    for kind in _enums(regmap):
        guard = f"{prefix}_{kind.__name__.upper()}_ENUM"
        lines += ["", f"#ifndef {guard}", f"#define {guard}"]
        lines += [f"#define {prefix}_{kind.__name__.upper()}_{m.name} {int(m)}u" for m in kind]
        lines.append("#endif")
    for entry in _entries(regmap.placed):
        stem = f"{p}_{c_stem(entry.template)}"
        args = f"({', '.join(entry.indices)})" if entry.indices else ""
        node = entry.node
        lines.append("")
        if isinstance(node, Array):
            lines.append(f"/* {entry.display}[{_INDEX_NAMES[len(entry.strides)]}], "
                         f"{node.count} elements{_c_desc(node.desc)} */")
            lines += [f"#define {stem}_BASE{args} {_c_address(entry, entry.address, digits)}",
                      f"#define {stem}_COUNT {node.count}u",
                      f"#define {stem}_STRIDE {node.stride}u"]
            continue
        lines.append(f"/* {entry.display} ({_access(node)}){_c_desc(node.desc)} */")
        lines += [f"#define {stem}_OFFSET{args} {_c_address(entry, entry.address, digits)}",
                  f"#define {stem}_SIZE {node.words}u"]
        if _c_int(node.reset) is not None:
            lines.append(f"#define {stem}_RESET {_c_int(node.reset)}")
        for f in node.fields:
            fs = f"{stem}_{f.name.upper()}"
            lines += [f"#define {fs}_SHIFT {f.offset}u", f"#define {fs}_WIDTH {f.width}u"]
            if _c_int(f.mask) is not None:
                lines += [f"#define {fs}_MASK {_c_int(f.mask)}",
                          f"#define {fs}_RESET {_c_int(f.reset)}"]
    lines += ["", f"#endif /* {p}_REGMAP_H */", ""]
    return "\n".join(lines)


# -- Markdown ------------------------------------------------------------------------------------

def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _md_memory(regmap: Map) -> str:
    """The sentence on a map's memory window."""
    digits = max(2, -(-regmap.bus_address_width // 4))
    first, last = regmap.memory_base, regmap.memory_base + regmap.memory_depth - 1
    return (f"A memory of {regmap.memory_depth} words shares the bus: its word `e` is at "
            f"address `0x{first:0{digits}x} + e` (up to `0x{last:0{digits}x}`), and the bus's "
            f"address has {regmap.bus_address_width} bits.")


def _md_address(entry: _Entry, digits: int) -> str:
    text = f"`0x{entry.address:0{digits}x}"
    for stride, var in zip(entry.strides, entry.indices, strict=True):
        text += f" + {stride}{var}" if stride != 1 else f" + {var}"
    text += "`"
    if entry.strides:
        text += ", " + ", ".join(f"{v} < {c}" for v, c in zip(entry.indices, entry.counts,
                                                               strict=True))
    return text


def _md_range(f: Field) -> str:
    if f.enum is not None:
        return ", ".join(f"{int(m)} {m.name.lower()}" for m in f.enum)
    most = (1 << f.width) - 1 if f.max is None else f.max
    return f"0..{most}" if most < 1 << 16 else f"0..{most:#x}"


def _md_bits(f: Field) -> str:
    return f"{f.offset}" if f.width == 1 else f"{f.offset + f.width - 1}:{f.offset}"


def to_markdown(regmap: Map) -> str:
    """A Markdown description: a summary table of every register, then each register's fields.

    Arrays appear once, with their address as a function of the element index
    (``0x20 + 8i, i < 4``).

    Raises
    ------
    TypeError
        If ``regmap`` is not a :class:`Map`.
    """
    check_type("Register map", regmap, Map)
    digits = max(2, -(-regmap.address_width // 4))
    params = ", ".join(f"`{k}={v}`" for k, v in sorted(regmap.params.items()))
    entries = [e for e in _entries(regmap.placed) if isinstance(e.node, Register)]
    lines = [
        f"# `{regmap.name}` register map",
        "",
        *([_md(regmap.desc), ""] if regmap.desc else []),
        (f"Format version {regmap.version}; parameters {params or 'none'}; {regmap.size} "
         f"words, {regmap.address_width} address bits; digest `{regmap.digest}`."),
        "",
        ("Word-addressed 32-bit registers: an address counts words (byte address = 4 x "
         "address); a register of several words holds bits 31..0 in its first word."),
        "",
        *([_md_memory(regmap), ""] if regmap.memory_depth is not None else []),
        "| address | register | words | access | reset | description |",
        "|---|---|---|---|---|---|",
    ]
    for e in entries:
        r = e.node
        lines.append(f"| {_md_address(e, digits)} | `{e.display}` | {r.words} | {_access(r)} | "
                     f"`{r.reset:#x}` | {_md(r.desc)} |")
    lines += ["", "## Fields"]
    for e in entries:
        r = e.node
        where = _md_address(e, digits)
        lines += ["", f"### `{e.display}`", "",
                  f"{_md(r.desc)}; at {where}." if r.desc else f"At {where}.", "",
                  "| bits | field | access | reset | values | description |",
                  "|---|---|---|---|---|---|"]
        for f in r.fields:
            lines.append(f"| {_md_bits(f)} | `{f.name}` | {_field_access(f)} | "
                         f"{f.format(f.reset)} | {_md(_md_range(f))} | {_md(f.desc)} |")
    lines.append("")
    return "\n".join(lines)
