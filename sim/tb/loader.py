"""The image loader: a configuration image into a simulated network, checked word by word.

:class:`Loader` validates an :class:`~innet.gen.image.Image` (refusing one that fails
:func:`innet.gen.image.validate`, with the validator's one-line message), checks that it was
packed for the hardware's register maps, writes every register through the configuration bus,
reads every written word back and compares the ``RW`` bits (a register's read-only and
write-only fields read otherwise). Later loads into the same network write and check only the
words that differ from what the loader last wrote (``full=False``), which is what a host
reprogramming a running system does; ``full=True`` writes everything again.

The bus is an object with two coroutines, so the loader runs on the RTL network (an
:class:`innet.sim.tb.bus.ConfigBus` on the ``cfg_*`` ports of
:class:`innet.hw.network.Network`) as well as on a model in unit tests:

- ``await bus.write(target, [(address, word), ...])``
- ``await bus.read(target, [address, ...]) -> [word, ...]``
"""

from __future__ import annotations

from typing import Any

from innet.gen.image import Image, validate
from innet.gen.regmap import Access

__all__ = ["Loader", "check_readback", "readback_mask"]


def readback_mask(regmap: Any, address: int) -> int:
    """The bits of the word at ``address`` that read back as written (its ``RW`` fields).

    Raises
    ------
    ValueError
        If no register has a word at ``address``.
    """
    reg = regmap.at(address)
    if reg is None:
        raise ValueError(f"Map {regmap.name!r} has no register at address {address:#x}")
    return (reg.mask(Access.RW) >> (32 * (address - reg.address))) & 0xFFFF_FFFF


def check_readback(target: int, regmap: Any, writes: list[tuple[int, int]],
                   got: list[int]) -> None:
    """Compare the words read back from ``target`` with the ``(address, word)`` writes, on the
    bits that read back as written (:func:`readback_mask`).

    Raises
    ------
    AssertionError
        Naming the first register that reads differently.
    """
    for (address, word), back in zip(writes, got, strict=True):
        mask = readback_mask(regmap, address)
        if (back ^ word) & mask:
            reg = regmap.at(address)
            raise AssertionError(
                f"Target {target} register {reg.name} (address {address:#x}) reads "
                f"{back & mask:#010x}, wrote {word & mask:#010x}")


class Loader:
    """Loads images into one network through a bus (see the module documentation).

    Parameters
    ----------
    bus
        Has ``write(target, writes)`` and ``read(target, addresses)`` coroutines.
    switch_digest, endpoint_digest : str
        Digests of the hardware's switch and endpoint register maps; an image packed for other
        maps is refused.
    nodes : int
        Nodes of the network (targets ``0 .. 2 * nodes - 1``).
    """

    def __init__(self, bus, *, switch_digest: str, endpoint_digest: str, nodes: int) -> None:
        self.bus = bus
        self.digests = (switch_digest, endpoint_digest)
        self.nodes = nodes
        self.current: dict[int, dict[int, int]] = {}
        self.written = 0
        self.verified = 0

    def check(self, image: Image) -> None:
        """Refuse an image this network cannot take.

        Raises
        ------
        innet.gen.image.ImageError
            The validator's message, if the image fails validation.
        ValueError
            If the image is for another number of nodes or other register maps.
        """
        validate(image)
        if image.nodes != self.nodes:
            raise ValueError(f"The image is for {image.nodes} nodes, but the network has "
                             f"{self.nodes}")
        got = (image.params.switch_map.digest, image.params.endpoint_map.digest)
        for kind, mine, theirs in zip(("switch", "endpoint"), self.digests, got, strict=True):
            if mine != theirs:
                raise ValueError(f"The image's {kind} register map {theirs[:12]} is not the "
                                 f"hardware's {mine[:12]}")

    def plan(self, image: Image, *, full: bool = True) -> dict[int, list[tuple[int, int]]]:
        """The writes a load performs, by target (after :meth:`check`)."""
        self.check(image)
        out = {}
        for target, writes in enumerate(image.writes):
            last = {} if full else self.current.get(target, {})
            todo = [(a, w) for a, w in writes if last.get(a) != w]
            if todo:
                out[target] = todo
        return out

    async def load(self, image: Image, *, full: bool = True) -> int:
        """Write ``image`` and verify it; returns the number of words written.

        Raises
        ------
        innet.gen.image.ImageError, ValueError
            See :meth:`check`.
        AssertionError
            If a word reads back differently (naming target, register and both values).
        """
        plan = self.plan(image, full=full)
        params = image.params
        for target, writes in plan.items():
            await self.bus.write(target, writes)
        for target, writes in plan.items():
            regmap = params.switch_map if target < self.nodes else params.endpoint_map
            got = await self.bus.read(target, [a for a, _w in writes])
            check_readback(target, regmap, writes, got)
            self.current.setdefault(target, {}).update(writes)
            self.written += len(writes)
            self.verified += len(writes)
        return sum(len(w) for w in plan.values())
