"""Graph reads over a DB-API connection: edges around a set of nodes, and citation in-degree."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from cerebro.store.reads import chunks, edge_window
from cerebro.store.sql import execute

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Transaction


def edges_touching(
    conn: Connection, ids: Sequence[str], as_of: datetime | None = None
) -> list[tuple[str, str, str, float]]:
    """Edges in either direction for ``ids``: [(source, target, relation, weight)]; with ``as_of``, only edges valid
    then."""
    found: dict[tuple[str, str, str], float] = {}
    window, params_tail = edge_window(as_of)
    for part in chunks(list(ids), 400):
        marks = ",".join("?" * len(part))
        sql = (
            f"SELECT source_id, target_id, relation, weight FROM edges "
            f"WHERE (source_id IN ({marks}) OR target_id IN ({marks})){window}"
        )
        for s, t, r, w in conn.execute(sql, (*part, *part, *params_tail)).fetchall():
            found[(s, t, r)] = float(w) if w is not None else 1.0
    return [(s, t, r, w) for (s, t, r), w in found.items()]


# In the reads below, ``+relation`` keeps SQLite off idx_edges_relation: with a long IN list of ids the planner
# took it, and read every edge of a common relation (derived_from) to find a few — 0.57 ms instead of 0.024 ms a
# call at 100k memories (issue 18). The id's own index (target or source) is always the narrower one.


def citation_indegree(
    conn: Connection, ids: Sequence[str], relations: Sequence[str], as_of: datetime | None = None
) -> dict[str, int]:
    """Incoming ``relations`` edges of each of ``ids`` (those with any); with ``as_of``, only edges valid then."""
    counts: dict[str, int] = {}
    rel_marks = ",".join("?" * len(relations))
    window, params_tail = edge_window(as_of)
    for part in chunks(list(ids)):
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT target_id, COUNT(*) FROM edges WHERE target_id IN ({marks}) AND +relation IN ({rel_marks})"
            f"{window} GROUP BY target_id",
            (*part, *relations, *params_tail),
        ).fetchall()
        counts.update({r[0]: int(r[1]) for r in rows})
    return counts


def targets(conn: Connection, sources: Sequence[str], relation: str) -> list[str]:
    """Targets of ``relation`` edges out of ``sources``, in edge order (duplicates kept)."""
    found: list[str] = []
    for part in chunks(list(sources)):
        marks = ",".join("?" * len(part))
        found += [
            r[0]
            for r in conn.execute(
                f"SELECT target_id FROM edges WHERE +relation = ? AND source_id IN ({marks}) ORDER BY id",
                (relation, *part),
            )
        ]
    return found


def sources_with(db: Transaction, ids: Sequence[str], relation: str) -> set[str]:
    """Those of ``ids`` with at least one outgoing ``relation`` edge; ``db`` a raw connection or a session (gc asks
    within its write, where an edge made since its read counts)."""
    found: set[str] = set()
    for part in chunks(list(ids)):
        named = {f"i{n}": node_id for n, node_id in enumerate(part)}
        marks = ",".join(f":{name}" for name in named)
        sql = f"SELECT DISTINCT source_id FROM edges WHERE +relation = :relation AND source_id IN ({marks})"
        found.update(r[0] for r in execute(db, sql, {"relation": relation, **named}).fetchall())
    return found
