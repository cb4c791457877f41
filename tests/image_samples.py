"""A small hand-made configuration image and tools to corrupt images, for the image tests.

The sample is packed directly with the switch and endpoint register maps (not with the image
builders), so the codec and validator tests do not depend on the builders.

Network: the 2 x 3 mesh (degrees 2 and 3, radix 3)::

    0 - 1 - 2
    |   |   |
    3 - 4 - 5

Collective id 0: an add/int32 allreduce tree rooted at node 1 (parents in ``TREE``); id 1 is
not configured. Routes: shortest paths, lowest port first (networkx distances). Endpoints: an
8-element vector and a two-step exchange between vertical neighbours (0-3, 1-4, 2-5):
reduce-scatter of halves, then allgather.
"""

import dataclasses
import struct
import zlib

import networkx as nx

from innet.gen.image import Image, MapParams
from innet.gen.regmap import port_code, port_mask
from innet.gen.topology import LOCAL, torus

__all__ = ["PARAMS", "TREE", "mesh", "reseal", "sample", "set_register", "set_writes",
           "shortest_routes"]

PARAMS = MapParams(radix=3, collective_ids=2, routing_depth=8, step_depth=4, vector_depth=16)
TREE = {0: 1, 2: 1, 3: 0, 4: 1, 5: 4}  # parent of every node but the root, 1
ROOT = 1
ELEMENTS = 8


def mesh():
    return torus((2, 3), mesh=True)


def shortest_routes(topo):
    graph = topo.to_networkx()
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    table = {}
    for u in range(topo.nodes):
        for d in range(topo.nodes):
            if u == d:
                table[u, d] = LOCAL
            else:
                table[u, d] = min(p for p, v in enumerate(topo.neighbors(u))
                                  if dist[v][d] == dist[u][d] - 1)
    return table


def switch_values(topo, u):
    radix = PARAMS.radix
    kids = [topo.port_to(u, c) for c, p in TREE.items() if p == u]
    values = {"node_id": {"id": u},
              "coll[0].ctrl": {"enable": 1, "op": "add", "dtype": "int32"},
              "coll[0].req_in": {"ports": port_mask([LOCAL, *kids], radix)},
              "coll[0].resp_out": {"ports": port_mask([LOCAL, *kids], radix)}}
    if u == ROOT:
        values["coll[0].req_out"] = {"port": 0, "root": 1}
    else:
        up = topo.port_to(u, TREE[u])
        values["coll[0].req_out"] = {"port": up, "root": 0}
        values["coll[0].resp_in"] = {"port": up}
    routes = shortest_routes(topo)
    for d in range(topo.nodes):
        values[f"route[{d}]"] = {"port": port_code(routes[u, d], radix), "valid": 1}
    return values


def endpoint_values(u):
    partner = (u + 3) % 6
    half = ELEMENTS // 2
    mine, theirs = (0, half) if u < 3 else (half, 0)
    values = {"node_id": {"id": u}, "vec_len": {"count": ELEMENTS},
              "engine.cfg": {"steps": 2, "op": "add", "dtype": "int32"}}
    for step, (send, recv, reduce) in enumerate([(theirs, mine, 1), (mine, theirs, 0)]):
        values[f"step[{step}].flags"] = {"send": 1, "recv": 1, "reduce": reduce, "cid": 0}
        values[f"step[{step}].send_peer"] = {"node": partner}
        values[f"step[{step}].send_first"] = {"index": send}
        values[f"step[{step}].send_count"] = {"count": half}
        values[f"step[{step}].recv_peer"] = {"node": partner}
        values[f"step[{step}].recv_first"] = {"index": recv}
        values[f"step[{step}].recv_count"] = {"count": half}
    return values


def sample():
    """The sample image (see the module documentation)."""
    topo = mesh()
    writes = [PARAMS.switch_map.pack(switch_values(topo, u)) for u in range(6)]
    writes += [PARAMS.endpoint_map.pack(endpoint_values(u)) for u in range(6)]
    return Image(PARAMS, topo, writes)


def set_writes(image, target, writes):
    """The image with the writes of one target replaced (raw, unchecked)."""
    new = list(image.writes)
    new[target] = tuple(writes)
    return dataclasses.replace(image, writes=tuple(new))


def set_register(image, target, name, fields=None, *, word=None):
    """The image with one register of a target set: packed from ``fields`` through the map
    (other fields reset), or the raw ``word``."""
    regmap = image.map(target)
    reg = regmap[name]
    if word is None:
        word = reg.encode(fields or {})
    words = dict(image.writes[target])
    for w, part in enumerate(reg.split(word)):
        words[reg.address + w] = part
    return set_writes(image, target, sorted(words.items()))


def reseal(data):
    """A binary image with its length and CRC fields recomputed (offsets 16 and 12, as the
    layout documents), so that a corruption reaches the checks behind the CRC."""
    data = bytearray(data)
    data[16:20] = struct.pack("<I", len(data))
    data[12:16] = struct.pack("<I", zlib.crc32(bytes(data[:12] + data[16:])))
    return bytes(data)
