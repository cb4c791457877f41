"""Configuration images: every register write that configures a network, in one file.

An :class:`Image` holds, for every switch and endpoint of a network (target ``n`` is the
switch of node ``n``, target ``N + n`` its endpoint), the configuration-bus writes packed from
the register model (:mod:`innet.gen.regmap`), with the map parameters and digests and the
topology they were built for. It has three byte-stable encodings of the same content
(:func:`encode`): binary (:mod:`innet.gen.image.binary` documents the layout), ``$readmemh``
hex, and JSON for people. :func:`decode` is the one entry point that parses any of them and
validates everything (:mod:`innet.gen.image.validate`), raising :class:`ImageError` with a
one-line message naming the target, the register or field, and the reason.
:func:`build_image` builds an image from a topology, its routes, embeddings and a schedule
(:mod:`innet.gen.image.build`).
"""

from innet.gen.image.binary import HEADER_BYTES
from innet.gen.image.build import build_image
from innet.gen.image.codec import FORMATS, SUFFIXES, decode, detect, encode, format_for, read
from innet.gen.image.model import (
    IMAGE_VERSION,
    MAGIC,
    Header,
    Image,
    ImageError,
    MapParams,
    target_id,
    target_name,
    target_of,
)
from innet.gen.image.validate import CollectiveConfig, collective_configs, embeddings, validate

__all__ = [
    "FORMATS",
    "HEADER_BYTES",
    "IMAGE_VERSION",
    "MAGIC",
    "SUFFIXES",
    "CollectiveConfig",
    "Header",
    "Image",
    "ImageError",
    "MapParams",
    "build_image",
    "collective_configs",
    "decode",
    "detect",
    "embeddings",
    "encode",
    "format_for",
    "read",
    "target_id",
    "target_name",
    "target_of",
    "validate",
]
