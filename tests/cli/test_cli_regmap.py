# amaranth: UnusedElaboratable=no
"""`innet regmap`: formats, output files, and one-line errors for bad parameters."""

import json

import pytest
from click.testing import CliRunner

from innet.gen.regmap import endpoint_map, switch_map, to_c_header, to_json, to_markdown
from innet.sim.cli import main


@pytest.mark.parametrize(("fmt", "export"), [("json", to_json), ("c", to_c_header),
                                             ("md", to_markdown)])
def test_switch_formats(fmt, export):
    done = CliRunner().invoke(main, ["regmap", "--radix", "8", "--collective-ids", "4",
                                     "--routing-depth", "16", "--format", fmt])
    assert done.exit_code == 0, done.output
    assert done.output == export(switch_map(8, 4, 16))


def test_defaults_and_endpoint():
    runner = CliRunner()
    done = runner.invoke(main, ["regmap", "--radix", "3", "--format", "json"])
    assert json.loads(done.output)["params"] == {"radix": 3, "collective_ids": 4,
                                                 "routing_depth": 64, "node_id_width": 6}
    done = runner.invoke(main, ["regmap", "--target", "endpoint", "--collective-ids", "2",
                                "--step-depth", "5", "--vector-depth", "100",
                                "--node-id-width", "8"])
    assert done.exit_code == 0, done.output
    assert done.output == to_markdown(endpoint_map(2, 5, 100, node_id_width=8))


@pytest.mark.parametrize(("name", "export"), [("regs.json", to_json), ("regs.h", to_c_header),
                                              ("regs.md", to_markdown), ("regs.txt", to_markdown)])
def test_output_file_format_follows_the_suffix(innet, tmp_path, name, export):
    done = innet("regmap", "--radix", "4", "--collective-ids", "2", "-o", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    regs = switch_map(4, 2, 64)
    assert (tmp_path / name).read_text() == export(regs)
    assert done.stdout == (f"wrote {name}: switch register map, {len(regs)} registers in "
                           f"{regs.size} words, digest {regs.digest[:16]}\n")


def test_explicit_format_wins_over_the_suffix(innet, tmp_path):
    done = innet("regmap", "--radix", "4", "--format", "json", "-o", "x.h", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    json.loads((tmp_path / "x.h").read_text())


@pytest.mark.parametrize(("args", "message"), [
    (["--radix", "0"], "Radix must be at least 1, not 0"),
    (["--radix", "1025"], "Radix must be at most 1024, not 1025"),
    (["--radix", "99999999999999999999"], "Radix must be at most 1024, not 99999999999999999999"),
    (["--radix", "8", "--collective-ids", "0"], "Collective ids must be at least 1, not 0"),
    (["--radix", "8", "--routing-depth", "0"], "Routing depth must be at least 1, not 0"),
    (["--radix", "8", "--routing-depth", "300", "--node-id-width", "8"],
     "Routing depth must be at most 256 (the node ids of 8 bits), not 300"),
    (["--radix", "8", "--node-id-width", "40"], "Node id width must be at most 32, not 40"),
    (["--target", "endpoint", "--step-depth", "0"], "Step depth must be at least 1, not 0"),
    (["--target", "endpoint", "--vector-depth", "0"], "Vector depth must be at least 1, not 0"),
    ([], "--radix is required for --target switch"),
    (["--target", "endpoint", "--radix", "8"], "--radix applies only to --target switch"),
    (["--target", "endpoint", "--routing-depth", "0"], "Routing depth must be at least 1, not 0"),
    (["--radix", "2", "--routing-depth", "65537"],
     "Routing depth must be at most 65536, not 65537"),
    (["--radix", "2", "--node-id-width", "32", "--routing-depth", "4294967296"],
     "Routing depth must be at most 65536, not 4294967296"),
    (["--radix", "8", "--step-depth", "8"], "--step-depth applies only to --target endpoint"),
])
def test_bad_parameters_are_one_line_errors(innet, tmp_path, args, message):
    done = innet("regmap", *args, "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_usage_errors_exit_2(innet):
    done = innet("regmap", "--radix", "x")
    assert done.returncode == 2
    assert done.stderr == ("innet: error: Invalid value for '--radix': 'x' is not a valid "
                           "integer.\n")
    done = innet("regmap", "--radix", "2", "--format", "yaml")
    assert done.returncode == 2
    assert done.stderr.startswith("innet: error: Invalid value for '--format': 'yaml' is not one")


@pytest.mark.parametrize("routing_depth", [1, 2, 13, 64, 65536])
def test_the_defaults_describe_the_hardware_of_the_same_options(routing_depth):
    """With the same options `innet regmap` gives the map of the RTL `innet verilog` builds:
    the node ids as wide as the flits carry them (the digest images are checked against)."""
    from innet.hw.endpoint import Endpoint
    from innet.hw.flit import FlitParams
    from innet.hw.switch import Switch

    runner = CliRunner()
    depth = ["--routing-depth", str(routing_depth)]
    done = runner.invoke(main, ["regmap", "--radix", "3", *depth, "--format", "json"])
    assert done.exit_code == 0, done.output
    assert done.output == to_json(Switch(3, routing_depth=routing_depth).regmap)
    done = runner.invoke(main, ["regmap", "--target", "endpoint", "--collective-ids", "2",
                                "--step-depth", "5", "--vector-depth", "100", *depth,
                                "--format", "json"])
    assert done.exit_code == 0, done.output
    endpoint = Endpoint(FlitParams(routing_depth=routing_depth, collective_ids=2), step_depth=5,
                        vector_depth=100)
    assert done.output == to_json(endpoint.regmap)


def test_json(innet, tmp_path):
    done = CliRunner().invoke(main, ["regmap", "--radix", "2", "--json"])
    assert done.exit_code == 0, done.output
    assert done.stdout == to_json(switch_map(2, 4, 64))
    done = innet("regmap", "--target", "endpoint", "-o", "ep.h", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The defaults: FlitParams' and the Endpoint's, node ids of 6 bits for 64 routes.
    regs = endpoint_map(4, 16, 1024, node_id_width=6)
    assert (tmp_path / "ep.h").read_text() == to_c_header(regs)
    assert json.loads(done.stdout) == {"output": "ep.h", "format": "c", "target": "endpoint",
                                       "registers": len(regs), "words": regs.size,
                                       "digest": regs.digest}
    done = CliRunner().invoke(main, ["regmap", "--radix", "2", "--json", "--format", "md"])
    assert done.exit_code == 2
    assert done.stderr == ("innet: error: --json prints the map as JSON; it cannot be combined "
                           "with --format md without -o\n")
