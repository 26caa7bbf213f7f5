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

A result whose last sentence is a question is answered by the memory written after it, and a recall that found the
question is after the answer: that memory gets all of the result's value (:data:`ANSWER_SHARE`), and ranks ahead of
it when the result mostly asks; after a statement that ends with a question, the statement keeps its place.

Then the results support one another (:func:`support`): each result below the first gains :data:`SUPPORT` × the
share × the value of every one of the top :data:`LENDERS` results written within :data:`REACH` places of it in the
same episode and related to it — the turns of one exchange found by different words rise together, ahead of isolated
matches.

A step after fusion, on the fused list; two store reads (one statement each) and stored vectors of the results
written near one another.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING

from cerebro.values import Node, ScoredNode

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store

    # Pairs of node ids → the cosine of their stored vectors, for the pairs whose two nodes have one.
    Cosines = Callable[[Sequence[tuple[str, str]]], Mapping[tuple[str, str], float]]

PARENTS = 5  # results that lend their neighbours (dev LoCoMo: top 10 measured the same as top 5)
WINDOW = timedelta(hours=1)  # the longest pause between two memories of one episode
# MiniLM (the local model), measured: consecutive LoCoMo turns have a median cosine of 0.51 (10th percentile 0.30,
# pairs of evidence turns 0.35), consecutive facts of tests/retrieval/test_real_model_ranking.py 0.06 (90th 0.18).
RELATED = 0.3
LANE = "adjacent"  # the explain output's lane name: the rank of the result a memory was written beside
# Support among results (ADR 0034): half the share, from every result written within two places. On the LoCoMo
# development half: reach 1 and 3, halves 0.25 and 0.75 measured; reach 2 at half the share was best at R@20.
SUPPORT = 0.5
REACH = 2
SUPPORT_LANE = "episode"  # explain output: the rank of the result that lent the most support
LENDERS = 10  # the results that lend support: further down, a value is too small to move anything (dev: 10, 20, all)
# A result whose last sentence asks a question lends the memory written after it — its answer — all of its value,
# and when it mostly asks (as many words in questions as in statements) the answer ranks ahead of it (ADR 0033).
ANSWER_SHARE = 1.0
_QUESTION_MARKS = ("?", "？", "؟")
_CLOSERS = "\"'”’»)]!！"  # what may follow a question mark: 'Is it fixed?!', '(was it?)', '"What now?"'
# A sentence ends after . ! ? (and what closes it); a line break ends one too — notes are often lists.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？؟])[\"'”’»)\]!！]*[ \t]+|\s*\n\s*")
_TRAILING_NOTES = re.compile(r"(?:\s*\[[^\[\]]*\])+\s*$")


def written_together(result: Node, neighbour: Node) -> bool:
    """Whether ``neighbour`` (written just before or after ``result``) belongs to the same episode."""
    if neighbour.status != "active" or neighbour.origin.session != result.origin.session:
        return False
    if result.created_at is None or neighbour.created_at is None:
        return False
    return abs(neighbour.created_at - result.created_at) <= WINDOW


def arrange(
    store: Store,
    conn: Connection,
    ordered: list[ScoredNode],
    weight: float,
    vectors: Callable[[list[str]], Mapping[str, Sequence[float]]],
    score: Callable[[Node], ScoredNode],
    accept: Callable[[Node], bool],
    cosines: Cosines | None = None,
) -> list[ScoredNode]:
    """The whole step: :func:`bring_neighbours`, then :func:`support` over the list that makes."""
    brought_by: dict[str, str] = {}
    brought = bring_neighbours(store, conn, ordered, weight, vectors, score, accept, brought_by, cosines)
    return support(store, conn, brought, weight, vectors, brought_by, cosines)


