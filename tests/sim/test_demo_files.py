"""innet.sim.report.demo without simulation: sizes, scenarios, the atomic output directory and
CLI errors."""

from __future__ import annotations

import os

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
    (target / "stale.txt").write_text("old")
    written = demo.write_outputs(target, {"a.txt": "A", "b.bin": b"\x00\x01"},
                                 write=lambda d: (d / "c.v").write_text("module c; endmodule"))
    assert sorted(os.listdir(target)) == ["a.txt", "b.bin", "c.v"]
    assert written["b.bin"] == str(target / "b.bin")
    assert (target / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(os.listdir(tmp_path)) == ["out"]  # no staging or old directory left


def test_a_failure_leaves_the_old_directory_untouched(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("old")

    def boom(_):
        raise OSError("disk full")

    with pytest.raises(OSError, match=r"^disk full$"):
        demo.write_outputs(target, {"a.txt": "A"}, write=boom)
    assert os.listdir(target) == ["keep.txt"]
    assert sorted(os.listdir(tmp_path)) == ["out"]


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
    (["--study", "swing", "--backpressure", "-0.5"],
     "innet: error: Invalid value for '--backpressure': -0.5 is not in the range 0<=x<1."),
])
def test_cli_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    result = innet("demo", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [message]
    assert os.listdir(tmp_path) == []


def test_cli_quick_and_sizes_conflict(innet, tmp_path):
    result = innet("demo", "--quick", "--sizes", "1", cwd=tmp_path)
    assert result.returncode == 2
    assert "--quick and --sizes cannot be used together" in result.stderr
