"""Reading JSON that a user hands to innet: one parser with one set of errors.

Every JSON input (topologies, schedules, embeddings, images) is parsed by :func:`load_json`, so
each of them refuses malformed text, nesting too deep for the parser and integers too long to
convert with a ``ValueError`` its caller can put its own context in front of.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_JSON_DIGITS", "load_json"]

#: Most digits an integer of a JSON input may have (far beyond any value innet takes).
MAX_JSON_DIGITS = 1000


def load_json(text: str | bytes) -> Any:
    """``text`` parsed as JSON.

    Raises
    ------
    ValueError
        The parser's message for malformed text (a :class:`json.JSONDecodeError`),
        ``nested too deeply``, or ``an integer of N digits, more than 1,000``
        (:data:`MAX_JSON_DIGITS`).
    """
    try:
        return json.loads(text, parse_int=_integer)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_DIGITS:
        raise ValueError(f"an integer of {digits:,} digits, more than {MAX_JSON_DIGITS:,}")
    return int(text)
