"""The image loader (innet.sim.tb.loader) on a model bus: full and incremental loads, read-back
comparison, and refusal of images that fail validation or were packed for other maps."""

from __future__ import annotations

import asyncio
import re

import pytest

from innet.gen.embed import embed
from innet.gen.image import Image, ImageError, build_image, validate
from innet.gen.routing import routing
from innet.gen.topology import torus
from innet.sim.tb.loader import Loader, readback_mask


class ModelBus:
    """Registers as a dict per target; reads give the RW bits (optionally one bit stuck)."""

    def __init__(self, image: Image, stuck: tuple[int, int, int] | None = None) -> None:
        self.params, self.nodes = image.params, image.nodes
        self.mem: dict[int, dict[int, int]] = {}
        self.writes = 0
        self.stuck = stuck

    async def write(self, target, writes):
        self.writes += len(writes)
        self.mem.setdefault(target, {}).update(writes)

    async def read(self, target, addresses):
        regmap = self.params.switch_map if target < self.nodes else self.params.endpoint_map
        out = []
        for a in addresses:
            word = self.mem.get(target, {}).get(a, 0) & readback_mask(regmap, a)
            if self.stuck is not None and self.stuck[:2] == (target, a):
                word ^= 1 << self.stuck[2]
            out.append(word)
        return out


def _image(topo, **kw) -> Image:
    return build_image(topo, routes=routing(topo), radix=topo.radix, collective_ids=2,
                       routing_depth=topo.nodes, step_depth=8, vector_depth=16, **kw)


def _loader(bus, image):
    return Loader(bus, switch_digest=image.params.switch_map.digest,
                  endpoint_digest=image.params.endpoint_map.digest, nodes=image.nodes)


def test_full_then_incremental_load():
    topo = torus((4,))
    first = _image(topo, embeddings=[embed(topo)], elements=4)
    bus = ModelBus(first)
    loader = _loader(bus, first)
    written = asyncio.run(loader.load(first))
    assert written == sum(len(w) for w in first.writes) == bus.writes
    for target, writes in enumerate(first.writes):
        assert dict(writes).items() <= bus.mem[target].items()
    second = _image(topo, embeddings=[embed(topo, kind="broadcast", root=2)], elements=4)
    changed = sum(1 for t in range(first.target_count)
                  for a, w in second.writes[t] if dict(first.writes[t]).get(a) != w)
    assert 0 < changed < written
    assert asyncio.run(loader.load(second, full=False)) == changed
    assert asyncio.run(loader.load(second, full=False)) == 0
    assert asyncio.run(loader.load(second)) == sum(len(w) for w in second.writes)


def test_read_back_mismatch_names_the_register():
    topo = torus((4,))
    image = _image(topo, embeddings=[embed(topo)], elements=4)
    address, _word = image.writes[1][0]
    name = image.params.switch_map.at(address).name
    bus = ModelBus(image, stuck=(1, address, 0))
    with pytest.raises(AssertionError, match=rf"^Target 1 register {re.escape(name)} "):
        asyncio.run(_loader(bus, image).load(image))


def test_refuses_an_image_that_fails_validation():
    topo = torus((4,))
    image = _image(topo, embeddings=[embed(topo)], elements=4)
    # Corrupt: endpoint 0's node id register claims node 3.
    emap = image.params.endpoint_map
    reg = emap["node_id"]
    writes = [list(w) for w in image.writes]
    target = image.nodes
    writes[target] = [(a, reg.encode({"id": 3}) if a == reg.address else w)
                      for a, w in writes[target]]
    bad = Image(image.params, topo, writes)
    with pytest.raises(ImageError) as expected:
        validate(bad)
    bus = ModelBus(bad)
    with pytest.raises(ImageError, match=rf"^{re.escape(str(expected.value))}$"):
        asyncio.run(_loader(bus, bad).load(bad))
    assert bus.writes == 0


def test_refuses_an_image_for_other_maps_or_sizes():
    topo = torus((4,))
    image = _image(topo, elements=4)
    other = Loader(ModelBus(image), switch_digest="0" * 64,
                   endpoint_digest=image.params.endpoint_map.digest, nodes=4)
    with pytest.raises(ValueError, match=r"^The image's switch register map \w+ is not the "
                                         r"hardware's 000000000000$"):
        other.check(image)
    wrong = _loader(ModelBus(image), image)
    wrong.nodes = 5
    with pytest.raises(ValueError, match=r"^The image is for 4 nodes, but the network has 5$"):
        wrong.check(image)


def test_readback_mask_of_a_hole():
    image = _image(torus((4,)), elements=4)
    with pytest.raises(ValueError, match=r"^Map '\w+' has no register at address 0x\w+$"):
        readback_mask(image.params.switch_map, 1 << 20)


# -- the cocotb configuration-bus driver on a model top level ------------------------------------

class _Port:
    def __init__(self) -> None:
        self.value = 0


