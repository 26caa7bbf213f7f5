"""Memories: add, read, change, list, supersede (links: ``brain/edges.py``; the statuses every read
fills in and the brain's counts: ``brain/status.py``).

Functions over a :class:`~cerebro.brain.handle.Handle`; :class:`cerebro.Brain` is their public face.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import clock, values
from cerebro.brain import embedding, secrets
from cerebro.brain.handle import Handle
from cerebro.brain.status import annotate
from cerebro.brain.validate import (
    MAX_LIMIT,
    UNSET,
    _check_content,
    _check_importance,
    _check_size,
    _check_status,
    _check_type,
    check_label,
    check_metadata_size,
    checked_origin,
    metadata_with,
    parse_metadata,
)
from cerebro.errors import InvalidInput, NotFound, quote

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Connection, Session

DEFAULT_LIST_LIMIT = 50


def resolve_id(h: Handle, prefix: str) -> str:
    """A full id or a unique prefix of ≥4 characters → the full id."""

    return h.read(lambda s: h.store.nodes.resolve_id(s, prefix))


def add(  # noqa: PLR0913 - the keyword-only fields of a memory
    h: Handle,
    content: str,
    *,
    type: str = "episode",
    subtype: str | None = None,
    importance: float = 0.5,
    metadata: dict[str, Any] | str | None = None,
    provenance_root: bool = False,
    origin: values.Origin | None = None,
    anchors: Sequence[str] | None = None,
    anchor_ref: str | None = None,
    beads_id: str | None = None,
    allow_secret: bool = False,
) -> str:
    """Store a memory; returns its new id. The keyword index is updated in the same transaction.

    ``anchors``: files (``PATH[:START-END]``, relative to :attr:`project`) the memory is about; their
    hashes (and the git commit, ``anchor_ref``) are recorded, and reads report whether the code changed
    since (ADR 0018). ``beads_id``: a Beads issue id, stored as metadata ``beadsId``. Secrets in the content
    and metadata are replaced by ``[secret:kind]`` markers (a warning names their kinds) unless
    ``allow_secret`` or the brain's ``redact_secrets`` setting is off (ADR 0027)."""
    content = _check_content(content)
    _check_type(type)
    subtype = check_label(subtype, "subtype")
    importance = _check_importance(importance)
    stamp = checked_origin(origin) or values.Origin.from_environment("api")
    content, user_meta, subtype, stamp = secrets.for_storage(
        h, content, parse_metadata(metadata), allow_secret, subtype, stamp
    )
    meta_dict = metadata_with(h, user_meta, anchors, anchor_ref, beads_id)
    vector, error, made = embedding.embed_for_write(h, content)  # outside the transaction: no lock held meanwhile
    model = embedding.model_for(h, vector)

    def write(conn: Connection) -> str:
        node_id = h.store.inserts.node(
            conn,
            content=content,
            type=type,
            subtype=subtype or None,
            importance=importance,
            metadata=meta_dict,
            provenance_root=provenance_root,
            origin=stamp,
            embedding_model=model,
            now=clock.now(),
        )
        if h.store.keywords.available(conn):
            h.store.keywords.index(conn, node_id, content, subtype or None)
        embedding.store_new_vector(h, conn, node_id, vector, error, made_with=made)
        return node_id

    node_id = h.write_raw(write)  # no ORM: a one-shot `cerebro add` never imports it (ADR 0028)
    h.vectors_written({node_id: vector} if vector is not None else {})
    embedding.warn_pending(h, node_id, error)
    return node_id


