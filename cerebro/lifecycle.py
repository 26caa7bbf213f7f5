"""Lifecycle decisions as pure functions: gc retention, and grouping for consolidation suggestions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cerebro import scoring

if TYPE_CHECKING:
    from cerebro.values import Node

DEFAULT_GC_THRESHOLD = 0.01
_LATEST = datetime.max.replace(tzinfo=UTC)  # sorts undated memories last


def retention(node: Node, now: datetime) -> float:
    """0.5·importance·(1 + ln(1 + accesses)) + 0.5·e^(−λ·days since last access).

    Floor property (upstream, intended): the first half alone is ≥ importance/2, so a memory with
    importance ≥ 2 × threshold is never evicted — at the default 0.01, every default-importance memory stays.
    """
    days = scoring.days_between(node.last_accessed or node.created_at, now)
    return 0.5 * scoring.importance_term(node.importance, node.access_count) + 0.5 * scoring.recency(
        node.decay_rate, days
    )


def suggest_groups(episodes: Sequence[Any], limit: int) -> list[dict[str, Any]]:
    """Active episodes grouped by subtype: biggest groups first, oldest first within a group; at most
    ``limit`` episodes listed in all, while every group keeps its exact count."""
    groups: dict[str | None, list[Any]] = {}
    for node in episodes:
        groups.setdefault(node.subtype or None, []).append(node)
    ordered = sorted(
        groups.items(),
        key=lambda kv: (-len(kv[1]), min((n.created_at for n in kv[1] if n.created_at), default=_LATEST)),
    )
    remaining = limit
    result = []
    for subtype, group in ordered:
        members = sorted(group, key=lambda n: (n.created_at or _LATEST, n.id))
        shown = members[: max(0, remaining)]
        remaining -= len(shown)
        result.append({"subtype": subtype, "count": len(members), "episodes": shown})
    return result
