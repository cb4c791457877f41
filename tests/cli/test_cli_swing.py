"""``innet swing``: summary, JSON, --verify, --model-sizes, -o and errors."""

import json

import pytest
from click.testing import CliRunner

from innet.gen.swing import Schedule, Verdict, build_schedule
from innet.sim.cli import main


def test_json_summary_and_verify(innet):
    done = innet("swing", "torus", "--shape", "8x8", "--algo", "swing-b",
                 "--json", "--verify")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    schedule = build_schedule("swing-b", (8, 8))
    assert report["ranks"] == 64
    assert report["steps"] == schedule.steps == 12
    assert report["collectives"] == 4
    assert report["peers"] == [schedule.peers(c) for c in range(4)]
    assert {report["peers"][0][0][0], report["peers"][1][0][0]} == {1, 8}
    assert {report["peers"][2][0][0], report["peers"][3][0][0]} == {7, 56}
    assert report["blocks_sent_per_rank"] == [4 * 2 * 63] * 64
    assert report["max_hops"] == 3
    assert 1.0 < report["congestion_deficiency"] < 1.19
    assert report["verify"] == {"exact": True, "message": "exact, every block once",
                                "elements": schedule.collectives * (2 * 64 + 1)}


def test_readable_summary(innet):
    done = innet("swing", "torus", "--shape", "4x4", "--algo", "ring", "--verify")
    assert done.returncode == 0, done.stderr
    assert "ring on torus 4x4" in done.stdout
    assert "verify: exact, every block once (16 ranks" in done.stdout


def test_model_sizes_table(innet):
    done = innet("swing", "hyperx", "--shape", "8x8", "--model-sizes",
                 "32B..128MiB", "--json")
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["model"]
    sizes = [row["size"] for row in model["sizes"]]
    assert sizes == [32 * 4**k for k in range(12)]
    for row in model["sizes"]:
        assert set(row["times"]) == {"swing-b", "swing-l", "recdoub-b", "recdoub-l", "ring",
                                     "bucket"}
        assert row["best"] == min(row["times"], key=row["times"].get)
    assert model["sizes"][0]["best"].endswith("-l")  # latency-optimal wins small vectors
    # The same numbers in cycles of the one cost model (Eq. 1 in seconds at 1 GHz).
    assert model["units"]["times"] == "seconds"
    assert model["cost_model"]["clock_hz"] == 1e9
    assert model["cost_model"]["step_overhead"] == pytest.approx(model["alpha"] * 1e9)
    for row in model["sizes"]:
        assert row["cycles"] == pytest.approx({n: t * 1e9 for n, t in row["times"].items()})
    readable = innet("swing", "torus", "--shape", "8x8", "--model-sizes", "32B,1Mi")
    assert "predicted allreduce time in µs (1 µs/step, 400 ns/hop, 400 Gbit/s)" in readable.stdout
    assert "1MiB" in readable.stdout


def test_polarfly(innet):
    done = innet("swing", "polarfly", "--q", "3", "--algo", "swing-b", "--json",
                 "--verify")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["network"] == "PolarFly q=3"
    assert report["ranks"] == 13
    assert report["max_hops"] <= 2
    assert report["verify"]["exact"]


