"""innet.sim.report.demo without simulation: sizes, scenarios, the atomic output directory and
CLI errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from innet.sim.report import demo


def test_scenarios_are_size_major_over_every_algorithm():
    runs = demo.scenarios([1, 64], dtype="int32")
    assert [(s.elements, s.algo) for s in runs] == [(m, a) for m in (1, 64)
                                                    for a in demo.ALGOS]
    assert {s.dtype for s in runs} == {"int32"}
    assert all(s.participants is None and s.kind == "allreduce" for s in runs)


@pytest.mark.parametrize(("sizes", "algos", "wanted"), [
    ((1, 64), demo.ALGOS, [("innet", 1), ("swing-l", 1)]),
    ((64, 4096), demo.ALGOS, [("innet", 1), ("swing-l", 1), ("innet", 4096)]),
    ((4096,), ("innet", "ring"), [("innet", 4096)]),
    ((1, 64), ("swing-l", "ring"), []),
])
def test_quiet_scenarios_run_without_backpressure(sizes, algos, wanted):
    """What the report's headline needs, on a quiet network, whatever the demo's own runs."""
    runs = demo.quiet_scenarios(sizes, algos=algos, dtype="int32")
    assert [(s.algo, s.elements) for s in runs] == wanted
    assert all(s.backpressure == 0 and s.background == 0 and s.dtype == "int32"
               and s.participants is None for s in runs)


@pytest.mark.parametrize(("sizes", "error", "message"), [
    ([], ValueError, r"^The demo needs at least one vector size$"),
    ([4, 0], ValueError, r"^Vector sizes must be at least 1 element, not 0$"),
    ([1.5], TypeError, r"^Vector sizes must be integers, not 1\.5$"),
])
def test_bad_sizes(sizes, error, message):
    with pytest.raises(error, match=message):
        demo._check_sizes(sizes)


@pytest.mark.parametrize(("backpressure", "error"), [(1.0, ValueError), ("0.5", TypeError)])
def test_run_demo_refuses_a_bad_backpressure_before_building(tmp_path, backpressure, error):
    with pytest.raises(error, match=r"^Backpressure must be"):
        demo.run_demo(output=tmp_path / "out", sizes=[1], backpressure=backpressure)
    assert os.listdir(tmp_path) == []


def test_write_outputs_replaces_the_directory_as_a_whole(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    # An earlier output: it holds a file of the same name, and one this run does not write.
    (target / "a.txt").write_text("old")
    (target / "d.txt").write_text("old")
    written = demo.write_outputs(target, {"a.txt": "A", "b.bin": b"\x00\x01"},
                                 write=lambda d: (d / "c.v").write_text("module c; endmodule"),
                                 names=["a.txt", "b.bin", "c.v", "d.txt"])
    assert sorted(os.listdir(target)) == ["a.txt", "b.bin", "c.v"]
    assert written["b.bin"] == str(target / "b.bin")
    assert (target / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(os.listdir(tmp_path)) == ["out"]  # no staging or old directory left


def test_a_failure_leaves_the_old_directory_untouched(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.txt").write_text("old")

    def boom(_):
        raise OSError("disk full")

    with pytest.raises(OSError, match=r"^disk full$"):
        demo.write_outputs(target, {"a.txt": "A"}, write=boom)
    assert os.listdir(target) == ["a.txt"]
    assert (target / "a.txt").read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["out"]


@pytest.mark.parametrize(("mine", "shown"), [
    (["notes.txt"], "notes.txt"),
    # An earlier output with a file of the user's beside it, or a directory of the same name.
    (["a.txt", "thesis.tex"], "thesis.tex"),
    (["b.txt/", "src/", "x", "y", "z"], "b.txt/, src/, x and 2 more"),
])
def test_a_directory_holding_anything_the_command_does_not_write_is_refused(tmp_path, mine,
                                                                             shown):
    target = tmp_path / "project"
    target.mkdir()
    for name in mine:
        if name.endswith("/"):
            (target / name).mkdir()
        else:
            (target / name).write_text("mine")
    message = (f"Output '{target}' holds {shown}, which this command does not write, and the "
               f"output is replaced as a whole: name a new directory")
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        demo.write_outputs(target, {"a.txt": "A", "b.txt": "B"})
    assert sorted(os.listdir(target)) == sorted(name.rstrip("/") for name in mine)
    assert sorted(os.listdir(tmp_path)) == ["project"]


def test_an_empty_directory_or_an_earlier_output_is_replaced(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    demo.write_outputs(target, {"a.txt": "A"})
    assert os.listdir(target) == ["a.txt"]
    # The names a command writes include those its ``write`` adds.
    (target / "c.v").write_text("old")
    demo.write_outputs(target, {"b.txt": "B"}, names=["a.txt", "b.txt", "c.v"])
    assert os.listdir(target) == ["b.txt"]


@pytest.mark.parametrize("where", [".", "..", "sub/.."])
def test_the_working_directory_or_one_holding_it_is_refused(tmp_path, monkeypatch, where):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "report.json").write_text("{}")
    monkeypatch.chdir(work)
    with pytest.raises(ValueError, match=f"^Output '{re.escape(where)}' holds the working "
                                         f"directory"):
        demo.write_outputs(Path(where), {"report.json": "{}"})
    assert sorted(os.listdir(work)) == ["report.json", "sub"]
    assert os.listdir(tmp_path) == ["work"]


def test_a_directory_that_cannot_be_moved_aside_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.txt").write_text("old")
    real = os.replace

    def busy(src, dst):
        if Path(src) == target:
            raise OSError(16, "Device or resource busy")
        real(src, dst)

    monkeypatch.setattr(demo.os, "replace", busy)
    with pytest.raises(OSError, match="busy"):
        demo.write_outputs(target, {"a.txt": "A"})
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert (target / "a.txt").read_text() == "old"


def test_output_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "out"
    target.write_text("x")
    with pytest.raises(ValueError, match=r"^Output '.*out' exists and is not a directory$"):
        demo.write_outputs(target, {"a.txt": "A"})
    assert target.read_text() == "x"


@pytest.mark.parametrize(("args", "message"), [
    (["--dtype", "fp32", "--op", "xor"], "innet: error: Operation xor is not defined on fp32"),
    (["--sizes", "1,x"], "innet: error: --sizes must be a size such as 64, 4K or 1Mi, not 'x'"),
    (["--sizes", "1,999G"], "innet: error: --sizes must be at most 1,048,576, not '999G'"),
    (["--seed", "-1"],
     "innet: error: Invalid value for '--seed': -1 is not in the range 0<=x<=4294967295."),
    (["--backpressure", "1"],
     "innet: error: Invalid value for '--backpressure': 1.0 is not in the range 0<=x<1."),
    (["--backpressure", "0.999"],
     ("innet: error: Backpressure must be at most 255/256 (0.996), the most the endpoints' "
      "throttle holds back, not 0.999")),
    (["--sizes", "1,64,1"], "innet: error: --sizes lists 1 twice"),
    (["--study", "swing", "--backpressure", "-0.5"],
     "innet: error: Invalid value for '--backpressure': -0.5 is not in the range 0<=x<1."),
    (["--study", "swing", "--op", "max"],
     "innet: error: --op does not apply to --study swing, which compares int32 sums"),
    (["--study", "swing", "--dtype", "fp32", "--op", "add"],
     "innet: error: --op and --dtype do not apply to --study swing, which compares int32 sums"),
])
def test_cli_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    result = innet("demo", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [message]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("args", "named"), [
    (["-o", "."], "'.' holds the working directory"),
    (["-o", "mine"], "'mine' holds notes.txt, which this command does not write"),
    (["--study", "swing", "-o", "mine"],
     "'mine' holds notes.txt, report.md, which this command does not write"),
])
def test_cli_refuses_an_output_it_would_harm_before_any_work(innet, tmp_path, args, named):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    (tmp_path / "mine" / "report.md").write_text("an output's name beside the user's file")
    result = innet("demo", "--quick", *args, cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"innet: error: Output {named}")
    assert result.stdout == ""
    assert sorted(os.listdir(tmp_path)) == ["mine"]
    assert sorted(os.listdir(tmp_path / "mine")) == ["notes.txt", "report.md"]


def test_cli_quick_and_sizes_conflict(innet, tmp_path):
    result = innet("demo", "--quick", "--sizes", "1", cwd=tmp_path)
    assert result.returncode == 2
    assert "--quick and --sizes cannot be used together" in result.stderr
