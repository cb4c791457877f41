# amaranth: UnusedElaboratable=no
"""``innet verilog ceng`` and ``innet verilog switch --collective``, and the engine's top level."""

import json
import re

import pytest
from amaranth.sim import Simulator

from innet.hw.alu.multi import multi_latency
from innet.hw.ceng import FRONT_CYCLES, CollectiveEngine, engine_latency
from innet.hw.ceng.top import EngineTop
from innet.hw.flit import Flit, FlitParams


def test_ceng_writes_verilog_metadata_and_facts(innet, tmp_path):
    out = tmp_path / "ceng.v"
    done = innet("verilog", "ceng", "--radix", "2", "--collective-ids", "1", "--no-mul",
                 "--name", "ce2", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    text = out.read_text()
    assert "module ce2(" in text
    assert report["lines"] == len(text.splitlines())
    assert report["reduce_cycles"] == multi_latency(3) == 13
    assert report["params"]["queue_depth"] == 13 + FRONT_CYCLES + 1
    assert report["params"]["buffer_depth"] == 5
    assert report["params"]["mul"] is False
    assert report["latency_by_ports"] == {str(k): engine_latency(k, 2) for k in (1, 2, 3)}
    ports = json.loads(out.with_suffix(".json").read_text())["interface"]["members"]
    assert sorted(ports) == sorted(CollectiveEngine(FlitParams(collective_ids=1), 2)
                                   .signature.members.keys())
    for name in ("req__2__valid", "req__2__payload", "req_pop__0", "result__payload",
                 "result__targets", "credit_resp", "mismatch", "clk", "rst"):
        assert re.search(rf"^\s*(input|output)\s+(\[\d+:0\]\s+)?{name};", text, re.M), name


def test_ceng_readable_summary(innet, tmp_path):
    done = innet("verilog", "ceng", "--radix", "2", "--collective-ids", "1", "--no-mul",
                 "--registered", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("wrote innet_ceng.v (")
    depth, by_ports = 13 + FRONT_CYCLES + 1, {k: engine_latency(k, 2) for k in (1, 2, 3)}
    assert lines[1] == f"reduce:  one 3-operand unit of 13 cycles; 1 ids x {depth} queued results"
    assert lines[2] == f"latency: cycles added by contributing ports {by_ports}"
    assert lines[3] == "ports:   every port registered (timing harness)"


@pytest.mark.parametrize(("args", "message"), [
    (["ceng", "--radix", "0"], "Radix must be at least 1, not 0"),
    (["ceng", "--radix", "2", "--queue-depth", "2"], "Queue depth must be at least 3, not 2"),
    (["ceng", "--radix", "2", "--buffer-depth", "0"],
     "Request buffer depth must be at least 1, not 0"),
    (["ceng", "--radix", "2", "-o", "x.txt"], "The output must be a .v file, not 'x.txt'"),
    (["switch", "--radix", "2", "--payload-width", "16"],
     "The collective engine reduces 32-bit payloads, not 16-bit ones (use --collective pass)"),
])
def test_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    done = innet("verilog", *args, "--collective-ids", "1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_switch_with_pass_through(innet, tmp_path):
    from innet.hw.collective import CollectivePath
    from innet.hw.variants import make_switch
    from innet.hw.verilog import emit

    done = innet("verilog", "switch", "--radix", "2", "--collective-ids", "1", "--routing-depth",
                 "4", "--payload-width", "16", "--collective", "pass", "--json", "-o", "sw.v",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["collective"], report["mul"]) == ("pass", None)
    assert report["flit"]["width"] == FlitParams(payload_width=16, routing_depth=4,
                                                 collective_ids=1).width
    # The file is the switch with the pass-through, not the p2p switch.
    text = (tmp_path / "sw.v").read_text()
    for collective, same in ((CollectivePath, True), (None, False)):
        top, _ = make_switch(2, 16, 1, 4, collective=collective)
        assert (emit(top, "innet_switch").verilog == text) is same


@pytest.mark.parametrize(("registered", "delay"), [(False, 0), (True, 2)])
def test_top_passes_ports_through_registers(registered, delay):
    """A request's credit goes back in the cycle it reaches the engine (its partition has room
    for it): it is seen on the top's ``req_pop`` after the top's register stages, once."""
    p = FlitParams(collective_ids=1, routing_depth=4)
    top = EngineTop(CollectiveEngine(p, 2, mul=False), registered=registered)
    seen = []

    async def bench(ctx):
        ctx.set(top.req[1].payload.as_value(), p.pack(Flit.request(0, 1, 5)))
        ctx.set(top.req[1].valid, 1)
        for cycle in range(6):
            seen.append(ctx.get(top.req_pop[0]))
            await ctx.tick()
            if cycle == 0:
                ctx.set(top.req[1].valid, 0)

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert seen.index(1 << 1) == delay
    assert seen.count(1 << 1) == 1
    assert top.registered is registered
    assert top.engine.radix == 2


def test_top_parameter_errors():
    with pytest.raises(TypeError, match=r"^Engine must be a CollectiveEngine, not 3$"):
        EngineTop(3)
    engine = CollectiveEngine(FlitParams(collective_ids=1), 2, mul=False)
    with pytest.raises(TypeError, match=r"^Registered must be a bool, not 1$"):
        EngineTop(engine, registered=1)
