"""Best-effort writes on the raw connection after a read: access touches, surfacing stamps, counters.

The library's reads never write; the CLI, the hooks and the MCP server call these afterwards through
``Handle.best_effort`` (a short ``BEGIN IMMEDIATE`` that gives up quietly when the brain is busy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cerebro.store.meta import increment_sql

if TYPE_CHECKING:
    from cerebro.db.types import Connection


def touch_accessed(conn: Connection, ids: Sequence[str], stamp: str) -> None:
    """access_count + 1 and last_accessed = ``stamp``."""
    conn.executemany(
        "UPDATE nodes SET access_count = COALESCE(access_count, 0) + 1, last_accessed = ? WHERE id = ?",
        [(stamp, node_id) for node_id in ids],
    )


def touch_surfaced(conn: Connection, ids: Sequence[str], stamp: str) -> None:
    conn.executemany("UPDATE nodes SET last_surfaced = ? WHERE id = ?", [(stamp, node_id) for node_id in ids])


def increment(conn: Connection, key: str) -> None:
    conn.execute(increment_sql(conn), {"k": key})
