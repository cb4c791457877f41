"""The image validator: everything a loader must know before it programs a network.

:func:`validate` runs after an encoding has been parsed (framing, magic, version, length and
CRC are the codecs' job) and checks, in this order, stopping at the first problem:

1. the header against the content: the format version, the register-map digests against the
   maps the parameters give, the topology fingerprint, the target count, the CRC of the
   canonical binary encoding;
2. the network against the parameters: the switch radix covers the topology's maximum degree,
   node ids fit in the node-id width, the recorded failures name links and switches that exist;
3. every target's writes: ascending addresses written once, port masks within ``radix + 1``
   bits, then :meth:`Map.unpack <innet.gen.regmap.Map.unpack>` (each write hits a writable
   register, every field in range, no read-only field set; a write to the ``RW1C`` error flags
   can only clear them, a 1 clearing its flag), the node id;
4. switches: a collective id's registers are all zero unless it is enabled; operation and data
   type supported (:func:`innet.gen.ops.check_supported`); port masks and port fields name only
   ports the node has (``0..degree-1`` and the local port where allowed); the root flag and an
   output port are not both set; routing entries name existing destinations, the local port
   exactly for the node itself, no hop over a failed link or into a failed switch, and the
   tables are loop-free;
5. every collective id: the request and response trees agree across each link (a switch waits
   only on neighbours that send to it, a neighbour's requests are taken by one switch), one
   root, no cycle, one operation and data type (PIUMA, "Request-response Mechanism"); then
   the embedding rebuilt from the registers (:func:`innet.gen.embed.reconstruct`) passes the
   embedding verifier (:func:`innet.gen.embed.verify`: every participant contributes once,
   responses invert requests, the depth is the root's eccentricity, no idle switch);
6. endpoints: the vector inside the vector memory, the step count within the table, for every
   step its peers existing nodes other than itself, ranges inside ``vec_len``, flags
   consistent with peers and counts; every send matched by the peer's receive of the same
   elements in the same table entry (the schedule's step-major execution order, see
   :mod:`innet.gen.swing.schedule`), a route from the sender's switch to the peer; the
   in-network command preset, if any, on a collective id the node's switch takes local input
   for.

Every rejection is an :class:`~innet.gen.image.model.ImageError` with a one-line message naming
the target, the register or field, and the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from innet.gen.checks import check_int
from innet.gen.image.binary import crc32
from innet.gen.image.model import IMAGE_VERSION, MAGIC, Header, Image, ImageError
from innet.gen.ops import DType, Op, check_supported
from innet.gen.regmap import Target, mask_ports
from innet.gen.topology import LOCAL

__all__ = [
    "MAX_ROUTING_DEPTH",
    "CollectiveConfig",
    "collective_configs",
    "embeddings",
    "validate",
]


#: Largest routing depth an image may declare (a decoder builds the map it names).
MAX_ROUTING_DEPTH = 1 << 20


@dataclass(frozen=True)
class CollectiveConfig:
    """One switch's configuration of one collective id, decoded from its registers.

    The members mirror :class:`innet.gen.embed.SwitchConfig`: ports are network port numbers
    with ``LOCAL`` (-1) for the local port; ``req_out`` is ``None`` where the switch sends no
    requests (the root, and switches with no request input, as in a broadcast), ``resp_in``
    is ``None`` where no response arrives (the root, and switches that pass no response, as in
    a reduce).
    """

    node: int
    root: bool
    req_in: frozenset[int]
    req_out: int | None
    resp_in: int | None
    resp_out: frozenset[int]
    op: Op
    dtype: DType


class _Check:
    """One validation run over one image (see :func:`validate`)."""

    def __init__(self, image: Image) -> None:
        if not isinstance(image, Image):
            raise TypeError(f"Expected an Image, not {image!r:.60}")
        self.image = image
        self.n = image.nodes
        self.topo = image.topology
        self.degree = [int(d) for d in self.topo.ports.degree]
        self.peer = self.topo.ports.peer
        self.peer_port = self.topo.ports.peer_port
        self.values: list[dict[str, dict[str, int]]] = []
        self.embeddings: list[Any] = []

    # -- helpers ----------------------------------------------------------------------------

    def fail(self, t: int | None, where: str, reason: str) -> ImageError:
        if t is None:
            return ImageError(reason, where)
        regmap = self.image.map(t)
        register = where if where in regmap else where.rpartition(".")[0]
        register = register if register in regmap else None
        place = f"{self.image.name(t)}, {where}" if where else self.image.name(t)
        return ImageError(reason, place, target=t, register=register)

    def get(self, t: int, register: str) -> dict[str, int]:
        """Field values of a register of a target: as written, else its reset values."""
        written = self.values[t].get(register)
        if written is not None:
            return written
        reg = self.image.map(t)[register]
        return {f.name: f.reset for f in reg.fields}

    def has_port(self, u: int, port: int) -> bool:
        return 0 <= port < self.degree[u]

    def port_list(self, u: int) -> str:
        d = self.degree[u]
        return f"ports 0..{d - 1}" if d else "no network ports"

    def neighbour(self, u: int, port: int) -> tuple[int, int]:
        return int(self.peer[u, port]), int(self.peer_port[u, port])

    # -- 1. header and 2. network -----------------------------------------------------------

    def header(self, header: Header | None) -> None:
        image, p = self.image, self.image.params
        if p.routing_depth > MAX_ROUTING_DEPTH:
            raise ImageError(f"{p.routing_depth} entries exceed the {MAX_ROUTING_DEPTH} an "
                             f"image supports", "Header, params.routing_depth")
        try:
            smap, emap = p.switch_map, p.endpoint_map
        except (ValueError, TypeError) as error:
            raise ImageError(str(error), "Header, params") from None
        if header is None:
            return
        if header.magic != MAGIC:
            raise ImageError(f"bad magic {header.magic!r}, expected {MAGIC!r}", "Header")
        if header.version != IMAGE_VERSION:
            raise ImageError(f"unknown format version {header.version}; this innet reads "
                             f"version {IMAGE_VERSION}", "Header")
        for what, recorded, actual in (("switch", header.switch_map_digest, smap.digest),
                                       ("endpoint", header.endpoint_map_digest, emap.digest)):
            if recorded != actual:
                raise ImageError(f"{what} register-map hash mismatch: the image was packed for "
                                 f"map {recorded[:16]}, its parameters give {actual[:16]} in "
                                 f"this innet", "Header")
        if header.fingerprint != image.fingerprint:
            raise ImageError(f"topology fingerprint mismatch: the header says "
                             f"{header.fingerprint[:16]}, the topology gives "
                             f"{image.fingerprint[:16]}", "Header")
        if header.target_count != image.target_count:
            raise ImageError(f"target count {header.target_count} is not twice the "
                             f"{image.nodes} nodes", "Header")
        try:
            actual = crc32(image)
        except ValueError as error:
            raise ImageError(str(error), "Image") from None
        if header.crc32 != actual:
            raise ImageError(f"CRC mismatch: the header says {header.crc32:#010x}, the content "
                             f"gives {actual:#010x}", "Header")

    def network(self) -> None:
        p, topo = self.image.params, self.topo
        if self.n < 1:
            raise ImageError("the topology has no nodes", "Topology")
        if topo.radix > p.radix:
            raise ImageError(f"switch radix {p.radix} is below the topology's maximum degree "
                             f"{topo.radix}", "Header, params.radix")
        if self.n > 1 << p.node_id_width:
            raise ImageError(f"{p.node_id_width} bits cannot name {self.n} nodes",
                             "Header, params.node_id_width")
        from innet.gen.routing import parse_failures

        image = self.image
        try:
            links, dead = parse_failures(topo, image.failed_links, image.failed_switches)
        except (ValueError, TypeError) as error:
            raise ImageError(str(error), "Topology, failures") from None
        self.failed_links, self.dead = set(links), set(dead)

    # -- 3. per-target writes ---------------------------------------------------------------

    def writes(self, t: int) -> None:
        image = self.image
        regmap = image.map(t)
        writes = image.writes[t]
        previous = -1
        for address, word in writes:
            for what, v in (("address", address), ("word", word)):
                if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 32:
                    raise self.fail(t, "", f"{what} {v!r:.20} is not a 32-bit word")
            if address == previous:
                reg = regmap.at(address)
                raise self.fail(t, reg.name if reg else f"{address:#x}",
                                f"address {address:#x} is written twice")
            if address < previous:
                raise self.fail(t, "", f"writes are not in ascending address order: "
                                f"{address:#x} after {previous:#x}")
            previous = address
        if image.kind(t) is Target.SWITCH:
            self.mask_bits(t, writes)
        try:
            values = regmap.unpack(writes)
        except ValueError as error:
            raise self.fail(t, "", str(error)) from None
        self.values.append(values)
        node = image.node(t)
        if "node_id" not in values:
            raise self.fail(t, "node_id", "not written; every target must be told its node id")
        if values["node_id"]["id"] != node:
            raise self.fail(t, "node_id.id", f"is {values['node_id']['id']}, but the target is "
                            f"node {node}")

    def mask_bits(self, t: int, writes) -> None:
        radix = self.image.params.radix
        regmap = self.image.map(t)
        for address, word in writes:
            reg = regmap.at(address)
            if reg is None or not reg.template.endswith(("req_in", "resp_out")):
                continue
            w = address - reg.address
            allowed = (((1 << (radix + 1)) - 1) >> (32 * w)) & 0xFFFF_FFFF
            extra = word & ~allowed
            if extra:
                bit = (extra & -extra).bit_length() - 1 + 32 * w
                raise self.fail(t, f"{reg.name}.ports", f"mask sets bit {bit}, beyond the "
                                f"local port {radix} of a radix-{radix} switch")

    # -- 4. switches ------------------------------------------------------------------------

    def switch(self, t: int) -> None:
        u = self.image.node(t)
        for c in range(self.image.params.collective_ids):
            self.coll(t, u, c)
        self.route_entries(t, u)

    def coll(self, t: int, u: int, c: int) -> None:
        radix = self.image.params.radix
        base = f"coll[{c}]"
        ctrl = self.get(t, f"{base}.ctrl")
        if not ctrl["enable"]:
            for name in ("ctrl", "req_in", "req_out", "resp_in", "resp_out"):
                fields = self.get(t, f"{base}.{name}")
                if any(fields.values()):
                    raise self.fail(t, f"{base}.{name}", f"is set while {base}.ctrl.enable is "
                                    f"0; a disabled collective id's registers must be zero")
            return
        try:
            check_supported(Op(ctrl["op"]), DType(ctrl["dtype"]))
        except ValueError as error:
            raise self.fail(t, f"{base}.ctrl.op", str(error)) from None
        for name in ("req_in", "resp_out"):
            for p in mask_ports(self.get(t, f"{base}.{name}")["ports"], radix):
                if p != LOCAL and not self.has_port(u, p):
                    raise self.fail(t, f"{base}.{name}.ports", f"names port {p}, but node {u} "
                                    f"has {self.port_list(u)} and local")
        req_out = self.get(t, f"{base}.req_out")
        resp_in = self.get(t, f"{base}.resp_in")["port"]
        if req_out["root"]:
            if req_out["port"]:
                raise self.fail(t, f"{base}.req_out", f"root flag and output port "
                                f"{req_out['port']} both set; at the root the port must be 0")
            if resp_in:
                raise self.fail(t, f"{base}.resp_in.port", f"is {resp_in} at the root, where "
                                f"it is unused and must be 0")
            return
        masks = {"req_out": ("req_in", "sends no requests"),
                 "resp_in": ("resp_out", "passes no response")}
        idle = 0
        for name, port in (("req_out", req_out["port"]), ("resp_in", resp_in)):
            mask, what = masks[name]
            if not self.get(t, f"{base}.{mask}")["ports"]:
                idle += 1
                if port:
                    raise self.fail(t, f"{base}.{name}.port", f"is {port}, but the switch "
                                    f"{what} ({mask} is empty): it must be 0")
                continue
            if port == radix:
                raise self.fail(t, f"{base}.{name}.port", "is the local port; it must be a "
                                "network port toward the root")
            if not self.has_port(u, port):
                raise self.fail(t, f"{base}.{name}.port", f"names port {port}, but node {u} "
                                f"has {self.port_list(u)}")
        if idle == 2:
            raise self.fail(t, f"{base}.ctrl.enable", "is set, but the switch takes no request "
                            "and passes no response")

    def route_entries(self, t: int, u: int) -> None:
        radix = self.image.params.radix
        for d in range(self.image.params.routing_depth):
            name = f"route[{d}]"
            if name not in self.values[t]:
                continue
            entry = self.values[t][name]
            if not entry["valid"]:
                if entry["port"]:
                    raise self.fail(t, f"{name}.port", f"is {entry['port']} in an entry "
                                    f"whose valid flag is 0")
                continue
            if d >= self.n:
                raise self.fail(t, name, f"routes destination {d}, but the network has "
                                f"{self.n} nodes (0..{self.n - 1})")
            port = entry["port"]
            if d == u and port != radix:
                raise self.fail(t, f"{name}.port", f"is {port}, but destination {d} is this "
                                f"node: it must be the local port {radix}")
            if d != u and port == radix:
                raise self.fail(t, f"{name}.port", f"is the local port, but destination {d} "
                                f"is not this node")
            if d != u and not self.has_port(u, port):
                raise self.fail(t, f"{name}.port", f"names port {port}, but node {u} has "
                                f"{self.port_list(u)}")

    def next_hops(self) -> list[dict[int, int]]:
        """``hops[u][d]``: the node switch ``u`` forwards destination ``d`` to (``u`` if local).

        A failed switch forwards nothing; no route may lead over a failed link or into a failed
        switch.
        """
        hops: list[dict[int, int]] = []
        for u in range(self.n):
            table: dict[int, int] = {}
            hops.append(table)
            if u in self.dead:
                continue
            for name, entry in self.values[u].items():
                if name.startswith("route[") and entry["valid"]:
                    d = int(name[6:-1])
                    v = u if d == u else int(self.peer[u, entry["port"]])
                    if (min(u, v), max(u, v)) in self.failed_links:
                        raise self.fail(u, f"{name}.port", f"leads over the failed link "
                                        f"{min(u, v)}-{max(u, v)}")
                    if v in self.dead and v != u:
                        raise self.fail(u, f"{name}.port", f"leads into the failed switch {v}")
                    table[d] = v
        return hops

    def routes(self) -> None:
        hops = self.next_hops()
        for d in range(self.n):
            state = {d: 2} if d in hops[d] else {}
            for start in range(self.n):
                if d not in hops[start] or state.get(start) == 2:
                    continue
                path, u = [], start
                while state.get(u) != 2:
                    if state.get(u) == 1:
                        loop = [*path[path.index(u):], u]
                        raise self.fail(loop[0], f"route[{d}]", "routing loop " +
                                        " -> ".join(map(str, loop)))
                    if d not in hops[u]:
                        prev = path[-1]
                        raise self.fail(prev, f"route[{d}]", f"forwards to node {u}, which "
                                        f"has no route to node {d}")
                    state[u] = 1
                    path.append(u)
                    u = hops[u][d]
                for v in path:
                    state[v] = 2
        self.hops = hops

    # -- 5. collectives ---------------------------------------------------------------------

    def configs(self, c: int) -> dict[int, CollectiveConfig]:
        radix = self.image.params.radix
        out = {}
        for u in range(self.n):
            base = f"coll[{c}]"
            ctrl = self.get(u, f"{base}.ctrl")
            if not ctrl["enable"]:
                continue
            req_out = self.get(u, f"{base}.req_out")
            root = bool(req_out["root"])
            req_in = frozenset(mask_ports(self.get(u, f"{base}.req_in")["ports"], radix))
            resp_out = frozenset(mask_ports(self.get(u, f"{base}.resp_out")["ports"], radix))
            out[u] = CollectiveConfig(
                node=u, root=root, req_in=req_in,
                req_out=None if root or not req_in else req_out["port"],
                resp_in=None if root or not resp_out else self.get(u, f"{base}.resp_in")["port"],
                resp_out=resp_out, op=Op(ctrl["op"]), dtype=DType(ctrl["dtype"]))
        return out

    def collective(self, c: int) -> dict[int, CollectiveConfig]:
        """Check one collective id: its trees link by link, then each tree's embedding.

        Several embeddings may share a collective id when they share no switch (a switch has
        one register copy per id) and no link: the configured switches then form several
        trees, each with its own root.
        """
        cfg = self.configs(c)
        if not cfg:
            return cfg
        base = f"coll[{c}]"
        self.request_links(c, cfg)
        self.response_links(c, cfg)
        self.acyclic(c, cfg, "req_out", lambda x: x.req_in, "request")
        self.acyclic(c, cfg, "resp_in", lambda x: x.resp_out, "response")
        # Every switch that takes requests (passes responses) points on to a configured switch
        # that does too, and those chains are acyclic: each tree ends in exactly one root.
        trees = self.trees(cfg)
        roots = [next(u for u in tree if cfg[u].root) for tree in trees]
        for tree, root in zip(trees, roots, strict=True):
            head = cfg[root]
            for u in tree:
                x = cfg[u]
                if (x.op, x.dtype) != (head.op, head.dtype):
                    raise self.fail(u, f"{base}.ctrl", f"operation {x.op.name.lower()} on "
                                    f"{x.dtype.name.lower()} differs from the root's (node "
                                    f"{root}) {head.op.name.lower()} on "
                                    f"{head.dtype.name.lower()}")
            if not head.req_in:
                raise self.fail(root, f"{base}.req_in.ports", "the root takes no input")
            if not head.resp_out:
                raise self.fail(root, f"{base}.resp_out.ports", "the root sends the result "
                                "nowhere")
        built = [self.embedding(c, {u: cfg[u] for u in tree}, root)
                 for tree, root in zip(trees, roots, strict=True)]
        self.embeddings.extend(built)  # disjoint: each switch is in one tree
        return cfg

    def embedding(self, c: int, cfg: dict[int, CollectiveConfig], root: int) -> Any:
        """Rebuild the collective id's embedding and run the embedding verifier on it."""
        from innet.gen.embed import SwitchConfig, reconstruct, verify

        head = cfg[root]
        switches = [SwitchConfig(u, x.req_in, x.req_out, x.resp_in, x.resp_out)
                    for u, x in sorted(cfg.items())]
        where = f"Collective id {c}, coll[{c}]"
        try:
            embedding = reconstruct(self.topo, switches, op=head.op, dtype=head.dtype,
                                    collective_id=c, failed_links=self.image.failed_links,
                                    failed_switches=self.image.failed_switches)
            if embedding.root != root:
                raise ValueError(f"the root flag is set at node {root}, but the tree's root is "
                                 f"node {embedding.root}")
            verify(embedding, self.topo)
        except ValueError as error:
            named = re.match(r"(?:Switch|Participant|Root) (\d+)\b", str(error))
            if named and int(named[1]) < self.n:
                t = int(named[1])
                raise ImageError(str(error), f"{self.image.name(t)}, coll[{c}]", target=t,
                                 register=None) from None
            raise ImageError(str(error), where) from None
        return embedding

    def trees(self, cfg: dict[int, CollectiveConfig]) -> list[list[int]]:
        """The configured switches grouped into trees (joined by request and response links,
        which the link checks have made consistent), each ascending, by smallest node."""
        group = {u: u for u in cfg}

        def find(u: int) -> int:
            while group[u] != u:
                group[u] = group[group[u]]
                u = group[u]
            return u

        for u, x in cfg.items():
            for port in (x.req_out, x.resp_in):
                if port is not None:
                    group[find(u)] = find(self.neighbour(u, port)[0])
        trees: dict[int, list[int]] = {}
        for u in sorted(cfg):
            trees.setdefault(find(u), []).append(u)
        return sorted(trees.values())

    def request_links(self, c: int, cfg: dict[int, CollectiveConfig]) -> None:
        base = f"coll[{c}]"
        for v, x in sorted(cfg.items()):
            for p in sorted(x.req_in - {LOCAL}):
                w, wp = self.neighbour(v, p)
                where = f"{base}.req_in.ports"
                child = cfg.get(w)
                if child is None:
                    raise self.fail(v, where, f"takes requests on port {p} from node {w}, "
                                    f"which is not configured for collective id {c}")
                if child.root:
                    raise self.fail(v, where, f"takes requests on port {p} from node {w}, "
                                    f"which is the root")
                if child.req_out is None:
                    raise self.fail(v, where, f"takes requests on port {p} from node {w}, "
                                    f"which sends none")
                if child.req_out != wp:
                    z, zp = self.neighbour(w, child.req_out)
                    if z in cfg and zp in cfg[z].req_in:
                        raise self.fail(v, where, f"takes node {w}'s requests on port {p}, "
                                        f"but node {z} takes them too: node {w} would "
                                        f"contribute twice")
                    raise self.fail(v, where, f"takes node {w}'s requests on port {p}, but "
                                    f"node {w} sends them to node {z}")
        for w, x in sorted(cfg.items()):
            if x.root or not x.req_in:
                continue
            z, zp = self.neighbour(w, x.req_out)
            if z not in cfg or zp not in cfg[z].req_in:
                raise self.fail(w, f"{base}.req_out.port", f"sends requests to node {z} on "
                                f"port {x.req_out}, but node {z} does not take them on its "
                                f"port {zp}")

    def response_links(self, c: int, cfg: dict[int, CollectiveConfig]) -> None:
        base = f"coll[{c}]"
        for v, x in sorted(cfg.items()):
            for q in sorted(x.resp_out - {LOCAL}):
                y, yq = self.neighbour(v, q)
                where = f"{base}.resp_out.ports"
                child = cfg.get(y)
                if child is None:
                    raise self.fail(v, where, f"multicasts on port {q} to node {y}, which is "
                                    f"not configured for collective id {c}")
                if child.root:
                    raise self.fail(v, where, f"multicasts on port {q} to node {y}, which is "
                                    f"the root")
                if child.resp_in is None:
                    raise self.fail(v, where, f"multicasts on port {q} to node {y}, which "
                                    f"passes no response")
                if child.resp_in != yq:
                    z, _ = self.neighbour(y, child.resp_in)
                    raise self.fail(v, where, f"multicasts on port {q} to node {y}, but node "
                                    f"{y} takes its response from node {z}")
        for y, x in sorted(cfg.items()):
            if x.root or not x.resp_out:
                continue
            z, zq = self.neighbour(y, x.resp_in)
            if z not in cfg or zq not in cfg[z].resp_out:
                raise self.fail(y, f"{base}.resp_in.port", f"expects the response from node "
                                f"{z} on port {x.resp_in}, but node {z} does not send it there")

    def acyclic(self, c: int, cfg: dict[int, CollectiveConfig], register: str, active,
                what: str) -> None:
        done: set[int] = set()
        for start in sorted(u for u, x in cfg.items() if active(x)):
            path: list[int] = []
            seen: dict[int, int] = {}
            u = start
            while u not in done and not cfg[u].root:
                if u in seen:
                    loop = [*path[seen[u]:], u]
                    raise self.fail(loop[0], f"coll[{c}].{register}", f"the {what} tree of "
                                    f"collective id {c} has a cycle: nodes " +
                                    " -> ".join(map(str, loop)))
                seen[u] = len(path)
                path.append(u)
                port = cfg[u].req_out if register == "req_out" else cfg[u].resp_in
                u = self.neighbour(u, port)[0]
            done.update(path)

    # -- 6. endpoints -----------------------------------------------------------------------

    def endpoint(self, t: int) -> None:
        u = self.image.node(t)
        depth = self.image.params.vector_depth
        base, length = self.get(t, "vec_base")["index"], self.get(t, "vec_len")["count"]
        if base + length > depth:
            raise self.fail(t, "vec_len.count", f"the vector [{base}, {base + length}) runs past "
                            f"the end of the {depth}-element vector memory")
        cfg = self.get(t, "engine.cfg")
        steps = cfg["steps"]
        if steps:
            try:
                check_supported(Op(cfg["op"]), DType(cfg["dtype"]))
            except ValueError as error:
                raise self.fail(t, "engine.cfg.op", str(error)) from None
        for name in self.values[t]:
            if name.startswith("step[") and int(name[5:name.index("]")]) >= steps:
                raise self.fail(t, name.split(".")[0], f"is written, but engine.cfg.steps is "
                                f"{steps}")
        for s in range(steps):
            self.step(t, u, s, length)
        for name in ("coll.cmd", "coll.count"):
            if name in self.values[t]:
                self.command(t, u, length)
                break

    def step(self, t: int, u: int, s: int, length: int) -> None:
        at = f"step[{s}]"
        flags = self.get(t, f"{at}.flags")
        for way in ("send", "recv"):
            peer = self.get(t, f"{at}.{way}_peer")["node"]
            first = self.get(t, f"{at}.{way}_first")["index"]
            count = self.get(t, f"{at}.{way}_count")["count"]
            if not flags[way]:
                for reg, value in ((f"{way}_peer", peer), (f"{way}_first", first),
                                   (f"{way}_count", count)):
                    if value:
                        raise self.fail(t, f"{at}.{reg}", f"is {value}, but the {way} flag is "
                                        f"clear")
                continue
            if peer >= self.n:
                raise self.fail(t, f"{at}.{way}_peer.node", f"names node {peer}, but the "
                                f"network has {self.n} nodes (0..{self.n - 1})")
            if peer == u:
                raise self.fail(t, f"{at}.{way}_peer.node", f"names node {u}, this endpoint "
                                f"itself")
            if count == 0:
                raise self.fail(t, f"{at}.{way}_count.count", f"is 0 while the {way} flag is "
                                f"set")
            if first + count > length:
                raise self.fail(t, f"{at}.{way}_first", f"the {way} range [{first}, "
                                f"{first + count}) runs past the vector end {length} "
                                f"(vec_len)")
        if flags["reduce"] and not flags["recv"]:
            raise self.fail(t, f"{at}.flags.reduce", "is set on a step that receives nothing")

    def command(self, t: int, u: int, length: int) -> None:
        cmd = self.get(t, "coll.cmd")
        count = self.get(t, "coll.count")["count"]
        if count > length:
            raise self.fail(t, "coll.count.count", f"is {count}, more than the vector's "
                            f"{length} elements (vec_len)")
        c = cmd["cid"]
        if c >= self.image.params.collective_ids:
            return  # the map's field range already rejects it
        cfg = self.configs_cache.get(c, {}).get(u)
        if cfg is None or LOCAL not in cfg.req_in:
            raise self.fail(t, "coll.cmd.cid", f"names collective id {c}, but switch {u} takes "
                            f"no local input for it")
        if (cmd["op"], cmd["dtype"]) != (cfg.op, cfg.dtype):
            raise self.fail(t, "coll.cmd", f"operation {Op(cmd['op']).name.lower()} on "
                            f"{DType(cmd['dtype']).name.lower()} differs from switch {u}'s "
                            f"{cfg.op.name.lower()} on {cfg.dtype.name.lower()} for collective "
                            f"id {c}")

    def tables(self) -> None:
        """Every send matched by the peer's receive of the same elements in the same entry;
        routes to the peers."""
        ep = list(self.image.endpoints())
        steps = [self.get(t, "engine.cfg")["steps"] for t in ep]
        ops = {}
        for r, t in enumerate(ep):
            if steps[r]:
                cfg = self.get(t, "engine.cfg")
                ops.setdefault((cfg["op"], cfg["dtype"]), r)
        if len(ops) > 1:
            (a, ra), (b, rb) = list(ops.items())[:2]
            raise self.fail(ep[rb], "engine.cfg", f"operation {Op(b[0]).name.lower()} on "
                            f"{DType(b[1]).name.lower()} differs from endpoint {ra}'s "
                            f"{Op(a[0]).name.lower()} on {DType(a[1]).name.lower()}")

        def side(r: int, k: int, way: str) -> tuple[int, int, int, int] | None:
            """Endpoint ``r``'s step ``k`` one way: (peer, first, count, collective id)."""
            if k >= steps[r]:
                return None
            t = ep[r]
            flags = self.get(t, f"step[{k}].flags")
            if not flags[way]:
                return None
            return (self.get(t, f"step[{k}].{way}_peer")["node"],
                    self.get(t, f"step[{k}].{way}_first")["index"],
                    self.get(t, f"step[{k}].{way}_count")["count"], flags["cid"])

        def block(first: int, count: int, cid: int) -> str:
            return f"{count} elements [{first}, {first + count}) of collective {cid}"

        # A block is sent from and received into the same elements of the vector (each
        # endpoint's element indices count from its own vec_base).
        for r in range(self.n):
            for k in range(steps[r]):
                for way, other, verb, prep in (("send", "recv", "sends", "to"),
                                               ("recv", "send", "receives", "from")):
                    mine = side(r, k, way)
                    if mine is None:
                        continue
                    q, first, count, cid = mine
                    theirs = side(q, k, other)
                    if theirs != (r, first, count, cid):
                        what = ("nothing" if theirs is None else
                                f"{block(*theirs[1:])} "
                                f"{'from' if other == 'recv' else 'to'} node {theirs[0]}")
                        theirs_verb = "receives" if other == "recv" else "sends"
                        raise self.fail(ep[r], f"step[{k}].{way}_peer",
                                        f"{verb} {block(first, count, cid)} {prep} node {q}, "
                                        f"but endpoint {q} step[{k}] {theirs_verb} {what}")
                    if way == "send" and q not in self.hops[r]:
                        raise self.fail(ep[r], f"step[{k}].send_peer", f"sends to node {q}, "
                                        f"but switch {r} has no route to node {q}")

    # -- driver -----------------------------------------------------------------------------

    def run(self, header: Header | None) -> None:
        self.header(header)
        self.network()
        for t in range(self.image.target_count):
            self.writes(t)
        for t in self.image.switches():
            self.switch(t)
        self.routes()
        self.configs_cache = {c: self.collective(c)
                              for c in range(self.image.params.collective_ids)}
        for t in self.image.endpoints():
            self.endpoint(t)
        self.tables()


