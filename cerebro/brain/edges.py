"""Links between memories: typed, weighted edges with a validity window.

Functions over a :class:`~cerebro.brain.handle.Handle`; :class:`cerebro.Brain` is their public face.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import clock
from cerebro.brain.handle import Handle
from cerebro.brain.validate import check_label, check_metadata_size, parse_metadata
from cerebro.errors import InvalidInput, quote

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session


def add_edge(
    h: Handle,
    source: str,
    target: str,
    relation: str,
    *,
    weight: float | None = None,
    valid_at: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated
    invalid_at: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated
    metadata: dict[str, Any] | str | None = None,
) -> cerebro.reports.EdgeResult:
    """Link two memories. Re-adding an edge re-asserts its validity window (an omitted bound becomes
    open) and updates its weight when one is given. Relations outside the registry are allowed."""
    relation = (check_label(relation, "relation") or "").strip()
    if not relation:
        raise InvalidInput("relation must not be empty")
    if weight is not None:
        try:
            weight = float(weight)
        except (TypeError, ValueError):
            raise InvalidInput(f"weight must be a number, got {quote(weight)}") from None
        if not math.isfinite(weight) or weight <= 0:
            raise InvalidInput(f"weight must be a finite number above 0, got {quote(weight)}")
    try:
        start = clock.parse(valid_at) if valid_at not in (None, "") else None
        end = clock.parse(invalid_at) if invalid_at not in (None, "") else None
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    if start is not None and end is not None and start > end:
        raise InvalidInput("invalid window: valid_at is after invalid_at")
    meta_dict = parse_metadata(metadata)
    if meta_dict:  # its secrets redacted, as a memory's are (ADR 0027): only a write with metadata pays the patterns
        from cerebro.brain import secrets

        redact, limit = secrets.policy(h, False)
        meta_dict = secrets.scrub(h, None, check_metadata_size(meta_dict, limit), redact=redact, hint=False)[1]

    def write(session: Session) -> cerebro.reports.EdgeResult:
        src = h.store.nodes.resolve_id(session, source)
        dst = h.store.nodes.resolve_id(session, target)
        if src == dst:
            raise InvalidInput(f"an edge links two memories: {quote(source)} and {quote(target)} are both {src}")
        row, created = h.store.edges.upsert(
            session,
            source_id=src,
            target_id=dst,
            relation=relation,
            weight=weight,
            valid_at=start,
            invalid_at=end,
            metadata=meta_dict,
            now=clock.now(),
        )
        return cerebro.reports.EdgeResult(
            h.store.edges.to_value(row), created, h.store.relations.is_registered(session, relation)
        )

    return h.write(write)
