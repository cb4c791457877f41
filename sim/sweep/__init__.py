"""Design-space exploration on Dask: ``innet sweep SPEC``.

A spec (TOML, :mod:`~innet.sim.sweep.spec`) names grids of points of two kinds: hardware
points, run through the synthesis flow (:mod:`innet.sim.synth`), and network points, run
through the whole-network simulation (:mod:`innet.sim.network`). Each point is one Dask task
(:mod:`~innet.sim.sweep.run`: an embedded local cluster, or an existing one), measured by
:mod:`~innet.sim.sweep.points` and cached by its design digest, tool versions and seed
(:mod:`~innet.sim.sweep.cache`), so a sweep stopped part-way resumes where it stopped. The
results are written as CSV, JSON and plots (:mod:`~innet.sim.sweep.output`,
:mod:`~innet.sim.sweep.plots`).
"""

from innet.sim.sweep.cache import default_cache, point_key
from innet.sim.sweep.output import comparable, pareto_front, write_results
from innet.sim.sweep.points import run_point
from innet.sim.sweep.run import Progress, open_client, run_sweep, stream
from innet.sim.sweep.spec import Point, Spec, load_spec, parse_spec

__all__ = [
    "Point",
    "Progress",
    "Spec",
    "comparable",
    "default_cache",
    "load_spec",
    "open_client",
    "pareto_front",
    "parse_spec",
    "point_key",
    "run_point",
    "run_sweep",
    "stream",
    "write_results",
]
