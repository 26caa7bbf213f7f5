"""The hot path's reads on a team brain: the brain file's (``cerebro.store.reads``), whose SQL runs on PostgreSQL
as it is (``cerebro.db.postgres.pg_sql``), but for asking which tables exist."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.reads import (
    active_surfacing,
    active_with_anchors,
    config_values,
    count_active,
    edge_count,
    meta,
    meta_items,
    node_ids,
    nodes_by_id,
    prime_pool,
    rows,
    written_beside,
    written_near,
)

if TYPE_CHECKING:
    from cerebro.db.types import Connection

__all__ = [
    "active_surfacing",
    "active_with_anchors",
    "config_values",
    "count_active",
    "edge_count",
    "meta",
    "meta_items",
    "node_ids",
    "nodes_by_id",
    "prime_pool",
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
