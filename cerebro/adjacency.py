"""Memories written together: a recall's best results bring the memories written just before and after them.

An agent writes a session's memories one after another, and the one before or after a hit is often the other half
of the answer — the question it followed, the fix after the diagnosis, the second fact a multi-hop question needs —
while sharing few words and little meaning with the query itself (ADR 0033; episodic adjacency, as Zep/Graphiti
model it). Each of the top :data:`PARENTS` results lends its neighbours in writing order ``weight`` × its own fused
value; a neighbour already in the list keeps the larger of the two values. Only neighbours that are still active,
were written in the same origin session (or both in none) and within :data:`WINDOW` of the result count: across a
session boundary or a long pause the next memory is about something else. And only a neighbour about the same
thing: its stored vector's cosine to the result's at least :data:`RELATED`. A session's memories can be unrelated
notes written back to back (or a batch of facts added at once), and those must not crowd out the answer; consecutive
turns of one conversation are related. Without stored vectors (provider ``none``) nothing can show that, and no
neighbour comes.

A step after fusion, on the fused list; one store read (two statements) and the vectors of at most 15 memories.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from cerebro.values import Node, ScoredNode

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store

PARENTS = 5  # results that lend their neighbours (dev LoCoMo: top 10 measured the same as top 5)
WINDOW = timedelta(hours=1)  # the longest pause between two memories of one episode
# MiniLM (the local model), measured: consecutive LoCoMo turns have a median cosine of 0.51 (10th percentile 0.30,
# pairs of evidence turns 0.35), consecutive facts of tests/retrieval/test_real_model_ranking.py 0.06 (90th 0.18).
RELATED = 0.3
LANE = "adjacent"  # the explain output's lane name: the rank of the result a memory was written beside


def written_together(result: Node, neighbour: Node) -> bool:
    """Whether ``neighbour`` (written just before or after ``result``) belongs to the same episode."""
    if neighbour.status != "active" or neighbour.origin.session != result.origin.session:
        return False
    if result.created_at is None or neighbour.created_at is None:
        return False
    return abs(neighbour.created_at - result.created_at) <= WINDOW


def bring_neighbours(
    store: Store,
    conn: Connection,
    ordered: list[ScoredNode],
    weight: float,
    vectors: Callable[[list[str]], Mapping[str, Sequence[float]]],
    score: Callable[[Node], ScoredNode],
    accept: Callable[[Node], bool],
) -> list[ScoredNode]:
    """``ordered`` (best first, by rank value) with the top results' neighbours brought in or lifted, re-sorted.

    ``vectors(ids)`` reads stored vectors (those that exist); a neighbour comes only when its cosine to the result
    is at least :data:`RELATED`. ``score(node)`` scores a memory that was not a candidate (it joins with its
    composite score for display); ``accept(node)`` applies the recall's own filters (the subtype) to a newcomer.
    """
    if weight <= 0 or not ordered:
        return ordered
    parents = ordered[:PARENTS]
    written = store.reads.written_beside(conn, [s.node.id for s in parents])
    beside = {s.node.id: [n for n in written.get(s.node.id, ()) if written_together(s.node, n)] for s in parents}
    if not any(beside.values()):
        return ordered
    stored = vectors([s.node.id for s in parents] + [n.id for nodes in beside.values() for n in nodes])
    value = {s.node.id: s.rank_value for s in ordered}
    index = {s.node.id: s for s in ordered}
    lifted: dict[str, tuple[float, int]] = {}  # node id → (carried value, rank of the result it came with)
    for rank, parent in enumerate(parents, start=1):
        carried = parent.rank_value * weight
        for neighbour in beside[parent.node.id]:
            if not _related(stored.get(parent.node.id), stored.get(neighbour.id)):
                continue
            if neighbour.id not in index and not accept(neighbour):
                continue
            best = max(value.get(neighbour.id, float("-inf")), lifted.get(neighbour.id, (float("-inf"), 0))[0])
            if carried > best:
                lifted[neighbour.id] = (carried, rank)
                if neighbour.id not in index:
                    index[neighbour.id] = score(neighbour)
    if not lifted:
        return ordered
    out = [s if s.node.id not in lifted else _lifted(s, *lifted[s.node.id]) for s in index.values()]
    out.sort(key=lambda s: -s.rank_value)  # stable: equal values keep the fused order
    return out


def _lifted(s: ScoredNode, carried: float, rank: int) -> ScoredNode:
    return ScoredNode(s.node, s.score, s.similarity, s.parts, {**s.lanes, LANE: rank}, carried, s.store)


def _related(a: Sequence[float] | None, b: Sequence[float] | None) -> bool:
    from cerebro.scoring import cosine

    return a is not None and b is not None and cosine(a, b) >= RELATED
