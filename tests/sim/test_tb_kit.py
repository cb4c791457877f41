# amaranth: UnusedElaboratable=no
"""innet.sim.tb.kit.port_names on components with array members (links of a switch)."""

import json

from innet.hw.switch import Switch
from innet.sim.tb import kit


def test_port_names_include_array_members(tmp_path, monkeypatch):
    sw = Switch(2, collective_ids=1, routing_depth=4)
    meta = tmp_path / "ports.json"
    meta.write_text(json.dumps(sw.metadata.as_json()))
    monkeypatch.setenv("INNET_TB_PORTS", str(meta))
    names = kit.port_names()
    p = sw.params
    assert names["i__2__payload"] == {"dir": "in", "width": p.width}
    assert names["o__1__credit"] == {"dir": "in", "width": p.vcs}
    assert names["cfg__r_data"] == {"dir": "out", "width": 32}
    assert len([n for n in names if n.startswith(("i__", "o__"))]) == 2 * 3 * 3
