"""Register files generated from the register model, and the configuration bus.

:class:`RegisterFile` turns any :class:`innet.gen.regmap.Map` (the switch map, the endpoint
map) into hardware: one register per ``RW`` field, one-cycle strobes for ``WO`` fields,
constants for ``RO`` fields, inputs for ``volatile`` ``RO`` fields and sticky flags for
``RW1C`` fields (set by the hardware, cleared by writing 1), all behind the
word-addressed configuration bus of :func:`bus_signature`. An array of ``RW`` registers named a
*table* (an endpoint's step table) is kept in memories instead, one per register of its element,
and read by the hardware through a synchronous port. No address or field width is written
here: every one comes from the map (PIUMA, "Configuration Registers": the registers that
determine the connectivity of collective ports and the operation of the collective engine).

Configuration bus
-----------------
:func:`bus_signature` (from the bus master's point of view):

``addr`` : Out(addr_width)
    Word address (:attr:`Map.address_width` bits; address ``n`` is the ``n``-th 32-bit word).
``w_data`` : Out(32)
    Write data.
``w_en`` : Out(1)
    Write strobe: on a rising edge with ``w_en`` high, the word at ``addr`` takes ``w_data``
    (bits of fields that are not writable are ignored). The new value drives the hardware
    from the next cycle, so it applies to the next flit that uses it.
``r_data`` : In(32)
    Read data, one cycle of latency: in cycle ``t + 1`` it holds the word at the ``addr`` of
    cycle ``t`` (zero for holes and write-only fields). A read may be issued every cycle; a
    word written in cycle ``t`` reads back from an ``addr`` presented in cycle ``t + 1``.

A register of several words (a port mask wider than 32 bits) is written word by word; each
word updates its part of the register.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.regmap.model import WORD_BITS

__all__ = ["RegisterFile", "bus_signature"]


def bus_signature(addr_width: int, data_width: int = WORD_BITS) -> wiring.Signature:
    """The configuration bus (see the module docstring), from the master's point of view.

    Raises
    ------
    TypeError, ValueError
        If a width is not a positive integer.
    """
    check_int("Address width", addr_width, low=1)
    check_int("Data width", data_width, low=1)
    return wiring.Signature({
        "addr": Out(addr_width),
        "w_data": Out(data_width),
        "w_en": Out(1),
        "r_data": In(data_width),
    })


@dataclass
class _Node:
    """A scope of the map as a tree: a struct of members, an array, or a register's fields."""

    kind: str  # "struct", "array" or "reg"
    members: dict = field(default_factory=dict)
    count: int = 0
    element: _Node | None = None
    fields: tuple = ()


def _segments(template: str) -> list[str]:
    return template.split(".")


def _outermost(template: str) -> str:
    """The name of a register template's outermost scope (``step`` for ``step[].flags``)."""
    return _segments(template)[0].removesuffix("[]")


def _tree(regmap, keep, tables: Collection[str] = ()) -> _Node:
    """The map's scopes as a tree, with only the fields ``keep(field)`` selects, and without
    the arrays named in ``tables``."""
    counts = {a.template: a.count for a in regmap.arrays}
    root = _Node("struct")
    for reg in regmap.templates:
        if _outermost(reg.template) in tables:
            continue
        fields = tuple(f for f in reg.fields if keep(f))
        if not fields:
            continue
        node, prefix = root, ""
        segments = _segments(reg.template)
        for depth, seg in enumerate(segments):
            name = seg.removesuffix("[]")
            last = depth == len(segments) - 1
            path = prefix + name
            if seg.endswith("[]"):
                child = node.members.get(name)
                if child is None:
                    child = node.members[name] = _Node("array", count=counts[path])
                    child.element = _Node("reg", fields=fields) if last else _Node("struct")
                node = child.element
                prefix = path + "[]."
            else:
                if last:
                    node.members[name] = _Node("reg", fields=fields)
                else:
                    node = node.members.setdefault(name, _Node("struct"))
                prefix = path + "."
    return root


def _layout(node: _Node):
    if node.kind == "reg":
        return data.StructLayout({f.name: f.width for f in node.fields})
    if node.kind == "array":
        return data.ArrayLayout(_layout(node.element), node.count)
    return data.StructLayout({name: _layout(child) for name, child in node.members.items()})


def _init(node: _Node):
    if node.kind == "reg":
        return {f.name: f.reset for f in node.fields}
    if node.kind == "array":
        return [_init(node.element) for _ in range(node.count)]
    return {name: _init(child) for name, child in node.members.items()}


