"""Sweep specifications: a TOML file of grids, checked and expanded into points.

A spec has an optional ``[sweep]`` table and any number of ``[[hardware]]`` and ``[[network]]``
tables. Each of those is a grid: a value given as a list is an axis, and the table stands for
every combination of its axes (a table without lists is one point)::

    [sweep]
    timeout = 600                 # seconds each synthesis tool may run

    [[hardware]]                  # two points: the ALU with and without multiplier
    component = "alu"
    mul = [false, true]
    pnr = false

    [[network]]                   # two points: both algorithms on PolarFly q = 2
    topology = "polarfly"
    q = 2
    algo = ["innet", "swing-l"]
    elements = 1

Every parameter has a type and a range (:data:`HARDWARE`, :data:`NETWORK`); an unknown
parameter, a value out of range or an empty list is refused by :func:`parse_spec` with one line
naming the key and the accepted values, before anything runs. A point's parameters are complete:
the ones a table leaves out take their defaults, so the same design named with or without its
defaults is the same point.
"""

from __future__ import annotations

import functools
import itertools
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from innet.gen.regmap.switch import MAX_RADIX
from innet.sim.network import MAX_SEED

__all__ = [
    "COMPONENTS",
    "HARDWARE",
    "MAX_POINTS",
    "MAX_SHAPE_NODES",
    "NETWORK",
    "SWEEP",
    "TOPOLOGIES",
    "Param",
    "Point",
    "Spec",
    "load_spec",
    "parse_spec",
    "topology",
]


