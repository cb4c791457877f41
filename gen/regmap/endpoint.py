"""The endpoint register map: node id, the in-network collective command, and the step table.

The endpoint sits on a switch's local port and owns a local vector memory. It runs a collective
in one of two ways (see issue "hw: the endpoint"):

- in-network (PIUMA, "Request-response Mechanism"): a command names the collective id, the
  element count, the operation and the data type; the endpoint streams ``count`` elements from
  ``vec_base`` as request flits and writes the response flits back to their element index;
- host-style (Swing, recursive doubling, ring): the step engine runs the step table, where each
  step sends an element range to a peer and receives an element range from a (possibly
  different) peer over the p2p channel, then reduces it into the vector or copies it.

Element ranges in the step table are relative to ``vec_base`` and must lie inside
``vec_len`` (the image decoder checks it).
"""

from __future__ import annotations

import enum

from innet.gen.ops import DType, Op
from innet.gen.regmap.addrmap import Map
from innet.gen.regmap.model import (
    Access,
    Array,
    Cluster,
    Field,
    Register,
    Target,
    check_param,
)
from innet.gen.regmap.switch import MAX_COLLECTIVE_IDS, ident_register, param_register

__all__ = ["MAX_STEP_DEPTH", "MAX_VECTOR_DEPTH", "CollectiveMode", "endpoint_map"]

#: Largest step-table depth (the step count shares a register with the operation).
MAX_STEP_DEPTH = (1 << 16) - 1

#: Largest vector memory of an endpoint, in 32-bit elements (4 MiB).
MAX_VECTOR_DEPTH = 1 << 20

RO, WO = Access.RO, Access.WO


class CollectiveMode(enum.IntEnum):
    """What the endpoint does for an in-network command (the ``coll.cmd.mode`` field).

    The switches' registers decide how requests are combined and where responses go (PIUMA,
    "Request-response Mechanism"); the endpoint only needs to know whether its node contributes
    requests and whether the result is delivered to it (see :mod:`innet.gen.embed.types`).
    """

    #: Send ``count`` request flits and receive ``count`` responses: allreduce, the root of a
    #: reduce, the root of a broadcast.
    BOTH = 0
    #: Send ``count`` requests, expect no response: the other contributors of a reduce.
    SEND = 1
    #: Send nothing, receive ``count`` responses: the other participants of a broadcast.
    RECV = 2
    #: One request flit (element 0, payload 0) and one response, no vector access: a barrier.
    BARRIER = 3


def _status(desc: str) -> Register:
    return Register("status", [
        Field("busy", 1, RO, volatile=True, desc="running"),
        Field("done", 1, RO, volatile=True, desc="finished since the last start"),
        Field("error", 1, RO, volatile=True, desc="stopped on an error"),
    ], desc=desc)


def _count(name: str, width: int, most: int, desc: str) -> Register:
    return Register(name, [Field("count", width, RO, volatile=True, max=most, desc=desc)],
                    desc=desc)


def _op_dtype() -> list[Field]:
    return [Field("op", 4, offset=16, enum=Op, desc="reduction operation (innet.gen.ops.Op)"),
            Field("dtype", 2, offset=20, enum=DType,
                  desc="element data type (innet.gen.ops.DType)")]


