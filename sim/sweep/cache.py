"""The sweep's result cache: one JSON file per point, keyed by what determines its result.

A point's key (:func:`point_key`) is a hash of its parameters, the digest of its design (the
emitted Verilog: a change of the RTL is a new key), the versions of the tools that measure it,
its seed and :data:`FORMAT`. The cache is a directory (default ``$INNET_CACHE/sweep``, see
:func:`default_cache`); the workers of a cluster share results when they are given one directory
on a shared file system. Files are written through a rename, so a sweep stopped part-way leaves
whole results or none, and a later sweep resumes from them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from innet.gen.files import write_atomic

__all__ = ["CACHED_STATUSES", "FORMAT", "NOT_KEPT", "cached", "default_cache", "lookup",
           "point_key", "store"]

#: Bumped when a point's record changes form (invalidates every cached result).
FORMAT = 1

#: What a record's ``reason`` says (after its own reason, if any) when the record could not
#: be written to the cache.
NOT_KEPT = "not kept in the cache: "

#: Outcomes that are kept: a measurement, or a check the design failed (``"failed"``: an
#: incorrect result, a design that does not fit). Tool errors and timeouts are tried again.
CACHED_STATUSES = ("ok", "failed")


def default_cache() -> Path:
    """``$INNET_CACHE/sweep``, else ``~/.cache/innet/sweep``."""
    from innet.sim.runner import cache_dir

    return cache_dir() / "sweep"


def point_key(kind: str, params: Mapping[str, Any], design: str, tools: str) -> str:
    """The cache key of a point: a hash of its kind, parameters (the seed among them), design
    digest, tool versions and :data:`FORMAT`."""
    text = json.dumps({"format": FORMAT, "kind": kind, "params": dict(params),
                       "design": design, "tools": tools}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def lookup(cache: str | os.PathLike, key: str) -> dict[str, Any] | None:
    """The cached record of ``key``, or ``None`` (also for an unreadable file)."""
    path = Path(cache) / f"{key}.json"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("key") == key else None


def store(cache: str | os.PathLike, record: Mapping[str, Any]) -> None:
    """Keep ``record`` (with its ``key``) if its status is one of :data:`CACHED_STATUSES`."""
    if record["status"] in CACHED_STATUSES:
        write_atomic(Path(cache) / f"{record['key']}.json",
                     json.dumps(dict(record), indent=1, sort_keys=True) + "\n")


def cached(cache: str | os.PathLike | None, key: str,
           measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The record of ``key``: from the cache if it is there (``cached`` true), else
    ``measure()`` (a dict with ``status``, ``reason`` and ``result``), stored. ``cache=None``
    always measures and keeps nothing."""
    if cache is not None:
        old = lookup(cache, key)
        if old is not None:
            return {**old, "cached": True}
    record = {"key": key, **measure()}
    if cache is not None:
        try:
            store(cache, record)
        except OSError as error:  # the result stands; its reason says it was not kept
            why = NOT_KEPT + (error.strerror or str(error))
            record["reason"] = f"{record['reason']}; {why}" if record.get("reason") else why
    return {**record, "cached": False}
