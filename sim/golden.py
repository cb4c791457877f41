"""Golden models of in-network reductions: one switch's order, and a whole embedding's.

Floating-point addition is not associative, so an in-network result is checkable bit for bit
only against a model that reduces the same operands the way the hardware does (PIUMA,
"Collective Engine": "reductions are computed in a fixed port order [...] This ensures
repeatability of results for a given embedding, even for non-associative operators").
These models are plain numpy on top of :func:`innet.gen.ops.sum_fp32` and
:func:`innet.gen.ops.combine` and do not look at the RTL; they state what the collective engine
(:mod:`innet.hw.ceng`) promises:

- **one switch** (:func:`reduce_switch`): an fp32 add of the contributing ports is one sum,
  aligned once and rounded once (:func:`innet.gen.ops.sum_fp32`), which no order changes;
  ``nor`` is the complement of the OR of all of them (a nor gate of as many inputs), which no
  order changes either, nor does any of the associative and commutative operations (integer
  add, ``min``, ``max``, ``and``, ``or``, ``xor``). Only ``mul`` (an engine built with
  multipliers) depends on the order: the contributing ports in port order, network ports
  ascending and the local port last, combined in adjacent pairs level by level, an odd last
  operand moving up unchanged (:func:`innet.hw.ceng.tree_shape`): ``((x0 x1) (x2 x3)) x4`` for
  five ports. One contributing port is forwarded unchanged (no step, so even a NaN payload
  keeps its bits).
- **an embedding** (:func:`embedding_results`): every switch reduces what its ``req_in`` ports
  bring (its endpoint's vector on ``LOCAL``, a child switch's partial result on a network
  port) and sends it up ``req_out``; the root's result is delivered unchanged by the response
  tree (PIUMA, "Broadcast Tree") to every switch whose ``resp_out`` holds ``LOCAL``.

:func:`idle_latency` is the timing counterpart: when each result reaches its endpoint on an
idle network of the project's switches (:data:`innet.hw.switch.HOP_CYCLES` per switch
crossed, plus the engine's
reduction latency :func:`innet.hw.ceng.engine_latency` where a switch reduces).

Values are ``uint32`` bit patterns (:func:`innet.gen.ops.to_bits` converts), one vector per
participant; every element is reduced independently, so vectors reduce element-wise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from innet.gen.embed.types import check_embedding
from innet.gen.ops import DType, Op, check_supported, combine, sum_fp32
from innet.gen.topology import LOCAL

__all__ = [
    "embedding_partials",
    "embedding_results",
    "idle_latency",
    "port_order",
    "reduce_ports",
    "reduce_switch",
]


def port_order(ports) -> list[int]:
    """Generator ports in the engine's order: network ports ascending, then ``LOCAL``.

    Raises
    ------
    ValueError
        If a port is neither ``LOCAL`` nor a non-negative integer.
    """
    ports = set(ports)
    for port in ports:
        if isinstance(port, bool) or not isinstance(port, int | np.integer) or port < LOCAL:
            raise ValueError(f"A port must be a network port number or LOCAL (-1), not {port!r}")
    network = sorted(int(p) for p in ports if p != LOCAL)
    return [*network, LOCAL] if LOCAL in ports else network


def reduce_switch(op: Op | str, dtype: DType | str, operands: Sequence) -> np.ndarray:
    """One switch's reduction of ``operands`` given in the engine's port order.

    Parameters
    ----------
    op, dtype : Op, DType (or their names)
        The collective id's operation and data type.
    operands : sequence of array_like of uint32
        One bit-pattern vector (or scalar) per contributing port, in port order
        (:func:`port_order`).

    Returns
    -------
    numpy.ndarray of uint32
        fp32 ``add``: :func:`innet.gen.ops.sum_fp32` of the operands; ``nor``: the complement
        of their OR. Otherwise adjacent pairs combined level by level (operand ``a`` the lower
        position), an odd last operand moved up unchanged (for every operation but ``mul`` the
        shape does not change the result). A single operand is returned unchanged.

    Raises
    ------
    ValueError
        If there is no operand, or ``op`` is not defined on ``dtype``.
    """
    op, dtype = Op.parse(op), DType.parse(dtype)
    check_supported(op, dtype)
    level = [np.asarray(x, dtype=np.uint32) for x in operands]
    if not level:
        raise ValueError("A reduction needs at least one operand")
    if len(level) > 1 and op == Op.ADD and dtype == DType.FP32:
        return sum_fp32(level)
    if len(level) > 1 and op == Op.NOR:
        return ~functools.reduce(np.bitwise_or, level)
    while len(level) > 1:
        level = [combine(op, dtype, level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return level[0]


def reduce_ports(op: Op | str, dtype: DType | str, inputs: Mapping[int, Any]) -> np.ndarray:
    """One switch's reduction of ``inputs`` keyed by generator port (``LOCAL`` = -1 last).

    Raises
    ------
    ValueError
        As :func:`port_order` and :func:`reduce_switch`.
    """
    return reduce_switch(op, dtype, [inputs[p] for p in port_order(inputs)])


def _children(embedding) -> dict[tuple[int, int], int]:
    """``(parent, parent_port) -> child`` of the request tree (the response goes back down the
    same links)."""
    return {(parent, pport): child for child, _, parent, pport in embedding.links}


def _up(embedding, local: Callable[[int], Any], reduce: Callable[[int, list], Any]) -> dict:
    """Per switch with requests, ``reduce(node, operands)`` of its ``req_in`` ports in port
    order: ``local(node)`` for ``LOCAL``, the child switch's own value for a network port."""
    children = _children(embedding)
    configs = {s.node: s for s in embedding.switches}
    done: dict[int, Any] = {}

    def value(node: int, path: tuple[int, ...]) -> Any:
        if node in done:
            return done[node]
        if node in path:
            raise ValueError(f"The request tree has a cycle through switch {node}")
        cfg = configs.get(node)
        if cfg is None:
            raise ValueError(f"Switch {node} sends requests but is not configured")
        operands = []
        for port in port_order(cfg.req_in):
            if port == LOCAL:
                operands.append(local(node))
                continue
            child = children.get((node, port))
            if child is None:
                raise ValueError(f"Port {port} of switch {node} is in req_in, but no link of "
                                 f"the embedding ends there")
            operands.append(value(child, (*path, node)))
        done[node] = reduce(node, operands)
        return done[node]

    for cfg in embedding.switches:
        if cfg.req_in:
            value(cfg.node, ())
    if embedding.root not in done:
        raise ValueError(f"The root {embedding.root} has no request inputs")
    return done


