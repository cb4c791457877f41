"""Writing files safely: the one place that writes an artifact to disk."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike, data: str | bytes | Iterable[str]) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename, and return the path.

    ``data`` is text, bytes, or an iterable of text chunks written one after the other (so a
    large file is streamed, never held whole in memory).

    A failure part-way never leaves a half-written file behind, and the file gets the mode a
    plain ``open()`` would give it (the process's umask applied to 0666). Text is written as
    given: no newline is added at the end.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    chunks = [data] if isinstance(data, str | bytes) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as handle:
            for chunk in chunks:
                handle.write(chunk)
        # mkstemp creates the file 0600.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
