"""Drivers of the configuration bus (:func:`innet.hw.regs.bus_signature`) for testbenches.

:class:`ConfigBus` drives the ``cfg_*`` ports of a bench top level in cocotb; :func:`sim_write`
and :func:`sim_read` drive a component's ``cfg`` bus in an ``amaranth.sim`` testbench. Both
follow the bus contract: a write takes effect on the rising edge with ``w_en`` high, read data
comes one cycle after the address.

A cocotb top level carries the buses of several targets in one of three layouts:

- *select* (:class:`innet.hw.network.Network`): ``cfg_sel`` picks the target, the other ports
  are one bus;
- *shared address* (:class:`innet.sim.tb.switchbench.SwitchBench`): one ``cfg_addr`` and
  ``cfg_w_data`` for every target, one ``cfg_w_en`` bit per target, target ``t``'s read data
  at bits ``32 t ...`` of ``cfg_r_data``;
- *lanes* (:class:`innet.sim.tb.endpointbench.EndpointBench`): every target has its own bus,
  target ``t`` at ``cfg_addr`` bits ``addr_width * t ...``, ``cfg_w_data`` and ``cfg_r_data``
  bits ``32 t ...`` and ``cfg_w_en`` bit ``t``. Only this layout writes and reads several
  targets in the same cycle; the others take the targets one after another.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from innet.gen.checks import check_int
from innet.gen.regmap import WORD_BITS

__all__ = ["ConfigBus", "sim_read", "sim_write"]

_WORD_MASK = (1 << WORD_BITS) - 1


class ConfigBus:
    """The configuration buses of a cocotb top level (see the module docstring for layouts).

    Parameters
    ----------
    dut : cocotb handle
        The top level, with ``clk`` and the ``cfg_*`` ports.
    addr_width : int, optional
        Bits of one target's address lane (the *lanes* layout); ``None`` for one shared
        address.
    select : bool
        The *select* layout (a ``cfg_sel`` port).
    latency : int
        Cycles from an address at the ports to its read data: 1 by the bus contract, more
        where the top level registers the bus on its way to the targets
        (:attr:`innet.hw.network.Network.control_latency` plus 1).

    Raises
    ------
    TypeError, ValueError
        If ``addr_width`` or ``latency`` is not a positive integer, or ``addr_width`` is
        given with ``select``.
    """

    def __init__(self, dut, *, addr_width: int | None = None, select: bool = False,
                 latency: int = 1) -> None:
        check_int("Read latency", latency, low=1)
        if addr_width is not None:
            check_int("Address width", addr_width, low=1)
            if select:
                raise ValueError(f"A selected bus has one address, not lanes of {addr_width} "
                                 f"bits")
        self.dut = dut
        self.addr_width = addr_width
        self.select = select
        self.latency = latency

    def _groups(self, jobs: Mapping[int, Sequence]) -> list[dict[int, list]]:
        """The targets' jobs as groups that run in parallel, one group after another."""
        jobs = {t: list(j) for t, j in jobs.items() if j}
        if self.addr_width is not None:
            return [jobs] if jobs else []
        return [{t: j} for t, j in jobs.items()]

    def _drive(self, cycle: Mapping[int, int], data: Mapping[int, int] | None = None) -> None:
        """Drive the addresses (and write data with strobes, if ``data``) of one cycle."""
        dut = self.dut
        if self.addr_width is None:
            (target, address), = cycle.items()
            if self.select:
                dut.cfg_sel.value = target
            dut.cfg_addr.value = address
            if data is not None:
                dut.cfg_w_data.value = data[target]
                dut.cfg_w_en.value = 1 if self.select else 1 << target
            return
        dut.cfg_addr.value = sum(a << (self.addr_width * t) for t, a in cycle.items())
        if data is not None:
            dut.cfg_w_data.value = sum(d << (WORD_BITS * t) for t, d in data.items())
            dut.cfg_w_en.value = sum(1 << t for t in cycle)

    def _words(self, targets: Sequence[int]) -> list[int]:
        """The read data of ``targets`` in this cycle (``cfg_r_data`` read once: every read of
        a wide port costs a conversion of all its bits)."""
        word = int(self.dut.cfg_r_data.value)
        if self.select:
            return [word] * len(targets)
        return [(word >> (WORD_BITS * t)) & _WORD_MASK for t in targets]

    async def write_all(self, writes: Mapping[int, Sequence[tuple[int, int]]]) -> None:
        """Write ``writes[target]`` (``(address, word)`` pairs in order), one word per cycle
        and target; ``w_en`` is low again after the last word."""
        from cocotb.triggers import FallingEdge

        dut = self.dut
        for group in self._groups(writes):
            for i in range(max(len(w) for w in group.values())):
                await FallingEdge(dut.clk)
                now = {t: w[i] for t, w in group.items() if i < len(w)}
                self._drive({t: a for t, (a, _d) in now.items()},
                            {t: d for t, (_a, d) in now.items()})
        await FallingEdge(dut.clk)
        dut.cfg_w_en.value = 0

    async def read_all(self, reads: Mapping[int, Sequence[int]]) -> dict[int, list[int]]:
        """The words at ``reads[target]`` (addresses), one address per cycle and target,
        pipelined (the data of one address is read while the next ones are presented)."""
        from cocotb.triggers import FallingEdge

        dut = self.dut
        out: dict[int, list[int]] = {t: [] for t in reads}
        pending: deque[list[int]] = deque()  # the targets of each cycle in flight

        def collect() -> None:
            targets = pending.popleft()
            for t, word in zip(targets, self._words(targets), strict=True):
                out[t].append(word)

        await FallingEdge(dut.clk)
        dut.cfg_w_en.value = 0
        for group in self._groups(reads):
            for i in range(max(len(a) for a in group.values())):
                now = {t: a[i] for t, a in group.items() if i < len(a)}
                self._drive(now)
                pending.append(list(now))
                await FallingEdge(dut.clk)
                if len(pending) == self.latency:
                    collect()
        while pending:
            await FallingEdge(dut.clk)
            collect()
        return out

    async def write(self, target: int, writes: Sequence[tuple[int, int]]) -> None:
        """Write ``(address, word)`` pairs to one target, one word per cycle."""
        await self.write_all({target: writes})

    async def read(self, target: int, addresses: Sequence[int]) -> list[int]:
        """The words at ``addresses`` of one target."""
        return (await self.read_all({target: addresses}))[target]


async def sim_write(ctx, bus, address: int, words: Sequence[int]) -> None:
    """Write ``words`` to consecutive addresses from ``address`` on ``bus`` (a component's
    ``cfg`` member) in an ``amaranth.sim`` testbench, one word per cycle."""
    for w, word in enumerate(words):
        ctx.set(bus.addr, address + w)
        ctx.set(bus.w_data, word)
        ctx.set(bus.w_en, 1)
        await ctx.tick()
    ctx.set(bus.w_en, 0)


async def sim_read(ctx, bus, address: int) -> int:
    """The word at ``address`` on ``bus`` in an ``amaranth.sim`` testbench (one cycle)."""
    ctx.set(bus.addr, address)
    await ctx.tick()
    return ctx.get(bus.r_data)