@dataclass(frozen=True)
class Param:
    """One parameter of a point: its type (``"int"``, ``"float"``, ``"bool"``, ``"str"``), its
    range (``low``, ``high``, inclusive; ``below``: exclusive upper bound) or its accepted
    values (``choices``), and its default (``required`` if it has none)."""

    kind: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    below: float | None = None
    choices: tuple[Any, ...] = ()
    required: bool = False

    def accepted(self) -> str:
        """The accepted values in words: ``an integer from 1 to 32``, ``one of a, b``."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        noun = {"int": "an integer", "float": "a number", "str": "a string"}[self.kind]
        low, high, below = (_number(x) for x in (self.low, self.high, self.below))
        if self.low is not None and self.below is not None:
            return f"{noun} from {low} to below {below}"
        if self.low is not None and self.high is not None:
            return f"{noun} from {low} to {high}"
        if self.low is not None:
            return f"{noun} of at least {low}"
        return noun

    def check(self, value: Any) -> Any:
        """``value`` if it is accepted (an integer is accepted as a float), else ``None``."""
        if self.kind == "bool":
            ok = isinstance(value, bool)
        elif self.kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif self.kind == "float":
            ok = isinstance(value, int | float) and not isinstance(value, bool) \
                and math.isfinite(value)
            value = float(value) if ok else value
        else:
            ok = isinstance(value, str)
        if not ok:
            return None
        if self.choices and value not in self.choices:
            return None
        if self.low is not None and value < self.low:
            return None
        if self.high is not None and value > self.high:
            return None
        if self.below is not None and value >= self.below:
            return None
        return value


def _int(default: Any = None, low: int | None = None, high: int | None = None, *,
         required: bool = False) -> Param:
    return Param("int", default, low, high, required=required)


def _choice(default: Any, *choices: Any) -> Param:
    return Param("str", default, choices=choices)


_SEED = _int(1, 0, 2**31 - 1)
_TARGET = _choice("ecp5", "ecp5", "ecp5-ooc", "ice40")
_FLOW = {"target": _TARGET, "pnr": Param("bool", True), "seed": _SEED}

#: Hardware components and their parameters (with the flow's ``target``, ``pnr`` and ``seed``
#: on each), with the defaults of ``innet synth`` (multipliers in an ALU, none in a collective
#: engine). Ranges follow the hardware's own checks (:class:`innet.hw.flit.FlitParams`).
COMPONENTS: dict[str, dict[str, Param]] = {
    "alu": {"mul": Param("bool", True), "tag_width": _int(0, 0, 32), **_FLOW},
    "switch": {
        "radix": _int(None, 1, MAX_RADIX, required=True), "payload_width": _int(32, 1, 1024),
        "collective_ids": _int(4, 1, 256), "routing_depth": _int(64, 1, 1 << 16),
        "buffer_depth": _int(None, 1, 4096), "local_depth": _int(None, 1, 4096),
        "p2p_vcs": _int(2, 1, 16), "index_width": _int(16, 1, 32), "tag_width": _int(8, 1, 32),
        "collective": _choice("engine", "engine", "pass", "none"), "mul": Param("bool", False),
        **_FLOW},
    "ceng": {"radix": _int(8, 1, MAX_RADIX), "collective_ids": _int(4, 1, 256),
             "mul": Param("bool", False), **_FLOW},
    "muladd": {"width": _int(8, 1, 64), **_FLOW},
}

#: Parameters of a ``[[hardware]]`` table: ``component`` and that component's.
HARDWARE = {"component": _choice(None, *COMPONENTS)}

#: Topologies of a network point.
TOPOLOGIES = ("polarfly", "hyperx", "torus")

#: Parameters of a ``[[network]]`` table (:class:`innet.sim.network.Scenario`, an allreduce on
#: every node; ``q`` for a PolarFly, ``shape`` such as ``"3x3"`` for a HyperX or torus).
NETWORK: dict[str, Param] = {
    "topology": _choice(None, *TOPOLOGIES),
    "q": _int(None, 2, 31),
    "shape": Param("str"),
    "algo": _choice("innet", "innet", "swing-l", "swing-b", "recdoub", "ring"),
    "elements": _int(1, 1, 1 << 16),
    "op": _choice("add", "add", "min", "max", "and", "or", "xor", "nor", "mul"),
    "dtype": _choice("int32", "int32", "uint32", "fp32"),
    "background": Param("float", 0.0, 0.0, 1.0),
    "pattern": _choice("uniform", "uniform", "permutation"),
    "backpressure": Param("float", 0.25, 0.0, below=1.0),
    "seed": _int(0, 0, MAX_SEED),
}

#: Most points a spec may name (each is a synthesis or a simulation of minutes).
MAX_POINTS = 10_000

#: Most switches of a simulated HyperX or torus (PolarFly's q <= 31 gives at most 993).
MAX_SHAPE_NODES = 1024

#: Parameters of the ``[sweep]`` table.
SWEEP: dict[str, Param] = {"timeout": Param("float", 1800.0, 1.0)}


@dataclass(frozen=True)
class Point:
    """One point of a sweep: one Dask task.

    Attributes
    ----------
    id : str
        ``hw1``, ``hw2``, ... and ``net1``, ... in the spec's order.
    kind : str
        ``"hardware"`` or ``"network"``.
    params : tuple of (str, value)
        Every parameter, defaults included, in the schema's order.
    """

    id: str
    kind: str
    params: tuple[tuple[str, Any], ...]

    @property
    def values(self) -> dict[str, Any]:
        """The parameters as a dict."""
        return dict(self.params)

    @property
    def label(self) -> str:
        """A short name for tables and plots: the component or topology and the parameters
        that differ from their defaults."""
        values = self.values
        if self.kind == "hardware":
            schema = COMPONENTS[values["component"]]
            head = values["component"]
        else:
            schema = NETWORK
            head = values["topology"] + (f" q={values['q']}" if values["q"] is not None
                                         else f" {values['shape']}")
        skip = {"component", "topology", "q", "shape"}
        parts = [f"{k}={_text(v)}" for k, v in self.params
                 if k not in skip and (v != schema[k].default or k in ("algo", "elements"))]
        return " ".join([head, *parts])


def _number(value: float | None) -> str:
    """A bound in words: an integer as it is (``2147483647``), a fraction as ``%g``."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Spec:
    """A checked sweep specification: its points and the ``[sweep]`` settings."""

    points: tuple[Point, ...]
    timeout: float = 1800.0
    name: str = ""


