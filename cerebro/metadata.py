"""Reading a memory's ``metadata`` column, whatever is in it.

Cerebro always writes a JSON object (or NULL). Brains written elsewhere may hold anything: upstream Go
cerebro tolerates metadata that fails to parse, its ``promote`` writes a BLOB, a user may have edited a row
by hand. One unreadable value must never take the brain down (every ``list``, ``get``, ``gc``… would fail),
so every reader goes through :func:`load`: an object comes back as it is; anything else comes back as
``{"_raw_metadata": "<the text>"}`` — the node is shown with its raw metadata flagged, it exports and
imports as a valid object, and the next write of that node stores valid JSON.
"""

from __future__ import annotations

from typing import Any

# json is imported where a value is decoded or encoded: the read paths (prime, recall, the hooks' text output) of a
# brain whose memories carry no metadata do without it (~1.5 ms of import).

RAW_KEY = "_raw_metadata"
# Levels of objects and arrays a memory's or an edge's metadata may nest: every reader copies it recursively, and ~500
# levels broke them all (a RecursionError in `list`, `get`, the session-start prime) — for one imported file.
MAX_DEPTH = 64


def problem(value: object) -> str | None:
    """Why decoded metadata cannot be stored, or None: nested deeper than MAX_DEPTH, a NaN or an infinity (not JSON),
    text that is not UTF-8 (a lone surrogate), a value JSON does not have."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:  # by hand, not recursively: the check must not fail the way the readers did
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > MAX_DEPTH:
                return f"metadata is nested more than {MAX_DEPTH} levels deep"
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    import json

    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "metadata holds text that is not valid UTF-8"
    except (TypeError, ValueError) as exc:
        return f"metadata is not valid JSON: {exc}"
    return None


def load(value: object) -> dict[str, Any] | None:
    """A stored metadata value (TEXT, BLOB, NULL, or already decoded) → a dict or None. Never raises."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", errors="replace")
    import json

    if not isinstance(value, str):
        return {RAW_KEY: json.dumps(value, ensure_ascii=False, default=str)}
    if not value.strip():
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return {RAW_KEY: value}
    if parsed is None:
        return None
    return parsed if isinstance(parsed, dict) else {RAW_KEY: value}


def is_flagged(metadata: dict[str, Any] | None) -> bool:
    """Did this metadata come from a stored value that was not a JSON object?"""
    return bool(metadata) and RAW_KEY in metadata  # type: ignore[operator]


def dumps(metadata: dict[str, Any] | None) -> str | None:
    """What cerebro stores: compact JSON text of an object, or NULL."""
    import json

    return None if metadata is None else json.dumps(metadata, ensure_ascii=False)
