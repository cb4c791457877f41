"""Named corruptions of a valid image, each rejected by the decoder with its own message.

Framing corruptions edit the binary encoding (``reseal`` recomputes the length and CRC where a
case must get past them); content corruptions edit the image's writes through the register
map, then encode, so the decoder sees a well-framed image whose content is wrong.
"""

import dataclasses
import re
import struct

import pytest
from image_samples import PARAMS, mesh, reseal, sample, set_register, set_writes

from innet.gen.image import HEADER_BYTES, ImageError, decode, encode, validate
from innet.gen.regmap import ERROR_FLAGS, port_mask
from innet.gen.topology import LOCAL

TOPO = mesh()
BIN = encode(sample())
HEX = encode(sample(), "hex")
JSON = encode(sample(), "json")
TOPO_BYTES = struct.unpack_from("<I", BIN, 52)[0]
FIRST_TARGET = HEADER_BYTES + TOPO_BYTES
META = struct.unpack_from("<I", BIN, HEADER_BYTES)[0]
PEER_ARRAY = HEADER_BYTES + 8 + META + (-META % 4)


def patched(offset, fmt, *values, seal=True):
    data = bytearray(BIN)
    struct.pack_into(fmt, data, offset, *values)
    return reseal(bytes(data)) if seal else bytes(data)


def flipped(offset, mask=0x40):
    data = bytearray(BIN)
    data[offset] ^= mask
    return bytes(data)


def edit(*changes):
    """Encode the sample after ``changes``: (target, register, fields) or (target, register,
    None, word) tuples applied in order."""
    image = sample()
    for target, name, fields, *word in changes:
        image = set_register(image, target, name, fields, word=word[0] if word else None)
    return encode(image)


def writes(target, change):
    image = sample()
    return encode(set_writes(image, target, change(list(image.writes[target]))))


def mask(u, *peers, local=True):
    ports = [TOPO.port_to(u, v) for v in peers] + ([LOCAL] if local else [])
    return {"ports": port_mask(ports, PARAMS.radix)}


def port(u, v):
    return TOPO.port_to(u, v)


def _digest_flip(offset):
    data = patched(offset, "<B", BIN[offset] ^ 1)
    return data, data[offset:offset + 8].hex(), BIN[offset:offset + 8].hex()


SW, SW_WAS, SW_NOW = _digest_flip(56)
EP, EP_WAS, EP_NOW = _digest_flip(88)
FP, FP_WAS, FP_NOW = _digest_flip(120)
CRC_BAD = flipped(len(BIN) - 3)


def _crc_message():
    import zlib

    stored = struct.unpack_from("<I", CRC_BAD, 12)[0]
    actual = zlib.crc32(CRC_BAD[:12] + CRC_BAD[16:])
    return (f"Header: CRC mismatch: the header says {stored:#010x}, the image gives "
            f"{actual:#010x}")


def failing(links=(), switches=(), *changes):
    """Encode the sample after ``changes`` (as :func:`edit`) with failures recorded."""
    image = sample()
    for target, name, fields in changes:
        image = set_register(image, target, name, fields)
    return encode(dataclasses.replace(image, failed_links=links, failed_switches=switches))


NO_ROUTES = tuple((u, f"route[{d}]", {}) for u in range(6) for d in range(6))


def _narrow_node_ids():
    """The sample with 2-bit node ids (and the 4 routing entries they allow), its header's
    map digests those of the narrow maps, so that the network check sees 6 nodes it cannot
    name."""
    narrow = dataclasses.replace(PARAMS, routing_depth=4, node_id_width=2)
    data = bytearray(BIN)
    struct.pack_into("<I", data, 36, narrow.routing_depth)
    struct.pack_into("<I", data, 48, narrow.node_id_width)
    data[56:88] = bytes.fromhex(narrow.switch_map.digest)
    data[88:120] = bytes.fromhex(narrow.endpoint_map.digest)
    return reseal(bytes(data))


def unconfigured(u):
    """Changes (as :func:`edit` takes them) that clear every coll[0] register of switch ``u``."""
    return tuple((u, f"coll[0].{r}", {}) for r in ("ctrl", "req_in", "req_out", "resp_in",
                                                   "resp_out"))