class RegisterFile(wiring.Component):
    """The registers of a map behind a configuration bus.

    Parameters
    ----------
    regmap : innet.gen.regmap.Map
        The register map (``switch_map(...)``, ``endpoint_map(...)``, ...).
    refusable : collection of str
        Registers (``"coll[2].ctrl"``) whose bus writes the hardware may refuse: with any, the
        ``refuse`` member is added. Writes to every other register never wait on ``refuse``,
        so its decision stays off their write enables.
    tables : collection of str
        Top-level arrays of the map (``"step"``) kept in memories (block or LUT RAM, as the
        synthesis tool chooses) instead of registers, one memory per register of the element:
        every field of such an array must be ``RW`` and every register one word. A table's
        entries are written and read back through the bus like registers (the read data one
        cycle after the address, as for every word) and read by the hardware through the
        ``<table>_*`` members. They start at the fields' reset values and are not reset
        afterwards, and their writes are never refused. Each memory has a write port and two
        synchronous read ports (the bus's, the hardware's): a synthesis tool may keep two copies
        of it.

    Members
    -------
    bus : In(bus_signature(regmap.address_width))
        The configuration bus (see the module docstring).
    config : Out(layout)
        Every ``RW``, ``WO`` and ``RW1C`` field outside the tables, nested like the map:
        ``config["coll"][2]["ctrl"]["enable"]`` for the field ``enable`` of ``coll[2].ctrl``
        (:meth:`field` finds it by name). ``RW`` fields are registers (reset to the field's
        reset value) that hold what was written; a ``WO`` field holds the written value for one
        cycle after the write and is 0 otherwise; an ``RW1C`` field holds its sticky flags.
        Present only when the map has such fields.
    status : In(layout)
        Every volatile ``RO`` field, nested the same way, driven by the hardware and read
        through the bus. Present only when the map has such fields.
    refuse : In(1)
        With ``refusable``: a bus write to one of those registers in a cycle where ``refuse``
        is high changes nothing (the owner decides from ``bus.addr`` and ``bus.w_data`` in that
        cycle, and flags it).
    events : In(layout)
        Every ``RW1C`` field, nested the same way: a 1 in a cycle sets that flag from the next
        cycle on, until the bus writes a 1 to it. A flag set and cleared in the same cycle
        stays set (no event is lost). Present only when the map has such fields.
    <table>_addr : In(range(count)), <table>_en : In(1), <table>_data : Out(layout)
        Per table (``step_addr``, ...), its synchronous read port: in a cycle after one with
        ``en`` high, ``data`` holds the entry at that cycle's ``addr`` (its registers nested
        like ``config``: ``step_data["flags"]["send"]``); it holds still while ``en`` is low.
        A bus write and a read of the same entry in one cycle read the old entry.
    """

    def __init__(self, regmap, *, refusable: Collection[str] = (),
                 tables: Collection[str] = ()) -> None:
        from innet.gen.regmap import Map

        if not isinstance(regmap, Map):
            raise TypeError(f"Register map must be an innet.gen.regmap.Map, not {regmap!r}")
        if isinstance(refusable, str) or not isinstance(refusable, Collection):
            raise TypeError(f"Refusable must be a collection of register names, not "
                            f"{refusable!r}")
        names = {reg.name for reg in regmap.registers}
        for name in refusable:
            if name not in names:
                raise ValueError(f"Refusable register {name!r} is not in the map {regmap.name}")
        if isinstance(tables, str) or not isinstance(tables, Collection):
            raise TypeError(f"Tables must be a collection of array names, not {tables!r}")
        self._tables = {name: _table(regmap, name) for name in tables}
        for name in refusable:
            table = _outermost(regmap[name].template)
            if table in self._tables:
                raise ValueError(f"Refusable register {name!r} is in the table {table!r}, whose "
                                 f"writes are never refused")
        self._map = regmap
        self._refusable = frozenset(refusable)
        self._views = {}
        config = _tree(regmap, _is_config, self._tables)
        status = _tree(regmap, _is_status, self._tables)
        events = _tree(regmap, _is_flag, self._tables)
        members = {"bus": In(bus_signature(regmap.address_width))}
        for name, table in self._tables.items():
            members |= {f"{name}_addr": In(range(table.array.count)), f"{name}_en": In(1),
                        f"{name}_data": Out(table.layout)}
        if config.members:
            members["config"] = Out(_layout(config), init=_init(config))
        if status.members:
            members["status"] = In(_layout(status))
        if events.members:
            members["events"] = In(_layout(events))
        if refusable:
            members["refuse"] = In(1)
        super().__init__(members)

    @property
    def regmap(self):
        return self._map

    def field(self, register: str, name: str):
        """The ``config`` (``RW``/``WO``/``RW1C``) or ``status`` (volatile ``RO``) view of a
        field.

        Raises
        ------
        KeyError
            If the map has no such register or field, or the field is a constant.
        """
        reg = self._map[register]
        f = reg.field(name)
        table = _outermost(reg.template)
        if table in self._tables:
            raise KeyError(f"Field {register}.{name} is in the table {table!r}: the hardware "
                           f"reads it through {table}_data")
        if _is_config(f):
            return self._view("config", reg)[name]
        if _is_status(f):
            return self._view("status", reg)[name]
        raise KeyError(f"Field {register}.{name} is a constant and has no signal")

    def _view(self, tree: str, reg):
        """The view of register ``reg`` (a MappedRegister) in member ``tree`` (``"config"``,
        ``"status"`` or ``"events"``).

        Every view on the way is built once and kept: indexing a view of a nested layout
        computes the offsets of its members, which for a large map took most of the time of
        converting a network to Verilog.
        """
        view, path = getattr(self, tree), (tree,)
        index = iter(reg.index)
        for seg in _segments(reg.template):
            steps = [seg.removesuffix("[]")] + ([next(index)] if seg.endswith("[]") else [])
            for step in steps:
                path += (step,)
                if path not in self._views:
                    self._views[path] = view[step]
                view = self._views[path]
        return view

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        # The write enable of the words that may be refused; every other word's is the bus's.
        refusing = bus.w_en & ~self.refuse if self._refusable else None
        words = []  # (address, value read, writes: (field bits, bus bits), refusable)
        for reg in self._map.registers:
            if _outermost(reg.template) in self._tables:
                continue
            clears = {}
            for f in reg.fields:
                if f.access.name == "WO":
                    m.d.sync += self._view("config", reg)[f.name].eq(0)
                if _is_flag(f):
                    clears[f.name] = Signal(f.width, name=f"clear_{_name(reg)}_{f.name}")
            refusable = reg.name in self._refusable
            for word in range(reg.words):
                address = reg.address + word
                written = (refusing if refusable else bus.w_en) & (bus.addr == address)
                words.append((address, *self._word(m, reg, word, written, clears), refusable))
            for name, clear in clears.items():
                flags = Value.cast(self._view("config", reg)[name])
                raised = Value.cast(self._view("events", reg)[name])
                m.d.sync += flags.eq((flags & ~clear) | raised)
        # The writes, word by word, under a write enable: in a cycle without a write a
        # simulator tests no word's address (an endpoint's map has hundreds of fields).
        for refusable, enable in ((True, refusing), (False, bus.w_en)):
            chosen = [(address, writes) for address, _, writes, r in words
                      if writes and r is refusable]
            if not chosen:
                continue
            with m.If(enable):
                for address, writes in chosen:
                    with m.If(bus.addr == address):
                        m.d.sync += [target.eq(bus.w_data[bits]) for target, bits in writes]
        # One case statement for the read multiplexer; holes read 0. With tables, the word of
        # a table is chosen after it, from the memories' read ports.
        held = Signal(WORD_BITS, name="r_held") if self._tables else bus.r_data
        with m.Switch(bus.addr):
            for address, value, _, _ in words:
                with m.Case(address):
                    m.d.sync += held.eq(value)
            with m.Default():
                m.d.sync += held.eq(0)
        if self._tables:
            read = held
            for name, table in self._tables.items():
                read = self._table_port(m, name, table, read)
            m.d.comb += bus.r_data.eq(read)
        return m

    def _table_port(self, m: Module, name: str, table: _Table, read: Value) -> Value:
        """The memories of table ``name``: written and read back through the bus, read by the
        hardware through its port. Returns the bus's read data: a word of the table when the
        address of the last cycle was one, else ``read``."""
        bus, array = self.bus, table.array
        shift = array.stride.bit_length() - 1
        offset = Signal(range(array.stride * array.count), name=f"{name}_offset")
        m.d.comb += offset.eq(bus.addr - array.base)
        hit = (bus.addr >= array.base) & (bus.addr < array.base + array.stride * array.count)
        index = offset[shift:]
        port_data = getattr(self, f"{name}_data")
        hit_reg = Signal(name=f"{name}_read_hit")
        which = Signal(range(array.stride), name=f"{name}_read_reg")
        m.d.sync += [hit_reg.eq(hit), which.eq(offset[:shift])]
        words = {}
        for at, (reg_name, fields) in enumerate(table.registers):
            shape = data.StructLayout({f.name: f.width for f in fields})
            memory = Memory(shape=shape, depth=array.count,
                            init=[{f.name: f.reset for f in fields}] * array.count)
            m.submodules[f"{name}_{reg_name}"] = memory
            write = memory.write_port()
            m.d.comb += [write.addr.eq(index),
                         write.en.eq(bus.w_en & hit & (offset[:shift] == at))]
            for f in fields:
                m.d.comb += write.data[f.name].eq(bus.w_data[f.offset:f.offset + f.width])
            hardware = memory.read_port()
            m.d.comb += [hardware.addr.eq(getattr(self, f"{name}_addr")),
                         hardware.en.eq(getattr(self, f"{name}_en")),
                         port_data[reg_name].eq(hardware.data)]
            back = memory.read_port()
            m.d.comb += back.addr.eq(index)
            word = Signal(WORD_BITS, name=f"{name}_{reg_name}_word")
            m.d.comb += [word[f.offset:f.offset + f.width].eq(back.data[f.name]) for f in fields]
            words[at] = word
        table_word = Signal(WORD_BITS, name=f"{name}_word")
        with m.Switch(which):
            for at, word in words.items():
                with m.Case(at):
                    m.d.comb += table_word.eq(word)
        return Mux(hit_reg, table_word, read)

    def _word(self, m: Module, reg, word: int, written, clears: dict
              ) -> tuple[Value, list[tuple[Value, slice]]]:
        """Word ``word`` of ``reg``: its read value, and what a write of it (``written``) sets,
        as (config bits, bus data bits). The bits of an ``RW1C`` field the write clears go to
        ``clears[field name]``."""
        bus = self.bus
        lo_word, hi_word = word * WORD_BITS, (word + 1) * WORD_BITS
        read = Const(0, WORD_BITS)
        parts, writes = [], []
        for f in reg.fields:
            lo, hi = max(f.offset, lo_word), min(f.offset + f.width, hi_word)
            if lo >= hi:
                continue
            bits = slice(lo - f.offset, hi - f.offset)
            data_bits = slice(lo - lo_word, hi - lo_word)
            if _is_flag(f):
                current = Value.cast(self._view("config", reg)[f.name])[bits]
                m.d.comb += clears[f.name][bits].eq(Mux(written, bus.w_data[data_bits], 0))
            elif _is_config(f):
                value = Value.cast(self._view("config", reg)[f.name])
                writes.append((value[bits], data_bits))
                current = Const(0, hi - lo) if f.access.name == "WO" else value[bits]
            elif _is_status(f):
                current = Value.cast(self._view("status", reg)[f.name])[bits]
            else:
                current = Const(f.reset, f.width)[bits]
            parts.append((lo - lo_word, current))
        # Concatenate the fields in bit order with zero gaps.
        pieces, at = [], 0
        for start, current in sorted(parts, key=lambda x: x[0]):
            if start > at:
                pieces.append(Const(0, start - at))
            pieces.append(current)
            at = start + len(current)
        if at < WORD_BITS:
            pieces.append(Const(0, WORD_BITS - at))
        return (Cat(*pieces) if pieces else read), writes


