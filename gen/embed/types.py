"""The embedding types: :class:`SwitchConfig` (one switch, one collective id) and
:class:`Embedding` (one collective on one id).

These are the cross-team contract of ``innet.gen.embed`` (see BRIEF, "Embedding"): per
configured switch the request input ports (``LOCAL`` included where the node contributes), the
request output port (``None`` at the root), the response input port (``None`` at the root)
and the response multicast ports (``LOCAL`` included where the result is delivered); per
collective the operation and data type codes of :mod:`innet.gen.ops`, the root, the
participants and the collective id. Everything is plain ints, frozensets and tuples.

Kinds (PIUMA, "In-network Allreduce on PIUMA"; the response tree is the inverse of the
request tree):

- ``"allreduce"``: every participant contributes; the result returns to every participant
  (``resp_out == req_in`` and ``resp_in == req_out`` at every switch).
- ``"barrier"``: a zero-length allreduce, configured exactly like one.
- ``"reduce"``: every participant contributes; the result is delivered at the root only (the
  root's ``resp_out == {LOCAL}``; no other switch has a response configuration).
- ``"broadcast"``: the root's local input is the only request (``req_in == {LOCAL}`` at the
  root, empty elsewhere; no switch sends requests, so ``req_out`` is ``None`` everywhere); the
  response tree (``resp_in`` pointing up) delivers it to every participant, the root
  included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from innet.gen.checks import check_type
from innet.gen.ops import DType, Op
from innet.gen.topology import LOCAL

__all__ = ["KINDS", "Embedding", "SwitchConfig", "check_embedding", "port_json", "ports_json"]

#: Collective kinds an :class:`Embedding` can describe.
KINDS = ("allreduce", "reduce", "broadcast", "barrier")


def port_json(port: int | None) -> int | str | None:
    """A port as JSON: the number, ``"local"`` for ``LOCAL``, ``None`` stays ``None``."""
    return "local" if port == LOCAL else port


def ports_json(ports: Iterable[int]) -> list[int | str]:
    """A port set as a JSON list: network ports ascending, then ``"local"`` if present."""
    ports = set(ports)
    out: list[int | str] = sorted(p for p in ports if p != LOCAL)
    if LOCAL in ports:
        out.append("local")
    return out


@dataclass(frozen=True)
class SwitchConfig:
    """The configuration of one switch for one collective id.

    Members
    -------
    node : int
        The switch (node id).
    req_in : frozenset of int
        Ports whose requests are reduced here; ``LOCAL`` where the node contributes.
    req_out : int or None
        Port the reduced request leaves on toward the root; ``None`` at the root (and on
        switches that send no requests, in a broadcast).
    resp_in : int or None
        Port the response arrives on; ``None`` at the root (and where no response passes).
    resp_out : frozenset of int
        Ports the response is multicast to; ``LOCAL`` where the result is delivered.
    """

    node: int
    req_in: frozenset[int] = frozenset()
    req_out: int | None = None
    resp_in: int | None = None
    resp_out: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "req_in", frozenset(self.req_in))
        object.__setattr__(self, "resp_out", frozenset(self.resp_out))

    def to_dict(self) -> dict[str, Any]:
        """``{"node", "req_in", "req_out", "resp_in", "resp_out"}`` with ``"local"`` for LOCAL."""
        return {"node": self.node, "req_in": ports_json(self.req_in),
                "req_out": port_json(self.req_out), "resp_in": port_json(self.resp_in),
                "resp_out": ports_json(self.resp_out)}


@dataclass(frozen=True)
class Embedding:
    """One collective embedded in the network on one collective id.

    Build one with :func:`innet.gen.embed.embed` (or :func:`innet.gen.embed.reconstruct`
    from decoded registers) and check it with :func:`innet.gen.embed.verify`.

    Members
    -------
    kind : str
        One of :data:`KINDS`.
    op : Op
        Reduction operation (register code, :mod:`innet.gen.ops`).
    dtype : DType
        Element data type (register code).
    root : int
        The root switch.
    participants : tuple of int
        Contributing / receiving nodes, ascending.
    collective_id : int
        The register copy the configuration occupies.
    switches : tuple of SwitchConfig
        Every configured switch, ascending node id.
    depth : int
        Hops on the longest participant-to-root path.
    links : tuple of (int, int, int, int)
        Request-direction links ``(child, child_port, parent, parent_port)``, ascending; the
        response uses the same links the other way (except for a reduce, which has none).
    topology : str
        Fingerprint of the topology it was made for.
    failed_links : tuple of (int, int)
        Links (``u < v``) it avoids.
    failed_switches : tuple of int
        Switches it avoids.
    """

    kind: str
    op: Op
    dtype: DType
    root: int
    participants: tuple[int, ...]
    collective_id: int
    switches: tuple[SwitchConfig, ...]
    depth: int
    links: tuple[tuple[int, int, int, int], ...]
    topology: str
    failed_links: tuple[tuple[int, int], ...] = ()
    failed_switches: tuple[int, ...] = ()
    _index: dict = field(default_factory=dict, init=False, repr=False, compare=False,
                         hash=False)

    def __repr__(self) -> str:
        return (f"Embedding({self.kind}, root={self.root}, participants={len(self.participants)}"
                f", collective_id={self.collective_id}, switches={len(self.switches)}, "
                f"depth={self.depth}, op={self.op.name.lower()}, "
                f"dtype={self.dtype.name.lower()})")

    @cached_property
    def nodes(self) -> frozenset[int]:
        """The configured switches."""
        return frozenset(s.node for s in self.switches)

    def switch(self, node: int) -> SwitchConfig | None:
        """The configuration of ``node``, or ``None`` if it is not configured."""
        if not self._index:
            self._index.update((s.node, s) for s in self.switches)
        return self._index.get(node)

    def response_links(self) -> tuple[tuple[int, int, int, int], ...]:
        """Response-direction links ``(parent, parent_port, child, child_port)``."""
        if self.kind == "reduce":
            return ()
        return tuple(sorted((v, pv, u, pu) for u, pu, v, pv in self.links))

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form: ``kind, op, dtype, root, participants, collective_id, depth,
        switches, links_used`` (request direction, ``[child, port, parent, port]``),
        ``topology``, ``failed_links``, ``failed_switches``."""
        return {"kind": self.kind, "op": self.op.name.lower(),
                "dtype": self.dtype.name.lower(), "root": self.root,
                "participants": list(self.participants), "collective_id": self.collective_id,
                "depth": self.depth, "switches": [s.to_dict() for s in self.switches],
                "links_used": [list(link) for link in self.links],
                "topology": self.topology,
                "failed_links": [list(link) for link in self.failed_links],
                "failed_switches": list(self.failed_switches)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Embedding:
        """Rebuild from :meth:`to_dict` output (not checked: call ``verify`` with the topology).

        Raises
        ------
        ValueError
            If a field is missing or malformed.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"Embedding JSON must be an object, not {type(data).__name__}")

        def listed(values: Any) -> list | tuple:
            if not isinstance(values, list | tuple):
                raise ValueError(f"a list was expected, not {values!r:.40}")
            return values

        def ports(values: Any) -> frozenset[int]:
            return frozenset(LOCAL if p == "local" else int(p) for p in listed(values))

        def port(value: Any) -> int | None:
            return None if value is None else LOCAL if value == "local" else int(value)

        def switch(s: Any) -> SwitchConfig:
            if not isinstance(s, Mapping):
                raise ValueError(f"a switch must be an object, not {s!r:.40}")
            return SwitchConfig(int(s["node"]), ports(s["req_in"]), port(s["req_out"]),
                                port(s["resp_in"]), ports(s["resp_out"]))

        def integers(values: Any) -> tuple[int, ...]:
            return tuple(int(x) for x in listed(values))

        def links(values: Any) -> tuple[tuple[int, ...], ...]:
            return tuple(integers(link) for link in listed(values))

        def read(name: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
            if name not in data and default is None:
                raise ValueError(f"Embedding JSON lacks {name!r}")
            try:
                return convert(data.get(name, default))
            except KeyError as missing:
                raise ValueError(f"Embedding JSON field {name!r} is malformed: it lacks "
                                 f"{missing.args[0]!r}") from None
            except (TypeError, ValueError, OverflowError) as error:
                raise ValueError(f"Embedding JSON field {name!r} is malformed: {error}"
                                 ) from None

        def collective_id(value: Any) -> int:
            if int(value) < 0:
                raise ValueError(f"collective id {value} is negative")
            return int(value)

        return cls(kind=read("kind", str), op=read("op", Op.parse),
                   dtype=read("dtype", DType.parse), root=read("root", int),
                   participants=read("participants", integers),
                   collective_id=read("collective_id", collective_id),
                   switches=read("switches", lambda values: tuple(map(switch, listed(values)))),
                   depth=read("depth", int), links=read("links_used", links),
                   topology=read("topology", str),
                   failed_links=read("failed_links", links, default=()),
                   failed_switches=read("failed_switches", integers, default=()))


def check_embedding(embedding: object) -> Embedding:
    """``embedding`` if it is an :class:`Embedding`.

    Raises
    ------
    TypeError
        ``Embedding must be an Embedding, not {type name}``.
    """
    return check_type("Embedding", embedding, Embedding)
