"""The shared cost model: parameters, conversions, Hockney lines and their lower envelope."""

import itertools
import math
import random

import numpy as np
import pytest

from innet.gen.cost import Cost, CostModel, envelope, reduce_cycles
from innet.hw.alu import LATENCY
from innet.hw.alu.multi import multi_latency
from innet.hw.ceng import engine_latency
from innet.hw.switch import HOP_CYCLES


def test_defaults_describe_the_project_network():
    model = CostModel()
    assert (model.link_latency, model.switch_latency, model.local_latency) == (0, HOP_CYCLES, 1)
    # An entry's drain: the reduction pipeline (LATENCY + 1), then the next entry loads.
    assert (model.reduce_latency, model.step_overhead) == (None, LATENCY + 2)
    assert model.front_latency == engine_latency(1, 8)
    # The reduction: the engine's unit at the switch's radix, whatever the operand count.
    for radix in (1, 2, 3, 4, 7, 8, 16, 31):
        assert model.reduction(radix) == reduce_cycles(radix) == multi_latency(radix + 1)
        assert engine_latency(2, radix) == model.front_latency + model.reduction(radix)
    assert CostModel(reduce_latency=5).reduction(8) == 5
    # mul: the engine's tree of pairwise ALUs over the contributing ports.
    for radix, count in ((2, 2), (2, 3), (4, 5), (8, 9), (16, 17)):
        assert (model.front_latency + model.reduction(radix, count, "mul")
                == engine_latency(count, radix, "mul"))
        assert CostModel(reduce_latency=5).reduction(radix, count, "mul") == 5
    with pytest.raises(ValueError, match=r"^The reduction of mul depends on the count of ports"):
        model.reduction(8, op="mul")
    assert (model.link_bandwidth, model.local_bandwidth, model.engine_bandwidth) == (1, 1, None)
    assert model.element_bytes == 4
    assert model.clock_hz is None
    # One-way point-to-point latency: injection, h links, h + 1 switches, ejection.
    assert [model.latency(h) for h in range(4)] == [5, 8, 11, 14]
    assert CostModel(link_latency=3, switch_latency=1, local_latency=2).latency(2) == \
        2 * 2 + 2 * 3 + 3 * 1


def test_beta_is_the_slowest_stage():
    model = CostModel(link_bandwidth=2, local_bandwidth=4, engine_bandwidth=8)
    assert model.beta() == 0.5
    assert model.beta(link_load=0.25, local_load=1) == 0.25  # the endpoint port: 1/4
    assert model.beta(link_load=0.25, local_load=0.5, engine_load=4) == 0.5  # the engine
    assert CostModel(local_bandwidth=math.inf).local_bandwidth is None
    assert CostModel(link_bandwidth=math.inf, local_bandwidth=None).beta() == 0


def test_seconds_and_json():
    model = CostModel(clock_hz=500e6)
    assert model.seconds(1000) == pytest.approx(2e-6)
    assert np.allclose(model.seconds(np.array([1, 2])), [2e-9, 4e-9])
    data = CostModel(local_bandwidth=None, link_latencies={(3, 1): 5}).to_dict()
    assert data["local_bandwidth"] is None
    assert data["link_latencies"] == [[1, 3, 5.0]]
    assert set(data) == {"link_latency", "switch_latency", "local_latency", "front_latency",
                         "reduce_latency",
                         "step_overhead", "link_latencies", "element_bytes", "link_bandwidth",
                         "local_bandwidth", "engine_bandwidth", "clock_hz"}
    with pytest.raises(ValueError, match=r"^The cost model has no clock frequency: set "
                                         r"clock_hz to convert cycles to seconds$"):
        CostModel().seconds(1)


def test_from_seconds_is_eq_1_per_step():
    """alpha s/step, beta s/byte, hop latency s/hop at f Hz: a step of h hops moving a load
    of n bytes takes alpha + h * hop + n * beta, i.e. that many cycles times f."""
    model = CostModel.from_seconds(1e-6, 8 / 400e9, 400e-9, clock_hz=1e9, element_bytes=4)
    assert model.step_overhead == pytest.approx(1000)
    assert model.latency(3) == pytest.approx(1200)
    assert model.link_bandwidth == pytest.approx(12.5)  # 50 GB/s in 4-byte elements per ns
    assert model.local_bandwidth is None
    n_bytes = 4096
    cycles = model.step_overhead + model.latency(3) + n_bytes / 4 * model.beta(link_load=1)
    assert model.seconds(cycles) == pytest.approx(1e-6 + 3 * 400e-9 + n_bytes * 8 / 400e9)
    assert CostModel.from_seconds(0, 0, 0).link_bandwidth == math.inf


def test_cost_lines():
    a, b = Cost(10, 2), Cost(1, 0.5)
    assert a + b == Cost(11, 2.5)
    assert a.time(3) == 16
    assert np.allclose(a.time(np.array([0, 1])), [10, 12])
    assert a.time(np.int64(2)) == 14
    assert a.__add__(3) is NotImplemented


