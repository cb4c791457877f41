"""Shared pieces of the ``innet`` subcommands: options, output, errors and safe file writes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from innet.gen.files import write_atomic

__all__ = [
    "USER_ERRORS",
    "console",
    "err_console",
    "fail",
    "json_option",
    "output_option",
    "piuma_from_options",
    "piuma_options",
    "print_json",
    "progress",
    "wide",
    "write_atomic",
]

#: Exceptions that are the user's to fix; the CLI prints them as one line instead of a traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, TypeError, OSError, RuntimeError)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``innet: error: message`` as one line on stderr and exit with ``code``."""
    line = " ".join(message.split())
    click.echo(f"innet: error: {line}", err=True)
    sys.exit(code)


def console():
    """A rich console on stdout for summaries."""
    from rich.console import Console

    return Console(highlight=False)


def wide(out):
    """``out`` (a rich console) 120 columns wide when it is not a terminal (rich's default for a
    pipe or a file is 80, which cuts tables and wraps report lines)."""
    if not out.is_terminal:
        out.width = 120
    return out


def err_console():
    """A rich console on stderr for progress, so that ``--json`` keeps stdout clean."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def progress():
    """A rich progress display on stderr (hidden when stderr is not a terminal)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                    console=err_console(), transient=True)


def json_option(func: Callable) -> Callable:
    """``--json``: print a machine-readable summary on stdout instead of the readable one."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print a machine-readable JSON summary.")(func)


def output_option(help: str = "Write the artifacts to this path.") -> Callable:
    """``-o/--output PATH``."""
    return click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
                        help=help)


def print_json(data: Any) -> None:
    """Print ``data`` as stable, indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def piuma_options(*, nodes: str | None = None, sockets: int = 16, cores: int = 8) -> Callable:
    """The options of a PIUMA multi-level network (``--nodes --sockets --cores --mesh
    --placement --latency-core --latency-socket --latency-node``), read back by
    :func:`piuma_from_options`; ``nodes=None`` makes ``--nodes`` required."""
    options = [
        click.option("--nodes", required=nodes is None, default=nodes,
                     show_default=nodes is not None,
                     help="HyperX shape of the nodes, such as 4x4 (1: one node)."),
        click.option("--sockets", type=int, default=sockets, show_default=True,
                     help="N_S: sockets per node, all-to-all connected."),
        click.option("--cores", type=int, default=cores, show_default=True,
                     help="N_C: cores (switches) per socket, on an on-chip mesh."),
        click.option("--mesh", default=None, help="Mesh rows x cols (default: the most square)."),
        click.option("--placement", type=click.Choice(["spread", "hub"]), default="spread",
                     show_default=True, help="Which switches carry the socket and node links."),
        click.option("--latency-core", default="5ns", show_default=True,
                     help="L_C: mesh links."),
        click.option("--latency-socket", default="25ns", show_default=True,
                     help="L_S: links between sockets."),
        click.option("--latency-node", default="50ns", show_default=True,
                     help="L_P: links between nodes."),
    ]

    def decorate(func: Callable) -> Callable:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def piuma_from_options(options: dict[str, Any]):
    """The :func:`innet.gen.topology.piuma` network of :func:`piuma_options`' values, which
    are popped from ``options``.

    Raises
    ------
    ValueError, TypeError
        As :func:`innet.gen.topology.piuma` and the option parsers.
    """
    from innet.gen.topology import parse_nodes, piuma
    from innet.sim.cli.analyze import parse_mesh, parse_time

    return piuma(parse_nodes(options.pop("nodes")), options.pop("sockets"),
                 options.pop("cores"), mesh=parse_mesh(options.pop("mesh")),
                 placement=options.pop("placement"),
                 latency_core=parse_time(options.pop("latency_core"), "--latency-core"),
                 latency_socket=parse_time(options.pop("latency_socket"), "--latency-socket"),
                 latency_node=parse_time(options.pop("latency_node"), "--latency-node"))

