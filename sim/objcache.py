"""A compiler cache for the objects every Verilator model shares.

Every model :func:`innet.sim.runner.build` compiles links the same run-time objects: Verilator's
library (``verilated.o``, ``verilated_vpi.o``, ``verilated_threads.o``, ``verilated_dpi.o``,
and ``verilated_vcd_c.o`` with waves). Compiled afresh for each model they cost about 20
seconds of a 2-core machine, more than the whole C++ of a small design. Verilator's makefiles
run every compile through ``$(OBJCACHE)`` (meant for ccache); :func:`objcache_command` writes a
small shell script for it that keeps each object whose source lies outside the model's build
directory and whose dependencies (the compiler's ``.d`` file) are all outside it too, keyed by
the complete compile command and the source's checksum, and copies it instead of compiling it
again. Everything else is always compiled: the model's own files, and cocotb's ``main``
(``verilator.o``), which includes the model's header.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["objcache_command"]

_SCRIPT = """#!/bin/sh
# Verilator's $(OBJCACHE) for innet (innet.sim.objcache): "$@" is one compile command.
# An object of a source outside the build directory is kept in the store below, keyed by the
# command and the source's checksum, and copied instead of compiled the next time.
store={store}
out= prev= src=
for arg in "$@"; do
    [ "$prev" = "-o" ] && out=$arg
    prev=$arg
    src=$arg
done
case $src in
    /*.cpp) ;;
    *) exec "$@" ;;
esac
[ -n "$out" ] || exec "$@"
key=$({{ printf '%s\\n' "$@"; cksum < "$src"; }} | sha256sum | cut -c1-32)
if [ -f "$store/$key.o" ] && [ -f "$store/$key.d" ]; then
    cp "$store/$key.d" "${{out%.o}}.d" && cp "$store/$key.o" "$out" && exit 0
fi
"$@" || exit
# Kept only if it depends on no file of the build directory (cocotb's main includes the
# model's header: its object belongs to one model).
deps="${{out%.o}}.d"
[ -f "$deps" ] || exit 0
sed '1s/^[^:]*://' "$deps" | tr ' \\\\' '\\n\\n' | grep -v '^$' | grep -qv '^/' && exit 0
tmp="$store/.$key.$$"
cp "$deps" "$tmp.d" && mv "$tmp.d" "$store/$key.d"
cp "$out" "$tmp.o" && mv "$tmp.o" "$store/$key.o"
exit 0
"""


def objcache_command(store: Path) -> str | None:
    """Write the ``$(OBJCACHE)`` script that keeps shared objects in ``store`` (created) and
    return its path, for ``OBJCACHE=...`` in ``MAKEFLAGS``. ``None`` when the path has
    whitespace (``MAKEFLAGS`` cannot carry it) or ``sha256sum`` is missing: objects are then
    compiled as usual."""
    if any(c.isspace() for c in str(store)) or shutil.which("sha256sum") is None:
        return None
    store.mkdir(parents=True, exist_ok=True)
    script = store / "objcache.sh"
    text = _SCRIPT.format(store=str(store))
    if not script.is_file() or script.read_text() != text:
        tmp = store / f".objcache.{os.getpid()}"
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(script)
    return str(script)
