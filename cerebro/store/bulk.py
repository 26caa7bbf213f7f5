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


def put_node(session: Session, row: dict[str, Any], fields: Sequence[str], *, replace: bool) -> bool:
    sql = _upsert("nodes", fields, "id", [f for f in fields if f != "id"], replace)
    return bool(changed(session, sql, row))


def put_edge(session: Session, edge: dict[str, Any], *, replace: bool) -> bool:
    sql = _upsert("edges", _EDGE_FIELDS, "source_id, target_id, relation", _EDGE_REPLACED, replace)
    return bool(changed(session, sql, edge))


def put_archived(session: Session, row: dict[str, Any], fields: Sequence[str], *, replace: bool) -> bool:
    sql = _upsert("nodes_archive", fields, "id", [f for f in fields if f != "id"], replace)
    return bool(changed(session, sql, row))
