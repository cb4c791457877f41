# amaranth: UnusedElaboratable=no
"""innet.sim.tb.kit: port_names on components with array members (links of a switch) and
random_bits."""

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


def test_random_bits_are_words_of_the_type_with_fp32_specials():
    import numpy as np

    from innet.gen import ops

    ints = kit.random_bits(np.random.default_rng(3), ops.DType.INT32, (4, 500))
    assert ints.dtype == np.uint32
    assert ints.shape == (4, 500)
    assert ints.max() >= 1 << 31  # any pattern, the sign bit too
    again = kit.random_bits(np.random.default_rng(3), ops.DType.INT32, (4, 500))
    assert (ints == again).all()
    floats = kit.random_bits(np.random.default_rng(3), ops.DType.FP32, 2000)
    values = ops.from_bits(floats, ops.DType.FP32)
    assert np.isnan(values).any()
    assert np.isinf(values).any()
    assert (np.abs(values) <= 4).mean() > 0.85  # mostly moderate values
