"""A memory's id as a user gives it — the full id or a unique prefix of at least four characters — to the full id.

Shared by the ORM's reads (``nodes.resolve_prefix``, for the writes) and the raw connection's (``reads.resolve_id``,
for ``get``): the checks and messages are the same, whatever reads the rows. Resolved with a range query, never
``LIKE``: ``_`` and ``%`` are not wildcards, and the characters allowed are those of a UUID, so hostile text is
refused before it reaches SQL.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from cerebro.errors import AmbiguousId, InvalidInput, NotFound, quote

MIN_PREFIX = 4
FULL_ID_LENGTH = 36
_ID_CHARS = r"^[0-9a-f-]+$"  # compiled on first use (re caches it), not at import
# Above every character an id can hold: ``id >= p AND id < p || MAX`` selects exactly the ids starting with p.
_RANGE_TOP = "\U0010ffff"

# (SQL with :named parameters, the parameters) → the rows.
Fetch = Callable[[str, dict[str, Any]], Sequence[Sequence[Any]]]


def resolve_prefix(fetch: Fetch, prefix: str, *, table: str, noun: str) -> str:
    """The full id of the row of ``table`` (``nodes``, or ``inbox_candidates``) that ``prefix`` names; ``noun`` names
    such a row in messages."""
    candidate = (prefix or "").strip().lower()
    if not candidate:
        raise InvalidInput("empty ID prefix")
    if not re.match(_ID_CHARS, candidate):
        raise InvalidInput(f"invalid id {quote(prefix)}: ids are UUIDs (hex digits and '-')")
    if len(candidate) < MIN_PREFIX:
        raise InvalidInput(f"ID prefix too short (minimum {MIN_PREFIX} characters): {quote(prefix)}")
    if len(candidate) >= FULL_ID_LENGTH:
        if not fetch(f"SELECT 1 FROM {table} WHERE id = :id", {"id": candidate}):
            raise NotFound(f"no {noun} found with id {quote(candidate)}")
        return candidate
    bounds = {"lo": candidate, "hi": candidate + _RANGE_TOP}
    # In byte order (COLLATE BINARY; "C" on PostgreSQL): under a database's en_US collation U+10FFFF sorts below
    # "0", the range held nothing and no prefix resolved on a team brain (a review).
    within = f"{table} WHERE id COLLATE BINARY >= :lo AND id COLLATE BINARY < :hi"
    matches = fetch(f"SELECT id FROM {within} ORDER BY id COLLATE BINARY LIMIT 2", bounds)
    if not matches:
        raise NotFound(f"no {noun} found with prefix {quote(prefix)}")
    if len(matches) > 1:
        count = fetch(f"SELECT COUNT(*) FROM {within}", bounds)[0][0]
        raise AmbiguousId(f"ambiguous prefix {quote(prefix)} matches {count} {noun}s; give more characters")
    return str(matches[0][0])
