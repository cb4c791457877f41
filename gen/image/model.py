"""The content of a configuration image: what it was built for, and the register writes.

An image configures one whole network: every switch and every endpoint of a
:class:`~innet.gen.topology.Topology`. It records

- the register-map parameters it was built for (:class:`MapParams`: radix, collective ids,
  routing depth, step depth, vector depth, node-id width), from which a loader rebuilds the
  exact switch and endpoint maps, and those maps' digests;
- the topology itself, so that a validator can check ports, links and embeddings without
  further input (its fingerprint is in the header), and the links and switches that have
  failed (routes and embeddings made around failures avoid them);
- per target, the configuration-bus writes ``(address, word)`` that :meth:`Map.pack
  <innet.gen.regmap.Map.pack>` produced, in ascending address order.

Target numbering
----------------
A network of ``N`` nodes has ``2 N`` targets: **target ``n`` is the switch of node ``n`` and
target ``N + n`` is the endpoint of node ``n``** (``0 <= n < N``). :func:`target_id` and
:func:`target_of` convert. Every target appears in an image exactly once, in target order.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

from innet.gen.checks import check_int, check_type
from innet.gen.regmap import Map, Target, endpoint_map, node_id_bits, switch_map
from innet.gen.topology.core import Topology, check_topology

__all__ = [
    "IMAGE_VERSION",
    "MAGIC",
    "Header",
    "Image",
    "ImageError",
    "MapParams",
    "target_id",
    "target_name",
    "target_of",
]

#: The first 8 bytes of a binary image.
MAGIC = b"INNETIMG"

#: Version of the image format (binary layout, hex and JSON encodings). Bump it when any of
#: them changes meaning.
IMAGE_VERSION = 1


class ImageError(ValueError):
    """A configuration image is malformed or inconsistent.

    The message is one line: where (the header, or a target and a register/field) and why,
    e.g. ``Switch 3 (target 3), coll[0].req_in.ports: names port 3, but node 3 has ports
    0..2 and local``.

    Parameters
    ----------
    reason : str
        Why the image is rejected.
    where : str
        What is wrong: ``"Header"``, ``"Switch 3 (target 3), coll[0].req_in.ports"``, ...
    target : int or None
        The target id, when one target is at fault.
    register : str or None
        The register's full name (``"coll[0].req_in"``), when one is at fault.
    """

    def __init__(self, reason: str, where: str = "Image", *, target: int | None = None,
                 register: str | None = None) -> None:
        self.reason = " ".join(str(reason).split())
        self.where = " ".join(str(where).split())
        self.target = target
        self.register = register
        super().__init__(f"{self.where}: {self.reason}")


def target_id(kind: Target | str, node: int, nodes: int) -> int:
    """The target id of the switch or endpoint of ``node`` in a network of ``nodes`` nodes.

    Raises
    ------
    TypeError
        If ``node`` or ``nodes`` is not an integer.
    ValueError
        If the node is out of range or the kind unknown.
    """
    kind = _kind(kind)
    nodes = check_int("Nodes", nodes, low=1)
    node = check_int("Node", node)
    if not 0 <= node < nodes:
        raise ValueError(f"Node {node} is out of range 0..{nodes - 1}")
    return node if kind is Target.SWITCH else nodes + node


def target_of(target: int, nodes: int) -> tuple[Target, int]:
    """``(kind, node)`` of a target id in a network of ``nodes`` nodes (inverse of
    :func:`target_id`).

    Raises
    ------
    ValueError
        If the target id is not in ``0..2*nodes-1``.
    """
    if not 0 <= target < 2 * nodes:
        raise ValueError(f"Target {target} is out of range 0..{2 * nodes - 1}")
    return (Target.SWITCH, target) if target < nodes else (Target.ENDPOINT, target - nodes)


def target_name(target: int, nodes: int) -> str:
    """``"Switch 3 (target 3)"`` or ``"Endpoint 3 (target 16)"``, for messages."""
    kind, node = target_of(target, nodes)
    return f"{kind.name.capitalize()} {node} (target {target})"


def _kind(kind: Target | str) -> Target:
    if isinstance(kind, Target):
        return kind
    try:
        return Target[str(kind).upper()]
    except KeyError:
        raise ValueError(f"Target kind must be switch or endpoint, not {kind!r}") from None


@dataclass(frozen=True)
class MapParams:
    """The register-map parameters an image was built for (see :func:`~innet.gen.regmap.
    switch_map` and :func:`~innet.gen.regmap.endpoint_map`).

    Attributes
    ----------
    radix : int
        Network ports of every switch (at least the topology's maximum degree).
    collective_ids : int
        Collective identifiers of switches and endpoints.
    routing_depth : int
        Routing-table entries of a switch (destination node ids ``0..routing_depth-1``).
    step_depth : int
        Step-table entries of an endpoint.
    vector_depth : int
        Elements of an endpoint's vector memory.
    node_id_width : int
        Bits of a node id. Default: those of the routing depth's node ids
        (:func:`innet.gen.regmap.node_id_bits`), as the RTL has them.
    """

    radix: int
    collective_ids: int
    routing_depth: int
    step_depth: int
    vector_depth: int
    node_id_width: int | None = None

    def __post_init__(self) -> None:
        depth = self.routing_depth
        if self.node_id_width is None and isinstance(depth, int) and not isinstance(depth, bool):
            object.__setattr__(self, "node_id_width", node_id_bits(depth))
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{_label(f.name)} must be an integer, not {value!r}")

    @property
    def switch_map(self) -> Map:
        """The switch register map these parameters give (cached).

        Raises
        ------
        ValueError
            If a parameter is out of the map's range.
        """
        return _switch_map(self.radix, self.collective_ids, self.routing_depth,
                           self.node_id_width)

    @property
    def endpoint_map(self) -> Map:
        """The endpoint register map these parameters give (cached)."""
        return _endpoint_map(self.collective_ids, self.step_depth, self.vector_depth,
                             self.node_id_width)

    def map(self, kind: Target | str) -> Map:
        """The register map of a kind of target."""
        return self.switch_map if _kind(kind) is Target.SWITCH else self.endpoint_map

    def as_dict(self) -> dict[str, int]:
        """The parameters by name, in declaration order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


@functools.lru_cache(maxsize=16)
def _switch_map(radix: int, collective_ids: int, routing_depth: int, width: int) -> Map:
    return switch_map(radix, collective_ids, routing_depth, node_id_width=width)


@functools.lru_cache(maxsize=16)
def _endpoint_map(collective_ids: int, step_depth: int, vector_depth: int, width: int) -> Map:
    return endpoint_map(collective_ids, step_depth, vector_depth, node_id_width=width)


@dataclass(frozen=True)
class Header:
    """The header of an image, as every encoding records it.

    Attributes
    ----------
    magic : bytes
        :data:`MAGIC`.
    version : int
        :data:`IMAGE_VERSION`.
    switch_map_digest, endpoint_map_digest : str
        Hex SHA-256 digests (:attr:`Map.digest <innet.gen.regmap.Map.digest>`) of the maps
        the writes were packed with.
    fingerprint : str
        The topology's :attr:`~innet.gen.topology.Topology.fingerprint`.
    target_count : int
        ``2 * nodes``.
    crc32 : int
        CRC-32 (:func:`zlib.crc32`) of the binary encoding without its CRC field.
    """

    magic: bytes
    version: int
    switch_map_digest: str
    endpoint_map_digest: str
    fingerprint: str
    target_count: int
    crc32: int


Writes = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Image:
    """A network configuration image (see the module documentation).

    Build one with :func:`~innet.gen.image.build_image` (or directly, from writes that
    :meth:`Map.pack <innet.gen.regmap.Map.pack>` made); check it with
    :func:`~innet.gen.image.validate`; encode it with :func:`~innet.gen.image.encode`.

    Parameters
    ----------
    params : MapParams
        The register-map parameters.
    topology : Topology
        The network.
    writes : sequence of sequence of (int, int)
        Per target id (see :func:`target_id`), the bus writes ``(address, word)``.
    failed_links : sequence of (int, int)
        Links ``(u, v)`` that have failed; kept sorted with ``u < v``.
    failed_switches : sequence of int
        Switches that have failed; kept sorted.

    Raises
    ------
    TypeError
        If a member has the wrong type.
    ValueError
        If there is not one write list per target (``2 * topology.nodes``).
    """

    params: MapParams
    topology: Topology
    writes: tuple[Writes, ...] = field(repr=False)
    failed_links: tuple[tuple[int, int], ...] = ()
    failed_switches: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_type("Params", self.params, MapParams)
        check_topology(self.topology)
        if isinstance(self.writes, (str, bytes)) or not isinstance(self.writes, Sequence):
            raise TypeError(f"Writes must be a sequence of write lists, not {self.writes!r:.60}")
        writes = tuple(tuple((a, w) for a, w in target) for target in self.writes)
        if len(writes) != self.target_count:
            raise ValueError(f"Writes must have one list per target ({self.target_count}), "
                             f"not {len(writes)}")
        object.__setattr__(self, "writes", writes)
        try:
            links = tuple(sorted({(min(int(u), int(v)), max(int(u), int(v)))
                                  for u, v in self.failed_links}))
            switches = tuple(sorted({int(s) for s in self.failed_switches}))
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"Failed links must be (u, v) pairs and failed switches node ids, "
                            f"not {self.failed_links!r:.40} and {self.failed_switches!r:.40}"
                            ) from None
        object.__setattr__(self, "failed_links", links)
        object.__setattr__(self, "failed_switches", switches)

    # -- shape ----------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The image format version (:data:`IMAGE_VERSION`)."""
        return IMAGE_VERSION

    @property
    def nodes(self) -> int:
        """Nodes of the network."""
        return self.topology.nodes

    @property
    def target_count(self) -> int:
        """Number of targets: ``2 * nodes``."""
        return 2 * self.topology.nodes

    @property
    def fingerprint(self) -> str:
        """The topology's fingerprint."""
        return self.topology.fingerprint

    @property
    def header(self) -> Header:
        """The header every encoding of this image records."""
        from innet.gen.image.binary import crc32

        return Header(MAGIC, IMAGE_VERSION, self.params.switch_map.digest,
                      self.params.endpoint_map.digest, self.fingerprint, self.target_count,
                      crc32(self))

    def kind(self, target: int) -> Target:
        """Kind of a target."""
        return target_of(target, self.nodes)[0]

    def node(self, target: int) -> int:
        """Node of a target."""
        return target_of(target, self.nodes)[1]

    def target(self, kind: Target | str, node: int) -> int:
        """Target id of the switch or endpoint of ``node``."""
        return target_id(kind, node, self.nodes)

    def name(self, target: int) -> str:
        """``"Switch 3 (target 3)"``, for messages and tables."""
        return target_name(target, self.nodes)

    def map(self, target: int) -> Map:
        """The register map of a target."""
        return self.params.map(self.kind(target))

    def values(self, target: int) -> dict[str, dict[str, int]]:
        """The written registers of a target: full name -> field values (codes).

        Raises
        ------
        ValueError
            If the writes do not unpack (see :meth:`Map.unpack <innet.gen.regmap.Map.unpack>`).
        """
        return self.map(target).unpack(self.writes[target])

    def switches(self) -> range:
        """Target ids of the switches."""
        return range(self.nodes)

    def endpoints(self) -> range:
        """Target ids of the endpoints."""
        return range(self.nodes, 2 * self.nodes)

    @property
    def write_count(self) -> int:
        """Total number of bus writes."""
        return sum(len(w) for w in self.writes)

    def __repr__(self) -> str:
        return (f"Image({self.topology!r}, {self.params}, targets={self.target_count}, "
                f"writes={self.write_count})")

