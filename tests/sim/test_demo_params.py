"""Large testbench parameters (a demo's many images) reach the testbench through a file."""

import pytest

from innet.hw.testing import MulAdd
from innet.hw.verilog import emit
from innet.sim import runner


@pytest.mark.rtl
def test_parameters_beyond_one_environment_string_arrive():
    design = emit(MulAdd(32), "innet_test_muladd")
    padding = "0123456789abcdef" * 20_000  # 320 kB: more than Linux's 128 KiB per string
    result = runner.run(design, "innet.sim.tb.tb_doctor",
                        params={"samples": 50, "seed": 2, "padding": padding}, seed=1)
    assert result.output["checked"] == 50

