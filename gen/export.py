"""Topology exports: BookSim2 anynet, adjacency lists, GraphML, JSON, and a PNG layout plot.

Every text export is byte-stable (no timestamps, no paths) and lists neighbours in port order,
so port ``p`` of node ``u`` is the ``p``-th neighbour on ``u``'s line.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import numpy as np

from innet.gen.jsonio import load_json
from innet.gen.topology import PortMap, Topology

__all__ = [
    "FORMATS",
    "adjacency",
    "anynet",
    "export",
    "from_graphml",
    "graphml",
    "layout_figure",
    "plot_layout",
]


def _check_endpoints(endpoints: object) -> int:
    if isinstance(endpoints, bool) or not isinstance(endpoints, int) or endpoints < 1:
        raise ValueError(f"Endpoints per router must be a positive integer, not {endpoints!r}")
    return endpoints


def anynet(topo: Topology, endpoints: int = 1) -> str:
    """The BookSim2 ``anynet`` network file (``topology = anynet; network_file = ...``).

    One line per router ``u``: ``router u node e ... router v ...``, with its ``endpoints``
    terminal nodes (ids ``u*endpoints .. u*endpoints+endpoints-1``) and then its neighbour
    routers in port order. BookSim numbers a router's ports by ascending peer id, which is
    innet's order for PolarFly but not for torus or HyperX; the links are the same.

    Raises
    ------
    ValueError
        If ``endpoints`` is below 1.
    """
    endpoints = _check_endpoints(endpoints)
    lines = []
    for u in range(topo.nodes):
        nodes = " ".join(f"node {u * endpoints + e}" for e in range(endpoints))
        routers = "".join(f" router {v}" for v in topo.neighbors(u))
        lines.append(f"router {u} {nodes}{routers}\n")
    return "".join(lines)


def adjacency(topo: Topology, one_based: bool = False) -> str:
    """The adjacency file: ``V E`` on the first line, then one line per vertex listing its
    neighbours in port order, separated by single spaces (no space at the end of a line). Ids
    are innet's node ids (0-based), or 1-based with ``one_based`` (then the file is a METIS
    graph file)."""
    shift = 1 if one_based else 0
    lines = [f"{topo.nodes} {topo.num_links}\n"]
    lines.extend(" ".join(str(v + shift) for v in topo.neighbors(u)) + "\n"
                 for u in range(topo.nodes))
    return "".join(lines)


def graphml(topo: Topology, endpoints: int = 1) -> str:
    """GraphML that :func:`from_graphml` loads back into an equal Topology, and that SST
    Merlin's ``topoAny`` (``merlin.anytopo``) imports as it is.

    Vertices are ``0..N-1`` in order. Graph attributes ``kind`` and ``params`` (JSON); node
    attributes ``endpoints`` (the endpoints on that router, the count ``topoAny`` requires),
    ``label`` (JSON list) and ``cls`` (PolarFly class); edge attributes ``port_lo`` and
    ``port_hi`` (the ports at the end with the smaller and the larger id) and, where the
    topology knows its link latencies (a PIUMA network), ``latency_ns``.

    Raises
    ------
    ValueError
        If ``endpoints`` is below 1.
    """
    import networkx as nx

    from innet.gen.topology import is_piuma, link_latency_array

    endpoints = _check_endpoints(endpoints)
    graph = nx.Graph(kind=topo.kind, params=json.dumps(topo.to_dict()["params"],
                                                       sort_keys=True))
    for u, label in enumerate(topo.labels):
        attrs = {"endpoints": endpoints, "label": json.dumps(list(label))}
        if topo.classes:
            attrs["cls"] = topo.classes[u]
        graph.add_node(u, **attrs)
    links = topo.link_array()
    latency = link_latency_array(topo)[links[:, 0], links[:, 1]] if is_piuma(topo) else None
    for i, (u, pu, v, pv) in enumerate(links.tolist()):
        attrs = {"port_lo": pu, "port_hi": pv}
        if latency is not None:
            attrs["latency_ns"] = float(latency[i])
        graph.add_edge(u, v, **attrs)
    return "\n".join(nx.generate_graphml(graph)) + "\n"


def from_graphml(text: str) -> Topology:
    """Load :func:`graphml` output back into a Topology.

    Raises
    ------
    ValueError
        If the GraphML lacks the innet attributes or describes an invalid port map.
    """
    import networkx as nx

    try:
        graph = nx.parse_graphml(text, node_type=int)
    except Exception as error:  # networkx raises several types for malformed XML
        raise ValueError(f"GraphML is malformed: {error}") from None
    if "kind" not in graph.graph or "params" not in graph.graph:
        raise ValueError("GraphML lacks the innet graph attributes kind and params")
    n = graph.number_of_nodes()
    if sorted(graph.nodes) != list(range(n)):
        raise ValueError(f"GraphML node ids must be 0..{n - 1}")
    degree = np.array([graph.degree(u) for u in range(n)], dtype=np.int64)
    radix = int(degree.max(initial=0))
    peer = np.full((n, radix), -1, dtype=np.int64)
    peer_port = np.full((n, radix), -1, dtype=np.int64)
    for a, b, data in graph.edges(data=True):
        (u, v), (pu, pv) = sorted((a, b)), (data["port_lo"], data["port_hi"])
        for x, px, y, py in ((u, pu, v, pv), (v, pv, u, pu)):
            if not 0 <= px < radix:
                raise ValueError(f"GraphML gives node {x} a port {px} out of range")
            peer[x, px], peer_port[x, px] = y, py
    classes = tuple(graph.nodes[u]["cls"] for u in range(n)) if n and all(
        "cls" in graph.nodes[u] for u in range(n)) else ()
    try:
        params = load_json(graph.graph["params"])
        labels = tuple(tuple(load_json(graph.nodes[u]["label"])) for u in range(n))
    except ValueError as error:
        raise ValueError(f"GraphML holds a malformed JSON attribute: {error}") from None
    return Topology(kind=graph.graph["kind"], params=params, labels=labels,
                    ports=PortMap(peer, peer_port), classes=classes)


#: Export formats by name: each maps a Topology to text.
FORMATS: dict[str, Callable[[Topology], str]] = {
    "anynet": anynet,
    "adjacency": adjacency,
    "graphml": graphml,
    "json": Topology.to_json,
}


def export(topo: Topology, fmt: str) -> str:
    """``topo`` as text in format ``fmt`` (a key of :data:`FORMATS`).

    Raises
    ------
    ValueError
        If ``fmt`` is unknown.
    """
    if fmt not in FORMATS:
        raise ValueError(f"Export format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return FORMATS[fmt](topo)


_COLOURS = {"quadric": "#d62728", "v1": "#2ca02c", "v2": "#1f77b4", "center": "#98df8a"}


def plot_layout(topo: Topology, starter: int | None = None) -> bytes:
    """A PNG of the PolarFly cluster layout (as Figs. 6 and 13 of the paper).

    The drawing is :func:`layout_figure`'s.

    Raises
    ------
    ValueError
        If ``topo`` is not a PolarFly (as :func:`innet.gen.topology.polarfly_layout`).
    """
    fig, _, _ = layout_figure(topo, starter)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def layout_figure(topo: Topology, starter: int | None = None) -> tuple:
    """The PolarFly cluster layout (as Figs. 6 and 13 of the paper) as a matplotlib figure.

    Returns ``(figure, axes, positions)``, ``positions[u]`` the ``(x, y)`` of node ``u``, so
    that callers can draw on top of the layout (``innet demo`` draws a reduction tree).

    The quadric clusters (C0 and its copies) are a row on top; below, each non-quadric
    cluster is a column with its centre (light green) in the middle, its V1 vertices (green)
    above and its V2 vertices (blue) below; quadrics are red. Links from the starter quadric to
    the centres and links inside clusters are black; other links are light grey (drawn only
    while there are at most 20,000 of them).

    Raises
    ------
    ValueError
        If ``topo`` is not a PolarFly (as :func:`innet.gen.topology.polarfly_layout`).
    """
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    from innet.gen.topology import polarfly_layout

    layout = polarfly_layout(topo, starter)
    fans = [i for i, c in enumerate(layout.centers) if c is not None]
    quads = [i for i, c in enumerate(layout.centers) if c is None]
    pos = np.zeros((topo.nodes, 2))
    width = max(len(fans), 1)
    quad_nodes = [u for i in quads for u in layout.clusters[i]]
    pos[quad_nodes, 0] = np.linspace(0, width - 1, len(quad_nodes)) if len(quad_nodes) > 1 \
        else (width - 1) / 2
    pos[quad_nodes, 1] = 1.0
    for x, i in enumerate(fans):
        center = layout.centers[i]
        pos[center] = (x, 0.45)
        # Order the fan blades: triangle partners sit next to (or above) each other.
        rest = [u for u in layout.clusters[i] if u != center]
        inside = set(rest)
        order: list[int] = []
        for u in rest:
            if u not in order:
                order.append(u)
                order.extend(v for v in topo.neighbors(u) if v in inside and v not in order)
        for cls, y0, y1 in (("v1", 0.55, 0.85), ("v2", 0.05, 0.35)):
            members = [u for u in order if topo.classes[u] == cls]
            if not members:
                continue
            offsets = np.linspace(-0.3, 0.3, len(members)) if len(members) > 1 else [0.0]
            heights = np.linspace(y0, y1, len(members)) if len(members) > 1 else [(y0 + y1) / 2]
            for u, dx, y in zip(members, offsets, heights, strict=True):
                pos[u] = (x + dx, y)
    links = topo.link_array()
    cluster_of = np.array(layout.cluster_of)
    inside = cluster_of[links[:, 0]] == cluster_of[links[:, 2]]
    starter_links = (links[:, 0] == layout.starter) | (links[:, 2] == layout.starter)
    bold = links[inside | starter_links]
    faint = links[~(inside | starter_links)]
    side = min(24.0, 6.0 + 0.25 * width)
    fig = Figure(figsize=(side, side * 0.55), dpi=100)
    ax = fig.add_subplot()
    if len(faint) <= 20_000:
        ax.add_collection(LineCollection(pos[faint[:, [0, 2]]], colors="#cccccc", linewidths=0.3,
                                         zorder=1))
    ax.add_collection(LineCollection(pos[bold[:, [0, 2]]], colors="black", linewidths=0.6,
                                     zorder=2))
    colour = np.array([_COLOURS[c] for c in topo.classes], dtype=object)
    colour[[c for c in layout.centers if c is not None]] = _COLOURS["center"]
    size = max(4.0, 60.0 / np.sqrt(max(topo.nodes / 50, 1)))
    ax.scatter(pos[:, 0], pos[:, 1], c=list(colour), s=size, zorder=3, edgecolors="none")
    ax.set_title(f"{topo.title}: {topo.nodes} nodes, {len(layout.clusters)} clusters "
                 f"(starter quadric {layout.starter})")
    for label, key in (("quadric", "quadric"), ("centre", "center"), ("V1", "v1"),
                       ("V2", "v2")):
        ax.scatter([], [], c=_COLOURS[key], s=30, label=label)
    ax.legend(loc="upper right", fontsize="small", ncols=4)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-0.05, 1.15)
    if width <= 40:
        ax.set_xticks(range(len(fans)), [layout.names[i] for i in fans], fontsize="small")
    else:
        ax.set_xticks([])
    ax.set_yticks([])
    return fig, ax, pos
