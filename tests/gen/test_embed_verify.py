"""The verifier: every property broken on purpose gives its one clear message."""

from dataclasses import replace

import pytest

from innet.gen.embed import SwitchConfig, embed, reconstruct, verify
from innet.gen.ops import DType, Op
from innet.gen.topology import LOCAL, hyperx, torus

L = LOCAL
TOPO = hyperx((3, 3))  # root 4 = (1, 1); tree: 0,6 -> 3; 2,8 -> 5; 1,7,3,5 -> 4
BASE = embed(TOPO)


def switch(e, node, **changes):
    """``e`` with the configuration of ``node`` changed."""
    return replace(e, switches=tuple(replace(s, **changes) if s.node == node else s
                                     for s in e.switches))


def check(e, message, topo=TOPO):
    with pytest.raises(ValueError, match="^" + message + "$"):
        verify(e, topo)


def test_the_base_embedding_is_what_the_mutations_assume():
    assert BASE.root == 4
    assert BASE.switch(3) == SwitchConfig(3, {0, 1, L}, 2, 2, {0, 1, L})
    verify(BASE, TOPO)


def test_header():
    other = hyperx((3, 4))
    check(BASE, f"Embedding was made for topology {BASE.topology[:16]}, not "
                f"{other.fingerprint[:16]}", other)
    check(replace(BASE, kind="scan"), "Kind must be one of allreduce, reduce, broadcast, "
                                      "barrier, not 'scan'")
    check(replace(BASE, op=Op.XOR, dtype=DType.FP32), "Operation xor is not defined on fp32")
    check(replace(BASE, op=3), r"Op and dtype must be Op and DType codes, not 3 and .*")
    check(replace(BASE, collective_id=256), "Collective id 256 is outside 0..255")
    check(replace(BASE, participants=()), "Embedding has no participants")
    check(replace(BASE, participants=(5, 3)), "Participants must be listed once each, in "
                                              "ascending order")
    check(replace(BASE, participants=(0, 9)), "Participant 9 is outside 0..8")
    check(replace(BASE, root=9), "Root 9 is outside 0..8")
    reduce = embed(TOPO, kind="reduce")
    check(replace(reduce, participants=(0, 1)), "Root 4 of a reduce must be a participant")


def test_switches_and_ports():
    check(replace(BASE, switches=(*BASE.switches, BASE.switches[0])),
          "Switch 0 is configured twice or out of order")
    check(replace(BASE, switches=(*BASE.switches, SwitchConfig(9))), "Switch 9 is outside 0..8")
    check(switch(BASE, 0, req_out=4, resp_in=4),
          r"Switch 0: req_out names port 4, which does not exist \(ports 0..3\)")
    check(switch(BASE, 0, req_in={7, L}),
          r"Switch 0: req_in names port 7, which does not exist \(ports 0..3 and local\)")
    check(switch(BASE, 0, req_out=L), r"Switch 0: req_out names port -1, which does not exist "
                                      r"\(ports 0..3\)")
    check(replace(BASE, failed_switches=(0,)), "Switch 0 is configured but has failed")
    check(replace(BASE, failed_links=((0, 3),)), "Switch 0: req_out port 0 is on failed link 0-3")


def test_request_tree():
    check(replace(BASE, switches=tuple(s for s in BASE.switches if s.node != 4)),
          "Root 4 is not configured")
    check(switch(BASE, 4, req_out=0), "Root 4 must have req_out None, not 0")
    check(switch(BASE, 0, req_out=None), r"Switch 0 has no port toward the root \(req_out is "
                                         r"None\)")
    check(replace(BASE, switches=tuple(s for s in BASE.switches if s.node != 3)),
          "Switch 0 sends requests on port 0 to switch 3, which is not configured")
    check(switch(BASE, 3, req_in={1, L}), "Switch 3 does not take requests from switch 0 on its "
                                          "port 0")
    check(switch(BASE, 3, req_in={0, 1, 3, L}), "Switch 3 expects requests on port 3 from switch "
                                                "5, which does not send them there")
    # 0 and 3 point at each other; the root no longer listens to 3.
    loop = switch(switch(switch(BASE, 3, req_out=0), 0, req_in={0, L}), 4, req_in={0, 1, 3, L})
    check(loop, "The tree has a cycle through switch 0: its requests never reach the root")