def brute_force(costs, m):
    times = {name: cost.time(m) for name, cost in costs.items()}
    return min(times.values())


def test_envelope_against_sampling():
    rng = random.Random(5)
    for _ in range(200):
        costs = {f"c{i}": Cost(rng.choice([0, 5, 10, 20, 40]) + rng.random(),
                               rng.choice([0.5, 1, 2, 4, 8]) * (1 + rng.random()))
                 for i in range(rng.randint(1, 6))}
        pieces = envelope(costs)
        assert pieces[0][0] == 0
        assert pieces[-1][1] is None
        for (_, stop, _), (start, _, _) in itertools.pairwise(pieces):
            assert stop == start
        assert all(stop is None or stop > start for start, stop, _ in pieces)
        for start, stop, name in pieces:
            top = start * 2 + 10 if stop is None else stop
            for m in np.linspace(start, top, 7)[1:-1]:
                assert costs[name].time(m) == pytest.approx(brute_force(costs, m))


def test_envelope_ties():
    # Same line twice: the first listed wins; equal alpha: the smaller beta from m = 0.
    assert envelope({"a": Cost(1, 1), "b": Cost(1, 1)}) == [(0.0, None, "a")]
    assert envelope({"a": Cost(1, 2), "b": Cost(1, 1)}) == [(0.0, None, "b")]
    assert envelope({"fast": Cost(10, 1), "slow": Cost(0, 2)}) == [
        (0.0, 10.0, "slow"), (10.0, None, "fast")]
    with pytest.raises(ValueError, match=r"^Envelope needs at least one cost$"):
        envelope({})
    with pytest.raises(TypeError, match=r"^Cost 'a' must be a Cost, not 5$"):
        envelope({"a": 5})


@pytest.mark.parametrize(("args", "error", "message"), [
    (("a", 1), TypeError, r"^Alpha must be a number of cycles, not 'a'$"),
    ((1, True), TypeError, r"^Beta must be a number of cycles, not True$"),
    ((1, math.nan), ValueError, r"^Beta must be finite, not nan$"),
    ((math.inf, 1), ValueError, r"^Alpha must be finite, not inf$"),
])
def test_a_cost_is_two_finite_numbers(args, error, message):
    # A NaN made the envelope loop for ever.
    with pytest.raises(error, match=message):
        Cost(*args)
    assert Cost(np.float64(2), 1).time(3) == 5


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"step_overhead": -1}, ValueError, r"^Step overhead must be finite and >= 0, not -1.0$"),
    ({"reduce_latency": math.nan}, ValueError,
     r"^Reduce latency must be finite and >= 0, not nan$"),
    ({"front_latency": -3}, ValueError, r"^Front latency must be finite and >= 0, not -3.0$"),
    ({"local_latency": True}, TypeError, r"^Local latency must be a number, not True$"),
    ({"local_bandwidth": 0}, ValueError,
     r"^Local bandwidth must be > 0 \(inf allowed\), not 0.0$"),
    ({"engine_bandwidth": -2}, ValueError,
     r"^Engine bandwidth must be > 0 \(inf allowed\), not -2.0$"),
    ({"clock_hz": math.inf}, ValueError,
     r"^Clock frequency must be finite and > 0, not inf$"),
    ({"element_bytes": 0}, ValueError, r"^Element bytes must be at least 1, not 0$"),
    ({"element_bytes": 4.0}, TypeError, r"^Element bytes must be an integer, not 4.0$"),
])
def test_parameter_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        CostModel(**kwargs)


def test_from_seconds_errors():
    with pytest.raises(ValueError, match=r"^Alpha must be finite and >= 0, not -1.0$"):
        CostModel.from_seconds(-1, 0, 0)
    with pytest.raises(ValueError, match=r"^Clock frequency must be finite and > 0, not 0.0$"):
        CostModel.from_seconds(0, 0, 0, clock_hz=0)
    # Both divided by zero.
    with pytest.raises(ValueError, match=r"^Element bytes must be at least 1, not 0$"):
        CostModel.from_seconds(1e-6, 1e-9, 1e-7, element_bytes=0)
    with pytest.raises(ValueError, match=r"^Beta 4\.94066e-324 s/byte at 0\.1 Hz gives 0 cycles "
                                         r"per element; it must be finite and above 0$"):
        CostModel.from_seconds(1e-6, 5e-324, 1e-7, clock_hz=0.1)


def test_reduce_cycles_refuses_a_radix_that_is_not_positive():
    for radix in (0, -1):
        with pytest.raises(ValueError, match=rf"^Radix must be at least 1, not {radix}$"):
            reduce_cycles(radix)
    for radix in (2.0, True):
        with pytest.raises(TypeError, match=rf"^Radix must be an integer, not {radix!r}$"):
            reduce_cycles(radix)
