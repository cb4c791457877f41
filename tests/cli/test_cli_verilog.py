"""``innet verilog switch``: files written, metadata beside the .v, one-line errors."""

import json
import re

import pytest

from innet.hw.credit import LOCAL_EXTRA
from innet.hw.flit import FlitParams
from innet.hw.switch import CREDIT_ROUND_TRIP


def test_switch_writes_verilog_and_port_metadata(innet, tmp_path):
    out = tmp_path / "rtl" / "sw.v"
    done = innet("verilog", "switch", "--radix", "2", "--collective-ids", "1",
                 "--routing-depth", "4", "--name", "sw2", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verilog"] == str(out)
    assert report["metadata"] == str(out.with_suffix(".json"))
    text = out.read_text()
    assert "module sw2(" in text
    assert report["lines"] == len(text.splitlines())
    ports = json.loads(out.with_suffix(".json").read_text())["interface"]["members"]
    assert sorted(ports) == ["cfg", "errors", "i", "o"]
    p = FlitParams(routing_depth=4, collective_ids=1)
    link = ports["i"][2]["members"]
    assert {k: (v["dir"], v["width"]) for k, v in link.items()} == {
        "valid": ("in", 1), "payload": ("in", p.width), "credit": ("out", p.vcs)}
    assert report["flit"]["width"] == p.width
    assert report["virtual_channels"] == p.vcs
    # Plain ports: every one appears in the Verilog module header.
    for name in ("i__2__payload", "o__0__credit", "cfg__addr", "cfg__r_data", "clk", "rst"):
        assert re.search(rf"^\s*(input|output)\s+(\[\d+:0\]\s+)?{name};", text, re.M), name
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["rtl", "sw.json", "sw.v"]


def test_switch_readable_summary_and_default_name(innet, tmp_path):
    done = innet("verilog", "switch", "--radix", "2", "--collective-ids", "1",
                 "--routing-depth", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("wrote innet_switch.v (")
    assert (tmp_path / "innet_switch.v").is_file()
    assert (tmp_path / "innet_switch.json").is_file()


def test_switch_without_a_collective_path_is_the_smaller_p2p_switch(innet, tmp_path):
    lines = {}
    for collective in ("pass", "none"):
        done = innet("verilog", "switch", "--radix", "2", "--collective-ids", "1",
                     "--routing-depth", "4", "--collective", collective,
                     "-o", f"{collective}.v", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        lines[collective] = done.stdout.splitlines()
    assert lines["none"][-1] == ("collective: none (p2p switch: flits of the collective VCs are "
                                 "discarded)")
    assert lines["pass"][-1] == "collective: pass-through (no reduction)"
    size = {c: int(re.search(r"\((\d+) lines", out[0]).group(1)) for c, out in lines.items()}
    assert size["none"] < size["pass"]


def test_local_depth_defaults_as_switch_and_endpoint(innet, tmp_path):
    """``--local-depth`` defaults to what ``Switch`` and ``Endpoint`` build by default: one
    entry beyond ``--buffer-depth`` with a collective path, none without."""
    depth = {}
    for name, args in {"pass": ["switch", "--radix", "2", "--collective", "pass"],
                       "none": ["switch", "--radix", "2", "--collective", "none"],
                       "endpoint": ["endpoint", "--vector-depth", "16"]}.items():
        done = innet("verilog", *args, "--routing-depth", "4", "--collective-ids", "1",
                     "--buffer-depth", "7", "--json", "-o", f"{name}.v", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        depth[name] = json.loads(done.stdout)["params"]["local_depth"]
    assert depth == {"pass": 7 + LOCAL_EXTRA, "none": 7, "endpoint": 7 + LOCAL_EXTRA}


@pytest.mark.parametrize(("args", "message"), [
    (["--radix", "0"], "Radix must be at least 1, not 0"),
    (["--radix", "2", "--payload-width", "0"], "Payload width must be between 1 and 1024, not 0"),
    (["--radix", "2", "--buffer-depth", "3"],
     (f"Buffer depth must be at least {CREDIT_ROUND_TRIP} (the credit round trip) for full "
      f"throughput, not 3")),
    (["--radix", "2", "--name", "9x"], "Top module name must be a Verilog identifier, not '9x'"),
    (["--radix", "2", "--name", ""], "Top module name must be a Verilog identifier, not ''"),
    (["--radix", "2", "--name", "module"],
     "Top module name must not be a Verilog or SystemVerilog keyword, not 'module'"),
    (["--radix", "2", "--name", "logic"],
     "Top module name must not be a Verilog or SystemVerilog keyword, not 'logic'"),
    (["--radix", "2", "-o", "sw.txt"], "The output must be a .v file, not 'sw.txt'"),
])
def test_switch_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    done = innet("verilog", "switch", "--routing-depth", "4", "--collective-ids", "1", *args,
                 cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_metadata_that_cannot_be_written_leaves_no_verilog(innet, tmp_path):
    (tmp_path / "sw.json").mkdir()
    done = innet("verilog", "switch", "--radix", "2", "--routing-depth", "4", "--collective-ids",
                 "1", "--collective", "none", "-o", "sw.v", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "innet: error: sw.json: Is a directory, not a file\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sw.json"]
