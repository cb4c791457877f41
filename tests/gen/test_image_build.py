"""Image builders: switch registers from routes and embeddings, endpoint step tables from
schedules, checked against independent models (networkx trees and routes, and a numpy
interpreter that runs the decoded step tables as the endpoints would)."""

import re
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

from innet.gen.image import (
    ImageError,
    MapParams,
    build_image,
    collective_configs,
    decode,
    encode,
)
from innet.gen.image.build import embedding_configs, endpoint_registers, route_table
from innet.gen.ops import DType, Op
from innet.gen.regmap import Access
from innet.gen.swing import ALGORITHMS, build_schedule
from innet.gen.topology import LOCAL, hyperx, polarfly, torus


def bfs_routes(topo):
    """Shortest-path next hops, lowest port first; LOCAL on the diagonal."""
    dist = dict(nx.all_pairs_shortest_path_length(topo.to_networkx()))
    n = topo.nodes
    table = np.full((n, n), LOCAL)
    for u in range(n):
        for d in range(n):
            if u != d:
                table[u, d] = min(p for p, v in enumerate(topo.neighbors(u))
                                  if dist[v][d] == dist[u][d] - 1)
    return table


def bfs_embedding(topo, root, participants=None, cid=0, op="add", dtype="int32"):
    """An allreduce on a BFS tree of networkx, in the embedding contract's shape."""
    parts = set(range(topo.nodes) if participants is None else participants)
    parent = dict(nx.bfs_predecessors(topo.to_networkx(), root))
    used = set()
    for p in parts:
        while p not in used:
            used.add(p)
            p = parent.get(p, p)
    switches = []
    for u in sorted(used):
        kids = [topo.port_to(u, c) for c in used if parent.get(c) == u]
        ports = frozenset(kids + ([LOCAL] if u in parts else []))
        up = None if u == root else topo.port_to(u, parent[u])
        switches.append(SimpleNamespace(node=u, req_in=ports, req_out=up, resp_in=up,
                                        resp_out=ports))
    return SimpleNamespace(collective_id=cid, op=Op.parse(op), dtype=DType.parse(dtype),
                           root=root, participants=tuple(sorted(parts)),
                           switches=tuple(switches), topology=topo.fingerprint)


def run_step_tables(image, vectors):
    """Run every endpoint's decoded step table: entry k of all endpoints together, each a
    send-and-receive of the copies from before the entry (the schedule's execution order)."""
    n = image.nodes
    regs = [image.values(t) for t in image.endpoints()]

    def field(r, name, key):
        return regs[r].get(name, {}).get(key, 0)

    steps = [field(r, "engine.cfg", "steps") for r in range(n)]
    for k in range(max(steps)):
        before = [v.copy() for v in vectors]
        messages = {}
        for r in range(n):
            if k < steps[r] and field(r, f"step[{k}].flags", "send"):
                first = field(r, f"step[{k}].send_first", "index")
                count = field(r, f"step[{k}].send_count", "count")
                messages[r, field(r, f"step[{k}].send_peer", "node")] = before[r][
                    first:first + count]
        for r in range(n):
            if k < steps[r] and field(r, f"step[{k}].flags", "recv"):
                first = field(r, f"step[{k}].recv_first", "index")
                count = field(r, f"step[{k}].recv_count", "count")
                data = messages.pop((field(r, f"step[{k}].recv_peer", "node"), r))
                assert len(data) == count
                if field(r, f"step[{k}].flags", "reduce"):
                    vectors[r][first:first + count] += data
                else:
                    vectors[r][first:first + count] = data
        assert not messages, f"entry {k}: messages nobody received: {sorted(messages)}"
    return vectors


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("shape", [(4, 4), (8,)])
@pytest.mark.parametrize("elements", [5, 64])
def test_step_tables_compute_the_allreduce(algorithm, shape, elements):
    topo = torus(shape)
    schedule = build_schedule(algorithm, shape)
    image = build_image(topo, routes=bfs_routes(topo), schedule=schedule, elements=elements)
    image = decode(encode(image))
    rng = np.random.default_rng(len(shape) * 1000 + elements)
    vectors = [rng.integers(0, 1 << 32, elements, dtype=np.uint32) for _ in range(topo.nodes)]
    total = np.sum(vectors, axis=0, dtype=np.uint32)
    for result in run_step_tables(image, [v.copy() for v in vectors]):
        assert (result == total).all()


