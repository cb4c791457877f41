"""Helpers for cocotb testbenches run by :mod:`innet.sim.runner`.

Testbench modules (``sim/tb/tb_*.py``) run inside the simulator process. They read their parameters
with :func:`params`, bind ports by name with :func:`port` (from the design's port metadata) and
hand measurements back to the caller with :func:`report`; :func:`random_bits` draws their input
vectors.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from innet.gen import ops

__all__ = ["params", "port", "port_names", "random_bits", "report", "reset"]


def params() -> dict[str, Any]:
    """The parameters the caller passed to :func:`innet.sim.runner.run` (``params=``)."""
    path = os.environ.get("INNET_TB_PARAMS_FILE")
    return json.loads(Path(path).read_text()) if path else {}


def port_names() -> dict[str, dict]:
    """The top level's ports by Verilog name: ``{"i__payload": {"dir": "in", "width": 32}}``."""
    path = os.environ.get("INNET_TB_PORTS")
    if not path:
        return {}
    return _ports(json.loads(Path(path).read_text())["interface"]["members"])


def _ports(members: dict | list) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for info in members.values() if isinstance(members, dict) else members:
        if isinstance(info, list):  # an array member (``In(sig).array(n)``)
            found |= _ports(info)
        elif info.get("type") == "port":
            found[info["name"]] = {"dir": info["dir"], "width": info["width"]}
        elif info.get("type") == "interface":
            found |= _ports(info["members"])
    return found


def port(dut, name: str):
    """The handle of top-level port ``name``; a clear error when the design has no such port."""
    try:
        return getattr(dut, name)
    except AttributeError:
        raise AttributeError(f"The design {dut._name} has no port {name!r}") from None


def report(**values: Any) -> None:
    """Merge ``values`` (JSON-serialisable) into the output returned by the runner."""
    path = os.environ.get("INNET_TB_OUTPUT")
    if not path:
        return
    target = Path(path)
    data = json.loads(target.read_text()) if target.is_file() else {}
    data.update(values)
    target.write_text(json.dumps(data, indent=2, sort_keys=True))


async def reset(dut, clk_name: str = "clk", rst_name: str = "rst", cycles: int = 2) -> None:
    """Start a 1 ns-period clock on ``clk`` and hold ``rst`` high for ``cycles`` rising edges."""
    import cocotb
    from cocotb.clock import Clock
    from cocotb.triggers import RisingEdge

    clk = port(dut, clk_name)
    rst = port(dut, rst_name)
    cocotb.start_soon(Clock(clk, 1, unit="ns").start())
    rst.value = 1
    for _ in range(cycles):
        await RisingEdge(clk)
    rst.value = 0
    await RisingEdge(clk)


def random_bits(rng: np.random.Generator, dtype: ops.DType, shape) -> np.ndarray:
    """Random input words (``uint32``) of ``dtype``: any pattern for integers; for fp32 mostly
    moderate values and some specials (signed zeros, subnormals, infinities, NaNs, the largest
    finite value)."""
    bits = rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)
    if dtype is not ops.DType.FP32:
        return bits
    out = ops.to_bits(rng.uniform(-4, 4, size=shape).astype(np.float32), dtype)
    special = rng.random(shape) < 0.08
    pool = np.array([0x0, 0x80000000, 0x1, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001,
                     0x7F7FFFFF], dtype=np.uint32)
    out[special] = pool[rng.integers(0, len(pool), size=int(special.sum()))]
    return out