@dataclass(frozen=True)
class _Table:
    """An array of the map kept in memories: its placement, and its element's registers with
    their fields in order (each register's offset in the element is its position)."""

    array: object  # innet.gen.regmap.addrmap.ArrayInfo
    registers: tuple[tuple[str, tuple], ...]

    @property
    def layout(self) -> data.StructLayout:
        return data.StructLayout({name: data.StructLayout({f.name: f.width for f in fields})
                                  for name, fields in self.registers})


def _table(regmap, name: str) -> _Table:
    """Table ``name`` of ``regmap``, checked: a top-level array whose element's registers are
    one word each, at consecutive offsets, with ``RW`` fields only."""
    arrays = [a for a in regmap.arrays if a.name == name and a.name == a.template]
    if not arrays or "." in name:
        raise ValueError(f"Table {name!r} is not a top-level array of the map {regmap.name}")
    (array,) = arrays
    element = [reg for reg in regmap.registers if reg.name.startswith(f"{name}[0].")]
    if not element:
        raise ValueError(f"Table {name!r} needs an array of register clusters")
    for at, reg in enumerate(element):
        if reg.words != 1 or reg.address != array.base + at:
            raise ValueError(f"Table {name!r} needs one-word registers at consecutive "
                             f"offsets, not {reg.name} at {reg.address:#x}")
        for f in reg.fields:
            if f.access.name != "RW":
                raise ValueError(f"Table {name!r} holds RW fields only, not "
                                 f"{reg.name}.{f.name} ({f.access.name})")
    registers = tuple((reg.name.removeprefix(f"{name}[0]."), tuple(reg.fields))
                      for reg in element)
    return _Table(array, registers)


def _is_config(f) -> bool:
    return f.access.name in ("RW", "WO", "RW1C")


def _is_flag(f) -> bool:
    return f.access.name == "RW1C"


def _name(reg) -> str:
    """``reg``'s name as part of a signal name (``coll[2].ctrl`` -> ``coll_2_ctrl``)."""
    return "".join(c if c.isalnum() else "_" for c in reg.name).strip("_").replace("__", "_")


def _is_status(f) -> bool:
    return f.access.name == "RO" and f.volatile