def test_output_directory(innet, tmp_path):
    done = innet("swing", "torus", "--shape", "2x4", "--algo", "bucket", "-o",
                 str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    schedule = Schedule.from_json((tmp_path / "out" / "schedule.json").read_text())
    assert list(schedule) == list(build_schedule("bucket", (2, 4)))
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["algorithm"] == "bucket"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["schedule.json",
                                                                     "summary.json"]


def test_output_directory_is_written_whole_or_not_at_all(innet, tmp_path):
    (tmp_path / "out" / "summary.json").mkdir(parents=True)
    done = innet("swing", "torus", "--shape", "2x4", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "innet: error: out/summary.json: Is a directory, not a file\n"
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["summary.json"]


def test_verify_failure_exits_non_zero(monkeypatch):
    import innet.gen.swing as swing

    monkeypatch.setattr(swing, "verify", lambda schedule: Verdict(False, 9, "rank 1 is off"))
    result = CliRunner().invoke(main, ["swing", "torus", "--shape", "4", "--verify"])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "innet: error: verify: rank 1 is off"


@pytest.mark.parametrize(("args", "message"), [
    (["polarfly"], "innet: error: polarfly needs --q"),
    (["polarfly", "--q", "3", "--shape", "4x4"],
     "innet: error: --shape does not apply to polarfly, which takes --q, --r0, --r1"),
    (["torus", "--shape", "4x4", "--q", "3"],
     "innet: error: --q does not apply to torus, which takes --shape, --mesh"),
    (["torus"], "innet: error: torus needs --shape, such as 4x4"),
    (["torus", "--shape", "4x4", "--model-sizes", "12 apples"],
     "innet: error: --model-sizes must be a size such as 64, 4Ki or 1MiB, not '12 apples'"),
    (["torus", "--shape", "4x4", "--model-sizes", "0..1KiB"],
     "innet: error: --model-sizes must be at least 1, not '0'"),
    (["torus", "--shape", "8", "--model-sizes", "1K", "--alpha", "1e308"],
     "innet: error: --alpha must be a time such as 5ns or 0.5us, not '1e308'"),
    (["torus", "--shape", "8", "--model-sizes", "1K", "--alpha", "0.5"],
     "innet: error: --alpha needs a unit, such as 1us or 400ns, not '0.5'"),
    (["torus", "--shape", "8", "--model-sizes", "1K", "--alpha", "2s"],
     "innet: error: --alpha must be at most 1s, not '2s'"),
    (["torus", "--shape", "8", "--model-sizes", "1K", "--bandwidth", "nan"],
     "innet: error: --bandwidth must be a bandwidth such as 51.2Gbps, not 'nan'"),
    (["torus", "--shape", "8", "--model-sizes", "1K", "--bandwidth", "0Gbps"],
     "innet: error: --bandwidth must be above 0, not '0Gbps'"),
    (["torus", "--shape", "8", "--model-sizes", "1K", "--hop-latency", "inf"],
     "innet: error: --hop-latency must be a time such as 5ns or 0.5us, not 'inf'"),
    (["torus", "--shape", "8", "--alpha", "1us"],
     "innet: error: --alpha applies to --model-sizes; add --model-sizes"),
    (["torus", "--shape", "8", "--bandwidth", "100", "--hop-latency", "100ns"],
     "innet: error: --bandwidth, --hop-latency apply to --model-sizes; add --model-sizes"),
    (["torus", "--shape", "6", "--algo", "swing-l", "--nonpow2", "paper"],
     ("innet: error: nonpow2='paper' (Swing Appendix A.2 and Section 3.2) needs "
     "bandwidth-optimal Swing on a ring of at most 1024 ranks")),
])
def test_errors_are_one_line(innet, args, message):
    done = innet("swing", *args)
    assert done.returncode == 2
    assert done.stderr == message + "\n"
    assert done.stdout == ""


def test_model_defaults_are_the_cost_model_s(innet):
    from innet.gen.swing.cost import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_HOP_LATENCY

    args = ("swing", "torus", "--shape", "4x4", "--model-sizes", "1K", "--json")
    default = json.loads(innet(*args).stdout)["model"]
    assert (default["alpha"], default["beta"], default["hop_latency"]) == (
        DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_HOP_LATENCY)
    given = json.loads(innet(*args, "--alpha", "0.5us", "--bandwidth", "1.6Tbps",
                             "--hop-latency", "100ns").stdout)["model"]
    assert (given["alpha"], given["beta"], given["hop_latency"]) == pytest.approx(
        (0.5e-6, 8 / 1.6e12, 100e-9))
