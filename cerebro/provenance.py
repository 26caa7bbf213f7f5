"""Provenance: breadth-first walks over ``derived_from`` edges, and the read-time statuses.

Walks are cycle-safe (a visited set: each node once, at its minimum depth) and run in code rather than a
recursive CTE, as upstream. Statuses are computed in batches at read time; nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cerebro import clock

if TYPE_CHECKING:
    from cerebro.db.types import Connection
    from cerebro.store.interface import Store

DERIVED_FROM = "derived_from"
MAX_DEPTH = 100  # clamp: a deeper walk is a mistake, not a request
GET_DEFAULT_DEPTH = 5
RECALL_DEFAULT_DEPTH = 1


def clamp_depth(depth: int) -> int:
    return max(0, min(MAX_DEPTH, int(depth)))


def walk(store: Store, conn: Connection, start: str, *, max_depth: int = GET_DEFAULT_DEPTH) -> list[tuple[str, int]]:
    """[(node_id, depth)] in breadth-first order over outgoing ``derived_from`` edges, the start at depth 0;
    each node once, at its minimum depth."""
    seen = {start}
    order = [(start, 0)]
    frontier = [start]
    for depth in range(1, clamp_depth(max_depth) + 1):
        found: list[str] = []
        for neighbour in store.graph.targets(conn, frontier, DERIVED_FROM):
            if neighbour not in seen:
                seen.add(neighbour)
                order.append((neighbour, depth))
                found.append(neighbour)
        if not found:
            break
        frontier = found
    return order


def _boundary(store: Store, conn: Connection, key: str) -> datetime | None:
    return clock.parse_optional(store.reads.meta(conn, key))


def provenance_statuses(store: Store, conn: Connection, nodes: Sequence[Any]) -> dict[str, str]:
    """complete: the node has an outgoing ``derived_from`` edge (it was derived); legacy: created strictly
    before ``provenance_convention_since``; else none. Without a (parseable) boundary nothing is legacy."""
    derived = store.graph.sources_with(conn, [n.id for n in nodes], DERIVED_FROM)
    boundary = _boundary(store, conn, "provenance_convention_since")
    result = {}
    for node in nodes:
        if node.id in derived:
            result[node.id] = "complete"
        elif boundary is not None and node.created_at is not None and node.created_at < boundary:
            result[node.id] = "legacy"
        else:
            result[node.id] = "none"
    return result


def origin_statuses(store: Store, conn: Connection, nodes: Sequence[Any]) -> dict[str, str]:
    """recorded: an actor is present; legacy: created before ``origin_convention_since``; else unknown."""
    boundary = _boundary(store, conn, "origin_convention_since")
    result = {}
    for node in nodes:
        if node.origin.actor:
            result[node.id] = "recorded"
        elif boundary is not None and node.created_at is not None and node.created_at < boundary:
            result[node.id] = "legacy"
        else:
            result[node.id] = "unknown"
    return result
