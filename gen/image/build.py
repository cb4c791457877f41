"""Builders: from a topology, routes, collective configurations and a schedule to an image.

An image built here is a *complete* configuration: every switch gets its node id, every
collective id's registers (zero where the id is not configured on that switch) and every
routing-table entry (``valid = 0`` where there is no route); every endpoint gets its node id,
vector base and length, the step-engine configuration and every entry of its step table. A
loader can program it without relying on reset values. The endpoints' in-network command
registers (``coll.*``) are run-time commands and are not written.

Switch registers follow PIUMA ("Switch Architecture: Configuration Registers", "Multiple
In-network Collectives"); endpoint step tables hold the schedule's entries for rank ``r`` (on
node ``r``) in its step-major execution order (:meth:`innet.gen.swing.Schedule.table`), one
table entry per schedule entry, so entry ``k`` of every endpoint is the same ``(step,
collective)`` slot and a send in entry ``k`` is received in the peer's entry ``k``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from innet.gen.checks import check_int
from innet.gen.image.model import Image, MapParams
from innet.gen.image.validate import CollectiveConfig, validate
from innet.gen.ops import DType, Op, check_supported
from innet.gen.regmap import port_code, port_mask
from innet.gen.regmap.switch import COLL_BURST, COLL_TIMEOUT
from innet.gen.topology import LOCAL, check_topology

__all__ = [
    "build_image",
    "embedding_configs",
    "endpoint_registers",
    "route_table",
    "switch_registers",
]

_UNROUTED = -2  # innet.gen.routing.UNREACHABLE; any negative entry but LOCAL means no route

Collectives = Mapping[int, Mapping[int, CollectiveConfig]]


def route_table(routes: Any, nodes: int) -> np.ndarray:
    """A routing as an ``(nodes, nodes)`` int64 table: ``table[u, d]`` = output port of ``u``
    toward ``d``, ``LOCAL`` (-1) on the diagonal, any other negative value for no route.

    ``routes`` is a :class:`innet.gen.routing.Routing` (anything with a ``table()`` method) or
    an array-like of that shape.

    Raises
    ------
    TypeError
        If the table does not hold integers.
    ValueError
        If it has the wrong shape.
    """
    table = routes.table() if hasattr(routes, "table") else routes
    array = np.asarray(table)
    if array.dtype == object or array.dtype == bool or not (
            array.size == 0 or np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"Routing table must hold integer ports, not {array.dtype}")
    if array.shape != (nodes, nodes):
        raise ValueError(f"Routing table must have shape ({nodes}, {nodes}), not "
                         f"{array.shape}")
    return array.astype(np.int64)


def _mask(ports: Iterable[int], radix: int) -> int:
    return port_mask(ports, radix)


def switch_registers(node: int, params: MapParams, *, routes: np.ndarray | None = None,
                     collectives: Collectives | None = None,
                     coll_burst: int = COLL_BURST,
                     coll_timeout: int = COLL_TIMEOUT) -> dict[str, dict[str, Any]]:
    """The register values of one switch (for :meth:`Map.pack <innet.gen.regmap.Map.pack>`).

    Parameters
    ----------
    node : int
        The switch's node id.
    params : MapParams
        The map parameters.
    routes : array of int, optional
        :func:`route_table` output; row ``node`` is this switch's table. Without it every
        routing entry is invalid.
    collectives : mapping, optional
        ``collectives[cid][node]`` is this switch's :class:`CollectiveConfig` for collective id
        ``cid`` (absent: the id is not configured here).
    coll_burst : int
        The p2p floor (register ``coll_burst``): collective flits an output sends in a row while
        a p2p flit waits, at most; 0: no limit.
    coll_timeout : int
        The collective watchdog (register ``coll_timeout``): cycles a reducing id may wait for a
        missing contributor; 0: off.

    Raises
    ------
    ValueError
        If a port does not exist on a switch of this radix.
    """
    radix = params.radix
    values: dict[str, dict[str, Any]] = {"node_id": {"id": node},
                                         "coll_burst": {"cycles": coll_burst},
                                         "coll_timeout": {"cycles": coll_timeout}}
    for c in range(params.collective_ids):
        cfg = (collectives or {}).get(c, {}).get(node)
        base = f"coll[{c}]"
        values[f"{base}.abort"] = {}
        if cfg is None:
            for name in ("ctrl", "req_in", "req_out", "resp_in", "resp_out"):
                values[f"{base}.{name}"] = {}
            continue
        values[f"{base}.ctrl"] = {"enable": 1, "op": cfg.op, "dtype": cfg.dtype}
        values[f"{base}.req_in"] = {"ports": _mask(cfg.req_in, radix)}
        values[f"{base}.req_out"] = {"port": 0 if cfg.req_out is None
                                     else port_code(cfg.req_out, radix), "root": int(cfg.root)}
        values[f"{base}.resp_in"] = {"port": 0 if cfg.resp_in is None
                                     else port_code(cfg.resp_in, radix)}
        values[f"{base}.resp_out"] = {"ports": _mask(cfg.resp_out, radix)}
    row = routes[node] if routes is not None else ()
    for d in range(params.routing_depth):
        port = int(row[d]) if d < len(row) else _UNROUTED
        if port == LOCAL or port >= 0:
            values[f"route[{d}]"] = {"port": port_code(port, radix), "valid": 1}
        else:
            values[f"route[{d}]"] = {}
    return values


def endpoint_registers(node: int, params: MapParams, *, schedule: Any = None,
                       elements: int = 0, op: Op | str = Op.ADD,
                       dtype: DType | str = DType.INT32,
                       vec_base: int = 0) -> dict[str, dict[str, Any]]:
    """The register values of one endpoint (for :meth:`Map.pack <innet.gen.regmap.Map.pack>`).

    Parameters
    ----------
    node : int
        The endpoint's node id; with a schedule it runs rank ``node``.
    params : MapParams
        The map parameters.
    schedule : innet.gen.swing.Schedule, optional
        The host-style schedule. Its entries for rank ``node``, in execution order, become the
        step table (an endpoint beyond the schedule's ranks gets an empty table), but for the
        entries of a step and collective at which no rank moves an element of the
        ``elements``-element vector, left out of every table alike
        (:meth:`Schedule.table <innet.gen.swing.Schedule.table>`). Block ranges become element
        ranges of the vector (:meth:`Schedule.elements <innet.gen.swing.Schedule.elements>`); a
        range of no element leaves the step's send or receive flag clear, and the peer then
        does the same.
    elements : int
        Vector length (``vec_len``).
    op, dtype : Op, DType or str
        The step engine's reduction.
    vec_base : int
        First element of the vector in the endpoint's memory.

    Raises
    ------
    ValueError
        If the step table exceeds the step depth, a collective the collective ids, the vector
        the vector depth, or the operation is not defined on the data type.
    """
    op, dtype = Op.parse(op), DType.parse(dtype)
    check_supported(op, dtype)
    if vec_base + elements > params.vector_depth:
        raise ValueError(f"A vector of {elements} elements at base {vec_base} does not fit in "
                         f"the vector depth {params.vector_depth}")
    values: dict[str, dict[str, Any]] = {
        "node_id": {"id": node}, "vec_base": {"index": vec_base},
        "vec_len": {"count": elements}}
    table = (schedule.table(node, elements) if schedule is not None and node < schedule.ranks
             else ())
    if len(table) > params.step_depth:
        raise ValueError(f"Endpoint {node}'s step table of {len(table)} entries exceeds the "
                         f"step depth {params.step_depth}")
    values["engine.cfg"] = {"steps": len(table), "op": op, "dtype": dtype}
    for k, entry in enumerate(table):
        at = f"step[{k}]"
        if entry.collective >= params.collective_ids:
            raise ValueError(f"Schedule collective {entry.collective} needs more than the "
                             f"{params.collective_ids} collective ids")
        flags = {"send": 0, "recv": 0, "reduce": 0, "cid": entry.collective}
        for way, peer, blocks in (("send", entry.send_peer, entry.send),
                                  ("recv", entry.recv_peer, entry.recv)):
            lo, hi = (schedule.elements(entry.collective, blocks, elements)
                      if peer is not None else (0, 0))
            active = peer is not None and hi > lo
            flags[way] = int(active)
            values[f"{at}.{way}_peer"] = {"node": peer if active else 0}
            values[f"{at}.{way}_first"] = {"index": lo if active else 0}
            values[f"{at}.{way}_count"] = {"count": hi - lo if active else 0}
        flags["reduce"] = int(entry.reduce and bool(flags["recv"]))
        values[f"{at}.flags"] = flags
    return values


def embedding_configs(embedding: Any) -> dict[int, CollectiveConfig]:
    """The switch configurations of an :class:`innet.gen.embed.Embedding`, by node.

    Uses the contract's members only: ``op``, ``dtype``, ``root`` and ``switches`` (each with
    ``node``, ``req_in``, ``req_out``, ``resp_in``, ``resp_out``).

    Raises
    ------
    TypeError
        If ``embedding`` lacks one of them.
    ValueError
        If a switch is listed twice.
    """
    try:
        op, dtype = Op.parse(embedding.op), DType.parse(embedding.dtype)
        root, switches = embedding.root, tuple(embedding.switches)
        out: dict[int, CollectiveConfig] = {}
        for s in switches:
            if s.node in out:
                raise ValueError(f"Collective id {embedding.collective_id}: switch {s.node} is "
                                 f"configured twice")
            out[s.node] = CollectiveConfig(
                node=s.node, root=s.node == root, req_in=frozenset(s.req_in),
                req_out=s.req_out, resp_in=s.resp_in, resp_out=frozenset(s.resp_out),
                op=op, dtype=dtype)
    except AttributeError as missing:
        raise TypeError(f"Expected an Embedding, not {embedding!r:.60} ({missing})") from None
    return out


def _collectives(embeddings: Iterable[Any], params: MapParams | None = None
                 ) -> dict[int, dict[int, CollectiveConfig]]:
    """Switch configurations by collective id and node. Several embeddings may share an id
    if they share no switch (a switch has one register copy per id)."""
    out: dict[int, dict[int, CollectiveConfig]] = {}
    for embedding in embeddings:
        c = getattr(embedding, "collective_id", None)
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise TypeError(f"Expected an Embedding with a collective id, not "
                            f"{embedding!r:.60}")
        if params is not None and c >= params.collective_ids:
            raise ValueError(f"Collective id {c} needs at least {c + 1} collective ids, not "
                             f"{params.collective_ids}")
        configs = out.setdefault(c, {})
        for u, cfg in embedding_configs(embedding).items():
            if u in configs:
                raise ValueError(f"Collective id {c}: switch {u} is configured by two "
                                 f"embeddings, but it has one register copy per id")
            configs[u] = cfg
    return out


def build_image(topology: Any, *, routes: Any = None, embeddings: Iterable[Any] = (),
                schedule: Any = None, elements: int = 0, op: Op | str = Op.ADD,
                dtype: DType | str = DType.INT32, vec_base: int = 0,
                radix: int | None = None, collective_ids: int | None = None,
                routing_depth: int | None = None, step_depth: int | None = None,
                vector_depth: int | None = None, node_id_width: int | None = None,
                coll_burst: int = COLL_BURST, coll_timeout: int = COLL_TIMEOUT,
                failed_links: Iterable[Any] = (),
                failed_switches: Iterable[int] = (), check_deadlock: bool = True) -> Image:
    """Build and validate the configuration image of a whole network, and check it is free of
    deadlock.

    Parameters
    ----------
    topology : Topology
        The network; target ``n`` is the switch of node ``n``, target ``N + n`` its endpoint.
    routes : Routing or array-like, optional
        p2p routing (see :func:`route_table`).
    embeddings : iterable of innet.gen.embed.Embedding
        In-network collectives. Several may share a collective id if they share no switch and
        no link (:func:`innet.gen.embed.assign_collective_ids` packs them so).
    schedule : innet.gen.swing.Schedule, optional
        Host-style schedule for the endpoints' step tables (rank ``r`` on node ``r``).
    elements, op, dtype, vec_base
        The endpoints' vector length and base, and the step engine's reduction.
    coll_burst : int
        Every switch's p2p floor: an output sends at most this many collective flits in a row
        while a p2p flit waits for it (0: no limit); default
        :data:`innet.gen.regmap.switch.COLL_BURST`.
    coll_timeout : int
        Every switch's collective watchdog: cycles a reducing id may wait for a missing
        contributor before ``errors.coll_timeout`` (0: off); default
        :data:`innet.gen.regmap.switch.COLL_TIMEOUT`.
    failed_links, failed_switches : iterable
        Links ``(u, v)`` and switches that have failed, recorded in the image (with those the
        routing and the embeddings were made around) so that validation checks the routes and
        trees against them.
    radix, collective_ids, routing_depth, step_depth, vector_depth, node_id_width : int
        Map parameters; by default the smallest that hold the content: the topology's radix,
        one more than the largest collective id, or the schedule's collectives (at least 1), the
        node count, the longest step table (at least 1), ``vec_base + elements`` (at least 1)
        and the bits of the routing depth's node ids (as the RTL has them, so that the image's
        map digests are those of the hardware built with the same parameters).
    check_deadlock : bool
        Refuse a configuration whose channel-dependency graph has a cycle (Dally and Seitz;
        :func:`innet.gen.deadlock.check` of :func:`innet.gen.deadlock.image_graph`, with as
        many p2p VCs as the topology's diameter, so that the image is free of deadlock on any
        network it loads on). ``False`` builds it anyway, to examine it.

    Raises
    ------
    ValueError
        If the content does not fit the parameters, or the image would not validate (an
        :class:`~innet.gen.image.model.ImageError` naming the target and register).
    innet.gen.deadlock.DeadlockError
        A ``ValueError``: the configuration can deadlock; the message names the cycle
        (switches, ports, VCs, and the routes or collective ids that make it), ``.cycle``
        holds it.
    TypeError
        If an argument has the wrong type.
    """
    check_topology(topology)
    n = topology.nodes
    embeddings = tuple(embeddings)
    fingerprints = {getattr(e, "topology", topology.fingerprint) for e in embeddings}
    if fingerprints - {topology.fingerprint}:
        raise ValueError("An embedding was made for another topology (its fingerprint "
                         "differs)")
    collectives = _collectives(embeddings)
    wanted_ids = max([c + 1 for c in collectives]
                     + [schedule.collectives if schedule is not None else 0, 1])
    steps = schedule.steps * schedule.collectives if schedule is not None else 0
    elements = check_int("Elements", elements, low=0)
    vec_base = check_int("Vector base", vec_base, low=0)
    params = MapParams(
        radix=topology.radix if radix is None else radix,
        collective_ids=wanted_ids if collective_ids is None else collective_ids,
        routing_depth=max(n, 1) if routing_depth is None else routing_depth,
        step_depth=max(steps, 1) if step_depth is None else step_depth,
        vector_depth=max(vec_base + elements, 1) if vector_depth is None else vector_depth,
        node_id_width=node_id_width)
    smap, emap = params.switch_map, params.endpoint_map
    if params.routing_depth < n:
        raise ValueError(f"Routing depth {params.routing_depth} cannot hold routes to "
                         f"{n} nodes")
    if topology.radix > params.radix:
        raise ValueError(f"Radix {params.radix} is below the topology's maximum degree "
                         f"{topology.radix}")
    collectives = _collectives(embeddings, params)
    table = route_table(routes, n) if routes is not None else None
    if schedule is not None:
        if schedule.ranks > n:
            raise ValueError(f"The schedule has {schedule.ranks} ranks, but the network has "
                             f"{n} nodes")
        if schedule.collectives > params.collective_ids:
            raise ValueError(f"The schedule has {schedule.collectives} collectives, more than "
                             f"the {params.collective_ids} collective ids")
    writes = [smap.pack(switch_registers(u, params, routes=table, collectives=collectives,
                                         coll_burst=coll_burst, coll_timeout=coll_timeout))
              for u in range(n)]
    writes += [emap.pack(endpoint_registers(u, params, schedule=schedule, elements=elements,
                                            op=op, dtype=dtype, vec_base=vec_base))
               for u in range(n)]
    links, dead = list(failed_links), list(failed_switches)
    for source in (routes, *embeddings):
        links += list(getattr(source, "failed_links", ()))
        dead += list(getattr(source, "failed_switches", ()))
    from innet.gen.routing import parse_failures

    links, dead = parse_failures(topology, links, dead)
    image = Image(params, topology, tuple(tuple(w) for w in writes), links, dead)
    validate(image)
    if check_deadlock:
        from innet.gen.deadlock import check, image_graph

        check(image_graph(image))
    return image
