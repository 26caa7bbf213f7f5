"""A memory the recall's lanes found, before scoring, and its composite score (``cerebro.scoring``'s formula) with
the in-degree baseline of its structure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro import scoring
from cerebro.values import ScoredNode

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store
    from cerebro.values import Node


class Candidate:
    """A memory the lanes found, before scoring: ~110 a recall, so a slotted class (a dataclass with a factory
    default cost ~1 µs more to make)."""

    __slots__ = ("lanes", "node", "raw_similarity", "similarity", "structural")

    def __init__(
        self,
        node: Node,
        similarity: float,  # cosine to the (possibly feedback-expanded) query: the relevance term
        structural: float,
        lanes: dict[str, int] | None = None,
        raw_similarity: float | None = None,  # cosine to the query as asked, when it differs
    ) -> None:
        self.node, self.similarity, self.structural = node, similarity, structural
        self.lanes = {} if lanes is None else lanes
        self.raw_similarity = raw_similarity

    @property
    def reported_similarity(self) -> float:
        return self.similarity if self.raw_similarity is None else self.raw_similarity


def score_of(candidate: Candidate, now: datetime) -> ScoredNode:
    return score_node(
        candidate.node, candidate.similarity, candidate.reported_similarity, candidate.structural, candidate.lanes, now
    )


def score_node(
    node: Node, similarity: float, reported: float, structural: float, lanes: dict[str, int], now: datetime
) -> ScoredNode:
    days = scoring.days_between(node.last_accessed or node.created_at, now)
    parts = scoring.parts_of(
        similarity, node.importance, node.access_count, node.decay_rate, days, structural, node.metadata
    )
    return ScoredNode.built(node, parts.score, reported, parts, dict(lanes))


def structural_baseline(
    store: Store, conn: Connection, ids: Sequence[str], enabled: bool, as_of: datetime | None = None
) -> dict[str, float]:
    """The in-degree baseline of each of ``ids``: its citations (with ``as_of``, only edges valid then)."""
    if not enabled or not ids:
        return {}
    counts = store.graph.citation_indegree(conn, ids, scoring.CITATION_RELATIONS, as_of)
    return {node_id: scoring.indegree_structural(n) for node_id, n in counts.items()}
