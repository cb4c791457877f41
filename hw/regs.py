"""Register files generated from the register model, and the configuration bus.

:class:`RegisterFile` turns any :class:`innet.gen.regmap.Map` (the switch map, the endpoint
map) into hardware: one register per ``RW`` field, one-cycle strobes for ``WO`` fields,
constants for ``RO`` fields, inputs for ``volatile`` ``RO`` fields and sticky flags for
``RW1C`` fields (set by the hardware, cleared by writing 1), all behind the
word-addressed configuration bus of :func:`bus_signature`. No address or field width is written
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


def _tree(regmap, keep) -> _Node:
    """The map's scopes as a tree, with only the fields ``keep(field)`` selects."""
    counts = {a.template: a.count for a in regmap.arrays}
    root = _Node("struct")
    for reg in regmap.templates:
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

    Members
    -------
    bus : In(bus_signature(regmap.address_width))
        The configuration bus (see the module docstring).
    config : Out(layout)
        Every ``RW``, ``WO`` and ``RW1C`` field, nested like the map: ``config["coll"][2]
        ["ctrl"]["enable"]`` for the field ``enable`` of ``coll[2].ctrl`` (:meth:`field` finds
        it by name). ``RW`` fields are registers (reset to the field's reset value) that hold
        what was written; a ``WO`` field holds the written value for one cycle after the write
        and is 0 otherwise; an ``RW1C`` field holds its sticky flags. Present only when the map
        has such fields.
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
    """

    def __init__(self, regmap, *, refusable: Collection[str] = ()) -> None:
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
        self._map = regmap
        self._refusable = frozenset(refusable)
        self._views = {}
        config = _tree(regmap, _is_config)
        status = _tree(regmap, _is_status)
        events = _tree(regmap, _is_flag)
        members = {"bus": In(bus_signature(regmap.address_width))}
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
        # One case statement for the read multiplexer; holes read 0.
        with m.Switch(bus.addr):
            for address, value, _, _ in words:
                with m.Case(address):
                    m.d.sync += bus.r_data.eq(value)
            with m.Default():
                m.d.sync += bus.r_data.eq(0)
        return m

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


def _is_config(f) -> bool:
    return f.access.name in ("RW", "WO", "RW1C")


def _is_flag(f) -> bool:
    return f.access.name == "RW1C"


def _name(reg) -> str:
    """``reg``'s name as part of a signal name (``coll[2].ctrl`` -> ``coll_2_ctrl``)."""
    return "".join(c if c.isalnum() else "_" for c in reg.name).strip("_").replace("__", "_")


def _is_status(f) -> bool:
    return f.access.name == "RO" and f.volatile
