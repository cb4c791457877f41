"""The image loader (innet.sim.tb.loader) on a model bus: full and incremental loads, read-back
comparison, and refusal of images that fail validation or were packed for other maps."""

from __future__ import annotations

import asyncio
import re

import pytest

from innet.gen.embed import embed
from innet.gen.image import Image, ImageError, validate
from innet.gen.image.build import build_image
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