CASES = {
    # -- framing ---------------------------------------------------------------------------
    "bad magic": (b"INNETIMX" + BIN[8:], ("Header: bad magic b'INNETIMX', expected b'INNETIMG': "
                  "not an innet configuration image")),
    "unknown version": (patched(8, "<I", 2),
                        "Header: unknown format version 2; this innet reads version 1"),
    "CRC mismatch": (CRC_BAD, _crc_message()),
    "truncated header": (BIN[:100], ("Header: truncated: the image has 100 bytes, the header "
                         "alone 152")),
    "truncated magic": (BIN[:10], ("Header: truncated: the image has 10 bytes, the header alone "
                        "152")),
    "truncated body": (BIN[:-8], (f"Body: truncated: the image has {len(BIN) - 8} bytes, its "
                       f"header says {len(BIN)}")),
    "trailing bytes": (BIN + b"\0" * 4, (f"Body: 4 trailing bytes after the {len(BIN)} bytes "
                       f"the header announces")),
    "bytes after the last target": (reseal(BIN + b"\0" * 8),
                                    "Body: 8 bytes after the last target"),
    "target id out of range": (patched(FIRST_TARGET, "<I", 12),
                               "Target block 0: target id 12 is out of range 0..11"),
    "target out of order": (patched(FIRST_TARGET, "<I", 1),
                            "Target block 0: target id 1 is out of order; expected target 0"),
    "write count past the end": (patched(FIRST_TARGET + 4, "<I", 10_000),
                                 (f"Body: 10000 writes of target 0 needs 80000 bytes at offset "
                                 f"{FIRST_TARGET + 8}, but only {len(BIN) - FIRST_TARGET - 8} "
                                 f"remain")),
    "target count not twice the nodes": (patched(20, "<I", 14),
                                         "Header: target count 14 is not twice the 6 nodes"),
    "more nodes than the target blocks hold": (
        patched(20, "<II", 2**32 - 2, 2**31 - 1),
        (f"Body: the blocks of 4294967294 targets need at least 34359738352 bytes, the image "
         f"has {len(BIN) - FIRST_TARGET} after its topology section")),
    "switch register-map hash mismatch": (
        SW, (f"Header: switch register-map hash mismatch: the image was packed for map "
            f"{SW_WAS}, its parameters give {SW_NOW} in this innet")),
    "endpoint register-map hash mismatch": (
        EP, (f"Header: endpoint register-map hash mismatch: the image was packed for map "
            f"{EP_WAS}, its parameters give {EP_NOW} in this innet")),
    "topology fingerprint mismatch": (
        FP, (f"Header: topology fingerprint mismatch: the header says {FP_WAS}, the topology "
            f"gives {FP_NOW}")),
    "topology not an involution": (
        patched(PEER_ARRAY, "<i", 4),
        ("Topology section: not a valid topology: Port 0 of node 0 is wired to port 0 of node "
        "4, but that port is wired to port 0 of node 1")),
    "map parameter out of range": (patched(32, "<I", 0),
                                   "Header, params: Collective ids must be at least 1, not 0"),
    "radix below the topology's": (patched(28, "<I", 2), None),  # message checked below
    "node ids narrower than the nodes": (_narrow_node_ids(), ("Header, params.node_id_width: 2 "
                                         "bits cannot name 6 nodes")),
    "topology section length not a word multiple": (
        patched(52, "<I", 6),
        "Topology section: its length 6 is not a multiple of 4 of at least 8"),
    "metadata padding not zero": (
        # one byte shorter: the JSON's closing brace becomes the first padding byte
        patched(HEADER_BYTES, "<I", META - 1),
        "Topology section: metadata padding is not zero"),
    "port arrays not the section's rest": (
        # 6 nodes x 3 columns: 144 bytes of peer and peer-port arrays; 4 columns need 192
        patched(HEADER_BYTES + 4, "<I", struct.unpack_from("<I", BIN, HEADER_BYTES + 4)[0] + 1),
        "Topology section: port arrays of 6 x 4 need 192 bytes, the section has 144 left"),
    "topology section past the end": (
        patched(52, "<I", 1 << 20),
        "Header: the topology section of 1048576 bytes runs past the end of the image"),
    "hex line not a word": (HEX.replace("\n00000001\n", "\nxyz\n", 1),
                            "Hex: line 4: 'xyz' is not a 32-bit hex word"),
    "JSON fields disagree with the words": (
        JSON.replace('"fields": {"id": 3}', '"fields": {"id": 4}', 1),
        ('Switch 3 (target 3), node_id: fields {"id": 4} disagrees with the words, which give '
        '{"id": 3}')),
    "JSON register name disagrees": (
        JSON.replace('"register": "node_id", "address": 5, "words": ["0x00000003"]',
                     '"register": "radix", "address": 5, "words": ["0x00000003"]', 1),
        ('Switch 3 (target 3), node_id: register "radix" disagrees with the words, which give '
        '"node_id"')),
    "JSON target kind mismatch": (
        JSON.replace('"target": 7,\n      "kind": "endpoint"',
                     '"target": 7,\n      "kind": "switch"', 1),
        ("Target block 7: kind 'switch' and node 1 do not match target 7, the endpoint of "
        "node 1")),
    "JSON malformed": (JSON[:-3], None),
    "JSON wrong format": (JSON.replace('"innet-image"', '"other"', 1),
                          ("Header: bad magic: format is 'other', expected 'innet-image': not "
                          "an innet configuration image")),
    "JSON unknown version": (JSON.replace('"version": 1,', '"version": 7,', 1),
                             "Header: unknown format version 7; this innet reads version 1"),
    "JSON version as text": (JSON.replace('"version": 1,', '"version": "1",', 1),
                             "Header: format version must be an integer, not '1'"),
    "JSON integer of thousands of digits": (
        JSON.replace('"version": 1,', '"version": 1' + "0" * 5000 + ",", 1),
        "JSON: malformed: an integer of 5,001 digits, more than 1,000"),
    "JSON failed switch not a node id": (
        JSON.replace('"switches": []', '"switches": [1e400]', 1),
        ("JSON: Failed links must be (u, v) pairs and failed switches node ids, not [] and "
         "[inf]")),
    # -- writes ----------------------------------------------------------------------------
    "write to a read-only register": (writes(0, lambda w: sorted([*w, (1, 3)])),
                                      ("Switch 0 (target 0): Register 'radix' at 0x1 is "
                                      "read-only")),
    "duplicate write": (writes(0, lambda w: sorted([*w, w[0]])),
                        "Switch 0 (target 0), node_id: address 0x5 is written twice"),
    "writes out of order": (writes(0, lambda w: w[::-1]),
                            ("Switch 0 (target 0): writes are not in ascending address order: "
                            "0x24 after 0x25")),
    "write to a hole": (writes(0, lambda w: sorted([*w, (9, 0)])),
                        "Switch 0 (target 0): Address 0x9 is not a register of map 'switch'"),
    "node id not written": (writes(0, lambda w: w[1:]),
                            ("Switch 0 (target 0), node_id: not written; every target must be "
                            "told its node id")),
    "node id of another node": (edit((2, "node_id", {"id": 4})),
                                ("Switch 2 (target 2), node_id.id: is 4, but the target is "
                                "node 2")),
    "reserved bits set": (edit((0, "coll[0].req_out", None, 0x4)),
                          ("Switch 0 (target 0): Register 'coll[0].req_out' value 0x4 sets "
                          "reserved bits 0x4")),
    "field above its maximum": (edit((6, "vec_len", None, 20)),
                                ("Endpoint 0 (target 6): Field 'vec_len.count' value 20 exceeds "
                                "its maximum 16")),
    # -- switches --------------------------------------------------------------------------
    "port mask bit beyond radix": (edit((1, "coll[0].req_in", None, 0b11111)),
                                   ("Switch 1 (target 1), coll[0].req_in.ports: mask sets bit 4, "
                                   "beyond the local port 3 of a radix-3 switch")),
    "mask naming a port the node lacks": (edit((0, "coll[0].req_in", {"ports": 0b1100})),
                                          ("Switch 0 (target 0), coll[0].req_in.ports: names "
                                          "port 2, but node 0 has ports 0..1 and local")),
    "output port the node lacks": (edit((3, "coll[0].req_out", {"port": 2})),
                                   ("Switch 3 (target 3), coll[0].req_out.port: names port 2, "
                                   "but node 3 has ports 0..1")),
    "request output to the local port": (edit((3, "coll[0].req_out", {"port": 3})),
                                         ("Switch 3 (target 3), coll[0].req_out.port: is the "
                                         "local port; it must be a network port toward the "
                                         "root")),
    "root flag and output port both set": (edit((1, "coll[0].req_out", {"port": 2, "root": 1})),
                                           ("Switch 1 (target 1), coll[0].req_out: root flag and "
                                           "output port 2 both set; at the root the port must "
                                           "be 0")),
    "response port at the root": (edit((1, "coll[0].resp_in", {"port": 1})),
                                  ("Switch 1 (target 1), coll[0].resp_in.port: is 1 at the root, "
                                  "where it is unused and must be 0")),
    "enabled switch with no request and no response": (
        edit((5, "coll[0].req_in", {"ports": 0}), (5, "coll[0].resp_out", {"ports": 0}),
             (5, "coll[0].req_out", {"port": 0, "root": 0}), (5, "coll[0].resp_in", {"port": 0})),
        ("Switch 5 (target 5), coll[0].ctrl.enable: is set, but the switch takes no request and "
         "passes no response")),
    "root without input": (
        edit(*(c for u in (0, 2, 3, 4, 5) for c in unconfigured(u)),
             (1, "coll[0].req_in", {"ports": 0}),
             (1, "coll[0].resp_out", {"ports": port_mask([LOCAL], PARAMS.radix)})),
        "Switch 1 (target 1), coll[0].req_in.ports: the root takes no input"),
    "root sending the result nowhere": (
        edit(*(c for u in (0, 2, 3, 4, 5) for c in unconfigured(u)),
             (1, "coll[0].req_in", {"ports": port_mask([LOCAL], PARAMS.radix)}),
             (1, "coll[0].resp_out", {"ports": 0})),
        "Switch 1 (target 1), coll[0].resp_out.ports: the root sends the result nowhere"),
    "unsupported op/dtype": (
        edit(*((u, "coll[0].ctrl", {"enable": 1, "op": "xor", "dtype": "fp32"})
               for u in range(6))),
        "Switch 0 (target 0), coll[0].ctrl.op: Operation xor is not defined on fp32"),
    "operation differs along the tree": (
        edit((3, "coll[0].ctrl", {"enable": 1, "op": "max", "dtype": "int32"})),
        ("Switch 3 (target 3), coll[0].ctrl: operation max on int32 differs from the root's "
        "(node 1) add on int32")),
    "disabled collective id with registers set": (
        edit((0, "coll[1].req_in", {"ports": 1})),
        ("Switch 0 (target 0), coll[1].req_in: is set while coll[1].ctrl.enable is 0; a "
        "disabled collective id's registers must be zero")),
    "a second root inside the tree": (
        edit((4, "coll[0].req_out", {"root": 1}), (4, "coll[0].resp_in", {})),
        (f"Switch 1 (target 1), coll[0].req_in.ports: takes requests on port {port(1, 4)} from "
        f"node 4, which is the root")),
    "root flag cleared": (
        edit((1, "coll[0].req_out", {"port": port(1, 4)}), (1, "coll[0].resp_in", {})),
        (f"Switch 1 (target 1), coll[0].req_out.port: sends requests to node 4 on port "
        f"{port(1, 4)}, but node 4 does not take them on its port {port(4, 1)}")),
    "request tree with a cycle": (
        edit((0, "coll[0].req_out", {"port": port(0, 3)}), (0, "coll[0].req_in", mask(0, 3)),
             (3, "coll[0].req_in", mask(3, 0)), (1, "coll[0].req_in", mask(1, 2, 4))),
        ("Switch 0 (target 0), coll[0].req_out: the request tree of collective id 0 has a "
        "cycle: nodes 0 -> 3 -> 0")),
    "participant contributing twice": (
        edit((4, "coll[0].req_in", mask(4, 5, 3))),
        (f"Switch 4 (target 4), coll[0].req_in.ports: takes node 3's requests on port "
        f"{port(4, 3)}, but node 0 takes them too: node 3 would contribute twice")),
    "input from a node that sends elsewhere": (
        edit((4, "coll[0].req_in", mask(4, 5, 3)), (0, "coll[0].req_in", mask(0))),
        (f"Switch 4 (target 4), coll[0].req_in.ports: takes node 3's requests on port "
        f"{port(4, 3)}, but node 3 sends them to node 0")),
    "input from an unconfigured node": (
        edit((5, "coll[0].ctrl", {}), (5, "coll[0].req_in", {}), (5, "coll[0].req_out", {}),
             (5, "coll[0].resp_in", {}), (5, "coll[0].resp_out", {})),
        (f"Switch 4 (target 4), coll[0].req_in.ports: takes requests on port {port(4, 5)} from "
        f"node 5, which is not configured for collective id 0")),
    "input from a node that sends none": (
        edit((3, "coll[0].req_in", {}), (3, "coll[0].req_out", {})),
        (f"Switch 0 (target 0), coll[0].req_in.ports: takes requests on port {port(0, 3)} from "
         f"node 3, which sends none")),
    "response to an unconfigured node": (
        edit((4, "coll[0].req_in", mask(4)), *unconfigured(5)),
        (f"Switch 4 (target 4), coll[0].resp_out.ports: multicasts on port {port(4, 5)} to node "
         f"5, which is not configured for collective id 0")),
    "response to the root": (
        edit((0, "coll[0].resp_out", mask(0, 3, 1))),
        (f"Switch 0 (target 0), coll[0].resp_out.ports: multicasts on port {port(0, 1)} to node "
         f"1, which is the root")),
    "response to a node that passes none": (
        edit((5, "coll[0].resp_out", {}), (5, "coll[0].resp_in", {})),
        (f"Switch 4 (target 4), coll[0].resp_out.ports: multicasts on port {port(4, 5)} to node "
         f"5, which passes no response")),
    "requests nobody takes": (
        edit((0, "coll[0].req_in", mask(0))),
        (f"Switch 3 (target 3), coll[0].req_out.port: sends requests to node 0 on port "
        f"{port(3, 0)}, but node 0 does not take them on its port {port(0, 3)}")),
    "response nobody sends": (
        edit((1, "coll[0].resp_out", mask(1, 2, 4))),
        (f"Switch 0 (target 0), coll[0].resp_in.port: expects the response from node 1 on port "
        f"{port(0, 1)}, but node 1 does not send it there")),
    "response to a node expecting another": (
        edit((0, "coll[0].resp_in", {"port": port(0, 3)})),
        (f"Switch 1 (target 1), coll[0].resp_out.ports: multicasts on port {port(1, 0)} to node "
        f"0, but node 0 takes its response from node 3")),
    "response not the inverse of the requests (embedding verifier)": (
        edit((4, "coll[0].resp_out", mask(4, 5, local=False))),
        (f"Switch 4 (target 4), coll[0]: Switch 4: resp_out {{{port(4, 5)}}} must equal req_in "
        f"{{{port(4, 5)}, local}} (the inverse of the request tree)")),
    "tree deeper than the root's eccentricity (embedding verifier)": (
        edit(*((u, f"coll[0].{r}", fields) for u, r, fields in [
            (0, "req_out", {"port": port(0, 3)}), (0, "resp_in", {"port": port(0, 3)}),
            (0, "req_in", mask(0)), (0, "resp_out", mask(0)),
            (3, "req_in", mask(3, 0)), (3, "resp_out", mask(3, 0)),
            (3, "req_out", {"port": port(3, 4)}), (3, "resp_in", {"port": port(3, 4)}),
            (4, "req_in", mask(4, 3, 5)), (4, "resp_out", mask(4, 3, 5)),
            (1, "req_in", mask(1, 2, 4)), (1, "resp_out", mask(1, 2, 4))])),
        ("Collective id 0, coll[0]: Depth 3 differs from the root's eccentricity 2 over the "
        "participants")),
    "failure that is not a link": (failing([(0, 5)]),
                                   ("Topology, failures: Failed link 0-5 does not exist: nodes 0 "
                                   "and 5 are not adjacent")),
    "route over a failed link": (failing([(0, 3)]),
                                 ("Switch 0 (target 0), route[3].port: leads over the failed link "
                                 "0-3")),
    "route into a failed switch": (failing((), [5]),
                                   ("Switch 2 (target 2), route[3].port: leads into the failed "
                                   "switch 5")),
    "tree over a failed link (embedding verifier)": (
        failing([(4, 5)], (), *NO_ROUTES),
        f"Switch 4 (target 4), coll[0]: Switch 4: req_in port {port(4, 5)} is on failed link 4-5"),
    "routing loop": (
        edit((0, "route[5]", {"port": port(0, 3), "valid": 1}),
             (3, "route[5]", {"port": port(3, 0), "valid": 1})),
        "Switch 0 (target 0), route[5]: routing loop 0 -> 3 -> 0"),
    "route into a switch without a route": (
        edit((3, "route[5]", {})),
        "Switch 0 (target 0), route[5]: forwards to node 3, which has no route to node 5"),
    "route with the local port elsewhere": (
        edit((0, "route[3]", {"port": 3, "valid": 1})),
        ("Switch 0 (target 0), route[3].port: is the local port, but destination 3 is not this "
        "node")),
    "route to itself over the network": (
        edit((0, "route[0]", {"port": 1, "valid": 1})),
        ("Switch 0 (target 0), route[0].port: is 1, but destination 0 is this node: it must be "
        "the local port 3")),
    "port in an invalid route": (
        edit((0, "route[2]", {"valid": 0, "port": 1})),
        "Switch 0 (target 0), route[2].port: is 1 in an entry whose valid flag is 0"),
    "route to a port the node lacks": (
        edit((0, "route[2]", {"valid": 1, "port": 2})),
        "Switch 0 (target 0), route[2].port: names port 2, but node 0 has ports 0..1"),
    "route to a node that does not exist": (
        edit((0, "route[7]", {"port": 0, "valid": 1})),
        ("Switch 0 (target 0), route[7]: routes destination 7, but the network has 6 nodes "
        "(0..5)")),
    # -- endpoints -------------------------------------------------------------------------
    "step peer out of range": (edit((6, "step[0].send_peer", {"node": 7})),
                               ("Endpoint 0 (target 6), step[0].send_peer.node: names node 7, "
                               "but the network has 6 nodes (0..5)")),
    "step peer is the endpoint itself": (edit((6, "step[0].recv_peer", {"node": 0})),
                                         ("Endpoint 0 (target 6), step[0].recv_peer.node: names "
                                         "node 0, this endpoint itself")),
    "send range past the vector end": (edit((6, "step[0].send_first", {"index": 6})),
                                       ("Endpoint 0 (target 6), step[0].send_first: the send "
                                       "range [6, 10) runs past the vector end 8 (vec_len)")),
    "receive range past the vector end": (edit((9, "step[0].recv_count", {"count": 5})),
                                          ("Endpoint 3 (target 9), step[0].recv_first: the recv "
                                          "range [4, 9) runs past the vector end 8 (vec_len)")),
    "send without a matching receive": (
        edit((6, "step[1].send_count", {"count": 3})),
        ("Endpoint 0 (target 6), step[1].send_peer: sends 3 elements [0, 3) of collective 0 to "
        "node 3, but endpoint 3 step[1] receives 4 elements [0, 4) of collective 0 from node 0")),
    "send of other elements than the peer receives": (
        edit((6, "step[0].send_first", {"index": 2})),
        ("Endpoint 0 (target 6), step[0].send_peer: sends 4 elements [2, 6) of collective 0 to "
        "node 3, but endpoint 3 step[0] receives 4 elements [4, 8) of collective 0 from node 0")),
    "receive nobody sends": (
        edit(*((6, f"step[1].{r}", {}) for r in ("send_peer", "send_first", "send_count")),
             *((9, f"step[1].{r}", {}) for r in ("recv_peer", "recv_first", "recv_count")),
             *((9, f"step[1].{r}", {}) for r in ("send_peer", "send_first", "send_count")),
             (9, "step[1].flags", {}), (6, "step[1].flags", {"recv": 1})),
        ("Endpoint 0 (target 6), step[1].recv_peer: receives 4 elements [4, 8) of collective 0 "
        "from node 3, but endpoint 3 step[1] sends nothing")),
    "peer set with the flag clear": (edit((6, "step[0].flags", {"recv": 1, "reduce": 1})),
                                     ("Endpoint 0 (target 6), step[0].send_peer: is 3, but the "
                                     "send flag is clear")),
    "reduce on a step that receives nothing": (
        edit((6, "step[1].flags", {"send": 1, "reduce": 1}), (6, "step[1].recv_peer", {}),
             (6, "step[1].recv_first", {}), (6, "step[1].recv_count", {})),
        "Endpoint 0 (target 6), step[1].flags.reduce: is set on a step that receives nothing"),
    "empty send with the flag set": (edit((6, "step[0].send_count", {"count": 0})),
                                     ("Endpoint 0 (target 6), step[0].send_count.count: is 0 "
                                     "while the send flag is set")),
    "step written beyond the step count": (edit((6, "step[3].flags", {"send": 1})),
                                           ("Endpoint 0 (target 6), step[3]: is written, but "
                                           "engine.cfg.steps is 2")),
    "vector past the vector memory": (edit((6, "vec_base", {"index": 12})),
                                      ("Endpoint 0 (target 6), vec_len.count: the vector [12, 20) "
                                      "runs past the end of the 16-element vector memory")),
    "unsupported step-engine op/dtype": (
        edit((6, "engine.cfg", {"steps": 2, "op": "nor", "dtype": "fp32"})),
        "Endpoint 0 (target 6), engine.cfg.op: Operation nor is not defined on fp32"),
    "step-engine operations differ": (
        edit((6, "engine.cfg", {"steps": 2, "op": "max", "dtype": "int32"})),
        ("Endpoint 1 (target 7), engine.cfg: operation add on int32 differs from endpoint 0's "
        "max on int32")),
    "send to a peer without a route": (
        edit((0, "route[3]", {})),
        ("Endpoint 0 (target 6), step[0].send_peer: sends to node 3, but switch 0 has no route "
        "to node 3")),
    "command on a collective id without local input": (
        edit((6, "coll.cmd", {"cid": 1})),
        ("Endpoint 0 (target 6), coll.cmd.cid: names collective id 1, but switch 0 takes no "
        "local input for it")),
    "command operation differs from the switch's": (
        edit((6, "coll.cmd", {"cid": 0, "op": "min"})),
        ("Endpoint 0 (target 6), coll.cmd: operation min on int32 differs from switch 0's add "
        "on int32 for collective id 0")),
    "command longer than the vector": (
        edit((6, "coll.count", {"count": 9})),
        ("Endpoint 0 (target 6), coll.count.count: is 9, more than the vector's 8 elements "
        "(vec_len)")),
}


