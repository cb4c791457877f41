"""The ``innet`` command.

Every subcommand is a module of this package named after it (``topo.py`` is ``innet topo``,
``foo_bar.py`` is ``innet foo-bar``) that defines a click command or group called ``command``.
Modules are imported only when their command runs or help is shown, so they keep heavy imports
(Amaranth, galois) inside their functions where it matters for start-up time.

Errors end the program with one line on stderr, ``innet: error: ...``: a user error (a bad value,
a missing file, a malformed command line) exits 2; a failed result (a simulation that is not
bit-exact, a failed check or tool) exits 1. Any other exception is a bug in innet: it is reported
as an internal error and exits 1. ``INNET_DEBUG=1`` shows the traceback of either instead.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

import click

from innet.sim.cli._common import FAILED, USER_ERROR, USER_ERRORS, fail, failures

__all__ = ["main"]


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
        try:
            code = super().main(args=args, prog_name=prog_name or "innet",
                                standalone_mode=False, **extra)
        except click.exceptions.Exit as done:
            code = done.exit_code
        except click.exceptions.Abort:
            fail("aborted", code=130)
        except click.ClickException as error:
            fail(error.format_message(), code=USER_ERROR)
        except USER_ERRORS as error:
            if os.environ.get("INNET_DEBUG"):
                raise
            fail(_line(error), code=USER_ERROR)
        except Exception as error:
            if os.environ.get("INNET_DEBUG"):
                raise
            if isinstance(error, failures()):
                fail(_line(error), code=FAILED)
            fail(f"internal error (a bug in innet): {type(error).__name__}: {_line(error)}; "
                 f"rerun with INNET_DEBUG=1 for the traceback", code=FAILED)
        sys.exit(code if isinstance(code, int) else 0)


def _line(error: BaseException) -> str:
    """The first line of ``error``'s message (its repr if it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else repr(error)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="innet", prog_name="innet")
def main() -> None:
    """innet: topologies, in-network collectives, switch RTL and cycle-accurate simulation.

    Run `innet demo` to see everything work together, `innet doctor` to check the toolchain.
    """
