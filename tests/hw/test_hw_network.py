# amaranth: UnusedElaboratable=no
"""innet.hw.network: per-link pipeline stages, parameter checks and the ports of the emitted
network."""

from __future__ import annotations

import pytest
from amaranth.hdl import Fragment

from innet.gen.topology import torus
from innet.hw.endpoint import Endpoint
from innet.hw.network import NODE_MODULE, Network, link_stage_map
from innet.hw.switch import Switch
from innet.hw.testing import CreditThrottle
from innet.hw.verilog import emit

RING = torus((4,))  # links (0, 1), (1, 2), (2, 3), (0, 3)


def test_one_count_for_every_link():
    assert link_stage_map(RING, 3) == {(0, 1): 3, (0, 3): 3, (1, 2): 3, (2, 3): 3}
    assert set(link_stage_map(RING)) == {(min(u, v), max(u, v))
                                         for u, _, v, _ in RING.link_array().tolist()}


def test_counts_per_link_in_either_order_and_missing_links_have_none():
    assert link_stage_map(RING, {(1, 0): 2, (2, 3): 7}) == {(0, 1): 2, (0, 3): 0, (1, 2): 0,
                                                            (2, 3): 7}


@pytest.mark.parametrize(("stages", "error", "message"), [
    (-1, ValueError, r"^Link stages must be at least 0, not -1$"),
    (1025, ValueError, r"^Link stages must be at most 1024, not 1025$"),
    ({(0, 1): 10**9}, ValueError,
     r"^Link stages of link \(0, 1\) must be at most 1024, not 1000000000$"),
    (1.5, TypeError, r"^Link stages must be an integer, not 1\.5$"),
    (True, TypeError, r"^Link stages must be an integer, not True$"),
    ({(0, 2): 1}, ValueError, (r"^Link stages name \(0, 2\), which is not a link of the "
                              r"topology$")),
    ({(0, 1): 1, (1, 0): 2}, ValueError, r"^Link stages name the link \(0, 1\) twice$"),
    ({(0, 1): -2}, ValueError, r"^Link stages of link \(0, 1\) must be at least 0, not -2$"),
    ({0: 1}, TypeError, r"^Link stages are keyed by node pairs \(u, v\), not 0$"),
])
def test_errors(stages, error, message):
    with pytest.raises(error, match=message):
        link_stage_map(RING, stages)


def _port_names(members) -> set[str]:
    """Every port name of a design's metadata members (as ``emit`` names them)."""
    names = set()
    for info in members.values() if isinstance(members, dict) else members:
        if isinstance(info, list):
            names |= _port_names(info)
        elif info["type"] == "port":
            names.add(info["name"])
        else:
            names |= _port_names(info["members"])
    return names


def test_emitted_network_has_the_ports_of_a_real_network_only():
    # The top alone (its nodes are instances of the node module, emitted separately by
    # emit_network): the port list of its metadata, and the node's.
    top = Network(torus((3,)), vector_depth=4, step_depth=2)
    design = emit(top, "innet_network_torus3")
    assert _port_names(design.ports["interface"]["members"]) == {
        "cfg_sel", "cfg_addr", "cfg_w_data", "cfg_w_en", "cfg_r_data",
        "cmd_coll_start", "cmd_engine_start", "coll_status", "engine_status",
        "host_tx_valid", "host_tx_payload", "host_tx_ready",
        "host_rx_valid", "host_rx_payload", "host_rx_ready", "quiet", "errors"}
    node = _port_names(top.node.metadata.as_json()["interface"]["members"])
    assert {name.split("__")[0] for name in node} == {
        "i", "o", "cfg_addr", "cfg_w_data", "sw_w_en", "ep_w_en", "sw_r_data", "ep_r_data",
        "coll_start", "engine_start", "host_tx_valid", "host_tx_payload", "host_tx_ready",
        "host_rx_valid", "host_rx_payload", "host_rx_ready", "coll_status", "engine_status",
        "quiet", "errors"}
    assert f"{NODE_MODULE} node0 (" in design.verilog
    for test_only in ("mon_", "stall_rate", "rng_", "lfsr", "hier_block"):
        assert test_only not in design.verilog
    # No throttle anywhere in the node's hierarchy.
    blocks = {type(origin) for fragment in _fragments(Fragment.get(top.node, None))
              for origin in fragment.origins or ()}
    assert {Switch, Endpoint} <= blocks
    assert CreditThrottle not in blocks


def _fragments(fragment):
    yield fragment
    for sub, _name, _loc in fragment.subfragments:
        yield from _fragments(sub)


@pytest.mark.parametrize(("args", "error", "message"), [
    ({"vector_depth": 1 << 5000}, ValueError,
     r"^Vector depth must be at most 1048576, not a 5001-bit integer$"),
    ({"step_depth": 0}, ValueError, r"^Step depth must be at least 1, not 0$"),
    ({"topology": None}, TypeError, r"^Topology must be a Topology, not NoneType$"),
    ({"mul": 1}, TypeError, r"^Multiplier option must be a bool, not 1$"),
    ({"mul": 1, "topology": None}, TypeError, r"^Multiplier option must be a bool, not 1$"),
    ({"p2p_vcs": "2"}, TypeError, r"^P2p VCs must be an integer, not '2'$"),
    ({"buffer_depth": "5"}, TypeError, r"^Buffer depth must be an integer, not '5'$"),
    ({"p2p_vcs": 1}, ValueError, (r"^P2p VCs must be at least the topology's diameter 2 "
                                  r"\(deadlock-free minimal routing\), not 1$")),
    ({"topology": torus((5, 5)), "p2p_vcs": 3}, ValueError,
     (r"^P2p VCs must be at least the topology's diameter 4 \(deadlock-free minimal "
      r"routing\), not 3$")),
    ({"topology": torus((2, 34))}, ValueError,
     (r"^The torus 2x34 has diameter 18: minimal routing needs as many hop-indexed p2p VCs, "
      r"and a switch has at most 16$")),
])
def test_parameter_errors(args, error, message):
    # The sizes are named before the widths derived from them.
    kwargs = {"topology": RING, "vector_depth": 4, "step_depth": 2} | args
    with pytest.raises(error, match=message):
        Network(kwargs.pop("topology"), **kwargs)