@pytest.mark.parametrize("name", [name for name, (_, m) in CASES.items() if m is not None])
def test_corruption_is_rejected_with_its_message(name):
    data, message = CASES[name]
    with pytest.raises(ImageError, match="^" + re.escape(message) + "$"):
        decode(data)


def test_every_case_has_its_own_message():
    messages = [m for _, m in CASES.values() if m is not None]
    assert len(messages) == len(set(messages)) >= 60


def test_a_changed_radix_is_named_by_the_map_hash_first():
    with pytest.raises(ImageError) as info:
        decode(CASES["radix below the topology's"][0])
    # the register maps' digests no longer match: the hash check comes first and names it
    assert re.fullmatch(r"Header: switch register-map hash mismatch: the image was packed for "
                        r"map [0-9a-f]{16}, its parameters give [0-9a-f]{16} in this innet",
                        str(info.value))


def test_radix_below_the_topology():
    # Radix 2 with the register-map digests of radix 2, so that the hash check passes and the
    # network check sees a switch too small for the mesh's degree-3 nodes.
    small = dataclasses.replace(PARAMS, radix=2)
    data = bytearray(BIN)
    struct.pack_into("<I", data, 28, small.radix)
    data[56:88] = bytes.fromhex(small.switch_map.digest)
    data[88:120] = bytes.fromhex(small.endpoint_map.digest)
    message = (f"Header, params.radix: switch radix 2 is below the topology's maximum degree "
               f"{TOPO.radix}")
    assert TOPO.radix == PARAMS.radix == 3
    with pytest.raises(ImageError, match="^" + re.escape(message) + "$"):
        decode(reseal(bytes(data)))


