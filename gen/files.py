"""Writing files safely: the one place that writes an artifact to disk."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["check_writable", "write_atomic", "write_atomic_all"]


def write_atomic(path: str | os.PathLike, data: str | bytes | Iterable[str]) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename, and return the path.

    ``data`` is text, bytes, or an iterable of text chunks written one after the other (so a
    large file is streamed, never held whole in memory).

    Missing parent directories are created. A failure part-way never leaves a half-written
    file behind, and the file gets the mode a plain ``open()`` would give it (the process's
    umask applied to 0666). Text is written as given: no newline is added at the end. A
    symbolic link is followed (the file it names is replaced, the link stays), and a device,
    FIFO or socket (``/dev/stdout``, ``/dev/null``) is written in place, as a shell's ``>``
    writes it: neither is replaced by a regular file.

    Raises
    ------
    OSError
        If ``path`` cannot be written; the error names ``path`` (not the temporary file), and a
        directory where the file should go, or a file where a parent directory should, is
        named as such.
    """
    return write_atomic_all([(path, data)])[0]


def write_atomic_all(files: Iterable[tuple[str | os.PathLike, str | bytes | Iterable[str]]]
                     ) -> list[Path]:
    """Write several files as :func:`write_atomic` writes one, all or none: each regular file
    is written to a temporary file beside it, and only when every file is written are they
    renamed into place. A failure while writing any of them removes the temporary files and
    leaves every regular file as it was. Returns the paths, in order.

    Raises
    ------
    OSError
        As :func:`write_atomic`, naming the path that could not be written.
    """
    files = [(_placed(Path(path), directory=False), data) for path, data in files]
    # Tested before a link is resolved: /dev/stdout on a pipe links to /proc/self/fd/1, which
    # opens the pipe but whose target, "pipe:[N]", names no file. A device, FIFO or socket is
    # written in place, after every regular file is staged.
    special = [_special(given) for given, _ in files]
    staged: list[tuple[str, Path, Path]] = []  # (temporary file, the file it replaces, path)
    try:
        for (given, data), in_place in zip(files, special, strict=True):
            if in_place:
                continue
            final = Path(os.path.realpath(given)) if given.is_symlink() else given
            with _naming(given):
                final.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", dir=final.parent)
                staged.append((tmp, final, given))
                with os.fdopen(fd, _mode(data)) as handle:
                    _write(handle, data)
                # mkstemp creates the file 0600.
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
        for (given, data), in_place in zip(files, special, strict=True):
            if in_place:
                with _naming(given), open(given, _mode(data)) as handle:
                    _write(handle, data)
        for tmp, final, given in staged:
            with _naming(given):
                os.replace(tmp, final)
    except BaseException:
        for tmp, _, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    return [given for given, _ in files]


def _mode(data) -> str:
    return "wb" if isinstance(data, bytes) else "w"


def _write(handle, data) -> None:
    """Write ``data`` (text, bytes or text chunks) to ``handle``."""
    for chunk in [data] if isinstance(data, str | bytes) else data:
        handle.write(chunk)


@contextlib.contextmanager
def _naming(path: Path):
    """An OSError raised inside names ``path`` (not a temporary file)."""
    try:
        yield
    except OSError as error:
        if error.errno is None:
            raise
        raise type(error)(error.errno, error.strerror, str(path)) from None


def _special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a device, FIFO
    or socket)."""
    try:
        return not stat.S_ISREG(mode := path.stat().st_mode) and not stat.S_ISDIR(mode)
    except OSError:
        return False


def check_writable(path: str | os.PathLike, *, directory: bool = False) -> Path:
    """Check that ``path`` can be written, before the work that writes it, and return it.

    ``path`` is a file (as :func:`write_atomic` writes it) or, with ``directory``, a directory
    to write files into. Nothing is left behind: the check makes a temporary file in the
    nearest directory of ``path`` that exists and removes it.

    Raises
    ------
    OSError
        As :func:`write_atomic` would, naming ``path``.
    """
    path = _placed(Path(path), directory=directory)
    if not directory and _special(path):
        if not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return path
    existing = next(p for p in (path, *path.parents) if p.is_dir())
    try:
        fd, probe = tempfile.mkstemp(prefix=".innet-check.", dir=existing)
    except OSError as error:
        raise type(error)(error.errno, error.strerror, str(path)) from None
    os.close(fd)
    os.unlink(probe)
    return path


def _placed(path: Path, *, directory: bool) -> Path:
    """``path``, unless it is a directory where a file should be, or the other way round, or a
    parent of it is a file."""
    if directory:
        if path.exists() and not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Is a file, not a directory", str(path))
    elif path.name in ("", ".", "..") or path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a directory, not a file", str(path))
    blocking = next((parent for parent in path.parents
                     if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise NotADirectoryError(errno.ENOTDIR, f"{blocking} is a file, not a directory",
                                 str(path))
    return path
