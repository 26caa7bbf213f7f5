"""``recall --prime``: what a session starts with (upstream ADR-007).

Candidate pools per type — concepts, procedures and reflections by importance, episodes from the last
7 days, anything changed in the last 48 hours — each scored ``0.6·importance + 0.4·surprise`` (times the
code-anchor factor when an anchored file changed or is gone, ADR 0018), then an MMR pass (λ = 0.6) so the
primed set is not ten paraphrases of one fact. The store's raw reads: this runs on every session start.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from cerebro import clock, scoring
from cerebro.values import ScoredNode

if TYPE_CHECKING:
    from cerebro.anchors import Checker
    from cerebro.db.types import Connection
    from cerebro.store.interface import Store

# Per-type pools: (pool, share of the limit, over-fetch multiplier). What each pool selects, and how it is read
# without sorting the brain (ADR 0037), is ``cerebro.store.reads.prime_pool``.
POOLS = (
    ("concept", 0.35, 3),
    ("procedure", 0.25, 3),
    ("episode", 0.20, 2),
    ("reflection", 0.10, 3),
    ("recent", 0.10, 5),
)


def budget(share: float, limit: int) -> int:
    """round(share·limit), half away from zero like Go's math.Round, and at least 1."""
    return max(1, math.floor(share * limit + 0.5))


def prime(
    store: Store, conn: Connection, limit: int, now: datetime | None = None, anchors: Checker | None = None
) -> list[ScoredNode]:
    """The primed memories, best first. ``anchors`` (a ``cerebro.anchors.Checker``) fills anchor statuses
    and demotes memories whose anchored code changed."""
    now = now or clock.now()
    marks = {
        "week": clock.format_ts(now - timedelta(days=7)),
        "two_days": clock.format_ts(now - timedelta(hours=48)),
    }
    candidates: dict[str, Any] = {}
    for pool, share, multiplier in POOLS:
        for node in store.reads.prime_pool(conn, pool, budget(share, limit) * multiplier, marks):
            candidates.setdefault(node.id, node)
    if not candidates:
        return []
    if anchors is not None:
        candidates = {node_id: anchors.annotate(node) for node_id, node in candidates.items()}
    scores = {
        node_id: scoring.prime_score(node.importance, scoring.surprise(node.updated_at, node.last_surfaced, now))
        * scoring.anchor_factor(node.anchor_status)
        for node_id, node in candidates.items()
    }
    vectors = store.vectors.vectors_for(conn, list(candidates)) if store.vectors.exists(conn) else {}
    chosen = scoring.mmr_select(list(candidates), scores, vectors, limit)
    return [
        ScoredNode(candidates[node_id], scores[node_id], 0.0, None, {"prime": rank})
        for rank, node_id in enumerate(chosen, start=1)
    ]