def test_step_table_is_the_schedule_in_execution_order():
    topo = torus((4, 4))
    schedule = build_schedule("swing-b", (4, 4))
    elements = 1000
    image = build_image(topo, routes=bfs_routes(topo), schedule=schedule, elements=elements,
                        op="max", dtype="fp32", vec_base=24)
    for r in (0, 5, 15):
        values = image.values(image.target("endpoint", r))
        table = schedule.table(r)
        assert values["engine.cfg"] == {"steps": len(table), "op": Op.MAX, "dtype": DType.FP32}
        assert values["vec_base"] == {"index": 24}
        assert values["vec_len"] == {"count": elements}
        for k, entry in enumerate(table):
            assert values[f"step[{k}].flags"]["cid"] == entry.collective
            assert values[f"step[{k}].flags"]["reduce"] == entry.reduce
            if entry.send_peer is not None:
                lo, hi = schedule.elements(entry.collective, entry.send, elements)
                assert values[f"step[{k}].send_peer"]["node"] == entry.send_peer
                assert values[f"step[{k}].send_first"]["index"] == lo
                assert values[f"step[{k}].send_count"]["count"] == hi - lo


def test_empty_ranges_leave_the_flags_clear():
    """With 1 element, most blocks are empty: those steps neither send nor receive."""
    topo = torus((8,))
    image = build_image(topo, schedule=build_schedule("ring", 8), elements=1,
                        routes=bfs_routes(topo))
    flags = [image.values(t)[f"step[{k}].flags"] for t in image.endpoints()
             for k in range(image.values(t)["engine.cfg"]["steps"])]
    assert any(f["send"] for f in flags)
    assert any(not f["send"] and not f["recv"] for f in flags)
    assert all(f["reduce"] <= f["recv"] for f in flags)
    vectors = [np.array([u], dtype=np.uint32) for u in range(8)]
    assert all(v[0] == 28 for v in run_step_tables(image, vectors))


@pytest.mark.parametrize("topo", [polarfly(3), hyperx((3, 3)), torus((4, 4))],
                         ids=["polarfly-3", "hyperx-3x3", "torus-4x4"])
def test_switch_registers_hold_the_embeddings_and_routes(topo):
    trees = [bfs_embedding(topo, 0), bfs_embedding(topo, topo.nodes - 1, [1, 2, 3], cid=2,
                                                   op="min", dtype="fp32")]
    routes = bfs_routes(topo)
    image = decode(encode(build_image(topo, routes=routes, embeddings=trees), "json"))
    assert image.params.collective_ids == 3
    for tree in trees:
        assert collective_configs(image, tree.collective_id) == embedding_configs(tree)
    assert collective_configs(image, 1) == {}
    radix = image.params.radix
    for u in range(topo.nodes):
        values = image.values(u)
        decoded = [values[f"route[{d}]"]["port"] for d in range(topo.nodes)]
        assert decoded == [radix if p == LOCAL else p for p in routes[u]]
        assert all(values[f"route[{d}]"]["valid"] for d in range(topo.nodes))


def test_images_are_complete_configurations():
    """Every RW register a configuration owns is written, so no reset value is relied on (the
    RW1C error flags are status, not configuration: an image does not clear them)."""
    topo = torus((4, 4))
    image = build_image(topo, routes=bfs_routes(topo), embeddings=[bfs_embedding(topo, 5)],
                        schedule=build_schedule("recdoub-l", (4, 4)), elements=16,
                        collective_ids=2, routing_depth=20)
    smap, emap = image.params.switch_map, image.params.endpoint_map
    switch_regs = {r.name for r in smap if r.mask(Access.RW)}
    for t in image.switches():
        assert set(image.values(t)) == switch_regs
    steps = image.values(image.target("endpoint", 0))["engine.cfg"]["steps"]
    wanted = {"node_id", "vec_base", "vec_len", "engine.cfg"} | {
        r.name for r in emap if r.name.startswith("step[") and int(r.index[0]) < steps}
    for t in image.endpoints():
        assert set(image.values(t)) == wanted
    unused = image.values(0)["route[17]"]
    assert unused == {"port": 0, "valid": 0}