def add_many(
    h: Handle,
    items: list[dict[str, Any]],
    *,
    batch_size: int = 128,
    progress: Callable[[int, int], None] | None = None,
    allow_secret: bool = False,
) -> list[str]:
    """Store many memories: each item takes :meth:`add`'s keyword arguments plus ``content``.

    Everything is validated before anything is written; batches are embedded together, then every
    memory is written in one transaction (the same write path as :meth:`add`). Returns the new ids.
    Secrets are redacted as :meth:`add` does (one warning for the whole batch).
    """
    redact, limit = secrets.policy(h, allow_secret)
    found: list[str] = []
    prepared = []
    for item in items:
        unknown = set(item) - {
            "content",
            "type",
            "subtype",
            "importance",
            "metadata",
            "provenance_root",
            "origin",
            "anchors",
            "anchor_ref",
            "beads_id",
        }
        if unknown:
            raise InvalidInput(f"unknown memory fields: {', '.join(sorted(unknown))}")
        node_type = item.get("type", "episode")
        _check_type(node_type)
        content, user_meta, kinds = secrets.scrub(
            h,
            _check_size(_check_content(item.get("content")), limit),
            check_metadata_size(parse_metadata(item.get("metadata")), limit),
            redact=redact,
            warn=False,
        )
        subtype, stamp, more = secrets.scrub_labels(
            check_label(item.get("subtype"), "subtype") or None,
            checked_origin(item.get("origin")) or values.Origin.from_environment("api"),
            redact=redact,
        )
        found += kinds + more
        prepared.append(
            {
                "content": content,
                "type": node_type,
                "subtype": subtype,
                "importance": _check_importance(item.get("importance", 0.5)),
                "metadata": metadata_with(
                    h,
                    user_meta,
                    item.get("anchors"),
                    item.get("anchor_ref"),
                    item.get("beads_id"),
                ),
                "provenance_root": bool(item.get("provenance_root", False)),
                "origin": stamp,
            }
        )
    if found:
        h.on_warning(secrets.notice(found))
    # Embed first (batch by batch, outside any lock), then write everything in one transaction:
    # either every memory lands or none does.
    _, made, dims = h.embedding_settings()  # the model, read before embedding (embedding.embed_for_write)
    vectors: list[Any] = [None] * len(prepared)
    errors: list[str | None] = [None] * len(prepared)
    for start in range(0, len(prepared), batch_size):
        batch = prepared[start : start + batch_size]
        if dims > 0:
            try:
                vectors[start : start + len(batch)] = h.embed([b["content"] for b in batch])
            except Exception as exc:  # noqa: BLE001 - memories are kept, vectors come later
                reason = " ".join(str(exc).split()) or exc.__class__.__name__
                errors[start : start + len(batch)] = [reason] * len(batch)
        if progress:
            progress(min(start + len(batch), len(prepared)), len(prepared))

    def write(conn: Connection) -> list[str]:
        has_fts = h.store.keywords.available(conn)
        now = clock.now()
        written = []
        for spec, vector, error in zip(prepared, vectors, errors, strict=True):
            node_id = h.store.inserts.node(conn, embedding_model=embedding.model_for(h, vector), now=now, **spec)
            if has_fts:
                h.store.keywords.index(conn, node_id, spec["content"], spec["subtype"])
            embedding.store_new_vector(h, conn, node_id, vector, error, made_with=made)
            written.append(node_id)
        return written

    ids = h.write_raw(write)
    h.vectors_written({i: v for i, v in zip(ids, vectors, strict=True) if v is not None})
    if len(ids) > 1:
        embedding.tend_vector_index(h)
    failed = sum(1 for e in errors if e is not None)
    if failed:
        first = next(e for e in errors if e is not None)
        h.on_warning(f"embedding failed for {failed} memories: {first} (stored; run `cerebro embed --pending`)")
    return ids


def get(h: Handle, node_id: str, *, as_of: Any = None) -> cerebro.reports.NodeDetail:  # noqa: ANN401 - a datetime or RFC 3339 text, validated
    """A memory and every edge touching it (only edges valid at ``as_of`` when given)."""
    try:
        when = clock.parse(as_of) if as_of not in (None, "") else None
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None

    with h.snapshot() as conn:  # a read on the raw connection: `cerebro get` imports no ORM (~0.3 s)
        full = h.store.reads.resolve_id(conn, node_id)
        (found,) = h.store.reads.nodes_by_id(conn, [full]).values()  # resolved in this snapshot: it is there
        edges = h.store.reads.edges_of(conn, full, when)
    (node,) = annotate(h, [found])
    return cerebro.reports.NodeDetail(node, edges)


def update(
    h: Handle,
    node_id: str,
    *,
    content: str | None = None,
    importance: float | None = None,
    subtype: str | None = UNSET,
    metadata: dict[str, Any] | str | None = None,
    allow_secret: bool = False,
) -> values.Node:
    """Change a memory in place. ``subtype=None`` or ``""`` clears it; ``metadata`` is merged key by key
    (a key set to null is removed). Content or subtype changes stamp ``updated_at``. New content and
    metadata have their secrets redacted as :meth:`add` does."""
    redact, limit = secrets.policy(h, allow_secret)
    if content is not None:
        content = _check_size(_check_content(content), limit)
    if importance is not None:
        importance = _check_importance(importance)
    labelled: list[str] = []
    if subtype is not UNSET:
        subtype, _, labelled = secrets.scrub_labels(check_label(subtype, "subtype"), None, redact=redact)
    meta = check_metadata_size(parse_metadata(metadata), limit)
    content, patch, kinds = secrets.scrub(h, content, meta, redact=redact, warn=False)
    if kinds or labelled:
        h.on_warning(secrets.notice(kinds + labelled))
    if content is None and importance is None and subtype is UNSET and patch is None:
        raise InvalidInput("nothing to update: give content, importance, subtype or metadata")
    vector, error, (_, made, dims) = None, None, h.embedding_settings()  # made: as embedding.embed_for_write reads it
    if content is not None and dims > 0:
        current = h.read(lambda s: embedding.current_content(h.store, s, node_id))
        # Not embedded when unchanged — unless another process changes it before the write: then pending, said
        vector, error = h.try_embed(content) if current != content else (None, "changed by another process meanwhile")

    def write(session: Session) -> tuple[values.Node, bool]:
        row = h.store.nodes.get_row(session, h.store.nodes.resolve_id(session, node_id))
        text_changed = content_changed = False
        if content is not None and content != row.content:
            row.content = content
            text_changed = content_changed = True
        if subtype is not UNSET and (subtype or None) != row.subtype:
            row.subtype = subtype or None
            text_changed = True
        if importance is not None:
            row.importance = importance
        if patch is not None:
            merged = dict(row.metadata_ or {})
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            row.metadata_ = merged or None
        if text_changed:
            row.updated_at = clock.now()
            if row.status == "active" and h.store.keywords.available(session):
                h.store.keywords.reindex(session, row.id, row.content, row.subtype)
        if content_changed:  # unchanged content is never re-embedded
            embedding.store_vector(h, session, row, vector, error if vector is None else None, made_with=made)
        session.add(row)
        session.flush()
        return h.store.nodes.to_value(row), content_changed

    node, re_embedded = h.write(write)
    if re_embedded:
        embedding.warn_pending(h, node.id, error)
    return node


