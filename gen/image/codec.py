"""One entry point to encode and decode images in any of the three encodings.

:func:`decode` is what the simulation loader and ``innet image`` use: it recognises the
encoding, parses it and validates the content (:func:`~innet.gen.image.validate.validate`), so
an image it returns is safe to program; anything wrong raises
:class:`~innet.gen.image.model.ImageError` and nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

from innet.gen.image import binary, jsonform
from innet.gen.image.model import MAGIC, Image, ImageError
from innet.gen.image.validate import validate

__all__ = ["FORMATS", "SUFFIXES", "decode", "detect", "encode", "format_for", "read"]

#: The encodings: binary, ``$readmemh`` hex, JSON.
FORMATS = ("bin", "hex", "json")

#: File suffixes and the encoding each implies.
SUFFIXES = {".img": "bin", ".bin": "bin", ".hex": "hex", ".mem": "hex", ".json": "json"}


def format_for(path: str | os.PathLike, default: str = "bin") -> str:
    """The encoding a file name implies (:data:`SUFFIXES`), else ``default``."""
    return SUFFIXES.get(Path(path).suffix.lower(), default)


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"Image format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


def encode(image: Image, fmt: str = "bin") -> bytes | str:
    """Encode an image: ``bytes`` for ``"bin"``, ``str`` for ``"hex"`` and ``"json"``.

    The same image always gives the same bytes.

    Raises
    ------
    TypeError
        If ``image`` is not an :class:`Image`.
    ValueError
        For an unknown format, or an address or word that does not fit in 32 bits.
    """
    if not isinstance(image, Image):
        raise TypeError(f"Expected an Image, not {image!r:.60}")
    fmt = _check_format(fmt)
    if fmt == "bin":
        return binary.to_bytes(image)
    if fmt == "hex":
        return binary.to_hex(image)
    return jsonform.to_json(image)


def detect(data: bytes | str) -> str:
    """The encoding of ``data``: ``"bin"`` if it starts with the magic, ``"json"`` if it is
    text starting with ``{``, ``"hex"`` if it is other ASCII text, else ``"bin"``.

    Raises
    ------
    TypeError
        If ``data`` is neither bytes (or a bytearray or memoryview) nor ``str``.
    """
    if isinstance(data, str):
        return "json" if data.lstrip().startswith("{") else "hex"
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"Image data must be bytes or str, not {type(data).__name__}")
    data = bytes(data[:len(MAGIC) + 64])
    if data.startswith(MAGIC):
        return "bin"
    head = bytes(data[:64]).lstrip()
    if head.startswith(b"{"):
        return "json"
    if head[:1] and (head[:1] == b"/" or head[:1] in b"0123456789abcdefABCDEF"):
        return "hex"
    return "bin"


def decode(data: bytes | str, fmt: str | None = None) -> Image:
    """Parse and validate an image in any encoding (detected unless ``fmt`` is given).

    Raises
    ------
    ImageError
        Naming where the image is wrong (header, target, register, field) and why.
    TypeError
        If ``data`` is neither ``bytes`` nor ``str``.
    """
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise TypeError(f"Image data must be bytes or str, not {type(data).__name__}")
    if isinstance(data, memoryview):
        data = data.tobytes()
    fmt = _check_format(fmt) if fmt is not None else detect(data)
    if fmt == "bin":
        if isinstance(data, str):
            raise ImageError("a binary image must be bytes, not text", "Header")
        header, image = binary.from_bytes(data)
    elif fmt == "hex":
        header, image = binary.from_hex(data)
    else:
        header, image, annotations = jsonform.from_json(data)
    validate(image, header)
    if fmt == "json":
        jsonform.check_annotations(image, annotations)
    return image


def read(path: str | os.PathLike) -> Image:
    """Read, parse and validate an image file (any encoding).

    Raises
    ------
    ImageError
        As :func:`decode`; the message does not repeat the path.
    OSError
        If the file cannot be read.
    """
    return decode(Path(path).read_bytes())

