"""The FTS5 keyword lane's write side. Only *active* nodes are indexed; sync is done here, not by triggers."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text


def available(session: Any) -> bool:
    return (
        session.execute(text("SELECT 1 FROM sqlite_master WHERE type='table' AND name='nodes_fts'")).first()
        is not None
    )


def index(session: Any, node_id: str, content: str, subtype: str | None) -> None:
    session.execute(
        text("INSERT INTO nodes_fts (node_id, content, subtype) VALUES (:id, :c, :s)"),
        {"id": node_id, "c": content, "s": subtype or ""},
    )


def unindex(session: Any, node_id: str) -> None:
    session.execute(text("DELETE FROM nodes_fts WHERE node_id = :id"), {"id": node_id})


def reindex(session: Any, node_id: str, content: str, subtype: str | None) -> None:
    unindex(session, node_id)
    index(session, node_id, content, subtype)


def indexed_ids(session: Any) -> set[str]:
    return {row[0] for row in session.execute(text("SELECT node_id FROM nodes_fts")).all()}
