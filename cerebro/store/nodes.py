"""CRUD over ``nodes`` and id resolution."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlmodel import col, select

from cerebro import values
from cerebro.errors import AmbiguousId, InvalidInput, NotFound, quote
from cerebro.models import Node as NodeRow

if TYPE_CHECKING:
    from cerebro.db.types import Session

MIN_PREFIX = 4
FULL_ID_LENGTH = 36
_ID_CHARS = re.compile(r"^[0-9a-f-]+$")
# Above every character an id can hold: ``id >= p AND id < p || MAX`` selects exactly the ids starting with p.
_RANGE_TOP = "\U0010ffff"


def to_value(row: NodeRow) -> values.Node:
    return values.Node(
        id=row.id,
        type=row.type,
        subtype=row.subtype,
        content=row.content,
        metadata=row.metadata_,
        importance=float(row.importance if row.importance is not None else 0.5),
        decay_rate=float(row.decay_rate),
        access_count=int(row.access_count or 0),
        times_reinforced=int(row.times_reinforced or 0),
        status=row.status or "active",
        embedding_model=row.embedding_model or "",
        created_at=row.created_at,
        last_accessed=row.last_accessed,
        last_reinforced=row.last_reinforced,
        updated_at=row.updated_at,
        last_surfaced=row.last_surfaced,
        provenance_root=bool(row.provenance_root),
        origin=values.Origin(row.origin_actor, row.origin_channel, row.origin_session, row.origin_host),
    )


def resolve_id(session: Session, prefix: str) -> str:
    """A full id or a unique prefix of ≥4 characters → the full id of a node."""
    return resolve_prefix(session, prefix, table="nodes", noun="node")


def resolve_prefix(session: Session, prefix: str, *, table: str, noun: str) -> str:
    """A full id or a unique prefix of ≥4 characters → the full id of a row of ``table`` (``nodes``, or
    ``inbox_candidates``); ``noun`` names such a row in messages.

    Resolved with a range query, never ``LIKE``: ``_`` and ``%`` are not wildcards, and the characters
    allowed are those of a UUID, so hostile text is refused before it reaches SQL.
    """
    candidate = (prefix or "").strip().lower()
    if not candidate:
        raise InvalidInput("empty ID prefix")
    if not _ID_CHARS.match(candidate):
        raise InvalidInput(f"invalid id {quote(prefix)}: ids are UUIDs (hex digits and '-')")
    if len(candidate) < MIN_PREFIX:
        raise InvalidInput(f"ID prefix too short (minimum {MIN_PREFIX} characters): {quote(prefix)}")
    if len(candidate) >= FULL_ID_LENGTH:
        if session.execute(text(f"SELECT 1 FROM {table} WHERE id = :id"), {"id": candidate}).first() is None:
            raise NotFound(f"no {noun} found with id {quote(candidate)}")
        return candidate
    matches = session.execute(
        text(f"SELECT id FROM {table} WHERE id >= :lo AND id < :hi ORDER BY id LIMIT 2"),
        {"lo": candidate, "hi": candidate + _RANGE_TOP},
    ).all()
    if not matches:
        raise NotFound(f"no {noun} found with prefix {quote(prefix)}")
    if len(matches) > 1:
        count = session.execute(
            text(f"SELECT COUNT(*) FROM {table} WHERE id >= :lo AND id < :hi"),
            {"lo": candidate, "hi": candidate + _RANGE_TOP},
        ).scalar_one()
        raise AmbiguousId(f"ambiguous prefix {quote(prefix)} matches {count} {noun}s; give more characters")
    return matches[0][0]


def get_row(session: Session, node_id: str) -> NodeRow:
    row = session.get(NodeRow, node_id)
    if row is None:
        raise NotFound(f"no node found with id {quote(node_id)}")
    return row


def list_rows(
    session: Session,
    *,
    type: str | None,
    status: str | None,
    subtype: str | None,
    subtype_given: bool,
    limit: int,
) -> list[NodeRow]:
    query = select(NodeRow)
    if type is not None:
        query = query.where(NodeRow.type == type)
    if status is not None:
        query = query.where(NodeRow.status == status)
    if subtype_given:
        if subtype:
            query = query.where(NodeRow.subtype == subtype)
        else:  # an empty --subtype selects nodes with no subtype
            query = query.where((col(NodeRow.subtype).is_(None)) | (NodeRow.subtype == ""))
    query = query.order_by(col(NodeRow.created_at).desc(), text("nodes.rowid DESC")).limit(limit)
    return list(session.exec(query).all())


def count_active_not_from(session: Session, model: str) -> int:
    """Active nodes whose vector is not recorded as ``model``'s (another model's, or none)."""
    return session.execute(
        text("SELECT COUNT(*) FROM nodes WHERE status = 'active' AND COALESCE(embedding_model, '') != :m"),
        {"m": model},
    ).scalar_one()


def count_with_status(session: Session, status: str) -> int:
    return session.execute(text("SELECT COUNT(*) FROM nodes WHERE status = :s"), {"s": status}).scalar_one()


def active_ids(session: Session, limit: int) -> list[str]:
    """Active node ids, oldest first."""
    rows = session.execute(
        text("SELECT id FROM nodes WHERE status = 'active' ORDER BY created_at, id LIMIT :l"), {"l": limit}
    ).all()
    return [r[0] for r in rows]


def set_embedding_model(session: Session, node_id: str, model: str) -> None:
    session.execute(text("UPDATE nodes SET embedding_model = :m WHERE id = :id"), {"m": model, "id": node_id})


def ids_with_status(session: Session, status: str) -> list[str]:
    return [r[0] for r in session.execute(text("SELECT id FROM nodes WHERE status = :s"), {"s": status}).all()]


def contents_not_archived(session: Session, subtype: str | None) -> list[tuple[str, str]]:
    """(id, content) of every memory not archived, oldest first; ``subtype=""`` selects those with none."""
    sql = "SELECT id, content FROM nodes WHERE status != 'archived'"
    params: dict[str, Any] = {}
    if subtype is not None:
        sql += " AND subtype = :s" if subtype else " AND (subtype IS NULL OR subtype = '')"
        params["s"] = subtype
    return [tuple(r) for r in session.execute(text(sql + " ORDER BY created_at, id"), params).all()]


def exists(session: Session, node_id: str) -> bool:
    return session.execute(text("SELECT 1 FROM nodes WHERE id = :id"), {"id": node_id}).first() is not None
