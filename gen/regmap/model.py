"""The register model: fields, registers, clusters, arrays and the address map built from them.

A configuration-register map is declared once, as a tree of :class:`Register`, :class:`Cluster`
(a named group) and :class:`Array` (a register or cluster repeated ``count`` times), and laid
out by :class:`Map`. Everything else is generated from a :class:`Map`: the RTL register files
(:mod:`innet.hw.regs`), the configuration-image packer and decoder (:mod:`innet.gen.image`), and
the JSON, C-header and Markdown exports (:mod:`innet.gen.regmap.export`). The shape follows
amaranth-soc (``csr/reg.py``: fields, registers, cluster and index scopes, with overlap,
alignment and duplicate-name checks) and LiteX (``soc/interconnect/csr.py``: one model exported
to JSON and C headers).

Addressing
----------
The configuration bus is **word-addressed**: an address counts 32-bit words, so address ``n`` is
the ``n``-th register word (byte address ``4 * n`` if the bus is ever bridged to a byte-addressed
one). A register is one word unless its fields need more (a port mask of a switch with more than
31 network ports); a multi-word register occupies consecutive addresses, word 0 (at the lowest
address) holding bits 31..0. Every block is *naturally aligned*: a register of ``w`` words, a
cluster of ``s`` words and an array of ``n`` elements of stride ``t`` start at a multiple of
``w``, ``s`` and ``n * t`` rounded up to a power of two, and an array's stride is its element's
size rounded up to a power of two. So an element index and the offset inside it are plain bit
slices of the address, which keeps decoding cheap in hardware.

Access
------
``RW`` fields are written by the bus (and by configuration images) and read back as written.
``RO`` fields are read-only: *constant* (their reset value, such as a capability register that
reports a build parameter) unless declared ``volatile``, in which case the hardware drives them
(status, counters). ``WO`` fields are write-only strobes (a command such as ``start``): a write
is seen by the hardware for one cycle and reads return 0. Configuration images write only
``RW`` fields.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

__all__ = [
    "FORMAT_VERSION",
    "WORD_BITS",
    "Access",
    "Array",
    "ArrayInfo",
    "Cluster",
    "Field",
    "Map",
    "MappedRegister",
    "Register",
    "Target",
    "c_stem",
    "check_param",
]

#: Bits per register word on the configuration bus.
WORD_BITS = 32

#: Version of the register-map format; reported by every map's ``ident.version`` field and part
#: of its digest. Bump it when the meaning of a register changes.
FORMAT_VERSION = 1

_WORD_MASK = (1 << WORD_BITS) - 1
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Access(enum.Enum):
    """How the bus may access a field (see the module documentation)."""

    RW = "rw"
    RO = "ro"
    WO = "wo"


class Target(enum.IntEnum):
    """Kind of configuration target; the value is what ``ident.kind`` reads."""

    SWITCH = 1
    ENDPOINT = 2


def _pow2ceil(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _check_int(what: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an integer, not {value!r}")
    if value < minimum:
        raise ValueError(f"{what} must be at least {minimum}, not {value}")


def check_param(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Check a map parameter: an integer in ``low..high``; return it."""
    _check_int(name, value, low)
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, not {value}")
    return value