HEADER = sample().header


@pytest.mark.parametrize(("changes", "message"), [
    ({"magic": b"INNETIMX"}, "Header: bad magic b'INNETIMX', expected b'INNETIMG'"),
    ({"version": 2}, "Header: unknown format version 2; this innet reads version 1"),
    ({"target_count": 14}, "Header: target count 14 is not twice the 6 nodes"),
    ({"crc32": HEADER.crc32 ^ 1}, (f"Header: CRC mismatch: the header says "
                                   f"{HEADER.crc32 ^ 1:#010x}, the content gives "
                                   f"{HEADER.crc32:#010x}")),
])
def test_validate_checks_the_header_it_is_given(changes, message):
    """The codecs check magic, version and CRC before the validator sees them; a header handed
    to :func:`validate` directly is checked against the content all the same."""
    validate(sample(), HEADER)
    with pytest.raises(ImageError, match="^" + re.escape(message) + "$"):
        validate(sample(), dataclasses.replace(HEADER, **changes))


@pytest.mark.parametrize(("target", "write", "message"), [
    (0, (5, 1 << 32), "Switch 0 (target 0): word 4294967296 is not a 32-bit word"),
    (0, (5, -1), "Switch 0 (target 0): word -1 is not a 32-bit word"),
    (0, (5, True), "Switch 0 (target 0): word True is not a 32-bit word"),
    (7, ("five", 1), "Endpoint 1 (target 7): address 'five' is not a 32-bit word"),
    (7, (-1, 1), "Endpoint 1 (target 7): address -1 is not a 32-bit word"),
])
def test_writes_of_an_image_made_in_memory_must_be_32_bit_words(target, write, message):
    """No encoding holds such a write (``encode`` refuses it), but an :class:`Image` built in
    memory may, and the validator names it."""
    with pytest.raises(ImageError, match="^" + re.escape(message) + "$"):
        validate(set_writes(sample(), target, [write]))


