"""Lone UTF-16 surrogates in JSON text: ``"\\ud83d"`` escaped without its pair (half an emoji, as a JavaScript client
leaves one when it cuts a string at a length). Python's ``json`` reads one into a ``str`` that UTF-8 — SQLite, a pipe,
pydantic — cannot hold; these replace it by U+FFFD, as a stored text that is not UTF-8 reads (ADR 0063).
"""

from __future__ import annotations

import re
from typing import Any

ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # in raw JSON: a line that may hold one (or a pair)
_LONE = re.compile("[\ud800-\udfff]")


def replaced(value: Any) -> Any:  # noqa: ANN401 - JSON-shaped data
    """``value`` (JSON-shaped) with every lone surrogate in its strings, keys included, as U+FFFD."""
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [replaced(item) for item in value]
    if isinstance(value, dict):
        return {replaced(key): replaced(item) for key, item in value.items()}
    return value