def bring_neighbours(  # noqa: PLR0913 - the recall's callbacks: vectors, scoring, filters, pairwise cosines
    store: Store,
    conn: Connection,
    ordered: list[ScoredNode],
    weight: float,
    vectors: Callable[[list[str]], Mapping[str, Sequence[float]]],
    score: Callable[[Node], ScoredNode],
    accept: Callable[[Node], bool],
    brought_by: dict[str, str] | None = None,
    cosines: Cosines | None = None,
) -> list[ScoredNode]:
    """``ordered`` (best first, by rank value) with the top results' neighbours brought in or lifted, re-sorted.
    ``brought_by`` (when given) is filled with each lifted memory's id → the id of the result whose value it took.

    ``vectors(ids)`` reads stored vectors (those that exist); a neighbour comes only when its cosine to the result
    is at least :data:`RELATED` (``cosines(pairs)``, when given, computes them for many pairs at once: the warm
    index). ``score(node)`` scores a memory that was not a candidate (it joins with its
    composite score for display, anchors checked); ``accept(node)`` applies the recall's own filters (the subtype)
    to a newcomer. A lifted memory's value is what it was lent times its own anchor factor.
    """
    if weight <= 0 or not ordered:
        return ordered
    parents = ordered[:PARENTS]
    written = store.reads.written_beside(conn, [s.node.id for s in parents])
    offers: dict[str, list[tuple[Node, float, bool]]] = {}  # parent id → (neighbour, share, answer first?)
    for parent in parents:
        before, after = written.get(parent.node.id, (None, None))
        offers[parent.node.id] = [
            (neighbour, *_share(parent.node, is_after, weight))
            for neighbour, is_after in ((before, False), (after, True))
            if neighbour is not None and written_together(parent.node, neighbour)
        ]
    if not any(offers.values()):
        return ordered
    related = related_pairs(
        [(parent.node.id, n.id) for parent in parents for n, _, _ in offers[parent.node.id]], vectors, cosines
    )
    index = {s.node.id: s for s in ordered}
    lifted: dict[str, tuple[float, int]] = {}  # node id → (carried value, rank of the result it came with)
    first: set[str] = set()  # answers that rank ahead of the question they share a value with
    joined: set[str] = set()  # memories that were not results: only what they are lent counts
    for rank, parent in enumerate(parents, start=1):
        for neighbour, share, ahead in offers[parent.node.id]:
            carried = parent.rank_value * share
            if (parent.node.id, neighbour.id) not in related:
                continue
            if neighbour.id not in index and not accept(neighbour):
                continue
            present = index.get(neighbour.id) if neighbour.id not in joined else None  # a result's own value
            best = max(
                present.rank_value if present is not None else float("-inf"),
                lifted.get(neighbour.id, (float("-inf"), 0))[0],
            )
            if carried > best:
                lifted[neighbour.id] = (carried, rank)
                if ahead:
                    first.add(neighbour.id)
                if neighbour.id not in index:
                    index[neighbour.id] = score(neighbour)
                    joined.add(neighbour.id)
    if not lifted:
        return ordered
    if brought_by is not None:
        brought_by.update({node_id: parents[rank - 1].node.id for node_id, (_, rank) in lifted.items()})
    out = [s if s.node.id not in lifted else _lifted(s, *lifted[s.node.id]) for s in index.values()]
    # Stable: equals keep the fused order (an answer that ranks first ahead of its question).
    out.sort(key=(lambda s: (-s.rank_value, s.node.id not in first)) if first else (lambda s: -s.rank_value))
    return out