def load_spec(path: str | Path) -> Spec:
    """Read and check the spec file ``path`` (:func:`parse_spec`).

    Raises
    ------
    ValueError
        If the file is not TOML or the spec is refused (one line, naming the file).
    OSError
        If the file cannot be read.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path.name} is not valid TOML: not UTF-8 text (byte "
                         f"{error.start})") from None
    try:
        data = tomllib.loads(text)
    except ValueError as error:  # TOMLDecodeError, or an integer of thousands of digits
        raise ValueError(f"{path.name} is not valid TOML: {error}") from None
    except RecursionError:
        raise ValueError(f"{path.name} is not valid TOML: nested too deeply") from None
    try:
        return parse_spec(data, name=path.stem)
    except ValueError as error:
        raise ValueError(f"{path.name}: {error}") from None


def parse_spec(data: Mapping[str, Any], name: str = "") -> Spec:
    """Check a spec (the parsed TOML) and expand its grids into points.

    Raises
    ------
    ValueError
        For an unknown table or parameter, a value of the wrong type or out of range, an
        empty list, a value given twice in one list, parameters that do not go together, a
        spec without points or with more than :data:`MAX_POINTS`; the message names the key
        (``hardware[2].radix``) and the accepted values.
    """
    unknown = sorted(set(data) - {"sweep", "hardware", "network"})
    if unknown:
        raise ValueError(f"Unknown table {unknown[0]!r}; a spec has sweep, hardware and "
                         f"network")
    settings = data.get("sweep", {})
    if not isinstance(settings, Mapping):
        raise ValueError("sweep must be a table ([sweep])")
    for key in settings:
        if key not in SWEEP:
            raise ValueError(f"sweep has no parameter {key!r}; it takes "
                             f"{', '.join(SWEEP)}")
    timeout = _value("sweep.timeout", SWEEP["timeout"], settings.get("timeout", 1800.0))
    points: list[Point] = []
    for kind, prefix in (("hardware", "hw"), ("network", "net")):
        tables = data.get(kind, [])
        if not isinstance(tables, list) or not all(isinstance(t, Mapping) for t in tables):
            raise ValueError(f"{kind} must be an array of tables ([[{kind}]])")
        seen: dict[tuple, str] = {}
        for i, table in enumerate(tables):
            where = f"{kind}[{i}]"
            expand = _hardware if kind == "hardware" else _network
            for params in expand(where, table):
                if len(points) == MAX_POINTS:
                    raise ValueError(f"The spec names more than {MAX_POINTS:,} points; split it")
                if params in seen:
                    other = "names one point twice" if seen[params] == where else \
                        f"repeats the point of {seen[params]}"
                    raise ValueError(f"{where} {other}; each point is named once")
                seen[params] = where
                points.append(Point(f"{prefix}{len(seen)}", kind, params))
    if not points:
        raise ValueError("The spec names no points; add a [[hardware]] or [[network]] table")
    return Spec(tuple(points), timeout=timeout, name=name)


def _value(key: str, param: Param, value: Any) -> Any:
    checked = param.check(value)
    if checked is None:
        raise ValueError(f"{key} must be {param.accepted()}, not {_shown(value)}")
    return checked


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return repr(value)
    return f"{value!r:.60}"


def _grid(where: str, table: Mapping[str, Any], schema: Mapping[str, Param]
          ) -> list[dict[str, Any]]:
    """Every combination of ``table``'s axes, each value checked, defaults filled in."""
    for key in table:
        if key not in schema:
            raise ValueError(f"{where} has no parameter {key!r}; it takes "
                             f"{', '.join(schema)}")
    axes = []
    for key, param in schema.items():
        if key not in table:
            if param.required:
                raise ValueError(f"{where}.{key} is missing: give {param.accepted()}")
            axes.append([param.default])
            continue
        raw = table[key]
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            raise ValueError(f"{where}.{key} is an empty list; give {param.accepted()}, or a "
                             f"list of them")
        checked = [_value(f"{where}.{key}", param, v) for v in values]
        distinct = set()
        for v in checked:
            if v in distinct:
                raise ValueError(f"{where}.{key} lists {_shown(v)} twice")
            distinct.add(v)
        axes.append(checked)
    count = math.prod(len(axis) for axis in axes)
    if count > MAX_POINTS:
        raise ValueError(f"{where} names {count:,} points; a spec names at most "
                         f"{MAX_POINTS:,}")
    return [dict(zip(schema, combo, strict=True)) for combo in itertools.product(*axes)]


def _hardware(where: str, table: Mapping[str, Any]) -> list[tuple[tuple[str, Any], ...]]:
    if "component" not in table:
        raise ValueError(f"{where}.component is missing: give {HARDWARE['component'].accepted()}")
    component = _value(f"{where}.component", HARDWARE["component"], table["component"])
    schema = {**HARDWARE, **COMPONENTS[component]}
    out = []
    for values in _grid(where, {**table, "component": component}, schema):
        _check_hardware(where, values)
        out.append(tuple(values.items()))
    return out


