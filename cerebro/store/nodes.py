"""CRUD over ``nodes`` and id resolution."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import text

from cerebro import values
from cerebro.errors import NotFound, quote
from cerebro.models import Node as NodeRow
from cerebro.store import ids
from cerebro.store.sql import execute

if TYPE_CHECKING:
    from cerebro.db.types import Session, Transaction


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
    """A full id or a unique prefix of ≥4 characters → the full id of a row of ``table`` (see ``store.ids``)."""
    return ids.resolve_prefix(
        lambda sql, params: session.execute(text(sql), params).all(), prefix, table=table, noun=noun
    )


def get_row(session: Session, node_id: str) -> NodeRow:
    row = session.get(NodeRow, node_id)
    if row is None:
        raise NotFound(f"no node found with id {quote(node_id)}")
    return row


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


def set_embedding_model(db: Transaction, node_id: str, model: str) -> None:
    execute(db, "UPDATE nodes SET embedding_model = :m WHERE id = :id", {"m": model, "id": node_id})


def ids_with_status(session: Session, status: str) -> list[str]:
    """In id order: the same order on either engine (gc lists its evictions in it)."""
    sql = "SELECT id FROM nodes WHERE status = :s ORDER BY id COLLATE BINARY"
    return [r[0] for r in session.execute(text(sql), {"s": status}).all()]


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
