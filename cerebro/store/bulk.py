"""Writing records back in bulk (import): nodes and archive rows by id, edges by their (source, target,
relation) triple. ``replace`` updates a row that exists in place — never delete-and-insert, which would
cascade its edges away; otherwise an existing row is left as it is. Each returns whether a row changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cerebro.store.sql import changed

if TYPE_CHECKING:
    from cerebro.db.types import Session

_EDGE_FIELDS = ("source_id", "target_id", "relation", "weight", "metadata", "created_at", "valid_at", "invalid_at")
_EDGE_REPLACED = ("weight", "metadata", "valid_at", "invalid_at")


def _upsert(table: str, fields: Sequence[str], key: str, replaced: Sequence[str], replace: bool) -> str:
    update = ", ".join(f"{f} = excluded.{f}" for f in replaced)
    conflict = f"DO UPDATE SET {update}" if replace else "DO NOTHING"
    return (
        f"INSERT INTO {table} ({', '.join(fields)}) VALUES ({', '.join(':' + f for f in fields)}) "
        f"ON CONFLICT({key}) {conflict}"
    )


# A memory changed later elsewhere replaces this one; the same or an older version leaves it (team sync, ADR 0031).
_NEWER = (
    " WHERE COALESCE(excluded.updated_at, excluded.created_at, '') > COALESCE(nodes.updated_at, nodes.created_at, '')"
)


def put_node(
    session: Session, row: dict[str, Any], fields: Sequence[str], *, replace: bool, newer_only: bool = False
) -> bool:
    """Insert a node, or on its id: keep the existing one (not ``replace``), replace it, or replace it only when
    the incoming one was updated (or created) later (``newer_only``). Whether a row was written."""
    sql = _upsert("nodes", fields, "id", [f for f in fields if f != "id"], replace or newer_only)
    return bool(changed(session, sql + (_NEWER if newer_only else ""), row))


# An edge that differs in what an edge can change (a team sync's rule: the same edge again writes nothing).
_CHANGED = " WHERE " + " OR ".join(
    f"COALESCE(CAST(edges.{f} AS TEXT), '') <> COALESCE(CAST(excluded.{f} AS TEXT), '')" for f in _EDGE_REPLACED
)


def put_edge(session: Session, edge: dict[str, Any], *, replace: bool, changed_only: bool = False) -> bool:
    """Insert an edge, or on its (source, target, relation): keep it, replace its weight, window and metadata, or
    replace them only where they differ (``changed_only``). Whether a row was written."""
    sql = _upsert("edges", _EDGE_FIELDS, "source_id, target_id, relation", _EDGE_REPLACED, replace or changed_only)
    return bool(changed(session, sql + (_CHANGED if changed_only else ""), edge))


def put_archived(session: Session, row: dict[str, Any], fields: Sequence[str], *, replace: bool) -> bool:
    sql = _upsert("nodes_archive", fields, "id", [f for f in fields if f != "id"], replace)
    return bool(changed(session, sql, row))


def drop_archived(session: Session, node_id: str) -> bool:
    """Take a memory's row out of the archive (a later version of it came back active)."""
    return bool(changed(session, "DELETE FROM nodes_archive WHERE id = :id", {"id": node_id}))


def put_inbox(session: Session, row: dict[str, Any], fields: Sequence[str]) -> bool:
    """Insert an inbox candidate as it was (id, origin and time kept), unless one with its id exists."""
    return bool(changed(session, _upsert("inbox_candidates", fields, "id", [], replace=False), row))