def _down(embedding, at_root: Any, hop: Callable[[Any, int, int], Any]) -> dict[int, Any]:
    """Per switch with ``LOCAL`` in ``resp_out``, what reaches it from the root down the
    response tree: ``at_root`` at the root, ``hop(parent's, parent, child)`` one switch
    further down."""
    children = _children(embedding)
    configs = {s.node: s for s in embedding.switches}
    at = {embedding.root: at_root}
    delivered: dict[int, Any] = {}
    todo = [embedding.root]
    while todo:
        node = todo.pop()
        cfg = configs.get(node)
        if cfg is None:
            raise ValueError(f"A response reaches switch {node}, which is not configured")
        for port in port_order(cfg.resp_out):
            if port == LOCAL:
                delivered[node] = at[node]
                continue
            child = children.get((node, port))
            if child is None:
                raise ValueError(f"Port {port} of switch {node} is in resp_out, but no link "
                                 f"of the embedding starts there")
            if child in at:
                raise ValueError(f"The response tree reaches switch {child} twice")
            at[child] = hop(at[node], node, child)
            todo.append(child)
    return dict(sorted(delivered.items()))


def embedding_partials(embedding, inputs: Mapping[int, Any]) -> dict[int, np.ndarray]:
    """What every configured switch with requests sends toward the root (the root: the result).

    Parameters
    ----------
    embedding : innet.gen.embed.Embedding
        The collective (its ``switches``, ``links``, ``root``, ``op``, ``dtype``).
    inputs : mapping of int to array_like of uint32
        The bit-pattern vector of every node whose switch has ``LOCAL`` in ``req_in``.

    Returns
    -------
    dict of int to numpy.ndarray of uint32
        By node, for every switch with a non-empty ``req_in``.

    Raises
    ------
    TypeError
        If ``embedding`` is not an Embedding or ``inputs`` not a mapping.
    ValueError
        If an input is missing or the vectors differ in shape, a port of ``req_in`` has no
        child switch in the embedding's links, the request tree has a cycle or reaches an
        unconfigured switch, or the root reduces nothing.
    """
    check_embedding(embedding)
    if not isinstance(inputs, Mapping):
        raise TypeError(f"Inputs must be a mapping of node to vector, not "
                        f"{type(inputs).__name__}")
    op, dtype = Op.parse(embedding.op), DType.parse(embedding.dtype)
    check_supported(op, dtype)
    shapes = {np.asarray(v).shape for v in inputs.values()}
    if len(shapes) > 1:
        raise ValueError(f"Input vectors differ in shape: {sorted(shapes)}")

    def local(node: int) -> np.ndarray:
        if node not in inputs:
            raise ValueError(f"Node {node} contributes but has no input vector")
        return np.asarray(inputs[node], dtype=np.uint32)

    return _up(embedding, local, lambda node, operands: reduce_switch(op, dtype, operands))


