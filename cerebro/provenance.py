"""Provenance: breadth-first walks over ``derived_from`` edges, and the read-time statuses.

Walks are cycle-safe (a visited set: each node once, at its minimum depth) and run in code rather than a
recursive CTE, as upstream. Statuses are computed in batches at read time; nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from cerebro import clock
from cerebro.store.reads import chunks

DERIVED_FROM = "derived_from"
MAX_DEPTH = 100  # clamp: a deeper walk is a mistake, not a request
GET_DEFAULT_DEPTH = 5
RECALL_DEFAULT_DEPTH = 1


def clamp_depth(depth: int) -> int:
    return max(0, min(MAX_DEPTH, int(depth)))


def walk(conn: Any, start: str, *, max_depth: int = GET_DEFAULT_DEPTH) -> list[tuple[str, int]]:
    """[(node_id, depth)] in breadth-first order over outgoing ``derived_from`` edges, the start at depth 0;
    each node once, at its minimum depth."""
    seen = {start}
    order = [(start, 0)]
    frontier = [start]
    for depth in range(1, clamp_depth(max_depth) + 1):
        found: list[str] = []
        for part in chunks(frontier):
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT target_id FROM edges WHERE relation = ? AND source_id IN ({marks}) ORDER BY id",
                (DERIVED_FROM, *part),
            ).fetchall()
            for (neighbour,) in rows:
                if neighbour not in seen:
                    seen.add(neighbour)
                    order.append((neighbour, depth))
                    found.append(neighbour)
        if not found:
            break
        frontier = found
    return order


def _boundary(conn: Any, key: str) -> datetime | None:
    row = conn.execute("SELECT value FROM schema_meta WHERE key = ?", (key,)).fetchone()
    return clock.parse_optional(row[0]) if row else None


def provenance_statuses(conn: Any, nodes: Sequence[Any]) -> dict[str, str]:
    """complete: the node has an outgoing ``derived_from`` edge (it was derived); legacy: created strictly
    before ``provenance_convention_since``; else none. Without a (parseable) boundary nothing is legacy."""
    ids = [n.id for n in nodes]
    derived: set[str] = set()
    for part in chunks(ids):
        marks = ",".join("?" * len(part))
        derived.update(
            r[0]
            for r in conn.execute(
                f"SELECT DISTINCT source_id FROM edges WHERE relation = ? AND source_id IN ({marks})",
                (DERIVED_FROM, *part),
            ).fetchall()
        )
    boundary = _boundary(conn, "provenance_convention_since")
    result = {}
    for node in nodes:
        if node.id in derived:
            result[node.id] = "complete"
        elif boundary is not None and node.created_at is not None and node.created_at < boundary:
            result[node.id] = "legacy"
        else:
            result[node.id] = "none"
    return result


def origin_statuses(conn: Any, nodes: Sequence[Any]) -> dict[str, str]:
    """recorded: an actor is present; legacy: created before ``origin_convention_since``; else unknown."""
    boundary = _boundary(conn, "origin_convention_since")
    result = {}
    for node in nodes:
        if node.origin.actor:
            result[node.id] = "recorded"
        elif boundary is not None and node.created_at is not None and node.created_at < boundary:
            result[node.id] = "legacy"
        else:
            result[node.id] = "unknown"
    return result
