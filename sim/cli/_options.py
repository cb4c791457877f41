"""Options the ``innet`` subcommands share, defined once so that each means the same everywhere.

A topology is chosen the same way by every command that takes one: a positional ``KIND``
(``polarfly``, ``hyperx``, ``torus``, ``piuma``) and that kind's options (:func:`topology_options`,
read back by :func:`topology_from_args`). The hardware parameters (flit format, depths, the
multiplier) take their defaults from the library that builds the hardware.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import click

from innet.sim.cli._parse import SIZE_GRAMMAR, Size, parse_mesh, parse_time

__all__ = [
    "KINDS",
    "buffer_depth_option",
    "decorate",
    "dtype_option",
    "endpoint_options",
    "fitted_option",
    "flit_option",
    "flit_options",
    "given",
    "local_depth_option",
    "mul_option",
    "op_option",
    "piuma_options",
    "step_depth_option",
    "switch_options",
    "topology_from_args",
    "topology_options",
    "vector_depth_option",
]

#: The topologies a command can take.
KINDS = ("polarfly", "hyperx", "torus", "piuma")

#: The options of each kind, as click parameter names.
_KIND_OPTIONS = {
    "polarfly": ("q", "r0", "r1"),
    "hyperx": ("shape",),
    "torus": ("shape", "mesh"),
    "piuma": ("nodes", "sockets", "cores", "core_mesh", "placement", "latency_core",
              "latency_socket", "latency_node"),
}
_ALL = tuple(dict.fromkeys(name for names in _KIND_OPTIONS.values() for name in names))

_OPS = ("add", "min", "max", "and", "or", "xor", "nor", "mul")
_DTYPES = ("int32", "uint32", "fp32")


def decorate(func: Callable, options: list[Callable]) -> Callable:
    """``func`` with ``options`` applied, the first one shown first in the help."""
    for option in reversed(options):
        func = option(func)
    return func


def _default(func: Callable, name: str) -> Any:
    """The default of parameter ``name`` of ``func`` (the library's, not a copy of it)."""
    return inspect.signature(func).parameters[name].default


def piuma_options(func: Callable) -> Callable:
    """The options of a PIUMA multi-level network (``--nodes --sockets --cores --core-mesh
    --placement --latency-core --latency-socket --latency-node``), with the defaults of
    :func:`innet.gen.topology.piuma`."""
    from innet.gen.topology import piuma

    def ns(name: str) -> str:
        return f"{_default(piuma, name):g}ns"

    return decorate(func, [
        click.option("--nodes", default=None, metavar="AxB...",
                     help="PIUMA: HyperX shape of the nodes, such as 4x4 (1: one node)."),
        click.option("--sockets", type=int, default=_default(piuma, "sockets"),
                     show_default=True, help="PIUMA: N_S, sockets per node, all-to-all."),
        click.option("--cores", type=int, default=_default(piuma, "cores"), show_default=True,
                     help="PIUMA: N_C, cores (switches) per socket, on an on-chip mesh."),
        click.option("--core-mesh", default=None, metavar="RxC",
                     help="PIUMA: on-chip mesh rows x cols, such as 2x4 [the most square]."),
        click.option("--placement", type=click.Choice(["spread", "hub"]),
                     default=_default(piuma, "placement"), show_default=True,
                     help="PIUMA: which switches carry the socket and node links."),
        click.option("--latency-core", default=ns("latency_core"), show_default=True,
                     metavar="TIME",
                     help="PIUMA: L_C, latency of a mesh link (a bare number is in ns)."),
        click.option("--latency-socket", default=ns("latency_socket"), show_default=True,
                     metavar="TIME",
                     help="PIUMA: L_S, latency of a link between sockets (a bare number is in "
                          "ns)."),
        click.option("--latency-node", default=ns("latency_node"), show_default=True,
                     metavar="TIME",
                     help="PIUMA: L_P, latency of a link between nodes (a bare number is in ns)."),
    ])


def topology_options(func: Callable) -> Callable:
    """The positional ``KIND`` and the options of every kind, read back by
    :func:`topology_from_args`."""
    func = piuma_options(func)
    return decorate(func, [
        click.argument("kind", type=click.Choice(KINDS), metavar="KIND"),
        click.option("--q", type=int, default=None,
                     help="PolarFly: the prime power q (q^2+q+1 routers of radix q+1)."),
        click.option("--r0", type=int, default=0, show_default=True,
                     help="PolarFly: quadric-cluster replications (Section VI-A)."),
        click.option("--r1", type=int, default=0, show_default=True,
                     help="PolarFly: non-quadric clusters replicated, at most q (Section VI-B; "
                          "odd q)."),
        click.option("--shape", default=None, metavar="AxB...",
                     help="HyperX, torus: sizes per dimension, such as 4x4 or 4x4x4."),
        click.option("--mesh", is_flag=True, help="Torus: no wrap-around links (a mesh)."),
    ])


def given(name: str) -> bool:
    """Whether option ``name`` (its parameter name, ``clock_mhz``) of the command running now
    was given, on the command line or by an environment variable, not left to its default."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    source = ctx.get_parameter_source(name)
    return source is not None and source is not click.core.ParameterSource.DEFAULT


def topology_from_args(kind: str, options: dict[str, Any], *, starter: int | None = None
                       ) -> Any:
    """The network (:class:`innet.gen.topology.Topology`) of :func:`topology_options`' values,
    which are popped from ``options``; its one name is its ``title``, such as ``torus 4x4``.

    Raises
    ------
    ValueError
        If an option the kind needs is missing, an option of another kind is given, or a
        value is invalid (as the topology constructors).
    """
    from innet.gen import topology

    values = {name: options.pop(name) for name in _ALL if name in options}
    foreign = [f"--{name.replace('_', '-')}" for name in _ALL
               if name not in _KIND_OPTIONS[kind] and given(name)]
    if foreign:
        takes = ", ".join(f"--{name.replace('_', '-')}" for name in _KIND_OPTIONS[kind])
        raise ValueError(f"{', '.join(foreign)} do{'es' * (len(foreign) == 1)} not apply to "
                         f"{kind}, which takes {takes}")
    if kind == "polarfly":
        q, r0, r1 = values["q"], values["r0"], values["r1"]
        if q is None:
            raise ValueError("polarfly needs --q")
        topo = topology.polarfly(q, r0=r0, r1=r1, starter=starter)
        return topo
    if kind == "piuma":
        if values["nodes"] is None:
            raise ValueError("piuma needs --nodes, such as 2x2")
        topo = topology.piuma(
            topology.parse_nodes(values["nodes"]), values["sockets"], values["cores"],
            mesh=parse_mesh(values["core_mesh"]), placement=values["placement"],
            latency_core=parse_time(values["latency_core"], "--latency-core"),
            latency_socket=parse_time(values["latency_socket"], "--latency-socket"),
            latency_node=parse_time(values["latency_node"], "--latency-node"))
        return topo
    if values["shape"] is None:
        raise ValueError(f"{kind} needs --shape, such as 4x4")
    dims = topology.parse_shape(values["shape"])
    mesh = bool(values.get("mesh"))
    topo = topology.torus(dims, mesh=mesh) if kind == "torus" else topology.hyperx(dims)
    return topo


# -- operations and data ------------------------------------------------------------------------

def op_option(func: Callable) -> Callable:
    """``--op``, default ``add`` (the library's, :func:`innet.gen.embed.embed`)."""
    return click.option("--op", type=click.Choice(_OPS), default="add", show_default=True,
                        help="Reduction operation.")(func)


def dtype_option(func: Callable) -> Callable:
    """``--dtype``, default ``int32`` (the library's, :func:`innet.gen.embed.embed`)."""
    return click.option("--dtype", type=click.Choice(_DTYPES), default="int32",
                        show_default=True, help="Element data type.")(func)


def mul_option(*, default: bool) -> Callable[[Callable], Callable]:
    """``--mul/--no-mul``: build the multipliers. On by default for an ALU and an endpoint, off
    for a collective engine (in-network reductions need no multiplier)."""
    return click.option("--mul/--no-mul", default=default, show_default=True,
                        help="Build the multipliers (the mul operation; four DSP blocks per "
                             "ALU on ECP5).")


# -- hardware sizes -----------------------------------------------------------------------------

def _flit_default(name: str) -> int:
    from innet.hw.flit import FlitParams

    return FlitParams.__dataclass_fields__[name].default


def _endpoint_default(name: str) -> Any:
    from innet.hw.endpoint import Endpoint

    return _default(Endpoint.__init__, name)


_FLIT_HELP = {
    "payload_width": "Bits of a flit's payload (one element).",
    "collective_ids": "Collective ids (register copies and request virtual channels).",
    "routing_depth": "Routing-table entries (node ids).",
    "p2p_vcs": "Hop-indexed p2p virtual channels (at least the network diameter).",
    "index_width": "Bits of a flit's element index.",
    "tag_width": "Bits of a p2p flit's tag (the endpoint's step number).",
}


def flit_option(name: str) -> Callable:
    """One field of the flit format as an option (``collective_ids`` is
    ``--collective-ids``), default :class:`innet.hw.flit.FlitParams`'s."""
    return click.option(f"--{name.replace('_', '-')}", type=int, default=_flit_default(name),
                        show_default=True, help=_FLIT_HELP[name])


def flit_options(*, payload: bool = False) -> Callable:
    """The flit format (``--collective-ids --routing-depth --p2p-vcs --index-width
    --tag-width``, and ``--payload-width`` if ``payload``), defaults of
    :class:`innet.hw.flit.FlitParams`."""
    names = [name for name in _FLIT_HELP if payload or name != "payload_width"]
    return lambda func: decorate(func, [flit_option(name) for name in names])


_STEP_DEPTH_HELP = "Endpoint: step-table entries."


def step_depth_option(func: Callable) -> Callable:
    """``--step-depth``: an endpoint's step-table entries, default
    :class:`innet.hw.endpoint.Endpoint`'s."""
    return click.option("--step-depth", type=int, default=_endpoint_default("step_depth"),
                        show_default=True, help=_STEP_DEPTH_HELP)(func)


def fitted_option(name: str, fit: str) -> Callable:
    """A hardware size (a flit field such as ``collective_ids``, or ``step_depth``) as an
    image takes it: the same option, whose default (``None``) sizes the image to its content,
    as ``fit`` says."""
    help = _STEP_DEPTH_HELP if name == "step_depth" else _FLIT_HELP[name]
    return click.option(f"--{name.replace('_', '-')}", type=int, default=None,
                        help=f"{help} [{fit}]")


def local_depth_option(func: Callable) -> Callable:
    """``--local-depth``: the endpoint's receive buffer per VC, default as
    :class:`innet.hw.switch.Switch`'s."""
    from innet.hw.credit import LOCAL_EXTRA

    return click.option("--local-depth", type=int, default=None,
                        help=f"The endpoint's receive buffer per VC (the switch's local "
                             f"depth) [default: --buffer-depth plus {LOCAL_EXTRA}, for one "
                             f"result per cycle from a collective path; a switch with "
                             f"--collective none: --buffer-depth].")(func)


def buffer_depth_option(func: Callable) -> Callable:
    """``--buffer-depth``: flits per switch input port and VC, default
    :class:`innet.hw.endpoint.Endpoint`'s."""
    return click.option("--buffer-depth", type=int, default=_endpoint_default("buffer_depth"),
                        show_default=True,
                        help="Flits per switch input port and virtual channel; a switch "
                             "needs the credit round trip for full throughput, and takes no "
                             "fewer.")(func)


def vector_depth_option(default: int | None = 1024) -> Callable:
    """``--vector-depth SIZE``: elements of an endpoint's vector memory (the hardware checks
    its range); required when ``default`` is ``None``."""
    help = f"Endpoint: elements (32-bit) of the vector memory ({SIZE_GRAMMAR})."
    if default is None:
        # No default at all: click does not enforce ``required`` over an explicit default.
        return click.option("--vector-depth", type=Size(), required=True, help=help)
    return click.option("--vector-depth", type=Size(), default=default, show_default=True,
                        help=help)


def endpoint_options(func: Callable) -> Callable:
    """The endpoint's construction parameters (``innet verilog endpoint``, ``innet synth
    endpoint``); the command receives them named like :func:`innet.hw.variants.make_endpoint`'s."""
    return decorate(func, [
        vector_depth_option(default=None),
        step_depth_option,
        flit_options(),
        buffer_depth_option,
        local_depth_option,
        mul_option(default=True),
    ])


def switch_options(func: Callable) -> Callable:
    """The switch's construction parameters (``innet verilog switch``, ``innet synth
    switch``); the command receives them named like :func:`innet.hw.variants.make_switch`'s."""
    return decorate(func, [
        click.option("--radix", type=int, required=True,
                     help="Network ports (the topology's maximum degree); the local port is "
                          "extra."),
        flit_options(payload=True),
        buffer_depth_option,
        local_depth_option,
    ])