def test_defaults_are_the_smallest_parameters():
    topo = polarfly(3)
    image = build_image(topo)
    assert image.params == MapParams(radix=4, collective_ids=1, routing_depth=13, step_depth=1,
                                     vector_depth=1)
    schedule = build_schedule("swing-l", 13)
    image = build_image(topo, schedule=schedule, elements=100, routes=bfs_routes(topo),
                        node_id_width=8)
    assert image.params == MapParams(radix=4, collective_ids=schedule.collectives,
                                     routing_depth=13,
                                     step_depth=schedule.steps * schedule.collectives,
                                     vector_depth=100, node_id_width=8)


def test_unrouted_destinations_are_invalid_entries():
    topo = torus((4,))
    table = bfs_routes(topo)
    table[0, 2] = -2  # routing.UNREACHABLE
    table[1, 2] = table[3, 2] = -2
    image = build_image(topo, routes=table)
    assert image.values(0)["route[2]"] == {"port": 0, "valid": 0}


def test_routing_objects_with_a_table_method_are_accepted():
    topo = torus((3, 3))
    table = bfs_routes(topo)
    assert (route_table(SimpleNamespace(table=lambda: table), 9) == table).all()


def _message(text):
    return "^" + re.escape(text) + "$"


def test_builder_errors():
    topo = torus((4, 4))
    schedule = build_schedule("swing-b", (4, 4))
    tree = bfs_embedding(topo, 0)
    cases = [
        (lambda: build_image("ring"), TypeError, "Topology must be a Topology, not str"),
        (lambda: build_image(topo, schedule=schedule, elements=64, step_depth=8), ValueError,
         (f"Endpoint 0's step table of {schedule.steps * schedule.collectives} entries exceeds "
         f"the step depth 8")),
        (lambda: build_image(topo, elements=100, vector_depth=64), ValueError,
         "A vector of 100 elements at base 0 does not fit in the vector depth 64"),
        (lambda: build_image(topo, elements=-1), ValueError,
         "Elements must be at least 0, not -1"),
        (lambda: build_image(topo, elements="8"), TypeError,
         "Elements must be an integer, not '8'"),
        (lambda: build_image(topo, schedule=schedule, collective_ids=2), ValueError,
         (f"The schedule has {schedule.collectives} collectives, more than the 2 collective "
         f"ids")),
        (lambda: build_image(torus((3, 3)), schedule=schedule), ValueError,
         "The schedule has 16 ranks, but the network has 9 nodes"),
        (lambda: build_image(topo, embeddings=[bfs_embedding(topo, 0, cid=4)],
                             collective_ids=4), ValueError,
         "Collective id 4 needs at least 5 collective ids, not 4"),
        (lambda: build_image(topo, embeddings=[tree, tree]), ValueError,
         ("Collective id 0: switch 0 is configured by two embeddings, but it has one register "
         "copy per id")),
        (lambda: build_image(topo, embeddings=["tree"]), TypeError,
         "Expected an Embedding with a collective id, not 'tree'"),
        (lambda: build_image(torus((4, 2)), embeddings=[tree]), ValueError,
         "An embedding was made for another topology (its fingerprint differs)"),
        (lambda: build_image(topo, radix=3), ValueError,
         "Radix 3 is below the topology's maximum degree 4"),
        (lambda: build_image(topo, routes=bfs_routes(topo), routing_depth=8), ValueError,
         "Routing depth 8 cannot hold routes to 16 nodes"),
        (lambda: build_image(topo, routing_depth=2), ValueError,  # without routes too
         "Routing depth 2 cannot hold routes to 16 nodes"),
        (lambda: build_image(topo, routes=np.zeros((4, 4), dtype=int)), ValueError,
         "Routing table must have shape (16, 16), not (4, 4)"),
        (lambda: build_image(topo, routes=np.zeros((16, 16))), TypeError,
         "Routing table must hold integer ports, not float64"),
        (lambda: build_image(topo, schedule=schedule, op="xor", dtype="fp32"), ValueError,
         "Operation xor is not defined on fp32"),
        # Eight elements fill some of the blocks: the table holds the entries that move them.
        (lambda: endpoint_registers(0, MapParams(4, 1, 16, 4, 8), schedule=schedule,
                                    elements=8), ValueError,
         (f"Endpoint 0's step table of {len(schedule.table(0, 8))} entries exceeds "
         f"the step depth 4")),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=_message(message)):
            call()