def _check_name(kind: str, name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name must be a string, not {name!r}")
    if not _NAME.fullmatch(name):
        raise ValueError(f"{kind} name must be a lowercase identifier ([a-z][a-z0-9_]*), "
                         f"not {name!r}")


def _bits(offset: int, width: int) -> str:
    if width == 1:
        return f"bit {offset}"
    return f"bits {offset + width - 1}:{offset}"


def _words(address: int, size: int) -> str:
    return f"{address:#x}..{address + size - 1:#x}"


def _enum_codes(kind: type[enum.IntEnum]) -> str:
    return ", ".join(f"{member.name.lower()}={member.value}" for member in kind)


@dataclass(frozen=True)
class Field:
    """A bit field of a register.

    Parameters
    ----------
    name : str
        Lowercase identifier, unique in its register.
    width : int
        Width in bits, at least 1.
    access : Access or str
        ``Access.RW`` (default), ``Access.RO`` or ``Access.WO``; ``"rw"``/``"ro"``/``"wo"`` work.
    reset : int
        Value after reset; for a constant ``RO`` field, the value it always reads. ``WO`` fields
        reset to 0.
    offset : int or None
        Position of bit 0 in the register; ``None`` places the field right after the previous
        one (from bit 0 for the first).
    enum : IntEnum subclass or None
        The field holds a code of this enumeration (:class:`innet.gen.ops.Op`,
        :class:`innet.gen.ops.DType`); encoding accepts members and their names, and codes that
        are not members are rejected.
    volatile : bool
        ``RO`` only: the hardware drives the field (status); otherwise it is a constant.
    max : int or None
        Largest valid value when it is below ``2**width - 1`` (a port number up to ``radix``).
    desc : str
        One-line description (not part of the map's digest).

    Raises
    ------
    TypeError, ValueError
        On a bad name, width, offset, access, reset, or ``volatile`` on a non-``RO`` field.
    """

    name: str
    width: int
    access: Access = Access.RW
    reset: int = 0
    offset: int | None = None
    enum: type[enum.IntEnum] | None = None
    volatile: bool = False
    max: int | None = None
    desc: str = ""

    def __post_init__(self) -> None:
        _check_name("Field", self.name)
        label = f"Field {self.name!r}"
        _check_int(f"{label} width", self.width, 1)
        if self.offset is not None:
            _check_int(f"{label} offset", self.offset, 0)
        if isinstance(self.access, str):
            try:
                object.__setattr__(self, "access", Access(self.access))
            except ValueError:
                raise ValueError(f"{label} access must be one of rw, ro, wo, "
                                 f"not {self.access!r}") from None
        if not isinstance(self.access, Access):
            raise TypeError(f"{label} access must be an Access, not {self.access!r}")
        if self.enum is not None and not (isinstance(self.enum, type)
                                          and issubclass(self.enum, enum.IntEnum)):
            raise TypeError(f"{label} enum must be an IntEnum class, not {self.enum!r}")
        if self.max is not None:
            _check_int(f"{label} max", self.max, 0)
            if self.max >= 1 << self.width:
                raise ValueError(f"{label} max {self.max} does not fit in {self.width} bits")
        if self.volatile and self.access is not Access.RO:
            raise ValueError(f"{label} is {self.access.name} and cannot be volatile")
        object.__setattr__(self, "reset", self.check(self.reset, f"{label} reset"))
        if self.access is Access.WO and self.reset != 0:
            raise ValueError(f"{label} is write-only; its reset must be 0, not {self.reset}")

    @property
    def constant(self) -> bool:
        """Whether the field always reads its reset value (``RO`` and not volatile)."""
        return self.access is Access.RO and not self.volatile

    @property
    def mask(self) -> int:
        """The field's bits in place in the register value (needs a placed field)."""
        return ((1 << self.width) - 1) << (self.offset or 0)

    def check(self, value: Any, label: str | None = None) -> int:
        """Return ``value`` as the field's integer code, or raise.

        Accepts an ``int`` (or ``bool``) that fits in :attr:`width` bits and, for enumerated
        fields, a member of :attr:`enum` or its name (``"add"``); an ``int`` must then be the
        code of a member.

        Raises
        ------
        TypeError
            If ``value`` is not an integer (nor an enumeration member or name).
        ValueError
            If it does not fit, exceeds :attr:`max`, or is not a code or name of :attr:`enum`.
        """
        label = label or f"Field {self.name!r}"
        kind = self.enum
        if kind is not None and isinstance(value, kind):
            return int(value)
        if kind is not None and isinstance(value, str):
            try:
                return int(kind[value.upper()])
            except KeyError:
                names = ", ".join(member.name.lower() for member in kind)
                raise ValueError(f"{label} value {value!r} is not a name of {kind.__name__} "
                                 f"({names})") from None
        if isinstance(value, enum.Enum) or not isinstance(value, int):
            expected = f"a member, name or code of {kind.__name__}" if kind else "an integer"
            raise TypeError(f"{label} value must be {expected}, not {value!r}")
        value = int(value)
        if not 0 <= value < 1 << self.width:
            raise ValueError(f"{label} value {value} does not fit in {self.width} bits "
                             f"(0..{(1 << self.width) - 1})")
        if self.max is not None and value > self.max:
            raise ValueError(f"{label} value {value} exceeds its maximum {self.max}")
        if kind is not None and value not in kind._value2member_map_:
            raise ValueError(f"{label} value {value} is not a code of {kind.__name__} "
                             f"({_enum_codes(kind)})")
        return value

    def format(self, code: int) -> str:
        """A readable form of a decoded value: the enumeration name, else the number."""
        if self.enum is not None and code in self.enum._value2member_map_:
            return self.enum(code).name.lower()
        return str(code) if self.width <= 8 else f"{code:#x}"


@dataclass(frozen=True)
class Register:
    """A register: one or more 32-bit words of non-overlapping fields.

    Parameters
    ----------
    name : str
        Lowercase identifier, unique in its scope.
    fields : iterable of Field
        The fields, placed in order from bit 0 where their ``offset`` is ``None``. The register
        has as many words as its highest field bit needs.
    offset : int or None
        Word offset in the enclosing scope; ``None`` places it at the next free aligned word.
    desc : str
        One-line description.

    Raises
    ------
    TypeError, ValueError
        On a bad name or offset, no fields, a duplicate field name, or overlapping fields.
    """

    name: str
    fields: tuple[Field, ...]
    offset: int | None = None
    desc: str = ""

    def __post_init__(self) -> None:
        _check_name("Register", self.name)
        label = f"register {self.name!r}"
        if self.offset is not None:
            _check_int(f"Register {self.name!r} offset", self.offset, 0)
        fields = tuple(self.fields) if isinstance(self.fields, Iterable) else self.fields
        if not isinstance(fields, tuple) or not all(isinstance(f, Field) for f in fields):
            raise TypeError(f"Fields of {label} must be Field objects, not {self.fields!r}")
        if not fields:
            raise ValueError(f"Register {self.name!r} has no fields")
        placed: list[Field] = []
        cursor = 0
        for f in fields:
            if f.name in {p.name for p in placed}:
                raise ValueError(f"Duplicate field {f.name!r} in {label}")
            if f.offset is None:
                f = replace(f, offset=cursor)
            cursor = f.offset + f.width
            placed.append(f)
        ordered = sorted(placed, key=lambda f: f.offset)
        for a, b in itertools.pairwise(ordered):
            if b.offset < a.offset + a.width:
                raise ValueError(f"Field {b.name!r} ({_bits(b.offset, b.width)}) overlaps "
                                 f"field {a.name!r} ({_bits(a.offset, a.width)}) in {label}")
        object.__setattr__(self, "fields", tuple(placed))

    @property
    def words(self) -> int:
        """Number of 32-bit words."""
        return -(-max(f.offset + f.width for f in self.fields) // WORD_BITS)

    @property
    def size(self) -> int:
        """Size in words (same as :attr:`words`)."""
        return self.words

    @property
    def align(self) -> int:
        """Alignment in words."""
        return _pow2ceil(self.words)

    @property
    def reset(self) -> int:
        """The register value after reset."""
        return sum(f.reset << f.offset for f in self.fields)

    def field(self, name: str) -> Field:
        """The field called ``name``."""
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"Register {self.name!r} has no field {name!r}")

    def mask(self, *access: Access) -> int:
        """The bits of the fields with one of the given accesses (all fields if none given)."""
        return sum(f.mask for f in self.fields if not access or f.access in access)


@dataclass(frozen=True)
class Cluster:
    """A named group of registers, clusters and arrays, laid out like a small map.

    Parameters
    ----------
    name : str
        Lowercase identifier; member names read ``name.member``.
    members : iterable of Register, Cluster or Array
        Laid out in order, each at the next free word aligned for it unless it has an offset.
    offset : int or None
        Word offset in the enclosing scope; ``None`` places it at the next free aligned word.
    desc : str
        One-line description.

    Raises
    ------
    TypeError, ValueError
        On a bad name, no members, a duplicate member name, a misaligned or overlapping member.
    """

    name: str
    members: tuple[Register | Cluster | Array, ...]
    offset: int | None = None
    desc: str = ""

    def __post_init__(self) -> None:
        _check_name("Cluster", self.name)
        if self.offset is not None:
            _check_int(f"Cluster {self.name!r} offset", self.offset, 0)
        members, size = _layout(f"cluster {self.name!r}", self.members)
        object.__setattr__(self, "members", tuple(m for _, m in members))
        object.__setattr__(self, "_placed", members)
        object.__setattr__(self, "_size", size)

    @property
    def placed(self) -> tuple[tuple[int, Register | Cluster | Array], ...]:
        """The ``(offset, member)`` pairs, offsets in words from the cluster's start."""
        return self._placed

    @property
    def size(self) -> int:
        """Size in words: the end of the last member."""
        return self._size

    @property
    def align(self) -> int:
        """Alignment in words: the size rounded up to a power of two."""
        return _pow2ceil(self.size)


@dataclass(frozen=True)
class Array:
    """A register or cluster repeated ``count`` times; element ``i`` reads ``name[i]``.

    Parameters
    ----------
    element : Register or Cluster
        The repeated block (without an offset); its name is the array's name.
    count : int
        Number of elements, at least 1.
    offset : int or None
        Word offset in the enclosing scope; ``None`` places it at the next free aligned word.
    desc : str
        One-line description of the array (the element has its own).

    Raises
    ------
    TypeError, ValueError
        On a bad element, count or offset.
    """

    element: Register | Cluster
    count: int
    offset: int | None = None
    desc: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.element, Register | Cluster):
            raise TypeError(f"Array element must be a Register or Cluster, not {self.element!r}")
        label = f"Array {self.element.name!r}"
        _check_int(f"{label} count", self.count, 1)
        if self.offset is not None:
            _check_int(f"{label} offset", self.offset, 0)
        if self.element.offset is not None:
            raise ValueError(f"{label} element must not have an offset (the array places it)")

    @property
    def name(self) -> str:
        """The element's name."""
        return self.element.name

    @property
    def stride(self) -> int:
        """Words from one element to the next: the element size rounded up to a power of two."""
        return _pow2ceil(self.element.size)

    @property
    def size(self) -> int:
        """Size in words: ``count * stride``."""
        return self.count * self.stride

    @property
    def align(self) -> int:
        """Alignment in words: the size rounded up to a power of two."""
        return _pow2ceil(self.size)


