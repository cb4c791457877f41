"""``innet verilog endpoint``: files written, metadata beside the .v, summary, one-line errors."""

import json
import re

import pytest

from innet.gen.regmap import endpoint_map
from innet.hw.flit import FlitParams


def test_endpoint_writes_verilog_and_port_metadata(innet, tmp_path):
    out = tmp_path / "rtl" / "ep.v"
    done = innet("verilog", "endpoint", "--vector-depth", "100", "--step-depth", "3",
                 "--collective-ids", "2", "--routing-depth", "4", "--no-mul", "--name", "ep",
                 "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["verilog"], report["metadata"]) == (str(out), str(out.with_suffix(".json")))
    text = out.read_text()
    assert "module ep(" in text
    assert report["lines"] == len(text.splitlines())
    ports = json.loads(out.with_suffix(".json").read_text())["interface"]["members"]
    assert sorted(ports) == ["cfg", "coll_status", "engine_status", "errors", "p2p_rx",
                             "p2p_tx", "quiet", "rx", "tx"]
    p = FlitParams(routing_depth=4, collective_ids=2)
    assert {k: (v["dir"], v["width"]) for k, v in ports["tx"]["members"].items()} == {
        "valid": ("out", 1), "payload": ("out", p.width), "credit": ("in", p.vcs)}
    regmap = endpoint_map(2, 3, 100, node_id_width=p.node_width)
    # The memory window starts at a power of two above the registers and the memory size.
    assert report["memory_base"] == 128
    assert report["register_words"] == regmap.size <= report["memory_base"]
    assert report["config_address_width"] == 8
    assert ports["cfg"]["members"]["addr"]["width"] == 8
    assert report["params"]["mul"] is False
    for name in ("tx__payload", "rx__credit", "cfg__addr", "p2p_rx__valid", "clk", "rst"):
        assert re.search(rf"^\s*(input|output)\s+(\[\d+:0\]\s+)?{name};", text, re.M), name
    assert sorted(f.name for f in tmp_path.rglob("*")) == ["ep.json", "ep.v", "rtl"]


def test_endpoint_readable_summary(innet, tmp_path):
    done = innet("verilog", "endpoint", "--vector-depth", "64", "--routing-depth", "4",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("wrote innet_endpoint.v (")
    size = endpoint_map(4, 16, 64, node_id_width=2).size  # the defaults
    base = 1 << max((size - 1).bit_length(), (64 - 1).bit_length())
    assert lines[3] == (f"memory: 64 x 32 bits at {base:#x}..{base + 63:#x} (word addresses); "
                        f"the same again as the step engine's scratch")
    assert (tmp_path / "innet_endpoint.json").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--vector-depth", "0"], "Vector depth must be at least 1, not 0"),
    (["--vector-depth", "4294967295", "--index-width", "32"],
     "Vector depth must be at most 1048576, not 4294967295"),
    (["--vector-depth", "70000"],
     "Vector depth must be at most 65536 (a 16-bit flit index), not 70000"),
    (["--vector-depth", "8", "--tag-width", "1"],
     "Endpoint needs a tag width of at least 2 (the message class), not 1"),
    (["--vector-depth", "8", "--local-depth", "0"], "Local depth must be at least 1, not 0"),
    (["--vector-depth", "8", "-o", "ep.txt"], "The output must be a .v file, not 'ep.txt'"),
    ([], "Missing option '--vector-depth'."),
])
def test_endpoint_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    done = innet("verilog", "endpoint", "--routing-depth", "4", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []
