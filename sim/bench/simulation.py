"""Simulation benchmarks: simulated cycles per second of whole networks (Verilator).

The PolarFly q = 3 network running a long allreduce needs the network top level
(``innet.hw.network``, issue 10); until it lands the case is reported as pending. To add it,
give :func:`_polarfly3` a body (build the network, program it with an image, run the
allreduce through :mod:`innet.sim.runner`) returning ``cycles``, ``seconds`` and
``cycles_per_second``, and drop nothing else: the registry already lists it.
"""

from __future__ import annotations

from innet.sim.bench import REGISTRY, Case

__all__: list[str] = []

REGISTRY.append(Case(
    name="sim_polarfly_q3_allreduce", group="simulation",
    title="PolarFly q = 3 network, long allreduce: simulated cycles per second",
    func=None, quick=False, full=True, requires=("innet.hw.network", "issue 10")))
