"""cocotb testbench for :class:`innet.hw.testing.MulAdd` (the design of ``innet doctor``).

Parameters (:func:`innet.sim.tb.kit.params`): ``samples`` (random operand sets, default 1000),
``wrong_model`` (compare against a deliberately wrong model; used to prove that failures are
reported).
"""

from __future__ import annotations

import os
import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from innet.hw.testing import muladd_model
from innet.sim.tb import kit

__all__ = ["TB", "test_random_operands"]


class TB:
    """Clock, reset, a driver, a monitor and a scoreboard for the multiply-add."""

    def __init__(self, dut, model, width: int = 32) -> None:
        self.dut = dut
        self.model = model
        self.width = width
        self.expected: deque[int] = deque()
        self.checked = 0
        self.mismatches: list[str] = []

    async def start(self) -> None:
        self.dut.i_valid.value = 0
        await kit.reset(self.dut)
        cocotb.start_soon(self._monitor())

    async def _monitor(self) -> None:
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.o_valid.value):
                got = int(dut.o.value)
                want = self.expected.popleft() if self.expected else None
                if got != want:
                    self.mismatches.append(f"o = {got:#x}, expected {want!r}")
                self.checked += 1

    async def drive(self, a: int, b: int, c: int, valid: bool) -> None:
        dut = self.dut
        dut.a.value, dut.b.value, dut.c.value, dut.i_valid.value = a, b, c, int(valid)
        if valid:
            self.expected.append(self.model(a, b, c, self.width))
        await RisingEdge(dut.clk)


@cocotb.test()
async def test_random_operands(dut):
    """Random operands with random idle cycles; every output matches the model."""
    params = kit.params()
    samples = int(params.get("samples", 1000))
    model = muladd_model
    if params.get("wrong_model"):
        def model(a, b, c, width):
            return (a * b - c) % (1 << width)
    tb = TB(dut, model)
    await tb.start()
    rng = random.Random(params.get("seed", 1))
    mask = (1 << tb.width) - 1
    sent = 0
    while sent < samples:
        valid = rng.random() < 0.8
        operands = [rng.getrandbits(tb.width) for _ in range(3)]
        if rng.random() < 0.1:
            operands = [rng.choice([0, 1, mask]) for _ in range(3)]
        await tb.drive(*operands, valid)
        sent += valid
    for _ in range(3):
        await tb.drive(0, 0, 0, False)
    assert not tb.mismatches, f"{len(tb.mismatches)} mismatches, first: {tb.mismatches[0]}"
    assert not tb.expected, f"{len(tb.expected)} results never came out"
    assert tb.checked == samples, f"{tb.checked} results for {samples} operand sets"
    kit.report(checked=tb.checked, blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"))
