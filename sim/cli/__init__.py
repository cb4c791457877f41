"""The ``innet`` command.

Every subcommand is a module of this package named after it (``topo.py`` is ``innet topo``,
``foo_bar.py`` is ``innet foo-bar``) that defines a click command or group called ``command``.
Modules are imported only when their command runs or help is shown, so they keep heavy imports
(Amaranth, numba) inside their functions where it matters for start-up time.

Errors end the program with one line on stderr, ``innet: error: ...``: a user error (a bad value,
a missing file, a malformed command line) exits 2; a failed result (a simulation that is not
bit-exact, a failed check or tool) exits 1, and so does running out of memory. Any other
exception is a bug in innet: it is reported as an internal error and exits 1. ``INNET_DEBUG=1``
shows the traceback of either instead. An interrupt (Ctrl-C, exit 130) or ``SIGTERM`` (exit
143) unwinds the program as an exception, so that the tools it started are stopped and its
temporary files removed.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import signal
import sys

import click

from innet.sim.cli._common import FAILED, USER_ERROR, USER_ERRORS, fail, failures

__all__ = ["main"]


class Terminated(BaseException):
    """``SIGTERM`` arrived: raised where the program is, unwinding it as ``KeyboardInterrupt``
    does (a ``BaseException``, so that no ``except Exception`` takes it for an error)."""


class _Commands(click.Group):
    """A group whose subcommands are the public modules of this package."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(info.name.replace("_", "-") for info in pkgutil.iter_modules(__path__)
                      if not info.name.startswith("_"))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.list_commands(ctx):
            return None
        module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
        return module.command

    def main(self, args=None, prog_name=None, **extra):
        def terminate(signum, frame):
            # Like Ctrl-C: the tools' processes are killed and temporary files removed on the
            # way out.
            raise Terminated

        try:
            previous = signal.signal(signal.SIGTERM, terminate)
        except ValueError:  # not the main thread: leave SIGTERM alone
            previous = None
        try:
            code = super().main(args=args, prog_name=prog_name or "innet",
                                standalone_mode=False, **extra)
        except click.exceptions.Exit as done:
            code = done.exit_code
        except _NO_ARGS_IS_HELP as error:  # a group without its command: its help, unchanged
            error.show()
            code = USER_ERROR
        except click.exceptions.Abort:
            fail("aborted", code=130)
        except Terminated:
            fail("terminated", code=128 + signal.SIGTERM)
        except click.ClickException as error:
            fail(error.format_message(), code=USER_ERROR)
        except USER_ERRORS as error:
            if debug():
                raise
            fail(_os_line(error) if isinstance(error, OSError) else _line(error),
                 code=USER_ERROR)
        except MemoryError as error:
            if debug():
                raise
            fail("out of memory: " + (_line(error) if str(error) else
                                      "this run needs more than the machine has; try a "
                                      "smaller network or vector"), code=FAILED)
        except Exception as error:
            if debug():
                raise
            if isinstance(error, failures()):
                fail(_line(error), code=FAILED)
            fail(f"internal error (a bug in innet): {type(error).__name__}: {_line(error)}; "
                 f"rerun with INNET_DEBUG=1 for the traceback", code=FAILED)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        sys.exit(code if isinstance(code, int) else 0)


#: What click raises for a group called without its command (click 8.2 and later; earlier
#: versions print the help and exit 0).
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def debug() -> bool:
    """``INNET_DEBUG`` asks for tracebacks: ``1``, ``true``, ``yes`` or ``on``."""
    return os.environ.get("INNET_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}


def _os_line(error: OSError) -> str:
    """An operating-system error as the file it concerns and the reason
    (``missing.json: No such file or directory``), without Python's ``[Errno N]``."""
    if error.filename is None or not error.strerror:
        return _line(error)
    def name(value) -> str:
        return os.fsdecode(value) if isinstance(value, str | bytes | os.PathLike) else str(value)

    names = name(error.filename)
    if error.filename2 is not None:
        names += f" -> {name(error.filename2)}"
    return f"{names}: {error.strerror}"


def _line(error: BaseException) -> str:
    """The first line of ``error``'s message (its repr if it has none); a first line that ends
    in a colon, before a tool's log, gets the log's first error line, else its last line."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return repr(error)
    first, log = lines[0], lines[1:]
    if first.endswith(":") and log:
        errors = [line for line in log if "error" in line.lower()]
        first = f"{first} {(errors or log[-1:])[0]}"
    return first


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="innet", prog_name="innet")
def main() -> None:
    """innet: topologies, in-network collectives, switch RTL and cycle-accurate simulation.

    Run `innet demo` to see everything work together, `innet doctor` to check the toolchain.
    """