def _check_hardware(where: str, values: dict[str, Any]) -> None:
    """The checks across parameters, as the hardware makes them."""
    from innet.hw.switch import CREDIT_ROUND_TRIP

    if values["component"] != "switch":
        return
    depth = values["buffer_depth"]
    if depth is not None and depth < CREDIT_ROUND_TRIP:
        raise ValueError(f"{where}.buffer_depth must be an integer from {CREDIT_ROUND_TRIP} "
                         f"(the credit round trip) to 4096, not {depth}")
    if values["collective"] == "engine" and values["payload_width"] != 32:
        raise ValueError(f"{where}.payload_width must be 32 with collective = \"engine\" (the "
                         f"engine reduces 32-bit elements), not {values['payload_width']}")


def _network(where: str, table: Mapping[str, Any]) -> list[tuple[tuple[str, Any], ...]]:
    from innet.gen.checks import parse_dims
    from innet.gen.ops import DType, Op, is_supported
    from innet.sim.network import MAX_BACKPRESSURE, MIN_BACKGROUND

    out = []
    for values in _grid(where, table, NETWORK):
        if values["topology"] is None:
            raise ValueError(f"{where}.topology is missing: give "
                             f"{NETWORK['topology'].accepted()}")
        kind = values["topology"]
        if kind == "polarfly":
            wanted, unwanted, takes = "q", "shape", "q (a prime power from 2 to 31) and no shape"
        else:
            wanted, unwanted, takes = "shape", "q", 'shape (such as "3x3") and no q'
        if values[unwanted] is not None:
            raise ValueError(f"{where}.{unwanted} does not apply: {kind} takes {takes}")
        if values[wanted] is None:
            raise ValueError(f"{where}.{wanted} is missing: {kind} takes {takes}")
        _check_topology(where, values)
        if values["shape"] is not None:  # one spelling per shape: " 3X3" is "3x3"
            values["shape"] = "x".join(map(str, parse_dims(values["shape"], "shape", '"3x3"')))
        dtype = DType.parse(values["dtype"])
        if not is_supported(Op.parse(values["op"]), dtype):
            ops = ", ".join(o for o in NETWORK["op"].choices if is_supported(Op.parse(o), dtype))
            raise ValueError(f"{where}.op must be one of {ops} on {values['dtype']}, not "
                             f"{values['op']!r}")
        # The rates the simulation's generators and throttle run (steps of 1/256).
        if 0 < values["background"] < MIN_BACKGROUND:
            raise ValueError(f"{where}.background must be 0 or at least 1/256 (0.0039), the "
                             f"traffic generators' finest rate, not {values['background']}")
        if values["backpressure"] > MAX_BACKPRESSURE:
            raise ValueError(f"{where}.backpressure must be at most 255/256 (0.996), the most "
                             f"the endpoints' throttle holds back, not {values['backpressure']}")
        out.append(tuple(values.items()))
    return out


def _check_topology(where: str, values: Mapping[str, Any]) -> None:
    problem = _topology_problem(values["topology"], values["q"], values["shape"])
    if problem is not None:
        raise ValueError(f"{where}.{problem}")


@functools.lru_cache(maxsize=256)
def _topology_problem(kind: str, q: int | None, shape: str | None) -> str | None:
    """What is wrong with a network point's topology (its key first), or None; once per
    topology however many points share it."""
    from innet.gen.checks import parse_dims
    from innet.gen.deadlock import check_diameter
    from innet.gen.topology import check_shape

    values = {"topology": kind, "q": q, "shape": shape}
    if kind == "polarfly":
        try:
            topology(values)
        except ValueError:
            return f"q must be a prime power from 2 to 31, not {q}"
        return None  # diameter 2
    syntax = f"shape must be sizes joined by 'x' such as \"3x3\", not {shape!r:.60}"
    try:
        dims = check_shape(parse_dims(shape, "shape", '"3x3"'))
    except ValueError as error:
        return syntax if str(error) == syntax else f"shape {shape!r:.60}: {error}"
    nodes = math.prod(dims)
    if nodes > MAX_SHAPE_NODES:
        return (f"shape {shape!r} has {nodes:,} switches; a simulated network has at most "
                f"{MAX_SHAPE_NODES:,}")
    try:
        check_diameter(topology(values))
    except ValueError as error:
        return f"shape {shape!r}: {error}"
    return None


def topology(values: Mapping[str, Any]):
    """The :class:`~innet.gen.topology.Topology` of a network point's parameters.

    Raises
    ------
    ValueError
        As the topology's constructor (``q must be a prime power, not 6``).
    """
    from innet.gen import topology as topo

    if values["topology"] == "polarfly":
        return topo.polarfly(values["q"])
    dims = topo.parse_shape(values["shape"])
    return topo.torus(dims) if values["topology"] == "torus" else topo.hyperx(dims)
