"""innet.hw.alu under cocotb + Verilator: bit-exact against innet.gen.ops.combine in bulk.

Each run feeds one operand pair per enabled cycle with random ``en`` stalls and idle cycles
(junk on the inputs while stalled), checks every result, its tag and its latency, and ends with
an empty scoreboard (innet.sim.tb.tb_alu).
"""


import pytest

from innet.gen.ops import DType, Op, is_supported
from innet.hw.alu import ALU, LATENCY
from innet.hw.verilog import emit
from innet.sim import runner
from innet.sim.tb.tb_alu import FP32_SPECIALS, INT_SPECIALS

TAG_WIDTH = 16
FP32_OPS = ("add", "mul", "min", "max")
INT_OPS = [op.name.lower() for op in Op if is_supported(op, DType.INT32)]


@pytest.fixture(scope="module")
def design():
    return emit(ALU(tag_width=TAG_WIDTH), "innet_alu")


def run(design, **params):
    params = {"latency": LATENCY, "tag_width": TAG_WIDTH, **params}
    return runner.run(design, "innet.sim.tb.tb_alu", params=params, seed=1)


@pytest.mark.rtl
def test_fp32_special_pairs_and_100k_random_pairs_per_operator(design):
    """Every special-value pair and 100,000 random pairs of the hard-case mixture for each
    binary32 operator, all four interleaved."""
    count = 100_000
    result = run(design, groups=[[op, "fp32", count] for op in FP32_OPS], specials=True,
                 stall=0.1, idle=0.05, seed=11)
    assert result.output["checked"] == len(FP32_OPS) * (count + len(FP32_SPECIALS) ** 2)


@pytest.mark.rtl
def test_integer_operators_and_unsupported_pairs(design):
    """Special operand pairs and random pairs for every integer operation on int32 and uint32,
    and unsupported (operation, type) codes, interleaved."""
    count, unsupported = 4000, 2000
    groups = [[op, dtype, count] for op in INT_OPS for dtype in ("int32", "uint32")]
    result = run(design, groups=groups, specials=True, unsupported=unsupported, stall=0.2,
                 idle=0.1, seed=12)
    assert result.output["checked"] == len(groups) * (count + len(INT_SPECIALS) ** 2) + unsupported


@pytest.mark.rtl
def test_a_wrong_expectation_fails_the_run(design):
    """The checks bite: one expected result off by one bit fails the cocotb test."""
    with pytest.raises(runner.SimulationError,
                       match=r"^1 of 1 cocotb tests failed in innet\.sim\.tb\.tb_alu on "
                       r"innet_alu: test_stream \(1 errors, first: #17 add\.fp32\("):
        run(design, groups=[["add", "fp32", 50]], corrupt=17, seed=13)
