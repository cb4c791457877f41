# amaranth: UnusedElaboratable=no
"""innet.hw.regs: register files generated from any register map, checked through the bus
against the map itself (reset values, access rules, multi-word registers)."""

import random

import pytest
from amaranth.sim import Simulator

from innet.gen.regmap import (
    Access,
    Array,
    Cluster,
    Field,
    Map,
    Register,
    endpoint_map,
    switch_map,
)
from innet.hw.regs import RegisterFile, bus_signature
from innet.sim.tb.bus import sim_read, sim_write


def simulate(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


MAPS = {
    "switch radix 8": lambda: switch_map(8, 4, 16, node_id_width=4),
    "switch radix 40 (two-word masks)": lambda: switch_map(40, 2, 4),
    "endpoint": lambda: endpoint_map(2, 4, 64),
}


@pytest.mark.parametrize("name", list(MAPS))
def test_every_register_reads_back_through_the_bus(name):
    regmap = MAPS[name]()
    dut = RegisterFile(regmap)
    rng = random.Random(len(regmap.registers))
    status_values = {}

    async def bench(ctx):
        # Reset values first.
        for reg in regmap.registers:
            words = [await sim_read(ctx, dut.bus, reg.address + w) for w in range(reg.words)]
            want = reg.reset & ~reg.mask(Access.WO)
            if any(f.volatile for f in reg.fields):
                continue  # driven by the hardware; checked below
            assert reg.join(words) == want, f"{reg.name} after reset"
        # Drive every volatile field with a random value.
        for reg in regmap.registers:
            for f in reg.fields:
                if f.volatile:
                    value = rng.getrandbits(f.width)
                    ctx.set(dut.field(reg.name, f.name), value)
                    status_values[(reg.name, f.name)] = value
        # Write random values everywhere (also into read-only and write-only bits).
        written = {}
        for reg in regmap.registers:
            value = rng.getrandbits(32 * reg.words)
            written[reg.name] = value
            await sim_write(ctx, dut.bus, reg.address, reg.split(value))
        for reg in regmap.registers:
            got = reg.join([await sim_read(ctx, dut.bus, reg.address + w)
                            for w in range(reg.words)])
            want = 0
            for f in reg.fields:
                if f.access is Access.RW:
                    value = (written[reg.name] >> f.offset) & ((1 << f.width) - 1)
                elif f.access is Access.WO:
                    value = 0
                elif f.volatile:
                    value = status_values[(reg.name, f.name)]
                else:
                    value = f.reset
                want |= value << f.offset
                if f.access is Access.RW:
                    assert ctx.get(dut.field(reg.name, f.name)) == value, f"{reg.name}.{f.name}"
            assert got == want, f"{reg.name}: read {got:#x}, expected {want:#x}"
        # Holes read zero.
        holes = [a for a in range(regmap.size) if regmap.at(a) is None][:16]
        for address in holes:
            assert await sim_read(ctx, dut.bus, address) == 0

    simulate(dut, bench)


def test_write_only_field_is_a_one_cycle_strobe():
    regmap = endpoint_map(2, 4, 64)
    dut = RegisterFile(regmap)
    start = dut.field("engine.ctrl", "start")

    async def bench(ctx):
        seen = []
        reg = regmap["engine.ctrl"]
        ctx.set(dut.bus.addr, reg.address)
        ctx.set(dut.bus.w_data, reg.encode({"start": 1}))
        ctx.set(dut.bus.w_en, 1)
        seen.append(ctx.get(start))
        await ctx.tick()
        ctx.set(dut.bus.w_en, 0)
        for _ in range(3):
            seen.append(ctx.get(start))
            await ctx.tick()
        assert seen == [0, 1, 0, 0]

    simulate(dut, bench)


def test_write_is_visible_next_cycle_and_read_has_one_cycle_latency():
    regmap = switch_map(4, 1, 4)
    dut = RegisterFile(regmap)
    reg = regmap["route[2]"]
    port = dut.field("route[2]", "port")

    async def bench(ctx):
        ctx.set(dut.bus.addr, reg.address)
        ctx.set(dut.bus.w_data, reg.encode({"port": 3, "valid": 1}))
        ctx.set(dut.bus.w_en, 1)
        assert ctx.get(port) == 0
        await ctx.tick()
        ctx.set(dut.bus.w_en, 0)
        assert ctx.get(port) == 3                    # the field drives the hardware now
        assert ctx.get(dut.bus.r_data) == 0          # read data still from the write cycle
        await ctx.tick()
        assert ctx.get(dut.bus.r_data) == reg.encode({"port": 3, "valid": 1})

    simulate(dut, bench)


def test_refuse_stops_only_writes_to_the_refusable_registers():
    regmap = switch_map(4, 2, 4)
    dut = RegisterFile(regmap, refusable=["coll[1].ctrl", "route[2]"])
    locked = [regmap["coll[1].ctrl"], regmap["route[2]"]]
    free = [regmap["coll[0].ctrl"], regmap["route[1]"], regmap["coll_timeout"]]
    rng = random.Random(5)
    # Registers of read-write fields alone: a word reads back as written.
    assert all(reg.mask() == reg.mask(Access.RW) for reg in locked + free)

    async def bench(ctx):
        for refuse in (1, 0):
            ctx.set(dut.refuse, refuse)
            written = {}
            for reg in locked + free:
                word = rng.getrandbits(32) & reg.mask()
                written[reg.name] = word
                await sim_write(ctx, dut.bus, reg.address, [word])
            ctx.set(dut.refuse, 0)
            for reg in locked + free:
                got = await sim_read(ctx, dut.bus, reg.address)
                want = reg.reset if refuse and reg in locked else written[reg.name]
                assert got == want, (refuse, reg.name, got, want)

    simulate(dut, bench)


def test_field_lookup_errors():
    dut = RegisterFile(switch_map(4, 1, 4))
    with pytest.raises(KeyError, match=r"no register 'nope'"):
        dut.field("nope", "x")
    with pytest.raises(KeyError, match=r"^'Field radix.value is a constant and has no signal'$"):
        dut.field("radix", "value")


def test_errors():
    with pytest.raises(TypeError, match=r"^Register map must be an innet.gen.regmap.Map, "
                                        r"not 'switch'$"):
        RegisterFile("switch")
    with pytest.raises(TypeError, match=r"^Refusable must be a collection of register names, "
                                        r"not True$"):
        RegisterFile(switch_map(4, 1, 4), refusable=True)
    with pytest.raises(ValueError, match=r"^Refusable register 'coll\[1\]\.ctrl' is not in "
                                         r"the map switch$"):
        RegisterFile(switch_map(4, 1, 4), refusable=["coll[1].ctrl"])
    with pytest.raises(ValueError, match=r"^Address width must be at least 1, not 0$"):
        bus_signature(0)
    with pytest.raises(TypeError, match=r"^Data width must be an integer, not '32'$"):
        bus_signature(4, "32")


def test_bus_signature_members():
    sig = bus_signature(7)
    assert {name: (m.flow.value, m.shape) for name, m in sig.members.items()} == {
        "addr": ("Out", 7), "w_data": ("Out", 32), "w_en": ("Out", 1), "r_data": ("In", 32)}


def test_rw1c_flags_are_set_by_events_and_cleared_by_ones():
    regmap = Map("flags", [
        Register("ident", [Field("v", 8, Access.RO, reset=1)]),
        Register("errs", [Field("a", 1, Access.RW1C), Field("b", 3, Access.RW1C),
                          Field("keep", 4, offset=8)]),
    ])
    dut = RegisterFile(regmap)
    reg = regmap["errs"]
    events = dut.events["errs"]

    async def bench(ctx):
        assert await sim_read(ctx, dut.bus, reg.address) == 0
        ctx.set(events.a, 1)
        ctx.set(events.b, 0b101)
        await ctx.tick()
        ctx.set(events.a, 0)
        ctx.set(events.b, 0)
        assert await sim_read(ctx, dut.bus, reg.address) == 0b1011
        assert ctx.get(dut.config["errs"]["b"]) == 0b101
        await sim_write(ctx, dut.bus, reg.address, [0x700])  # zeros leave the flags
        assert await sim_read(ctx, dut.bus, reg.address) == 0x70B
        await sim_write(ctx, dut.bus, reg.address, [0b0011])  # a and bit 0 of b
        assert await sim_read(ctx, dut.bus, reg.address) == 0b1000
        assert ctx.get(dut.config["errs"]["keep"]) == 0  # the last write set keep to 0
        # A flag raised in the cycle it is cleared stays set.
        ctx.set(events.b, 0b100)
        await sim_write(ctx, dut.bus, reg.address, [0b1000])
        ctx.set(events.b, 0)
        assert await sim_read(ctx, dut.bus, reg.address) == 0b1000
        await sim_write(ctx, dut.bus, reg.address, [0b1000])
        assert await sim_read(ctx, dut.bus, reg.address) == 0

    simulate(dut, bench)


def _table_map() -> Map:
    """Two registers and a table of five entries of three registers (stride 4: a hole at offset
    3 of each entry), with reset values that are not 0."""
    return Map("t", [
        Register("id", [Field("v", 8, Access.RO, reset=1)]),
        Register("keep", [Field("k", 16, reset=0x1234)]),
        Array(Cluster("e", [
            Register("a", [Field("x", 5, reset=3), Field("y", 2, offset=8, reset=1)]),
            Register("b", [Field("z", 12, reset=0x5A5)]),
            Register("c", [Field("w", 32)]),
        ]), 5),
    ])


@pytest.mark.parametrize("name", ["custom", "endpoint"])
def test_a_table_is_written_and_read_back_through_the_bus_and_read_by_the_hardware(name):
    regmap, table_name = (_table_map(), "e") if name == "custom" else (endpoint_map(2, 6, 64),
                                                                       "step")
    dut = RegisterFile(regmap, tables=[table_name])
    assert table_name not in dut.config.shape().members
    rng = random.Random(6)
    count = regmap.params.get("step_depth", 5)
    table = [reg for reg in regmap.registers if reg.name.startswith(f"{table_name}[")]
    others = [reg for reg in regmap.registers if reg not in table
              and all(f.access is Access.RW for f in reg.fields)]
    port_addr, port_en = getattr(dut, f"{table_name}_addr"), getattr(dut, f"{table_name}_en")
    port_data = getattr(dut, f"{table_name}_data")

    def want(reg, written) -> int:
        """What ``reg`` reads after ``written`` (None: nothing written since reset)."""
        return (reg.reset & ~reg.mask(Access.WO) if written is None
                else written & reg.mask(Access.RW))

    async def pipelined_reads(ctx, regs, written):
        # A new address every cycle: the read data of each cycle is the word at the address
        # of the cycle before, whether that was a table's word or a register's.
        previous = None
        for reg in [*regs, None]:
            ctx.set(dut.bus.addr, 0 if reg is None else reg.address)
            if previous is not None:
                got = ctx.get(dut.bus.r_data)
                assert got == want(previous, written.get(previous.name)), \
                    f"{previous.name}: {got:#x}"
            await ctx.tick()
            previous = reg

    async def bench(ctx):
        mixed = [reg for pair in zip(rng.sample(table, len(table)),
                                     [rng.choice(others) for _ in table], strict=True)
                 for reg in pair]
        # The entries start at their fields' reset values, like the registers.
        await pipelined_reads(ctx, mixed, {})
        written = {}
        for reg in rng.sample(table + others, len(table + others)):
            written[reg.name] = rng.getrandbits(32)
            await sim_write(ctx, dut.bus, reg.address, [written[reg.name]])
        await pipelined_reads(ctx, mixed, written)
        # The holes between the entries and the words past the table read 0, and writes there
        # land nowhere.
        array = regmap.arrays[0]
        holes = [a for a in range(array.base, array.base + array.stride * (count + 1))
                 if regmap.at(a) is None]
        for address in holes:
            await sim_write(ctx, dut.bus, address, [0xFFFF_FFFF])
        for address in holes:
            assert await sim_read(ctx, dut.bus, address) == 0, hex(address)
        await pipelined_reads(ctx, table, written)
        # The hardware's port: the entry at the address of the last cycle with en high, held
        # while en is low.
        for k in rng.sample(range(count), count):
            ctx.set(port_addr, k)
            ctx.set(port_en, 1)
            await ctx.tick()
            ctx.set(port_addr, (k + 1) % count)
            ctx.set(port_en, 0)
            for _ in range(2):
                for reg in (r for r in table if r.index == (k,)):
                    member = reg.template.removeprefix(f"{table_name}[].")
                    for f in reg.fields:
                        bits = (written[reg.name] >> f.offset) & ((1 << f.width) - 1)
                        assert ctx.get(port_data[member][f.name]) == bits, (k, member, f.name)
                await ctx.tick()

    simulate(dut, bench)


def test_table_errors():
    with pytest.raises(TypeError, match=r"^Tables must be a collection of array names, "
                                        r"not 'step'$"):
        RegisterFile(endpoint_map(2, 4, 64), tables="step")
    with pytest.raises(ValueError, match=r"^Table 'nope' is not a top-level array of the map "
                                         r"endpoint$"):
        RegisterFile(endpoint_map(2, 4, 64), tables=["nope"])
    nested = Map("n", [Array(Cluster("a", [Array(Cluster("b", [Register("r", [Field("x", 4)])]),
                                                 2)]), 2)])
    with pytest.raises(ValueError, match=r"^Table 'a\[1\]\.b' is not a top-level array of the "
                                         r"map n$"):
        RegisterFile(nested, tables=["a[1].b"])
    with pytest.raises(ValueError, match=r"^Table 'route' needs an array of register "
                                         r"clusters$"):
        RegisterFile(switch_map(4, 1, 4), tables=["route"])
    wide = Map("w", [Array(Cluster("e", [Register("a", [Field("x", 40)])]), 2)])
    with pytest.raises(ValueError, match=r"^Table 'e' needs one-word registers at consecutive "
                                         r"offsets, not e\[0\]\.a at 0x0$"):
        RegisterFile(wide, tables=["e"])
    gap = Map("g", [Array(Cluster("e", [Register("a", [Field("x", 4)]),
                                        Register("b", [Field("y", 4)], offset=2)]), 2)])
    with pytest.raises(ValueError, match=r"^Table 'e' needs one-word registers at consecutive "
                                         r"offsets, not e\[0\]\.b at 0x2$"):
        RegisterFile(gap, tables=["e"])
    with pytest.raises(ValueError, match=r"^Table 'coll' holds RW fields only, not "
                                         r"coll\[0\]\.\S+ \((WO|RO|RW1C)\)$"):
        RegisterFile(switch_map(4, 1, 4), tables=["coll"])
    with pytest.raises(ValueError, match=r"^Refusable register 'e\[1\]\.a' is in the table "
                                         r"'e', whose writes are never refused$"):
        RegisterFile(_table_map(), refusable=["e[1].a"], tables=["e"])
    dut = RegisterFile(endpoint_map(2, 4, 64), tables=["step"])
    with pytest.raises(KeyError, match=r"Field step\[1\]\.flags\.send is in the table 'step': "
                                       r"the hardware reads it through step_data"):
        dut.field("step[1].flags", "send")
