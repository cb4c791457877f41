"""innet.hw.alu under cocotb + Verilator: bit-exact against innet.gen.ops.combine in bulk.

Each run feeds one operand pair per enabled cycle with random ``en`` stalls and idle cycles
(junk on the inputs while stalled), checks every result, its tag and its latency, and ends with
every result out (innet.sim.tb.tb_alu, in the bench innet.sim.tb.alubench); units broken on
purpose show that each check of the bench catches what it exists for.
"""


import pytest
from amaranth import Module, Signal

from innet.gen.ops import DType, Op, is_supported
from innet.hw.alu import ALU
from innet.hw.testing import wrap
from innet.sim import runner
from innet.sim.tb.alubench import alu_bench
from innet.sim.tb.tb_alu import FP32_SPECIALS, INT_SPECIALS

TAG_WIDTH = 16
FP32_OPS = ("add", "mul", "min", "max")
INT_OPS = [op.name.lower() for op in Op if is_supported(op, DType.INT32)]


#: Pair index bits of the bench: streams of up to half a million pairs.
INDEX_WIDTH = 19


@pytest.fixture(scope="module")
def design():
    return alu_bench(index_width=INDEX_WIDTH, tag_width=TAG_WIDTH)


def run(design, **params):
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
                       r"innet_alu_bench: test_stream \(1 errors, first: #17 add\.fp32\("):
        run(design, groups=[["add", "fp32", 50]], corrupt=17, seed=13)


class _Broken(ALU):
    """The unit with some of its outputs replaced (``outputs(m, inner, self)`` gives them)."""

    def __init__(self, outputs, **kwargs) -> None:
        super().__init__(**kwargs)
        self._outputs = outputs

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = ALU(tag_width=self._tag_width)
        wrap(m, self, inner, replace=self._outputs(m, inner, self))
        return m


def _late(m, inner, outer):
    """Every output one enabled cycle late."""
    late = {}
    for name in ("o_valid", "o_result", "o_unsupported", "o_tag"):
        port = getattr(inner, name)
        late[(name,)] = delayed = Signal.like(port, name=f"late_{name}")
        with m.If(outer.en):
            m.d.sync += delayed.eq(port)
    return late


def _twice(m, inner, outer):
    """Every result valid for one more enabled cycle."""
    again = Signal(name="again")
    with m.If(outer.en):
        m.d.sync += again.eq(inner.o_valid)
    return {("o_valid",): inner.o_valid | again}


_PAIR = r"#(\d+) \w+\.\w+\(0x[0-9a-f]{8}, 0x[0-9a-f]{8}\)"

#: Broken units: name -> (their outputs, the first error, the idle probability of the run).
BROKEN = {
    "tag": (lambda m, inner, outer: {("o_tag",): inner.o_tag ^ 1},
            _PAIR + r": tag 1, expected 0", 0.05),
    "late": (_late, _PAIR + r": no result where one was due", 0.05),
    "twice": (_twice, _PAIR + r": a result where none was due", 0.9),
    "leaks-while-stalled": (lambda m, inner, outer: {("o_result",): inner.o_result ^ ~outer.en},
                            _PAIR + r": outputs changed while en was low", 0.05),
}


@pytest.mark.rtl
@pytest.mark.parametrize("fault", sorted(BROKEN))
def test_the_bench_names_a_broken_unit(fault):
    """A unit with a wrong tag, one cycle too much latency, a result twice, or outputs that move
    while ``en`` is low fails the run, and the first error names the pair and what was wrong."""
    outputs, message, idle = BROKEN[fault]
    design = alu_bench(index_width=8, tag_width=TAG_WIDTH,
                       unit=lambda **kwargs: _Broken(outputs, **kwargs),
                       name="innet_alu_bench_broken")
    with pytest.raises(runner.SimulationError, match=r"\(\d+ errors, first: " + message):
        run(design, groups=[["add", "fp32", 100]], stall=0.3, idle=idle, seed=14)