def validate(image: Image, header: Header | None = None) -> None:
    """Check an image completely (see the module documentation).

    Parameters
    ----------
    image : Image
        The content.
    header : Header, optional
        The header as an encoding recorded it; checked against the content.

    Raises
    ------
    ImageError
        On the first problem found, naming the target, register or field, and the reason.
    """
    if header is not None and not isinstance(header, Header):
        raise TypeError(f"Header must be a Header, not {header!r:.60}")
    _Check(image).run(header)


def embeddings(image: Image) -> list[Any]:
    """The in-network collectives an image configures, as :class:`innet.gen.embed.Embedding`
    objects rebuilt from the switch registers and verified, ordered by collective id and then
    by their smallest switch.

    Raises
    ------
    ImageError
        If the image does not validate.
    """
    check = _Check(image)
    check.run(None)
    return list(check.embeddings)


def collective_configs(image: Image, collective_id: int) -> dict[int, CollectiveConfig]:
    """The switches configured for a collective id, by node, decoded from their registers.

    Raises
    ------
    ImageError
        If the image does not validate.
    TypeError, ValueError
        If ``collective_id`` is not an id of the image's switches.
    """
    check = _Check(image)
    check_int("Collective id", collective_id, low=0, high=image.params.collective_ids - 1)
    check.run(None)
    return check.configs_cache.get(collective_id, {})
