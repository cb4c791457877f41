"""Shared pieces of the ``innet`` subcommands: options, output, errors and safe file writes."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from innet.gen.files import check_writable, write_atomic, write_atomic_all

__all__ = [
    "FAILED",
    "USER_ERROR",
    "USER_ERRORS",
    "console",
    "count",
    "err_console",
    "fail",
    "failures",
    "json_option",
    "output_option",
    "print_json",
    "progress",
    "wide",
    "writable_path",
    "write_atomic",
    "write_atomic_all",
]

#: Exit status of a user error: a bad value, a missing file, a malformed command line.
USER_ERROR = 2
#: Exit status of a result that failed (a simulation not bit-exact, a failed check or tool) and
#: of an internal error (a bug).
FAILED = 1

#: Exceptions that are the user's to fix: one line, exit :data:`USER_ERROR`.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError)

#: Exceptions that report a failed run (by module, imported only if the run got that far):
#: one line, exit :data:`FAILED`.
_FAILURES = {
    "innet.sim.runner": ("SimulationError", "BuildError", "ToolchainError"),
    "innet.sim.synth": ("SynthError", "ToolsMissing"),
}


def failures() -> tuple[type[BaseException], ...]:
    """The exception classes of a failed run (:data:`_FAILURES`) among the loaded modules."""
    found = []
    for module, names in _FAILURES.items():
        loaded = sys.modules.get(module)
        if loaded is not None:
            found += [getattr(loaded, name) for name in names]
    return tuple(found)


def fail(message: str, code: int = USER_ERROR) -> NoReturn:
    """Print ``innet: error: message`` as one line on stderr and exit with ``code``.

    Amaranth components that the stopped run built and never elaborated say nothing as they
    are collected (an interrupted elaboration leaves hundreds)."""
    line = " ".join(message.split())
    click.echo(f"innet: error: {line}", err=True)
    hdl = sys.modules.get("amaranth.hdl")
    if hdl is not None:
        warnings.filterwarnings("ignore", category=hdl.UnusedElaboratable)
    sys.exit(code)


def count(n: int, what: str) -> str:
    """``n`` and ``what``, plural unless ``n`` is 1: ``count(1, "link")`` is ``"1 link"``,
    ``count(12, "switch")`` is ``"12 switches"``."""
    ending = "" if n == 1 else "es" if what.endswith(("s", "sh", "ch", "x")) else "s"
    return f"{n} {what}{ending}"


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

    console = err_console()
    # Disabled, not only hidden, off a terminal: a hidden display still ends with a blank line.
    return Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                    console=console, transient=True, disable=not console.is_terminal)


def json_option(func: Callable) -> Callable:
    """``--json``: print a machine-readable summary on stdout instead of the readable one."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print a machine-readable JSON summary.")(func)


def output_option(help: str = "Write the artifacts to this path.", *,
                  required: bool = False, directory: bool = False) -> Callable:
    """``-o/--output PATH``: a file, or with ``directory`` a directory to write into; checked
    as the command line is read (:func:`writable_path`), before any work."""
    options = {"required": True} if required else {"default": None}
    # No default at all when required: click does not enforce ``required`` over a default.
    return click.option("-o", "--output", type=click.Path(path_type=Path), help=help,
                        callback=writable_path(directory=directory), **options)


#: Suffixes of the files innet writes: a new output directory named with one is a mistake.
_FILE_SUFFIXES = frozenset({".json", ".txt", ".md", ".csv", ".img", ".bin", ".hex", ".mem",
                            ".v", ".h", ".png", ".graphml"})


def writable_path(*, directory: bool = False, suffix: str | None = None) -> Callable:
    """A click callback that checks a path option's value can be written
    (:func:`innet.gen.files.check_writable`) and, with ``suffix``, is named with it (a file of
    that format); ``None`` passes."""
    def check(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
        if value is None:
            return None
        name = max(param.opts, key=len)
        if suffix is not None and value.suffix.lower() != suffix:
            raise ValueError(f"{name} writes a {suffix[1:].upper()} file: name it with "
                             f"{suffix}, not '{value}'")
        if directory and value.suffix.lower() in _FILE_SUFFIXES and not value.exists():
            raise ValueError(f"{name} is a directory to write files into, and '{value}' is "
                             f"named as a file: name a directory")
        try:
            return check_writable(value, directory=directory)
        except IsADirectoryError:
            raise ValueError(f"{name} must be a file, not the directory '{value}'") from None
        except NotADirectoryError as error:
            if directory and error.strerror.startswith("Is a file"):
                raise ValueError(f"{name} must be a directory, not the file '{value}'") from None
            raise ValueError(f"{name} '{value}' cannot be written: {error.strerror}") from None
        except OSError as error:
            raise ValueError(f"{name} '{value}' cannot be written: {error.strerror}") from None

    return check


def print_json(data: Any) -> None:
    """Print ``data`` as stable, indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, sort_keys=True))