def test_an_inconsistent_embedding_fails_validation_naming_the_register():
    topo = torus((4, 4))
    tree = bfs_embedding(topo, 0)
    leaf = next(s for s in tree.switches if s.req_in == frozenset([LOCAL]))
    broken = SimpleNamespace(**{**vars(tree), "switches": tuple(
        SimpleNamespace(**{**vars(s), "req_in": frozenset()}) if s is leaf else s
        for s in tree.switches)})
    with pytest.raises(ImageError, match=rf"^Switch {leaf.node} \(target {leaf.node}\), "
                                         r"coll\[0\]\.req_out\.port: is \d, but the switch "
                                         r"sends no requests \(req_in is empty\): it must be 0$"):
        build_image(topo, embeddings=[broken])


@pytest.mark.parametrize("kind", ["allreduce", "reduce", "broadcast", "barrier"])
def test_embeddings_of_every_kind_round_trip(kind):
    from innet.gen.embed import embed
    from innet.gen.image import embeddings
    from innet.gen.routing import routing

    topo = polarfly(3)
    made = [embed(topo, kind=kind, op="max", dtype="fp32"),
            embed(topo, [1, 4, 7, 9], kind=kind, collective_id=2, root=4 if kind in (
                "reduce", "broadcast") else "auto")]
    image = decode(encode(build_image(topo, routes=routing(topo), embeddings=made), "hex"))
    found = {e.collective_id: e for e in embeddings(image)}
    assert sorted(found) == [0, 2]
    for original in made:
        rebuilt = found[original.collective_id]
        assert rebuilt.switches == original.switches
        assert (rebuilt.root, rebuilt.participants, rebuilt.depth, rebuilt.links) == (
            original.root, original.participants, original.depth, original.links)
        assert rebuilt.kind == ("allreduce" if kind == "barrier" else kind)


def test_routing_objects_program_the_tables():
    from innet.gen.routing import routing

    topo = hyperx((3, 4))
    plan = routing(topo)
    image = build_image(topo, routes=plan)
    hardware = plan.hardware_table()
    for u in range(topo.nodes):
        values = image.values(u)
        assert [values[f"route[{d}]"]["port"] for d in range(topo.nodes)] == list(hardware[u])


def test_embeddings_and_routes_around_failures():
    from innet.gen.embed import embed
    from innet.gen.routing import routing

    topo = torus((4, 4))
    links, dead = [(0, 1), (5, 9)], [10]
    plan = routing(topo, failed_links=links, failed_switches=dead)
    parts = [u for u in range(16) if u != 10]
    tree = embed(topo, parts, failed_links=links, failed_switches=dead)
    image = build_image(topo, routes=plan, embeddings=[tree], failed_links=[(1, 0)])
    assert image.failed_links == ((0, 1), (5, 9))
    assert image.failed_switches == (10,)
    decoded = decode(encode(image, "json"))
    assert decoded == image
    from innet.gen.image import embeddings

    assert embeddings(decoded)[0].switches == tree.switches
    assert embeddings(decoded)[0].depth == tree.depth
    # a failure the routing did not avoid
    with pytest.raises(ImageError, match=r"^Switch \d+ \(target \d+\), route\[\d+\]\.port: "
                                         r"leads over the failed link 14-15$"):
        build_image(topo, routes=plan, failed_links=[(14, 15)])
    rebuilt = embeddings(decoded)[0]
    assert (rebuilt.failed_links, rebuilt.failed_switches) == (((0, 1), (5, 9)), (10,))


def test_disjoint_embeddings_share_a_collective_id():
    from innet.gen.embed import assign_collective_ids, embed
    from innet.gen.image import embeddings

    topo = torus((4, 4))
    groups = [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [0, 5, 10, 15]]
    made = assign_collective_ids([embed(topo, g, op="min") for g in groups])
    assert [e.collective_id for e in made] == [0, 0, 0, 1]
    image = decode(encode(build_image(topo, routes=bfs_routes(topo), embeddings=made)))
    assert image.params.collective_ids == 2
    rebuilt = embeddings(image)
    assert [(e.collective_id, e.participants) for e in rebuilt] == [
        (0, (0, 1, 4, 5)), (0, (2, 3, 6, 7)), (0, (8, 9, 12, 13)), (1, (0, 5, 10, 15))]
    for original, again in zip(sorted(made, key=lambda e: (e.collective_id, min(e.nodes))),
                               rebuilt, strict=True):
        assert again.switches == original.switches
        assert again.root == original.root
