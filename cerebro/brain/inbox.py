"""The Brain's inbox (upstream 3.4.0): quarantined candidates an agent was unsure about.

A candidate lives only in ``inbox_candidates``: no keyword row, no vector, so recall, search, prime, list,
gc, consolidate, forget and every export leave it alone. ``inbox_approve`` turns it into a memory with
the candidate's id, origin and ``created_at`` — indexed, and embedded the way ``Brain.add`` embeds
(before the write, outside the lock; a failed embed leaves the memory pending) — and removes the
candidate, in one transaction. ``inbox_discard`` deletes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cerebro import clock, values
from cerebro.brain import embedding, secrets
from cerebro.brain.handle import Handle
from cerebro.brain.validate import (
    _check_content,
    _check_importance,
    _check_limit,
    _check_type,
    check_label,
    checked_origin,
    parse_metadata,
)
from cerebro.errors import InvalidInput, quote

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session


def inbox_add(
    h: Handle,
    content: str,
    *,
    type: str = "episode",
    subtype: str | None = None,
    importance: float = 0.5,
    metadata: dict[str, Any] | str | None = None,
    origin: values.Origin | None = None,
    allow_secret: bool = False,
) -> str:
    """Quarantine a candidate memory (checked, and its secrets redacted, as :meth:`Brain.add` does); returns its
    id. Nothing is indexed or embedded."""
    content = _check_content(content)
    _check_type(type)
    subtype = check_label(subtype, "subtype")  # as add checks it: approving makes the candidate a memory as it is
    importance = _check_importance(importance)
    stamp = checked_origin(origin) or values.Origin.from_environment("api")
    content, meta_dict, subtype, stamp = secrets.for_storage(
        h, content, parse_metadata(metadata), allow_secret, subtype, stamp
    )

    def write(session: Session) -> str:
        return h.store.inbox.insert(
            session,
            content=content,
            type=type,
            subtype=subtype or None,
            importance=importance,
            metadata_=meta_dict,
            origin=stamp,
            now=clock.now(),
        )

    return h.write(write)


def inbox_list(h: Handle, *, limit: int | None = None) -> list[cerebro.reports.InboxCandidate]:
    """The candidates, oldest first (every one unless ``limit``)."""

    if limit is not None:
        limit = _check_limit(limit)
    return h.read(lambda s: h.store.inbox.list_all(s, limit))


def inbox_get(h: Handle, candidate_id: str) -> cerebro.reports.InboxCandidate:
    """One candidate, by full id or a unique prefix of ≥4 characters."""

    return h.read(lambda s: h.store.inbox.get(s, h.store.inbox.resolve_id(s, candidate_id)))


def inbox_approve(h: Handle, candidate_id: str) -> str:
    """Promote a candidate to a memory keeping its id, type, subtype, content, metadata, importance,
    ``created_at`` and origin; index and embed it (pending when the embedder fails); delete the
    candidate. One transaction. Returns the memory's id (the candidate's)."""
    candidate = inbox_get(h, candidate_id)
    if not 0.0 <= candidate.importance <= 1.0:
        raise InvalidInput(
            f"inbox candidate {candidate.short_id} has importance {candidate.importance:g}, outside "
            "[0, 1]: discard it and add it again"
        )
    vector, error, made = embedding.embed_for_write(h, candidate.content)  # outside the transaction, as add does

    def write(session: Session) -> str:
        current = h.store.inbox.get(
            session, h.store.inbox.resolve_id(session, candidate.id)
        )  # discarded meanwhile: NotFound
        if h.store.nodes.exists(session, current.id):
            raise InvalidInput(f"a memory with id {quote(current.id)} already exists: discard the candidate instead")
        now = clock.now()
        node_id = h.store.inserts.node(
            session,
            content=current.content,
            type=current.type,
            subtype=current.subtype or None,
            importance=current.importance,
            metadata=current.metadata,
            provenance_root=False,
            origin=current.origin,
            embedding_model=embedding.model_for(h, vector),
            now=now,
            node_id=current.id,
            created_at=current.created_at or now,
        )
        if h.store.keywords.available(session):
            h.store.keywords.index(session, node_id, current.content, current.subtype or None)
        embedding.store_new_vector(h, session, node_id, vector, error, made_with=made)
        h.store.inbox.delete(session, current.id)
        return node_id

    node_id = h.write(write)
    embedding.warn_pending(h, node_id, error)
    return node_id


def inbox_discard(h: Handle, candidate_id: str) -> cerebro.reports.InboxCandidate:
    """Delete a candidate; returns what was deleted."""

    def write(session: Session) -> cerebro.reports.InboxCandidate:
        candidate = h.store.inbox.get(session, h.store.inbox.resolve_id(session, candidate_id))
        h.store.inbox.delete(session, candidate.id)
        return candidate

    return h.write(write)
