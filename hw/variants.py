"""Hardware chosen by name and parameters: the collective path of a name, and a switch and an
endpoint with their parameters as a dict, for the command line, the benchmarks and the
synthesis flow."""

from __future__ import annotations

import functools
from typing import Any

from innet.hw.switch import CREDIT_ROUND_TRIP

__all__ = ["make_endpoint", "make_switch", "switch_collective"]


def switch_collective(name: str, mul: bool = False, payload_width: int = 32):
    """The ``collective=`` builder of ``--collective NAME``: ``"engine"`` (the collective
    engine, with a tree of multipliers if ``mul``), ``"pass"`` (the pass-through) or ``"none"``
    (``None``: the p2p switch, without collective support).

    Raises
    ------
    ValueError
        If ``name`` is none of these, ``mul`` is asked of a path other than the engine, or the
        engine is asked for a payload other than 32 bits (a payload width that is wrong in
        itself gets the flit's own error first).
    """
    from innet.hw.collective import CollectivePath

    if name not in ("engine", "pass", "none"):
        raise ValueError(f"Collective path must be one of engine, pass, none, not {name!r}")
    if mul and name != "engine":
        raise ValueError(f"--mul adds multipliers to the collective engine, not to "
                         f"--collective {name}")
    if name == "none":
        return None
    if name == "pass":
        return CollectivePath
    from innet.hw.ceng import CollectiveEngine
    from innet.hw.flit import FlitParams

    FlitParams(payload_width=payload_width)  # its own checks (type, range) come first
    if payload_width != 32:
        raise ValueError(f"The collective engine reduces 32-bit payloads, not "
                         f"{payload_width}-bit ones (use --collective pass)")
    return functools.partial(CollectiveEngine, mul=mul)


def make_switch(radix: int, payload_width: int = 32, collective_ids: int = 4,
                routing_depth: int = 64, buffer_depth: int = CREDIT_ROUND_TRIP, p2p_vcs: int = 2,
                index_width: int = 16, tag_width: int = 8, local_depth: int | None = None,
                **extra: Any):
    """The :class:`innet.hw.switch.Switch` of these parameters and the parameters as a
    JSON-ready dict; ``extra`` goes to the constructor as it is (e.g. ``collective=``)."""
    from innet.hw.switch import Switch

    top = Switch(radix, payload_width, buffer_depth, collective_ids, routing_depth,
                 p2p_vcs=p2p_vcs, index_width=index_width, tag_width=tag_width,
                 local_depth=local_depth, **extra)
    params = {"radix": radix, "payload_width": payload_width,
              "collective_ids": collective_ids, "routing_depth": routing_depth,
              "buffer_depth": buffer_depth, "local_depth": top.local_depth,
              "p2p_vcs": p2p_vcs, "index_width": index_width, "tag_width": tag_width}
    return top, params


def make_endpoint(vector_depth: int, step_depth: int, collective_ids: int, routing_depth: int,
                  p2p_vcs: int, index_width: int, tag_width: int, buffer_depth: int,
                  local_depth: int | None = None, mul: bool = True):
    """The :class:`innet.hw.endpoint.Endpoint` of these parameters (32-bit elements; the local
    depth defaults to :func:`innet.hw.credit.local_depth` of the buffer depth, as the local
    depth of a switch with a collective path) and the parameters as a JSON-ready dict."""
    from innet.hw.credit import local_depth as default_local_depth
    from innet.hw.endpoint import Endpoint
    from innet.hw.flit import FlitParams

    local_depth = default_local_depth(buffer_depth) if local_depth is None else local_depth
    flit = FlitParams(routing_depth=routing_depth, collective_ids=collective_ids,
                      p2p_vcs=p2p_vcs, index_width=index_width, tag_width=tag_width)
    top = Endpoint(flit, vector_depth=vector_depth, step_depth=step_depth,
                   buffer_depth=buffer_depth, local_depth=local_depth, mul=mul)
    params = {"vector_depth": vector_depth, "step_depth": step_depth,
              "collective_ids": collective_ids, "routing_depth": routing_depth,
              "p2p_vcs": p2p_vcs, "index_width": index_width, "tag_width": tag_width,
              "buffer_depth": buffer_depth, "local_depth": local_depth, "mul": mul}
    return top, params