class ModelTop:
    """A top level's ``cfg_*`` ports with register files behind them, in one of the three
    layouts of :mod:`innet.sim.tb.bus`; every awaited falling edge is one clock cycle.
    ``stages`` registers delay the ports on their way to the register files (as
    :attr:`innet.hw.network.Network.control_latency`)."""

    def __init__(self, targets: int, layout: str, addr_width: int = 4, stages: int = 0) -> None:
        self.targets, self.layout, self.aw = targets, layout, addr_width
        for name in ("clk", "cfg_addr", "cfg_w_data", "cfg_w_en", "cfg_r_data", "cfg_sel"):
            setattr(self, name, _Port())
        self.clk.top = self
        self.mem = [{} for _ in range(targets)]
        self.cycles = 0
        self.pipe = [(0, 0, 0, 0)] * stages  # (sel, addr, data, en) in each register

    def _lane(self, value: int, t: int, bits: int) -> int:
        return (value >> (bits * t)) & ((1 << bits) - 1)

    def rising_edge(self) -> None:
        self.cycles += 1
        now = (self.cfg_sel.value, self.cfg_addr.value, self.cfg_w_data.value,
               self.cfg_w_en.value)
        self.pipe.append(now)
        t, addr, data, en = self.pipe.pop(0)
        if self.layout == "select":
            self.cfg_r_data.value = self.mem[t].get(addr, 0)
            if en:
                self.mem[t][addr] = data
            return
        read = 0
        for t in range(self.targets):
            a = addr if self.layout == "shared" else self._lane(addr, t, self.aw)
            d = data if self.layout == "shared" else self._lane(data, t, 32)
            read |= self.mem[t].get(a, 0) << (32 * t)
            if en >> t & 1:
                self.mem[t][a] = d
        self.cfg_r_data.value = read


class _Edge:
    def __init__(self, clk) -> None:
        self.top = clk.top

    def __await__(self):
        self.top.rising_edge()
        return iter(())


@pytest.fixture
def model_edges(monkeypatch):
    import cocotb.triggers

    monkeypatch.setattr(cocotb.triggers, "FallingEdge", _Edge)


@pytest.mark.parametrize(("layout", "parallel"), [("select", False), ("shared", False),
                                                  ("lanes", True)])
def test_config_bus_writes_and_reads_every_layout(model_edges, layout, parallel):
    from innet.sim.tb.bus import ConfigBus

    top = ModelTop(3, layout)
    bus = ConfigBus(top, addr_width=top.aw if layout == "lanes" else None,
                    select=layout == "select")
    writes = {0: [(1, 0x11), (2, 0x12), (3, 0x13)], 2: [(1, 0xFFFF_FFFF), (5, 0x25)]}
    asyncio.run(bus.write_all(writes))
    assert top.mem == [dict(writes[0]), {}, dict(writes[2])]
    assert top.cycles == (3 if parallel else 5) + 1  # one word per cycle, then w_en low
    assert top.cfg_w_en.value == 0
    top.cycles = 0
    got = asyncio.run(bus.read_all({0: [3, 1, 9], 2: [5, 1]}))
    assert got == {0: [0x13, 0x11, 0], 2: [0x25, 0xFFFF_FFFF]}
    assert top.cycles == (3 if parallel else 5) + 1  # pipelined: one cycle of latency
    assert asyncio.run(bus.read(2, [1])) == [0xFFFF_FFFF]
    asyncio.run(bus.write(1, [(7, 0x17)]))
    assert top.mem[1] == {7: 0x17}
    top.cycles = 0
    asyncio.run(bus.write_all({0: [], 1: []}))  # nothing to write: one idle cycle
    assert asyncio.run(bus.read_all({})) == {}
    assert top.cycles == 2


@pytest.mark.parametrize("layout", ["select", "lanes"])
@pytest.mark.parametrize("stages", [1, 2])
def test_config_bus_reads_through_registers(model_edges, layout, stages):
    """Behind ``stages`` registers, a bus that knows the latency reads every word; one that
    assumes the contract's single cycle reads the wrong ones."""
    from innet.sim.tb.bus import ConfigBus

    lanes = layout == "lanes"
    words = {0: [(a, 0x100 + a) for a in range(6)], 1: [(a, 0x200 + a) for a in range(4)]}
    reads = {0: [5, 0, 3, 3, 1, 2], 1: [2, 1, 0]}
    want = {t: [dict(words[t])[a] for a in r] for t, r in reads.items()}
    for latency, right in ((stages + 1, True), (1, False)):
        top = ModelTop(2, layout, stages=stages)
        bus = ConfigBus(top, addr_width=top.aw if lanes else None, select=not lanes,
                        latency=latency)
        asyncio.run(bus.write_all(words))
        top.cycles = 0
        assert (asyncio.run(bus.read_all(reads)) == want) is right
        assert top.mem == [dict(words[0]), dict(words[1])]
        if right:  # pipelined: the latency once per group
            assert top.cycles == (6 if lanes else 9) + stages + 1


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"addr_width": 0}, ValueError, "Address width must be at least 1, not 0"),
    ({"addr_width": "8"}, TypeError, "Address width must be an integer, not '8'"),
    ({"addr_width": 8, "select": True}, ValueError,
     "A selected bus has one address, not lanes of 8 bits"),
    ({"latency": 0}, ValueError, "Read latency must be at least 1, not 0"),
])
def test_config_bus_layout_errors(kwargs, error, message):
    from innet.sim.tb.bus import ConfigBus

    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        ConfigBus(object(), **kwargs)
