"""Network topologies with numbered ports: PolarFly, HyperX, torus and mesh, multi-level PIUMA.

Everything downstream (routing, embeddings, schedules, images, the network RTL) takes a
:class:`Topology`. Constructors:

- :func:`polarfly` ``(q, *, r0=0, r1=0, starter=None)``: the Erdős-Rényi polarity graph ER_q
  for any prime power q (PolarFly, SC'22, Section IV), optionally expanded (Section VI);
- :func:`hyperx` ``(shape)``: all-to-all in every dimension;
- :func:`torus` ``(shape, mesh=False)``: rings (or paths) in every dimension;
- :func:`piuma` ``(nodes, sockets=16, cores=8, *, mesh=None, placement="spread",
  latency_core=5, latency_socket=25, latency_node=50)``: PIUMA's multi-level network, a HyperX
  of nodes of all-to-all sockets of on-chip meshes, with a latency per link level
  (:func:`link_level`, :func:`link_levels`, :func:`link_latencies`, :func:`link_cycles`;
  :mod:`.piuma`).

:func:`polarfly_layout` gives the PolarFly cluster (rack) layout (Algorithm 1) and
:func:`expand` the incremental expansions.

Ports are numbered ``0..deg(u)-1`` in the order each constructor documents; the local port is
:data:`LOCAL`.
"""

from innet.gen.topology.core import LOCAL, Link, PortMap, Topology, check_topology, title
from innet.gen.topology.ergraph import MAX_Q, QUADRIC, V1, V2, check_q, polarfly
from innet.gen.topology.expansion import expand
from innet.gen.topology.grid import check_shape, hyperx, parse_shape, torus
from innet.gen.topology.layout import PolarFlyLayout, polarfly_layout
from innet.gen.topology.piuma import (
    PiumaLayout,
    is_piuma,
    link_cycles,
    link_latencies,
    link_latency_array,
    link_level,
    link_levels,
    mesh_shape,
    parse_nodes,
    piuma,
    piuma_layout,
    piuma_plan,
)

__all__ = [
    "LOCAL",
    "MAX_Q",
    "QUADRIC",
    "V1",
    "V2",
    "Link",
    "PiumaLayout",
    "PolarFlyLayout",
    "PortMap",
    "Topology",
    "check_q",
    "check_shape",
    "check_topology",
    "expand",
    "hyperx",
    "is_piuma",
    "link_cycles",
    "link_latencies",
    "link_latency_array",
    "link_level",
    "link_levels",
    "mesh_shape",
    "parse_nodes",
    "parse_shape",
    "piuma",
    "piuma_layout",
    "piuma_plan",
    "polarfly",
    "polarfly_layout",
    "title",
    "torus",
]
