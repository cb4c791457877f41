"""Network topologies with numbered ports: PolarFly, HyperX, torus and mesh.

Everything downstream (routing, embeddings, schedules, images, the network RTL) takes a
:class:`Topology`. Constructors:

- :func:`polarfly` ``(q, *, r0=0, r1=0, starter=None)``: the Erdős-Rényi polarity graph ER_q
  for any prime power q (PolarFly, SC'22, Section IV), optionally expanded (Section VI);
- :func:`hyperx` ``(shape)``: all-to-all in every dimension;
- :func:`torus` ``(shape, mesh=False)``: rings (or paths) in every dimension.

:func:`polarfly_layout` gives the PolarFly cluster (rack) layout (Algorithm 1) and
:func:`expand` the incremental expansions.

Ports are numbered ``0..deg(u)-1`` in the order each constructor documents; the local port is
:data:`LOCAL`.
"""

from innet.gen.topology.core import LOCAL, Link, PortMap, Topology
from innet.gen.topology.ergraph import MAX_Q, QUADRIC, V1, V2, check_q, polarfly
from innet.gen.topology.expansion import expand
from innet.gen.topology.grid import check_shape, hyperx, parse_shape, torus
from innet.gen.topology.layout import PolarFlyLayout, polarfly_layout

__all__ = [
    "LOCAL",
    "MAX_Q",
    "QUADRIC",
    "V1",
    "V2",
    "Link",
    "PolarFlyLayout",
    "PortMap",
    "Topology",
    "check_q",
    "check_shape",
    "expand",
    "hyperx",
    "parse_shape",
    "polarfly",
    "polarfly_layout",
    "torus",
]
