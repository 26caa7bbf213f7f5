"""The hot path's reads on a team brain: the brain file's (``cerebro.store.reads``), whose SQL runs on PostgreSQL
as it is (``cerebro.db.postgres.pg_sql``), but for asking which tables exist."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.reads import (
    Census,
    active_surfacing,
    active_with_anchors,
    config_values,
    count_active,
    edge_count,
    edges_of,
    list_nodes,
    meta,
    meta_items,
    node_ids,
    nodes_by_id,
    prime_pool,
    resolve_id,
    rows,
    take_census,
    written_beside,
    written_near,
)

if TYPE_CHECKING:
    from cerebro.db.types import Connection

__all__ = [
    "active_surfacing",
    "active_with_anchors",
    "census",
    "config_values",
    "count_active",
    "edge_count",
    "edges_of",
    "list_nodes",
    "meta",
    "meta_items",
    "node_ids",
    "nodes_by_id",
    "prime_pool",
    "resolve_id",
    "rows",
    "table_exists",
    "written_beside",
    "written_near",
]


def table_exists(conn: Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?", (name,)
    ).fetchone()
    return row is not None


PENDING = (
    "SELECT COUNT(*) FROM nodes n WHERE n.status = 'active' "
    "AND NOT EXISTS (SELECT 1 FROM node_vectors v WHERE v.node_id = n.id)"
)


def census(conn: Connection, model: str, *, vectors: bool) -> Census:
    """``stats``' counts (see the brain file's): the vectors are a table of the schema here."""
    from cerebro.db.postgres import revision

    return take_census(conn, model, PENDING if vectors else None, revision(conn))