def test_malformed_json_names_the_position():
    with pytest.raises(ImageError, match=r"^JSON: malformed: .+ line \d+ column \d+ "
                                         r"\(char \d+\)$"):
        decode(CASES["JSON malformed"][0])


@pytest.mark.parametrize("fmt", ["hex", "json"])
@pytest.mark.parametrize("name", ["duplicate write", "request tree with a cycle",
                                  "send range past the vector end"])
def test_content_errors_are_the_same_in_every_encoding(fmt, name):
    data, message = CASES[name]
    text = encode(decode_unchecked(data), fmt)
    with pytest.raises(ImageError, match="^" + re.escape(message) + "$"):
        decode(text)


def decode_unchecked(data):
    from innet.gen.image.binary import from_bytes

    return from_bytes(data)[1]


def test_error_names_target_and_register():
    with pytest.raises(ImageError) as info:
        decode(CASES["mask naming a port the node lacks"][0])
    error = info.value
    assert (error.target, error.register) == (0, "coll[0].req_in")
    assert error.where == "Switch 0 (target 0), coll[0].req_in.ports"
    assert isinstance(error, ValueError)
    assert "\n" not in str(error)


def test_an_image_may_clear_the_switch_error_flags():
    """The RW1C ``errors`` register is status: an image writes it only to clear flags (a 1
    clears), decoded as such; a word setting a bit beyond the flags is rejected."""
    clear = {"bad_vc": 1, "no_route": 1}
    image = decode(edit((1, "errors", clear)))
    assert image.values(1)["errors"] == {name: int(name in clear) for name in ERROR_FLAGS}
    beyond = 1 << len(ERROR_FLAGS)
    with pytest.raises(ImageError, match=rf"^Switch 1 \(target 1\): Register 'errors' value "
                                         rf"{beyond:#x} sets reserved bits {beyond:#x}$"):
        decode(edit((1, "errors", None, beyond)))