def support(
    store: Store,
    conn: Connection,
    ordered: list[ScoredNode],
    weight: float,
    vectors: Callable[[list[str]], Mapping[str, Sequence[float]]],
    brought_by: Mapping[str, str] | None = None,
    cosines: Cosines | None = None,
) -> list[ScoredNode]:
    """``ordered`` re-sorted after each result below the first gained ``SUPPORT × weight ×`` the value of every one of
    the top :data:`LENDERS` results written within :data:`REACH` places of it — same episode
    (:func:`written_together`), related vectors. The first result keeps its place: it is the best match, and support
    only orders what follows it. ``brought_by``: memory id → the result it was brought by, which does not also lend
    it support."""
    if weight <= 0 or len(ordered) < 3:
        return ordered
    near = store.reads.written_near(conn, [s.node.id for s in ordered[:LENDERS]], REACH)
    index = {s.node.id: s for s in ordered}
    pairs = {  # (receiver, lender)
        (a, b)
        for b, around in near.items()
        for a in around
        if a in index and written_together(index[a].node, index[b].node)
    }
    if not pairs:
        return ordered
    related = related_pairs(sorted(pairs), vectors, cosines)
    rank = {s.node.id: position for position, s in enumerate(ordered, start=1)}
    bringer = brought_by or {}
    gained: dict[str, float] = {}
    strongest: dict[str, str] = {}  # node id → the result that lent it the most
    for a, b in sorted(pairs, key=lambda pair: (rank[pair[1]], rank[pair[0]])):  # b lends to a, best lenders first
        # A brought memory's value is a share of its bringer's: neither lends it back to the other.
        if bringer.get(a) == b or bringer.get(b) == a or (a, b) not in related:
            continue
        gained[a] = gained.get(a, 0.0) + index[b].rank_value
        if a not in strongest or index[b].rank_value > index[strongest[a]].rank_value:
            strongest[a] = b
    if not gained:
        return ordered
    share = SUPPORT * weight
    top = ordered[0].rank_value  # the first is not re-valued, and no one passes it (a merged recall sorts by value)
    rest = [
        s
        if s.node.id not in gained
        else s.revalued(min(s.rank_value + share * gained[s.node.id], top), (SUPPORT_LANE, rank[strongest[s.node.id]]))
        for s in ordered[1:]
    ]
    rest.sort(key=lambda s: -s.rank_value)  # stable: equals keep their order (an answer ahead of its question)
    return [ordered[0], *rest]


def _share(result: Node, after: bool, weight: float) -> tuple[float, bool]:
    """(the share of ``result``'s value the neighbour gets, whether it then ranks ahead of ``result``)."""
    if not after or not any(mark in result.content for mark in _QUESTION_MARKS):  # no question without a mark
        return weight, False
    asked, told = question_words(result.content)
    if not asked:
        return weight, False
    return ANSWER_SHARE, asked >= told


def question_words(text: str) -> tuple[int, int]:
    """(words in questions, words in other sentences) of a text whose last sentence is a question; (0, n) if its last
    sentence is not one. Trailing bracketed notes ("[image: …]", a marker) are not sentences, nor counted."""
    sentences = [part for part in _SENTENCE_END.split(_TRAILING_NOTES.sub("", text).strip()) if part]
    asks = [part.rstrip(_CLOSERS).endswith(_QUESTION_MARKS) for part in sentences]
    words = [len(part.split()) for part in sentences]
    if not sentences or not asks[-1]:
        return 0, sum(words)
    asked = sum(n for n, question in zip(words, asks, strict=True) if question)
    return asked, sum(words) - asked


def _lifted(s: ScoredNode, carried: float, rank: int) -> ScoredNode:
    anchor = s.parts.anchor if s.parts is not None else 1.0  # a stale or missing anchor demotes what it was lent too
    return s.revalued(carried * anchor, (LANE, rank))


def related_pairs(
    pairs: Sequence[tuple[str, str]],
    vectors: Callable[[list[str]], Mapping[str, Sequence[float]]],
    cosines: Cosines | None = None,
) -> set[tuple[str, str]]:
    """The pairs whose stored vectors have a cosine of at least :data:`RELATED` (both must have one)."""
    if cosines is not None:
        return {pair for pair, cosine in cosines(pairs).items() if cosine >= RELATED}
    stored = vectors(sorted({node_id for pair in pairs for node_id in pair}))
    return {(a, b) for a, b in pairs if _related(stored.get(a), stored.get(b))}


def _related(a: Sequence[float] | None, b: Sequence[float] | None) -> bool:
    """Cosine ≥ RELATED, as a dot product: stored vectors are unit length (every embedder normalises; int8 storage
    keeps them within 1 %), and a third of the cosine's arithmetic is a quarter of this step's time."""
    from operator import mul

    return a is not None and b is not None and sum(map(mul, a, b)) >= RELATED
