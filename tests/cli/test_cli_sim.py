"""``innet sim allreduce``: the options are checked before anything is built or simulated."""

import os

import pytest
from click.testing import CliRunner

from innet.sim.cli import main

CORES = os.cpu_count() or 1

@pytest.mark.parametrize(("args", "message"), [
    (["polarfly", "--q", "2", "--algo", "tree"],
     ("Invalid value for '--algo': 'tree' is not one of 'innet', 'swing-l', 'swing-b', "
      "'recdoub', 'recdoub-l', 'recdoub-b', 'ring', 'all'.")),
    (["polarfly", "--q", "2", "--clock-mhz", "100"], "--clock-mhz applies to piuma, not polarfly"),
    (["polarfly", "--q", "2", "--sockets", "4"],
     "--sockets does not apply to polarfly, which takes --q, --r0, --r1"),
    (["polarfly", "--q", "2", "--threads", "0"],
     f"--threads must be from 1 to {CORES} (this machine's cores), not 0"),
    (["polarfly", "--q", "2", "--threads", str(CORES + 1)],
     f"--threads must be from 1 to {CORES} (this machine's cores), not {CORES + 1}"),
    (["polarfly", "--q", "2", "--seed", "-1"],
     "Invalid value for '--seed': -1 is not in the range 0<=x<=4294967295."),
    (["polarfly", "--q", "2", "--seed", str(1 << 32)],
     "Invalid value for '--seed': 4294967296 is not in the range 0<=x<=4294967295."),
    (["piuma", "--clock-mhz", "100"], "piuma needs --nodes, such as 2x2"),
    (["piuma", "--nodes", "2", "--clock-mhz", "0"], "--clock-mhz must be above 0, not 0"),
    (["piuma", "--nodes", "2", "--clock-mhz", "1e6"],
     "--clock-mhz 1e+06 makes the longest link 50,000 cycles; at most 1,024 are simulated"),
    (["piuma", "--nodes", "2", "--clock-mhz", "inf"],
     "Invalid value for '--clock-mhz': inf is not a finite number."),
    (["torus", "--shape", "4", "--background", "nan"],
     "Invalid value for '--background': nan is not a finite number."),
    (["torus", "--shape", "4", "--background", "2"],
     "Invalid value for '--background': 2.0 is not in the range 0<=x<=1."),
    (["torus", "--shape", "4", "--backpressure", "1"],
     "Invalid value for '--backpressure': 1.0 is not in the range 0<=x<1."),
    (["piuma", "--nodes", "2", "--sockets", "0"], "Sockets must be at least 1, not 0"),
    (["torus", "--shape", "4", "--elements", "2Mi"],
     "--elements must be at most 1,048,576, not '2Mi'"),
    (["torus", "--shape", "4", "--elements", "0"], "--elements must be at least 1, not '0'"),
    (["torus", "--shape", "4", "--pattern", "permutation"],
     "--pattern shapes the background traffic: give --background above 0"),
    (["torus", "--shape", "4", "--elements", "1.5K"],
     "--elements must be a size such as 64, 4K or 1Mi, not '1.5K'"),
    (["torus", "--shape", "4", "--load", "memory"],
     "Invalid value for '--load': 'memory' is not one of 'backdoor', 'lanes', 'bus'."),
    (["torus", "--shape", "4", "--load", "bus", "--check-load"],
     ("Check load applies to the backdoor load, not 'bus' (which reads back every word of the "
     "image anyway)")),
])
def test_option_errors_are_one_line_user_errors(args, message, tmp_path):
    out = tmp_path / "result.json"
    done = CliRunner().invoke(main, ["sim", "allreduce", *args, "-o", str(out)])
    assert done.exit_code == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize(("flag", "env", "recorded"), [
    ([], "1", True), ([], "0", False), (["--waves"], "0", True), ([], None, False),
])
def test_waves_on_request_by_flag_or_environment(flag, env, recorded, monkeypatch, tmp_path):
    import innet.sim.network

    asked = {}

    def simulate(topology, runs, **options):
        asked.update(options)
        return []

    monkeypatch.setattr(innet.sim.network, "simulate", simulate)
    monkeypatch.chdir(tmp_path)
    if env is None:
        monkeypatch.delenv("WAVES", raising=False)
    else:
        monkeypatch.setenv("WAVES", env)
    done = CliRunner().invoke(main, ["sim", "allreduce", "torus", "--shape", "4", *flag])
    assert done.exit_code == 0, done.output
    assert asked["waves"] is recorded
    assert asked["workdir"] == ("innet-sim-waves" if recorded else None)


def test_waves_refused_where_their_directory_is_a_file(monkeypatch, tmp_path):
    import innet.sim.network

    monkeypatch.setattr(innet.sim.network, "simulate",
                        lambda *args, **options: pytest.fail("simulated"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "innet-sim-waves").write_text("mine")
    done = CliRunner().invoke(main, ["sim", "allreduce", "torus", "--shape", "4", "--waves"])
    assert done.exit_code == 2
    assert done.stderr == ("innet: error: --waves records into ./innet-sim-waves/, and "
                           "innet-sim-waves is a file: move it away\n")
    assert (tmp_path / "innet-sim-waves").read_text() == "mine"
