"""The register model: fields, registers, clusters and arrays, and how they are laid out.

A configuration-register map is declared once, as a tree of :class:`Register`, :class:`Cluster`
(a named group) and :class:`Array` (a register or cluster repeated ``count`` times), and laid
out by :class:`~innet.gen.regmap.addrmap.Map`. Everything else is generated from a map: the
RTL register files (:mod:`innet.hw.regs`), the configuration-image packer and decoder
(:mod:`innet.gen.image`), and the JSON, C-header and Markdown exports
(:mod:`innet.gen.regmap.export`). The shape follows amaranth-soc (``csr/reg.py``: fields,
registers, cluster and index scopes, with overlap, alignment and duplicate-name checks) and
LiteX (``soc/interconnect/csr.py``: one model exported to JSON and C headers).

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
is seen by the hardware for one cycle and reads return 0. ``RW1C`` fields are sticky status
flags (write one to clear): the hardware sets them, the bus reads them, and a write clears the
bits written as 1 and leaves those written as 0; they reset to 0. Configuration images write
``RW`` fields, and ``RW1C`` fields only to clear them (a 1 in an image clears the flag when the
image is loaded). :meth:`Register.read` and :meth:`Register.write` are the behavioural model.
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from innet.gen.checks import check_int

__all__ = [
    "FORMAT_VERSION",
    "WORD_BITS",
    "Access",
    "Array",
    "Cluster",
    "Field",
    "Member",
    "Register",
    "Target",
    "check_name",
    "check_param",
    "layout",
]

#: Bits per register word on the configuration bus.
WORD_BITS = 32

#: Version of the register-map format; reported by every map's ``ident.version`` field and part
#: of its digest. Bump it when the meaning of a register changes.
FORMAT_VERSION = 1

_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Access(enum.Enum):
    """How the bus may access a field (see the module documentation)."""

    RW = "rw"
    RO = "ro"
    WO = "wo"
    RW1C = "rw1c"


class Target(enum.IntEnum):
    """Kind of configuration target; the value is what ``ident.kind`` reads."""

    SWITCH = 1
    ENDPOINT = 2


def _pow2ceil(n: int) -> int:
    return 1 << (n - 1).bit_length()


def check_param(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Check a map parameter: an integer in ``low..high``; return it."""
    return check_int(name, value, low=low, high=high)


def check_name(kind: str, name: Any) -> None:
    """Check that ``name`` is a lowercase identifier; ``kind`` starts the message."""
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
        ``Access.RW`` (default), ``Access.RO``, ``Access.WO`` or ``Access.RW1C``;
        ``"rw"``/``"ro"``/``"wo"``/``"rw1c"`` work.
    reset : int
        Value after reset; for a constant ``RO`` field, the value it always reads. ``WO`` and
        ``RW1C`` fields reset to 0.
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
        check_name("Field", self.name)
        label = f"Field {self.name!r}"
        check_int(f"{label} width", self.width, low=1)
        if self.offset is not None:
            check_int(f"{label} offset", self.offset, low=0)
        if isinstance(self.access, str):
            try:
                object.__setattr__(self, "access", Access(self.access))
            except ValueError:
                raise ValueError(f"{label} access must be one of rw, ro, wo, rw1c, "
                                 f"not {self.access!r}") from None
        if not isinstance(self.access, Access):
            raise TypeError(f"{label} access must be an Access, not {self.access!r}")
        if self.enum is not None and not (isinstance(self.enum, type)
                                          and issubclass(self.enum, enum.IntEnum)):
            raise TypeError(f"{label} enum must be an IntEnum class, not {self.enum!r}")
        if self.max is not None:
            check_int(f"{label} max", self.max, low=0)
            if self.max >= 1 << self.width:
                raise ValueError(f"{label} max {self.max} does not fit in {self.width} bits")
        if self.volatile and self.access is not Access.RO:
            raise ValueError(f"{label} is {self.access.name} and cannot be volatile")
        object.__setattr__(self, "reset", self.check(self.reset, f"{label} reset"))
        if self.access is Access.WO and self.reset != 0:
            raise ValueError(f"{label} is write-only; its reset must be 0, not {self.reset}")
        if self.access is Access.RW1C and self.reset != 0:
            raise ValueError(f"{label} is write-one-to-clear; its reset must be 0, "
                             f"not {self.reset}")

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
        check_name("Register", self.name)
        label = f"register {self.name!r}"
        if self.offset is not None:
            check_int(f"Register {self.name!r} offset", self.offset, low=0)
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

    # Derived values are computed once: images pack and unpack millions of registers.
    @cached_property
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

    @cached_property
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
        masks = self._masks
        if access not in masks:
            masks[access] = sum(f.mask for f in self.fields if not access or f.access in access)
        return masks[access]

    def read(self, value: int) -> int:
        """What the bus reads from the register when it holds ``value`` (``WO`` bits read 0)."""
        return value & ~self.mask(Access.WO)

    def write(self, value: int, data: int) -> int:
        """What the register holds after the bus writes ``data`` (every word) over ``value``.

        ``RW`` fields take ``data``; ``RW1C`` fields clear the bits ``data`` sets and keep the
        others; ``RO`` fields keep ``value``; ``WO`` fields are strobes and hold nothing.
        """
        rw, rw1c = self.mask(Access.RW), self.mask(Access.RW1C)
        return (value & ~rw & ~self.mask(Access.WO) & ~(data & rw1c)) | (data & rw)

    @cached_property
    def _masks(self) -> dict[tuple[Access, ...], int]:
        return {}


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
        check_name("Cluster", self.name)
        if self.offset is not None:
            check_int(f"Cluster {self.name!r} offset", self.offset, low=0)
        members, size = layout(f"cluster {self.name!r}", self.members)
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
        check_int(f"{label} count", self.count, low=1)
        if self.offset is not None:
            check_int(f"{label} offset", self.offset, low=0)
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


#: What a cluster, an array element or a map is made of.
Member = Register | Cluster | Array


def layout(scope: str, members: Any) -> tuple[tuple[tuple[int, Member], ...], int]:
    """Place ``members`` of a scope; return ``((offset, member), ...)`` and the scope's size.

    ``scope`` names the scope in messages (``"cluster 'coll'"``). Raises ``TypeError`` or
    ``ValueError`` on a bad member, no members, a duplicate name, a misaligned offset or an
    overlap.
    """
    members = tuple(members) if isinstance(members, Iterable) else members
    if not isinstance(members, tuple) or not all(isinstance(m, Member) for m in members):
        raise TypeError(f"Members of {scope} must be Register, Cluster or Array objects, "
                        f"not {members!r}")
    if not members:
        raise ValueError(f"{scope[0].upper()}{scope[1:]} has no members")
    names: set[str] = set()
    placed: list[tuple[int, Member]] = []
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