def test_contributions_and_responses():
    check(switch(BASE, 0, req_in=set()), "Participant 0 does not contribute: switch 0 has no "
                                         "local port in req_in")
    # A participant outside the tree: switches 0, 3 and 4 carry 0 and 4; node 8 has none.
    sub = embed(TOPO, [0, 4], root=4)
    check(replace(sub, participants=(0, 4, 8)), "Participant 8 is not configured")
    check(replace(BASE, participants=tuple(range(1, 9))),
          "Switch 0 contributes a local input but is not a participant")
    check(switch(BASE, 0, resp_in=1), r"Switch 0: resp_in 1 must equal req_out 0 \(the response "
                                      r"returns on the request's link\)")
    check(switch(BASE, 3, resp_out={0, L}), r"Switch 3: resp_out \{0, local\} must equal req_in "
                                            r"\{0, 1, local\} \(the inverse of the request "
                                            r"tree\)")
    reduce = embed(TOPO, kind="reduce")
    check(switch(reduce, 0, resp_in=0), r"Switch 0 of a reduce must have resp_in None and "
                                        r"resp_out \{\}, not 0 and \{\}")
    bcast = embed(TOPO, kind="broadcast")
    verify(bcast, TOPO)
    check(switch(bcast, 0, resp_out=set()), r"Switch 0: the broadcast result must be delivered "
                                            r"locally exactly at participants \(resp_out \{\}\)")
    check(switch(bcast, 0, req_out=0), r"Switch 0 of a broadcast must not take or send requests "
                                       r"\(req_in \{\}, req_out 0\)")
    check(switch(bcast, 4, req_in=set()), r"Root 4 of a broadcast must take its local input "
                                          r"only \(req_in \{\}, req_out None\)")
    check(switch(bcast, 4, req_in={L, 0}), r"Root 4 of a broadcast must take its local input "
                                           r"only \(req_in \{0, local\}, req_out None\)")
    check(switch(bcast, 3, req_in={L}), "Switch 3 of a broadcast must not take or send requests "
                                        r"\(req_in \{local\}, req_out None\)")


def test_links_switches_below_and_depth():
    check(replace(BASE, links=BASE.links[1:]), r"Request link \(0, 0, 3, 0\) is missing from "
                                               r"links")
    check(replace(BASE, links=(*BASE.links, (1, 1, 7, 0))), r"Link \(1, 1, 7, 0\) in links is "
                                                            r"not a request link of the tree")
    sub = embed(TOPO, [0, 4], root=4)
    assert {s.node for s in sub.switches} == {0, 3, 4}
    # Hang a switch with no participant below it off switch 3.
    dangling = switch(sub, 3, req_in={0, 1}, resp_out={0, 1})
    dangling = replace(dangling, switches=(*dangling.switches, SwitchConfig(6, set(), 1, 1, set())),
                       links=(*sub.links, (6, 1, 3, 1)))
    dangling = replace(dangling, switches=tuple(sorted(dangling.switches, key=lambda s: s.node)))
    check(dangling, "Switch 6 is configured but has no participant below it")
    check(replace(BASE, depth=5), "Depth 5 does not match the tree, whose longest participant "
                                  "path has 2 hops")
    # A ring of 6 where node 1 reaches root 0 the long way round: 1, 2, 3, 4, 5, 0.
    ring = torus(6)
    assert ring.ports[1][1] == (2, 0)
    assert ring.ports[5][1] == (0, 0)
    long_way = [SwitchConfig(0, {0, L}, None, None, {0, L}), SwitchConfig(1, {L}, 1, 1, {L})]
    long_way += [SwitchConfig(k, {0}, 1, 1, {0}) for k in range(2, 6)]
    e = reconstruct(ring, long_way, op="add", dtype="int32", collective_id=0)
    assert e.root == 0
    assert e.participants == (0, 1)
    assert e.depth == 5
    check(e, "Depth 5 differs from the root's eccentricity 1 over the participants", ring)


def test_lists_are_checked_for_disjointness_and_types():
    verify([BASE, replace(BASE, collective_id=1)], TOPO)
    check([BASE, BASE], r"Embeddings 0 and 1 on collective id 0 share link 0->3 \(port 0 of node "
                        r"0\) for requests")
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not str$"):
        verify(BASE, "hyperx")
    with pytest.raises(TypeError, match=r"^Expected an Embedding or a sequence of them, not "
                                        r"str$"):
        verify("e", TOPO)
    with pytest.raises(TypeError, match=r"^Expected an Embedding, not int$"):
        verify([1], TOPO)


def test_reconstruct_errors():
    with pytest.raises(ValueError, match=r"^No switch is configured$"):
        reconstruct(TOPO, [], op="add", dtype="int32", collective_id=0)
    with pytest.raises(ValueError, match=r"^Switch 0 is configured twice$"):
        reconstruct(TOPO, [BASE.switches[0]] * 2, op="add", dtype="int32", collective_id=0)
    with pytest.raises(ValueError, match=r"^Cannot tell the root: 2 switches look like one "
                                         r"\(0, 4\)$"):
        reconstruct(TOPO, [replace(BASE.switch(0), req_out=None), BASE.switch(3),
                           BASE.switch(4)], op="add", dtype="int32", collective_id=0)
    with pytest.raises(TypeError, match=r"^Expected SwitchConfig items, not tuple$"):
        reconstruct(TOPO, [(0, 1)], op="add", dtype="int32", collective_id=0)
    with pytest.raises(TypeError, match=r"^Topology must be a Topology, not NoneType$"):
        reconstruct(None, BASE.switches, op="add", dtype="int32", collective_id=0)
    broken = reconstruct(TOPO, switch(BASE, 3, req_out=0).switches, op="add", dtype="int32",
                         collective_id=0)
    assert broken.depth == -1  # left for the verifier to explain
