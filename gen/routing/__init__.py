"""Point-to-point routing: next-hop tables, paths and link loads, Valiant, BookSim export.

- :func:`routing` ``(topo, algorithm="auto", *, failed_links=None, failed_switches=None)``
  builds a :class:`Routing`: PolarFly by the cross product (PolarFly, SC'22, Section IV-D),
  HyperX/torus/mesh by dimension order, anything else (and any failure) by shortest paths.
  ``Routing.next_port(u, dest)`` works on arrays; ``Routing.table()`` is the ``N x N`` table
  (``table[u, dest]`` = output port, ``LOCAL`` on the diagonal, smallest integer dtype);
  ``Routing.hardware_table()`` is the register form (local port = ``radix``).
- :func:`routing_from_table` wraps an explicit table (e.g. decoded from registers).
- :func:`path`, :func:`paths`, :func:`link_loads` follow a routing hop by hop for one or many
  ``(src, dst)`` pairs, optionally through Valiant intermediates from :func:`valiant`
  (Section VII-B: ``"valiant"`` or ``"compact"``).
- :func:`hop_distances` gives hop counts (closed forms where the family has one).
- :func:`booksim_routing_table` / :func:`write_booksim_routing`: BookSim2 ``router dest port``
  files in BookSim's port numbering (:func:`booksim_ports`).
"""

from innet.gen.routing.booksim import (
    booksim_ports,
    booksim_routing_table,
    iter_booksim_routing,
    write_booksim_routing,
)
from innet.gen.routing.core import (
    ALGORITHMS,
    UNREACHABLE,
    Routing,
    hardware_dtype,
    port_dtype,
    routing,
    routing_from_table,
)
from innet.gen.routing.distance import hop_distances
from innet.gen.routing.generic import alive_ports, bfs_distances, parse_failures
from innet.gen.routing.paths import Paths, link_loads, path, paths
from innet.gen.routing.valiant import VALIANT_MODES, valiant

__all__ = [
    "ALGORITHMS",
    "UNREACHABLE",
    "VALIANT_MODES",
    "Paths",
    "Routing",
    "alive_ports",
    "bfs_distances",
    "booksim_ports",
    "booksim_routing_table",
    "hardware_dtype",
    "hop_distances",
    "iter_booksim_routing",
    "link_loads",
    "parse_failures",
    "path",
    "paths",
    "port_dtype",
    "routing",
    "routing_from_table",
    "valiant",
    "write_booksim_routing",
]
