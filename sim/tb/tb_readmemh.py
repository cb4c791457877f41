"""cocotb testbench: read back a ROM loaded by $readmemh.

Driven by tests/sim/test_image_readmemh.py.

Runs inside the simulator; the pytest driver passes the expected words as parameters.
"""

import cocotb
from cocotb.triggers import Timer

from innet.sim.tb import kit

__all__ = ["test_rom_holds_the_image"]


@cocotb.test()
async def test_rom_holds_the_image(dut):
    words = kit.params()["words"]
    wrong = []
    for address, word in enumerate(words):
        dut.addr.value = address
        await Timer(1, "ns")
        if int(dut.data.value) != word:
            wrong.append((address, int(dut.data.value), word))
    kit.report(checked=len(words), wrong=wrong[:5])
    assert not wrong, f"{len(wrong)} words differ, first (address, read, expected): {wrong[0]}"
