"""Shared pieces of the ``innet`` subcommands: options, output, errors and safe file writes."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

__all__ = [
    "USER_ERRORS",
    "console",
    "err_console",
    "fail",
    "json_option",
    "output_option",
    "print_json",
    "progress",
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


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    A failure part-way never leaves a half-written file behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as handle:
            handle.write(data)
        # mkstemp creates the file 0600; give it the mode a plain open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