def list_memories(
    h: Handle,
    *,
    type: str | None = None,
    status: str | None = None,
    subtype: str | None = UNSET,
    limit: int = DEFAULT_LIST_LIMIT,
) -> list[values.Node]:
    """Memories, newest first. ``subtype=""`` lists those with no subtype."""

    if type is not None:
        _check_type(type)
    if status is not None:
        _check_status(status)
    check_label(None if subtype is UNSET else subtype, "subtype")  # a NUL in it failed on a team brain
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {quote(limit)}")
    with h.snapshot() as conn:  # on the raw connection: `cerebro list` imports no ORM (~0.3 s)
        found = h.store.reads.list_nodes(
            conn,
            type=type,
            status=status,
            subtype=None if subtype is UNSET else subtype,
            subtype_given=subtype is not UNSET,
            limit=limit,
        )
    return annotate(h, found)


def supersede(  # noqa: PLR0913 - the keyword-only fields of a memory
    h: Handle,
    old_id: str,
    content: str,
    *,
    type: str | None = None,
    subtype: str | None = UNSET,
    importance: float | None = None,
    metadata: dict[str, Any] | str | None = None,
    provenance_root: bool = False,
    origin: values.Origin | None = None,
    anchors: Sequence[str] | None = None,
    anchor_ref: str | None = None,
    beads_id: str | None = None,
    allow_secret: bool = False,
) -> str:
    """Replace an active memory: the old one becomes ``superseded``, the new one (same type, subtype and
    importance unless given) gets a ``supersedes`` edge to it. One transaction. Returns the new id. ``anchors``,
    ``anchor_ref``, ``beads_id`` and ``allow_secret`` as for :meth:`add` (the replacement's own; none are
    inherited). The old one's ``updated_at`` is stamped (its status is a change team sync carries); a memory shared
    with the team (``metadata.shared``) passes that on to its replacement."""
    content = _check_content(content)
    if type is not None:
        _check_type(type)
    given_importance = None if importance is None else _check_importance(importance)
    if subtype is not UNSET:
        subtype = check_label(subtype, "subtype")
    stamp = checked_origin(origin) or values.Origin.from_environment("api")
    content, user_meta, subtype, stamp = secrets.for_storage(
        h, content, parse_metadata(metadata), allow_secret, subtype, stamp
    )
    meta_dict = metadata_with(h, user_meta, anchors, anchor_ref, beads_id)
    vector, error, made = embedding.embed_for_write(h, content)

    def write(session: Session) -> str:
        full = h.store.nodes.resolve_id(session, old_id)
        old = h.store.nodes.get_row(session, full)
        if old.status != "active":
            raise NotFound(f"node {full} not found or not active")
        now = clock.now()
        old.status = "superseded"
        old.updated_at = now  # a new version of it: team sync carries the status (ADR 0031)
        session.add(old)
        new_subtype = old.subtype if subtype is UNSET else (subtype or None)
        shared = (old.metadata_ or {}).get("shared") is True and "shared" not in (meta_dict or {})
        replacement = h.store.inserts.node(
            session,
            content=content,
            type=type or old.type,
            subtype=new_subtype,
            importance=old.importance if given_importance is None else given_importance,
            metadata={**(meta_dict or {}), "shared": True} if shared else meta_dict,  # a shared fact's replacement too
            provenance_root=provenance_root,
            origin=stamp,
            embedding_model=embedding.model_for(h, vector),
            now=now,
        )
        embedding.store_new_vector(h, session, replacement, vector, error, made_with=made)
        h.store.edges.upsert(
            session,
            source_id=replacement,
            target_id=full,
            relation="supersedes",
            weight=None,
            valid_at=None,
            invalid_at=None,
            metadata=None,
            now=now,
        )
        if h.store.keywords.available(session):
            h.store.keywords.unindex(session, full)
            h.store.keywords.index(session, replacement, content, new_subtype)
        return replacement

    new_id = h.write(write)
    embedding.warn_pending(h, new_id, error)
    return new_id