def endpoint_map(collective_ids: int, step_depth: int, vector_depth: int, *,
                 node_id_width: int = 16) -> Map:
    """The register map of an endpoint.

    Layout (word addresses, every block naturally aligned, see :mod:`innet.gen.regmap.model`):

    - ``ident`` (0), then read-only build parameters ``collective_ids``, ``step_depth``,
      ``vector_depth``, ``node_id_width``; then ``node_id``, ``vec_base``, ``vec_len`` (RW).
    - ``coll``, the in-network collective: ``cmd`` (``cid``, ``op``, ``dtype``, ``mode``, a
      :class:`CollectiveMode`), ``count``
      (elements), ``ctrl.start`` (write 1 to start), ``status`` (``busy``, ``done``,
      ``error``), ``sent`` and ``received`` (request flits sent, response flits received).
    - ``engine``, the step engine: ``cfg`` (``steps`` to run from entry 0, ``op``, ``dtype``),
      ``ctrl.start``, ``status``, ``current`` (the step being run; ``steps`` when done).
    - ``step[s]`` for each of ``step_depth`` entries: ``flags`` (``send``, ``recv``: the step
      sends / receives; ``reduce``: reduce the received range into the vector, else copy;
      ``cid``: the collective the step belongs to, which tags its flits), ``send_peer``,
      ``send_first``, ``send_count``, ``recv_peer``, ``recv_first``, ``recv_count``. Send and
      receive peers differ for ring algorithms.

    Element indices and counts are ``bit_length(vector_depth)`` bits wide.

    Parameters
    ----------
    collective_ids : int
        Collective identifiers, 1..256.
    step_depth : int
        Step-table entries, 1..65535.
    vector_depth : int
        Elements of the local vector memory, 1..:data:`MAX_VECTOR_DEPTH` (2**20).
    node_id_width : int
        Bits of a node id, 1..32. The endpoint RTL's are those of its flits' node ids,
        :func:`~innet.gen.regmap.node_id_bits` of the routing depth: give that to describe it
        (the default, 16, describes no particular routing depth).

    Raises
    ------
    TypeError, ValueError
        On a parameter that is not an integer or out of range.
    """
    collective_ids = check_param("Collective ids", collective_ids, 1, MAX_COLLECTIVE_IDS)
    step_depth = check_param("Step depth", step_depth, 1, MAX_STEP_DEPTH)
    vector_depth = check_param("Vector depth", vector_depth, 1, MAX_VECTOR_DEPTH)
    node_id_width = check_param("Node id width", node_id_width, 1, 32)
    cw = max(1, (collective_ids - 1).bit_length())
    iw = vector_depth.bit_length()
    sw = step_depth.bit_length()
    coll = Cluster("coll", [
        Register("cmd", [Field("cid", cw, max=collective_ids - 1, desc="collective id"),
                         *_op_dtype(),
                         Field("mode", 2, offset=24, enum=CollectiveMode,
                               desc="send and/or receive (innet.gen.regmap.CollectiveMode)")],
                 desc="in-network collective command"),
        Register("count", [Field("count", iw, max=vector_depth, desc="elements, from vec_base")],
                 desc="element count of the command"),
        Register("ctrl", [Field("start", 1, WO, desc="write 1: start the command")],
                 desc="start strobe"),
        _status("in-network collective status"),
        _count("sent", iw, vector_depth, "request flits sent"),
        _count("received", iw, vector_depth, "response flits received"),
    ], desc="in-network collective (PIUMA request/response)")
    engine = Cluster("engine", [
        Register("cfg", [Field("steps", sw, max=step_depth, desc="steps to run, from entry 0"),
                         *_op_dtype()], desc="step-engine configuration"),
        Register("ctrl", [Field("start", 1, WO, desc="write 1: start the step table")],
                 desc="start strobe"),
        _status("step-engine status"),
        Register("current", [Field("step", sw, RO, volatile=True, max=step_depth,
                                          desc="step being run")],
                 desc="step being run (steps when done)"),
    ], desc="step engine for host-style schedules (Swing, recursive doubling, ring)")

    def peer(name: str, desc: str) -> Register:
        return Register(name, [Field("node", node_id_width, desc=desc)], desc=desc)

    def element(name: str, field: str, most: int, desc: str) -> Register:
        return Register(name, [Field(field, iw, max=most, desc=desc)], desc=desc)

    step = Cluster("step", [
        Register("flags", [
            Field("send", 1, desc="the step sends send_count elements to send_peer"),
            Field("recv", 1, desc="the step receives recv_count elements from recv_peer"),
            Field("reduce", 1, desc="reduce the received elements into the vector (else copy)"),
            Field("cid", cw, offset=16, max=collective_ids - 1,
                  desc="collective the step belongs to"),
        ], desc="what the step does"),
        peer("send_peer", "node id the step sends to"),
        element("send_first", "index", vector_depth - 1,
                "first element sent (relative to vec_base)"),
        element("send_count", "count", vector_depth, "elements sent"),
        peer("recv_peer", "node id the step receives from"),
        element("recv_first", "index", vector_depth - 1,
                "first element received (relative to vec_base)"),
        element("recv_count", "count", vector_depth, "elements received"),
    ], desc="step-table entry")
    return Map("endpoint", [
        ident_register(Target.ENDPOINT),
        param_register("collective_ids", collective_ids, "collective identifiers"),
        param_register("step_depth", step_depth, "step-table entries"),
        param_register("vector_depth", vector_depth, "elements of the vector memory"),
        param_register("node_id_width", node_id_width, "bits of a node id"),
        Register("node_id", [Field("id", node_id_width, desc="this endpoint's node id")],
                 desc="node id of this endpoint (set by the image)"),
        Register("vec_base", [Field("index", iw, max=vector_depth - 1,
                                            desc="first element of the vector")],
                 desc="vector base in the local memory"),
        Register("vec_len", [Field("count", iw, max=vector_depth,
                                           desc="elements of the vector")],
                 desc="vector length"),
        coll,
        engine,
        Array(step, step_depth, desc="step table (a memory: its reset values are those of "
                                      "power-up, and a reset keeps its entries)"),
    ], params={"collective_ids": collective_ids, "step_depth": step_depth,
               "vector_depth": vector_depth, "node_id_width": node_id_width},
        memory_depth=vector_depth,
        desc="endpoint: in-network collective command and host-style step table (the step "
             "table is a memory: a reset does not clear it)")