_Member = Register | Cluster | Array


def _layout(scope: str, members: Any) -> tuple[tuple[tuple[int, _Member], ...], int]:
    """Place ``members`` of a scope; return ``((offset, member), ...)`` and the scope's size."""
    members = tuple(members) if isinstance(members, Iterable) else members
    if not isinstance(members, tuple) or not all(isinstance(m, _Member) for m in members):
        raise TypeError(f"Members of {scope} must be Register, Cluster or Array objects, "
                        f"not {members!r}")
    if not members:
        raise ValueError(f"{scope[0].upper()}{scope[1:]} has no members")
    names: set[str] = set()
    placed: list[tuple[int, _Member]] = []
    cursor = 0
    for m in members:
        if m.name in names:
            raise ValueError(f"Duplicate name {m.name!r} in {scope}")
        names.add(m.name)
        if m.offset is None:
            offset = -(-cursor // m.align) * m.align
        elif m.offset % m.align:
            raise ValueError(f"{type(m).__name__} {m.name!r} at offset {m.offset:#x} is not "
                             f"aligned to its {m.align} words")
        else:
            offset = m.offset
        placed.append((offset, m))
        cursor = max(cursor, offset + m.size)
    order = sorted(range(len(placed)), key=lambda i: (placed[i][0], i))
    for i, j in itertools.pairwise(order):
        (a_off, a), (b_off, b) = placed[i], placed[j]
        if b_off < a_off + a.size:
            raise ValueError(f"{type(b).__name__} {b.name!r} ({_words(b_off, b.size)}) overlaps "
                             f"{type(a).__name__.lower()} {a.name!r} ({_words(a_off, a.size)}) "
                             f"in {scope}")
    return tuple(placed), cursor


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

    @property
    def writable(self) -> bool:
        """Whether the register has ``RW`` fields (a configuration image may write it)."""
        return any(f.access is Access.RW for f in self.fields)

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

    Raises
    ------
    TypeError, ValueError
        On a bad name, a duplicate, misaligned or overlapping member, or two registers, fields
        or arrays whose C names (``COLL_CTRL`` for ``coll[].ctrl``) clash.
    """

    def __init__(self, name: str, members: Iterable[_Member], *,
                 params: Mapping[str, int] | None = None, version: int = FORMAT_VERSION,
                 desc: str = "") -> None:
        _check_name("Map", name)
        _check_int("Map version", version, 0)
        self._name = name
        self._placed, self._size = _layout(f"map {name!r}", members)
        self._params = dict(params or {})
        self._version = version
        self._desc = desc
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
    def placed(self) -> tuple[tuple[int, _Member], ...]:
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
        """Bus writes ``(address, word)`` setting registers' ``RW`` fields, in address order.

        ``values`` maps a full register name to its field values (name -> value); fields not
        given keep their reset values. This is what a configuration image holds per target.

        Raises
        ------
        KeyError
            For an unknown register name.
        ValueError
            For a register without ``RW`` fields, a field that is not ``RW``, an unknown field
            or a value out of range (the message names the register and field).
        """
        writes = []
        for name, fields in values.items():
            reg = self.register(name)
            if not reg.writable:
                raise ValueError(f"Register {reg.name!r} is read-only")
            for fname in fields:
                f = next((f for f in reg.fields if f.name == fname), None)
                if f is not None and f.access is not Access.RW:
                    raise ValueError(f"Field '{reg.name}.{fname}' is {f.access.name} and "
                                     "cannot be written by a configuration")
            value = reg.encode(fields)
            writes.extend((reg.address + w, word) for w, word in enumerate(reg.split(value)))
        return sorted(writes)

    def unpack(self, writes: Iterable[tuple[int, int]]) -> dict[str, dict[str, int]]:
        """Decode and check bus writes ``(address, word)``; the inverse of :meth:`pack`.

        Returns the field values of every written register, by full name, in address order.
        Each write must hit a word of a writable register, once; a multi-word register needs
        all its words; bits outside the register's ``RW`` fields must be 0.

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
            extra = value & ~reg.mask(Access.RW)
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
        ``docs``, ``"registers"`` also lists every register with its address and template, and
        ``"templates"`` gives each template's words, reset and fields.
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
        descriptions do not change it. Configuration images store it.
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


def _node(offset: int, m: _Member, docs: bool) -> dict[str, Any]:
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
