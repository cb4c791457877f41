"""A laid-out register map: every register's address, lookup, encode/decode, bus writes, digest.

:class:`Map` lays out a declaration made of :mod:`innet.gen.regmap.model` blocks from word
address 0 and is what everything else is generated from: the RTL register files enumerate
:attr:`Map.registers`, a configuration image is :meth:`Map.pack` of field values per target and
is checked back with :meth:`Map.unpack`, the exports render :meth:`Map.as_dict`, and
:attr:`Map.digest` identifies the layout in image headers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from innet.gen.regmap.model import (
    FORMAT_VERSION,
    WORD_BITS,
    Access,
    Array,
    Cluster,
    Field,
    Member,
    Register,
    check_name,
    check_param,
    layout,
)

__all__ = ["ArrayInfo", "Map", "MappedRegister", "c_stem"]

_WORD_MASK = (1 << WORD_BITS) - 1

#: Field accesses a configuration image may write: ``RW`` fields take the value, a 1 in an
#: ``RW1C`` field clears the flag.
_IMAGE_ACCESS = (Access.RW, Access.RW1C)


def _words(address: int, size: int) -> str:
    return f"{address:#x}..{address + size - 1:#x}"


@dataclass(frozen=True)
class MappedRegister:
    """A register placed in a :class:`Map`: its full name, word address and declaration.

    Attributes
    ----------
    name : str
        Full name, e.g. ``"coll[2].req_out"`` or ``"route[5]"``.
    template : str
        The name with array indices removed, e.g. ``"coll[].req_out"``; registers of the same
        template share their fields.
    address : int
        Word address of word 0.
    register : Register
        The declaration (fields with their offsets).
    index : tuple of int
        The array indices in :attr:`name`, outermost first.
    """

    name: str
    template: str
    address: int
    register: Register
    index: tuple[int, ...] = ()

    @property
    def words(self) -> int:
        """Number of 32-bit words (consecutive addresses from :attr:`address`)."""
        return self.register.words

    @property
    def fields(self) -> tuple[Field, ...]:
        """The fields, with their offsets."""
        return self.register.fields

    @property
    def reset(self) -> int:
        """The register value after reset."""
        return self.register.reset

    @cached_property
    def writable(self) -> bool:
        """Whether a configuration image may write the register: it has ``RW`` fields, or
        ``RW1C`` flags an image may clear."""
        return any(f.access in _IMAGE_ACCESS for f in self.fields)

    def field(self, name: str) -> Field:
        """The field called ``name``."""
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"Register {self.name!r} has no field {name!r}")

    def mask(self, *access: Access) -> int:
        """The bits of the fields with one of the given accesses (all fields if none given)."""
        return self.register.mask(*access)

    def encode(self, values: Mapping[str, Any] | None = None) -> int:
        """The register value holding ``values`` (field name -> value); other fields reset.

        Raises
        ------
        ValueError
            On an unknown field name or a value that does not fit (see :meth:`Field.check`);
            the message names the register and the field.
        TypeError
            On a value that is not an integer (or enumeration member or name).
        """
        values = dict(values or {})
        unknown = sorted(set(values) - {f.name for f in self.fields})
        if unknown:
            names = ", ".join(f.name for f in self.fields)
            raise ValueError(f"Register {self.name!r} has no field {unknown[0]!r} "
                             f"(fields: {names})")
        value = 0
        for f in self.fields:
            code = f.check(values[f.name], f"Field '{self.name}.{f.name}'") \
                if f.name in values else f.reset
            value |= code << f.offset
        return value

    def decode(self, value: int) -> dict[str, int]:
        """The field values (name -> int code) of a register value, checked.

        Raises
        ------
        TypeError
            If ``value`` is not an integer.
        ValueError
            If it does not fit in the register, sets bits outside every field, or holds a code
            that is not a member of an enumerated field.
        """
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"Register {self.name!r} value must be an integer, not {value!r}")
        bits = self.words * WORD_BITS
        if not 0 <= value < 1 << bits:
            raise ValueError(f"Register {self.name!r} value {value:#x} does not fit in "
                             f"{bits} bits")
        reserved = value & ~self.register.mask()
        if reserved:
            raise ValueError(f"Register {self.name!r} value {value:#x} sets reserved bits "
                             f"{reserved:#x}")
        fields = {}
        for f in self.fields:
            code = (value >> f.offset) & ((1 << f.width) - 1)
            fields[f.name] = f.check(code, f"Field '{self.name}.{f.name}'")
        return fields

    def split(self, value: int) -> tuple[int, ...]:
        """A register value as its bus words, word 0 (bits 31..0, lowest address) first."""
        return tuple((value >> (WORD_BITS * w)) & _WORD_MASK for w in range(self.words))

    def join(self, words: Iterable[int]) -> int:
        """The register value from its bus words, word 0 first (the inverse of :meth:`split`)."""
        return sum(word << (WORD_BITS * w) for w, word in enumerate(words))

    def format(self, value: int) -> str:
        """A readable one-line form of a value: ``enable=1 op=add dtype=fp32``."""
        fields = self.decode(value)
        return " ".join(f"{f.name}={f.format(fields[f.name])}" for f in self.fields)


@dataclass(frozen=True)
class ArrayInfo:
    """An array placed in a :class:`Map`: element ``i`` starts at ``base + i * stride``.

    Attributes
    ----------
    name : str
        Full name, e.g. ``"coll"`` or ``"a[1].b"`` for an array inside an array element.
    template : str
        The name with array indices removed.
    base : int
        Word address of element 0.
    count : int
        Number of elements.
    stride : int
        Words between elements (a power of two).
    element_size : int
        Words used by one element (at most :attr:`stride`).
    """

    name: str
    template: str
    base: int
    count: int
    stride: int
    element_size: int


class Map:
    """A laid-out register map: the single source of every address and field of a target.

    Parameters
    ----------
    name : str
        Lowercase identifier of the map (``"switch"``, ``"endpoint"``); prefixes C names.
    members : iterable of Register, Cluster or Array
        Laid out from address 0 like the members of a :class:`Cluster`.
    params : mapping of str to int, optional
        The parameters the map was built from (recorded in exports and in the digest).
    version : int
        Register-map format version.
    desc : str
        One-line description.
    memory_depth : int, optional
        Words of a memory on the same bus, after the registers: a window that starts at the
        smallest power of two at or above both the registers' span and the memory's depth
        (:attr:`memory_base`), so that an address is a register or a memory word by one bit.

    Raises
    ------
    TypeError, ValueError
        On a bad name, a duplicate, misaligned or overlapping member, or two registers, fields
        or arrays whose C names (``COLL_CTRL`` for ``coll[].ctrl``) clash.
    """

    def __init__(self, name: str, members: Iterable[Member], *,
                 params: Mapping[str, int] | None = None, version: int = FORMAT_VERSION,
                 desc: str = "", memory_depth: int | None = None) -> None:
        check_name("Map", name)
        check_param("Map version", version, 0)
        self._name = name
        self._placed, self._size = layout(f"map {name!r}", members)
        self._params = dict(params or {})
        self._version = version
        self._desc = desc
        self._memory_depth = (None if memory_depth is None
                              else check_param("Memory depth", memory_depth, 1))
        self._check_c_names()

    # -- identity -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The map's name."""
        return self._name

    @property
    def params(self) -> dict[str, int]:
        """The parameters the map was built from (a copy)."""
        return dict(self._params)

    @property
    def version(self) -> int:
        """Register-map format version."""
        return self._version

    @property
    def desc(self) -> str:
        """One-line description."""
        return self._desc

    @property
    def placed(self) -> tuple[tuple[int, Member], ...]:
        """The top-level ``(address, member)`` pairs, in declaration order."""
        return self._placed

    @property
    def size(self) -> int:
        """Words spanned by the map: every address is below it."""
        return self._size

    @property
    def address_width(self) -> int:
        """Bits of a word address that reach every register (at least 1)."""
        return max(1, (self._size - 1).bit_length())

    @property
    def memory_depth(self) -> int | None:
        """Words of the memory window, or None without one."""
        return self._memory_depth

    @property
    def memory_base(self) -> int | None:
        """Word address of the memory window's first word, or None without one."""
        if self._memory_depth is None:
            return None
        return 1 << max(self.address_width, (self._memory_depth - 1).bit_length())

    @property
    def bus_address_width(self) -> int:
        """Bits of the bus's word address: the registers' and, with a memory, its window's."""
        if self._memory_depth is None:
            return self.address_width
        return (self.memory_base + self._memory_depth - 1).bit_length()

    def __repr__(self) -> str:
        return f"<Map {self._name} {self._params} {len(self.registers)} registers>"

    # -- enumeration and lookup -----------------------------------------------------------------

    @cached_property
    def registers(self) -> tuple[MappedRegister, ...]:
        """Every register, array elements expanded, in address order."""
        found = list(_flatten(self._placed, 0, "", "", ()))
        return tuple(sorted(found, key=lambda r: r.address))

    @cached_property
    def arrays(self) -> tuple[ArrayInfo, ...]:
        """Every array (arrays inside array elements once per element), in address order."""
        found = list(_flatten_arrays(self._placed, 0, "", ""))
        return tuple(sorted(found, key=lambda a: (a.base, a.name)))

    @cached_property
    def templates(self) -> tuple[MappedRegister, ...]:
        """One register per template (the first element of every array), in address order."""
        seen: dict[str, MappedRegister] = {}
        for r in self.registers:
            seen.setdefault(r.template, r)
        return tuple(seen.values())

    @cached_property
    def _by_name(self) -> dict[str, MappedRegister]:
        return {r.name: r for r in self.registers}

    @cached_property
    def _by_address(self) -> dict[int, MappedRegister]:
        return {r.address + w: r for r in self.registers for w in range(r.words)}

    def __iter__(self) -> Iterator[MappedRegister]:
        return iter(self.registers)

    def __len__(self) -> int:
        return len(self.registers)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> MappedRegister:
        return self.register(name)

    def register(self, name: str) -> MappedRegister:
        """The register with full name ``name`` (``"coll[2].ctrl"``).

        Raises
        ------
        KeyError
            If the map has no such register.
        """
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            raise KeyError(f"Map {self._name!r} has no register {name!r}") from None

    def at(self, address: int) -> MappedRegister | None:
        """The register that has a word at ``address``, or ``None`` (a hole or beyond the map)."""
        return self._by_address.get(address)

    # -- values and bus writes ------------------------------------------------------------------

    def reset_values(self) -> dict[str, int]:
        """Every register's value after reset, by full name."""
        return {r.name: r.reset for r in self.registers}

    def pack(self, values: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, int]]:
        """Bus writes ``(address, word)`` setting registers' ``RW`` fields (and clearing the
        ``RW1C`` flags given as 1), in address order.

        ``values`` maps a full register name to its field values (name -> value); fields not
        given keep their reset values. This is what a configuration image holds per target.

        Raises
        ------
        KeyError
            For an unknown register name.
        ValueError
            For a register without ``RW`` or ``RW1C`` fields, a field that is neither, an
            unknown field or a value out of range (the message names the register and field).
        TypeError
            If ``values`` or a register's field values are not a mapping.
        """
        if not isinstance(values, Mapping):
            raise TypeError(f"Register values must be a mapping, not {type(values).__name__}")
        writes = []
        for name, fields in values.items():
            reg = self.register(name)
            if not isinstance(fields, Mapping):
                raise TypeError(f"Fields of register {reg.name!r} must be a mapping, not "
                                f"{type(fields).__name__}")
            if not reg.writable:
                raise ValueError(f"Register {reg.name!r} is read-only")
            for fname in fields:
                f = next((f for f in reg.fields if f.name == fname), None)
                if f is not None and f.access not in _IMAGE_ACCESS:
                    raise ValueError(f"Field '{reg.name}.{fname}' is {f.access.name} and "
                                     "cannot be written by a configuration")
            value = reg.encode(fields)
            writes.extend((reg.address + w, word) for w, word in enumerate(reg.split(value)))
        return sorted(writes)

    def unpack(self, writes: Iterable[tuple[int, int]]) -> dict[str, dict[str, int]]:
        """Decode and check bus writes ``(address, word)``; the inverse of :meth:`pack`.

        Returns the field values of every written register, by full name, in address order.
        Each write must hit a word of a writable register, once; a multi-word register needs
        all its words; bits outside the register's ``RW`` and ``RW1C`` fields must be 0 (a 1 in
        an ``RW1C`` field is a clear).

        Raises
        ------
        ValueError
            Naming the address or register and the reason.
        TypeError
            If an address or word is not an integer.
        """
        words: dict[int, int] = {}
        for address, word in writes:
            for what, v in (("Address", address), ("Word", word)):
                if isinstance(v, bool) or not isinstance(v, int):
                    raise TypeError(f"{what} must be an integer, not {v!r}")
            if not 0 <= word <= _WORD_MASK:
                raise ValueError(f"Word {word:#x} written at address {address:#x} does not "
                                 f"fit in {WORD_BITS} bits")
            reg = self.at(address)
            if reg is None:
                raise ValueError(f"Address {address:#x} is not a register of map "
                                 f"{self._name!r}")
            if not reg.writable:
                raise ValueError(f"Register {reg.name!r} at {address:#x} is read-only")
            if address in words:
                raise ValueError(f"Address {address:#x} ({reg.name}) is written twice")
            words[address] = word
        result: dict[str, dict[str, int]] = {}
        for address in sorted(words):
            reg = self.at(address)
            if reg.name in result:
                continue
            for w in range(reg.words):
                if reg.address + w not in words:
                    raise ValueError(f"Register {reg.name!r} ({_words(reg.address, reg.words)}) "
                                     f"is missing word {w} at {reg.address + w:#x}")
            value = reg.join(words[reg.address + w] for w in range(reg.words))
            extra = value & ~reg.mask(*_IMAGE_ACCESS)
            if extra & reg.mask():
                f = next(f for f in reg.fields if extra & f.mask)
                raise ValueError(f"Field '{reg.name}.{f.name}' is {f.access.name} and "
                                 "cannot be written by a configuration")
            result[reg.name] = reg.decode(value)
        return result

    # -- canonical form and digest --------------------------------------------------------------

    def as_dict(self, docs: bool = True) -> dict[str, Any]:
        """The canonical description: structure, addresses, fields (and descriptions if ``docs``).

        ``"tree"`` mirrors the declaration (offsets relative to the parent, arrays once). With
        ``docs``, ``"registers"`` also lists every register with its address and template,
        ``"templates"`` gives each template's words, reset and fields, and ``"memory"`` the
        memory window (``base``, ``depth``, ``bus_address_width``), if the map has one.
        """
        data: dict[str, Any] = {
            "format": "innet-regmap",
            "version": self._version,
            "name": self._name,
            "params": dict(sorted(self._params.items())),
            "word_bits": WORD_BITS,
            "addressing": "word",
            "size": self._size,
            "address_width": self.address_width,
            "tree": [_node(offset, m, docs) for offset, m in self._placed],
        }
        if docs:
            data["desc"] = self._desc
            data["digest"] = self.digest
            if self._memory_depth is not None:
                data["memory"] = {"base": self.memory_base, "depth": self._memory_depth,
                                  "bus_address_width": self.bus_address_width}
            data["registers"] = [{"name": r.name, "address": r.address, "template": r.template}
                                 for r in self.registers]
            data["templates"] = {
                r.template: {"words": r.words, "reset": r.reset, "desc": r.register.desc,
                             "fields": [_field_node(f, docs) for f in r.fields]}
                for r in self.templates}
        return data

    @cached_property
    def digest(self) -> str:
        """Hex SHA-256 of the canonical description without descriptions.

        Two maps have the same digest exactly when they have the same name, parameters,
        version, addresses, fields, accesses, resets and enumeration codes; wording changes in
        descriptions do not change it, and neither does a memory window, which a map's
        parameters are to determine (the endpoint's vector depth). Configuration images store
        it.
        """
        text = json.dumps(self.as_dict(docs=False), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    # -- checks ---------------------------------------------------------------------------------

    def _check_c_names(self) -> None:
        # Registers and fields share the _RESET suffix, so their stems must all differ; arrays
        # use their own suffixes (_BASE, _COUNT, _STRIDE), so they only clash among themselves.
        stems: dict[str, str] = {}

        def claim(stem: str, what: str) -> None:
            if stem in stems:
                raise ValueError(f"C name {stem.split(':')[-1]} of {what} clashes with "
                                 f"{stems[stem]} in map {self._name!r}")
            stems[stem] = what

        for r in self.templates:
            stem = c_stem(r.template)
            claim(stem, f"register {r.template!r}")
            for f in r.fields:
                claim(f"{stem}_{f.name.upper()}", f"field '{r.template}.{f.name}'")
        for template in dict.fromkeys(a.template for a in self.arrays):
            claim(f"array:{c_stem(template)}", f"array {template!r}")


def c_stem(template: str) -> str:
    """The C name of a template: ``"coll[].ctrl"`` -> ``"COLL_CTRL"``."""
    return template.replace("[]", "").replace(".", "_").upper()


def _flatten(placed, base: int, prefix: str, tprefix: str,
             index: tuple[int, ...]) -> Iterator[MappedRegister]:
    for offset, m in placed:
        address = base + offset
        name, template = prefix + m.name, tprefix + m.name
        if isinstance(m, Register):
            yield MappedRegister(name, template, address, m, index)
        elif isinstance(m, Cluster):
            yield from _flatten(m.placed, address, name + ".", template + ".", index)
        else:
            for i in range(m.count):
                element = address + i * m.stride
                if isinstance(m.element, Register):
                    yield MappedRegister(f"{name}[{i}]", f"{template}[]", element, m.element,
                                         (*index, i))
                else:
                    yield from _flatten(m.element.placed, element, f"{name}[{i}].",
                                        f"{template}[].", (*index, i))


def _flatten_arrays(placed, base: int, prefix: str, tprefix: str) -> Iterator[ArrayInfo]:
    for offset, m in placed:
        address = base + offset
        name, template = prefix + m.name, tprefix + m.name
        if isinstance(m, Cluster):
            yield from _flatten_arrays(m.placed, address, name + ".", template + ".")
        elif isinstance(m, Array):
            yield ArrayInfo(name, template, address, m.count, m.stride, m.element.size)
            if isinstance(m.element, Cluster):
                for i in range(m.count):
                    yield from _flatten_arrays(m.element.placed, address + i * m.stride,
                                               f"{name}[{i}].", f"{template}[].")


def _field_node(f: Field, docs: bool) -> dict[str, Any]:
    node: dict[str, Any] = {"name": f.name, "offset": f.offset, "width": f.width,
                            "access": f.access.value, "reset": f.reset, "volatile": f.volatile}
    if f.enum is not None:
        node["enum"] = {"name": f.enum.__name__,
                        "codes": {m.name.lower(): int(m) for m in f.enum}}
    if f.max is not None:
        node["max"] = f.max
    if docs:
        node["desc"] = f.desc
    return node


def _node(offset: int, m: Member, docs: bool) -> dict[str, Any]:
    if isinstance(m, Register):
        node: dict[str, Any] = {"kind": "register", "name": m.name, "offset": offset,
                                "words": m.words, "reset": m.reset,
                                "fields": [_field_node(f, docs) for f in m.fields]}
    elif isinstance(m, Cluster):
        node = {"kind": "cluster", "name": m.name, "offset": offset, "size": m.size,
                "members": [_node(o, c, docs) for o, c in m.placed]}
    else:
        node = {"kind": "array", "name": m.name, "offset": offset, "count": m.count,
                "stride": m.stride, "element": _node(0, m.element, docs)}
    if docs:
        node["desc"] = m.desc
    return node
