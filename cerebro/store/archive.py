"""``nodes_archive``: where gc and forget move memories, out of every lane."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cerebro import clock
from cerebro.store.sql import dialect, text

if TYPE_CHECKING:
    from cerebro import values
    from cerebro.db.types import Session


def move_out(session: Session, node: values.Node, reason: str, now_text: str, *, archive: bool = True) -> None:
    """Move one node out of every lane (vectors, keywords, edges by cascade) — into the archive unless hard."""
    from cerebro.store import fts, vec

    if archive:
        session.execute(
            text(
                "INSERT INTO nodes_archive (id, type, subtype, content, metadata, importance, status, "
                "archive_reason, original_created_at, archived_at) VALUES (:id, :type, :subtype, :content, "
                ":metadata, :importance, :status, :reason, :created, :now) ON CONFLICT(id) DO UPDATE SET "
                "type = excluded.type, subtype = excluded.subtype, content = excluded.content, "
                "metadata = excluded.metadata, importance = excluded.importance, status = excluded.status, "
                "archive_reason = excluded.archive_reason, original_created_at = excluded.original_created_at, "
                "archived_at = excluded.archived_at"
            ),
            {
                "id": node.id,
                "type": node.type,
                "subtype": node.subtype,
                "content": node.content,
                "metadata": json.dumps(node.metadata) if node.metadata is not None else None,
                "importance": node.importance,
                "status": node.status,
                "reason": reason,
                "created": clock.format_ts(node.created_at) if node.created_at else None,
                "now": now_text,
            },
        )
    if dialect(session) == "postgresql":  # a team brain (ADR 0030): its lanes go with the row
        from cerebro.store.postgres import vec as team_vec

        team_vec.delete(session, node.id)
    else:
        vec.delete(session, node.id)
        if fts.available(session):
            fts.unindex(session, node.id, indexed=node.status == "active")  # only active memories are indexed
    # Edges go explicitly as well as by cascade: a brain opened without foreign keys must not keep
    # dangling edges.
    session.execute(text("DELETE FROM edges WHERE source_id = :id OR target_id = :id"), {"id": node.id})
    session.execute(text("DELETE FROM nodes WHERE id = :id"), {"id": node.id})