def embedding_results(embedding, inputs: Mapping[int, Any]) -> dict[int, np.ndarray]:
    """Every delivered result of a collective: by node, the vector its endpoint receives.

    The root reduces the whole tree (:func:`embedding_partials`); the response tree (from the
    root, down ``resp_out`` over the embedding's links) carries the root's value unchanged to
    every switch with ``LOCAL`` in ``resp_out``. For a ``broadcast`` the root's only request
    input is its own endpoint's vector.

    Parameters
    ----------
    embedding : innet.gen.embed.Embedding
    inputs : mapping of int to array_like of uint32
        See :func:`embedding_partials`.

    Returns
    -------
    dict of int to numpy.ndarray of uint32

    Raises
    ------
    TypeError, ValueError
        As :func:`embedding_partials`, or if the response tree leaves the embedding's links,
        reaches an unconfigured switch or a switch twice.
    """
    result = embedding_partials(embedding, inputs)[embedding.root]
    return {node: value.copy() for node, value in _down(embedding, result, lambda v, *_: v).items()}


def idle_latency(embedding, *, radix: int,
                 link_latency: int | Mapping[tuple[int, int], int] = 0) -> dict[int, int]:
    """Cycles from the contributing endpoints' injection to each delivered result, idle network.

    The model of the RTL (:mod:`innet.hw.switch`, :mod:`innet.hw.ceng`): every endpoint puts
    its element on its local link in cycle 0; a switch puts a flit on an output link
    ``HOP_CYCLES`` (:data:`innet.hw.switch.HOP_CYCLES`) cycles after it arrived on an input link
    (buffer write, allocation, crossbar into the output register), and a switch that reduces
    ``k >= 2`` ports sends its result ``HOP_CYCLES + engine_latency(k, radix, op)`` cycles
    after the last operand arrived; a link between switches adds its latency (pipeline
    stages). The result travels down the response tree unchanged, ``HOP_CYCLES`` per switch
    plus the links'.

    Parameters
    ----------
    embedding : innet.gen.embed.Embedding
    radix : int
        Network ports of the switches (the topology's ``radix``): the engine's reduction unit
        has ``radix + 1`` leaves, and its latency depends on them.
    link_latency : int or mapping of (int, int) to int
        Cycles of every switch-to-switch link, or per link keyed by its two nodes in either
        order (links not named take 0), as :class:`innet.hw.network.Network` takes its
        ``link_stages`` (PIUMA's levels: :func:`innet.gen.topology.piuma.link_cycles`).

    Returns
    -------
    dict of int to int
        By receiving node (``LOCAL`` in ``resp_out``), the cycle its result is on the switch's
        local output link.

    Raises
    ------
    TypeError
        If ``embedding`` is not an Embedding.
    ValueError
        As :func:`embedding_results` (the same trees are followed), or if a link latency is
        not a non-negative integer.
    """
    from innet.hw.ceng import engine_latency
    from innet.hw.switch import HOP_CYCLES

    check_embedding(embedding)

    latency = _link_latencies(link_latency)
    op = Op.parse(embedding.op)
    parent = {child: up for child, _, up, _ in embedding.links}

    def crossing(node: int, arrivals: list[int]) -> int:
        out = max(arrivals) + HOP_CYCLES + engine_latency(len(arrivals), radix, op)
        return out + latency(node, parent[node]) if node in parent else out

    def down(t: int, node: int, child: int) -> int:
        return t + latency(node, child) + HOP_CYCLES

    up = _up(embedding, lambda node: 0, crossing)
    return _down(embedding, up[embedding.root], down)


def _link_latencies(link_latency: int | Mapping[tuple[int, int], int]
                    ) -> Callable[[int, int], int]:
    """``latency(u, v)`` of a link from one count or a mapping of node pairs (missing: 0)."""
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ValueError(f"Link latency must be a non-negative integer, not {value!r}")
        return int(value)

    if not isinstance(link_latency, Mapping):
        every = check(link_latency)
        return lambda u, v: every
    table = {(min(u, v), max(u, v)): check(value) for (u, v), value in link_latency.items()}
    return lambda u, v: table.get((min(u, v), max(u, v)), 0)
