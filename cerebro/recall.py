"""The recall pipeline: lanes → gate/expand → fuse → (rerank) → cut.

1. Vector lane: cosine KNN over ``vec_nodes`` (over-fetch ×3, active only, ``similarity ≥ threshold``),
   each hit scored by the composite formula with the in-degree structural baseline. The query is first
   moved toward the top keyword hits (relevance feedback) and away from the brain's mean vector
   (centering), ADR 0010.
2. Lazy expansion gate on raw cosine (upstream ADR-014). Unless it fires — or ``as_of`` is given, which
   always expands so the validity window always applies — one hop of graph expansion rescoring
   connected results and adding active neighbours.
3. Keyword lane: FTS5 BM25 with every query token quoted.
4. Reciprocal-rank fusion of the two lanes; the composite score is kept for display and explanation.
5. The subtype filter; code anchors (a stale or missing one multiplies the score and the fused value by
   ``scoring.anchor_factor``, ADR 0018); values tilted by length (``cerebro.prior``, ADR 0035); for a *when*
   question, results that state a time lifted (``cerebro.temporal``, ADR 0034); the top results' neighbours in writing
   order brought along and results written together supporting each other (``cerebro.adjacency``, ADR 0033, 0034);
   each step re-sorts; then the cut to ``limit``.

Works on a DB-API connection (no ORM): this is a hot path. Pure formulas live in ``cerebro.scoring``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import mul
from typing import TYPE_CHECKING, Any

from cerebro import ordering, scoring
from cerebro.candidates import Candidate, score_node, score_of, structural_baseline
from cerebro.temporal import favour_dated
from cerebro.values import UNSET, Node, RecallResult, ScoredNode, evolve

if TYPE_CHECKING:
    from pathlib import Path

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store


@dataclass(frozen=True)
class RecallOptions:
    limit: int = 20
    threshold: float = 0.3
    subtype: Any = UNSET  # UNSET: no filter; None or "": no subtype; "x": exactly x
    as_of: datetime | None = None
    bm25_enabled: bool = True
    indegree_enabled: bool = True
    expand_threshold: float = 0.75
    expand_spread_threshold: float = 0.0
    rrf_k: int = scoring.RRF_K
    lane_weights: tuple[float, float] = (1.0, 1.0)  # (vector/graph lane, keyword lane)
    keyword_width: int | None = None  # defaults to the lanes' width
    fusion: str = "blend"  # "blend" (ours, ADR 0010) or "rrf" (upstream's recipe)
    keyword_weight: float = 0.6  # blend: the keyword lane's share
    depth: int = 50  # blend: candidates each lane contributes before fusion
    # Relevance feedback (Rocchio): the query vector is nudged toward the top keyword hits' vectors, so
    # an exact-term match teaches the vector lane what the query is about (ADR 0010).
    feedback_docs: int = 3
    feedback_weight: float = 0.7
    # Centering (ADR 0010): the vector query moves away from the brain's mean memory vector, so what every
    # memory shares (the model's common direction, the brain's recurring names and style) stops counting.
    centering: float = 1.0
    mean: Any = field(default=None, compare=False)  # conn -> the brain's mean vector, cached (the Brain's), if any
    warm: Any = field(default=None, compare=False)  # a warm in-memory index (cerebro.store.warm), if any
    keywords: Any = field(default=None, compare=False)  # an in-memory keyword copy (cerebro.store.warm_keywords)
    now: datetime | None = None
    # Memories written beside a top result join with this share of its fused value (ADR 0033; 0 = off).
    adjacency: float = 0.4
    lanes: tuple[str, ...] = ("vector", "keyword", "adjacent", "dated", "length")  # lanes/steps (eval: lanes alone)
    expand: bool = True
    anchors: Any = field(default=None, compare=False)  # a cerebro.anchors.Checker: demote stale anchors (ADR 0018)


SUBTYPE_OVERFETCH = 10  # with a subtype filter, look this many times deeper for matching neighbours
# k grows 4× a pass from at least 2 up to MAX_K (4096): 6 passes reach it; the bound only guarantees an end.
MAX_KNN_PASSES = 8


def vector_lane(
    store: Store,
    conn: Connection,
    query_vector: Sequence[float],
    options: RecallOptions,
    width: int,
    known: dict[str, Node] | None = None,
) -> list[Candidate]:
    """The nearest active nodes above the threshold (and of the wanted subtype), nearest first.

    Non-active nodes keep their vectors, so the KNN over-fetches; when a page of neighbours did not
    yield ``width`` usable ones, one deeper pass follows (rather than always fetching 3× deep). ``known``: active
    nodes read already (the keyword lane's), taken from there rather than read again.
    """
    overfetch = 2 if options.subtype is UNSET else SUBTYPE_OVERFETCH
    k = min(width * overfetch, store.vectors.MAX_K)
    nodes: dict[str, Node] = {}
    usable: list[tuple[str, float]] = []
    known = known or {}
    for _deeper in range(MAX_KNN_PASSES):
        nearest = (
            options.warm.knn(query_vector, k) if options.warm is not None else store.vectors.knn(conn, query_vector, k)
        )
        hits = [(node_id, 1.0 - distance) for node_id, distance in nearest]
        above = [(node_id, sim) for node_id, sim in hits if sim >= options.threshold]
        # Rows are read nearest first, only as deep as needed: usually the first ``width`` suffice.
        wanted = [node_id for node_id, _ in above if node_id not in nodes]
        nodes.update(active_nodes(store, conn, wanted[:width], known))
        usable = [(i, sim) for i, sim in above if i in nodes and _subtype_matches(nodes[i], options.subtype)]
        if len(usable) < width and len(wanted) > width:
            nodes.update(active_nodes(store, conn, wanted[width:], known))
            usable = [(i, sim) for i, sim in above if i in nodes and _subtype_matches(nodes[i], options.subtype)]
        exhausted = len(hits) < k or len(above) < len(hits)  # no more neighbours, or the rest are too far
        if len(usable) >= width or exhausted or k >= min(width * SUBTYPE_OVERFETCH * 4, store.vectors.MAX_K):
            break
        k = min(k * 4, store.vectors.MAX_K)
    return [Candidate(nodes[i], sim, 0.0) for i, sim in usable[:width]]  # structure: see recall()


def active_nodes(store: Store, conn: Connection, ids: Sequence[str], known: dict[str, Node]) -> dict[str, Node]:
    """The active nodes among ``ids``: from ``known`` (active nodes read already in this snapshot, the keyword lane's)
    where it has them, the rest read."""
    found = {node_id: known[node_id] for node_id in ids if node_id in known}
    found.update(store.reads.nodes_by_id(conn, [i for i in ids if i not in found], active_only=True))
    return found


def vectors_of(store: Store, conn: Connection, options: RecallOptions, ids: Sequence[str]) -> dict[str, list[float]]:
    """Stored vectors of these nodes: from the warm index when there is one (no point lookups)."""
    return options.warm.vectors(ids) if options.warm is not None else store.vectors.vectors_for(conn, list(ids))


CENTERING_SAMPLE = 256  # stored vectors read to estimate the brain's mean
CENTERING_MIN = 50  # fewer vectors (about one lane's depth): no centering, the mean would be the memories


def brain_mean(store: Store, conn: Connection, cache: Path | None = None) -> list[float] | None:
    """The mean vector centering moves away from, or None when the brain is too small to have one. ``cache``: a file
    that keeps it between one-shot processes (ADR 0055)."""
    return store.vectors.mean_vector(conn, CENTERING_SAMPLE, CENTERING_MIN, cache)


class _SeedCosines:
    """Dot products of the seeds' stored vectors with a query vector: one matrix product over the warm
    index when there is one; else the vectors are read once (point lookups) and kept for the next query."""

    def __init__(self, store: Store, conn: Connection, options: RecallOptions, ids: list[str]) -> None:
        self._store, self._conn, self._options, self._ids = store, conn, options, ids
        self._vectors: dict[str, list[float]] | None = None
        self._rows: Any = None  # the warm index's rows of the seeds, gathered once for both queries

    def against(self, vector: Sequence[float]) -> dict[str, float]:
        if self._options.warm is not None:
            if self._rows is None:
                self._rows = self._options.warm.gather(self._ids)
            return self._rows.dots(vector)
        if self._vectors is None:
            self._vectors = vectors_of(self._store, self._conn, self._options, self._ids)
        return {node_id: sum(map(mul, v, vector)) for node_id, v in self._vectors.items()}


def _attach_raw_similarity(seeds: list[Candidate], cosines: dict[str, float]) -> None:
    for candidate in seeds:
        candidate.raw_similarity = cosines.get(candidate.node.id)  # None (no vector): reported as similarity


def keyword_lane(
    store: Store,
    conn: Connection,
    query: str,
    width: int,
    subtype: Any = UNSET,  # noqa: ANN401 - UNSET is typed Any to fit any parameter (cerebro.values)
    nodes: dict[str, Node] | None = None,
    copy: Any = None,  # noqa: ANN401 - an in-memory keyword copy (RecallOptions.keywords)
) -> list[tuple[str, float]]:
    """[(node_id, bm25)], best first (FTS5's bm25 is lower-is-better); ``nodes`` gets the hits' nodes the store read
    with them (``Keywords.search``)."""
    return store.keywords.search(
        conn, query, width, subtype=... if subtype is UNSET else subtype, nodes=nodes, copy=copy
    )


def _limit(options: RecallOptions) -> int:
    return options.limit if options.limit > 0 else 20


def _width(options: RecallOptions) -> int:
    """How deep each lane looks. Upstream's RRF fuses lanes cut at the limit; blending looks deeper, since a
    lane's 30th candidate can still win when the other lane is confident about it."""
    limit = _limit(options)
    return max(limit, options.depth) if options.fusion == "blend" else limit


def keyword_hits_for(
    store: Store, conn: Connection, query: str, options: RecallOptions, nodes: dict[str, Node] | None = None
) -> list[tuple[str, float]]:
    """The keyword lane as :func:`recall` runs it with these options (empty when it is off); ``nodes``: as
    :func:`keyword_lane`'s."""
    use_keyword = options.bm25_enabled and "keyword" in options.lanes and bool(query.strip())
    return (
        keyword_lane(
            store, conn, query, options.keyword_width or _width(options), options.subtype, nodes, options.keywords
        )
        if use_keyword
        else []
    )


def expand(store: Store, conn: Connection, seeds: list[Candidate], as_of: datetime | None) -> list[Candidate]:
    """One hop: results linked to each other take the strongest edge weight as structure; active
    neighbours join with similarity 0 and the strongest edge weight to them (the in-degree baseline is
    :func:`recall`'s, for every candidate at once)."""
    by_id = {c.node.id: c for c in seeds}
    strongest_inside: dict[str, float] = {}
    strongest_to_neighbour: dict[str, float] = {}
    for source, target, _relation, weight in store.graph.edges_touching(conn, list(by_id), as_of):
        value = scoring.edge_structural(weight)
        if source in by_id and target in by_id:
            for end in (source, target):
                strongest_inside[end] = max(strongest_inside.get(end, 0.0), value)
        else:
            neighbour = target if source in by_id else source
            strongest_to_neighbour[neighbour] = max(strongest_to_neighbour.get(neighbour, 0.0), value)
    for node_id, value in strongest_inside.items():
        by_id[node_id].structural = max(by_id[node_id].structural, value)
    neighbours = store.reads.nodes_by_id(conn, list(strongest_to_neighbour), active_only=True)
    return seeds + [Candidate(node, 0.0, strongest_to_neighbour[node_id]) for node_id, node in neighbours.items()]


def _subtype_matches(node: Node, wanted: object) -> bool:
    if wanted is UNSET:
        return True
    return node.subtype == wanted if wanted else not node.subtype


def recall(  # noqa: PLR0913 - the pipeline and, when the caller ran it already, its keyword lane
    store: Store,
    conn: Connection,
    query: str,
    query_vector: Sequence[float] | None,
    options: RecallOptions,
    *,
    mode: str,
    notices: list[str] | None = None,
    keyword_hits: list[tuple[str, float]] | None = None,
    keyword_nodes: dict[str, Node] | None = None,
) -> RecallResult:
    """Run the pipeline. ``query_vector`` is None when there is no vector lane (provider none, or the
    embedder failed: ``mode`` says which). ``keyword_hits``: :func:`keyword_hits_for` with these options,
    when the caller ran it already (while the query was being embedded), and ``keyword_nodes`` the nodes it read."""
    now = options.now
    if now is None:
        from cerebro import clock

        now = clock.now()
    limit = _limit(options)
    width = _width(options)
    use_vector = query_vector is not None and "vector" in options.lanes
    if keyword_hits is None:
        keyword_nodes = {}
        keyword_hits = keyword_hits_for(store, conn, query, options, keyword_nodes)
    keyword_nodes = keyword_nodes or {}  # the hits' nodes the keyword lane read with them: not read again
    keyword_ids = [node_id for node_id, _ in keyword_hits]

    expansion = "off"
    if use_vector:
        search_vector: Any = query_vector
        if options.warm is not None:  # vector arithmetic in NumPy, which the warm index has loaded
            import numpy as np

            search_vector = np.asarray(query_vector, dtype=np.float64)
        moved = bool(keyword_ids) and options.feedback_docs > 0 and options.feedback_weight > 0
        if moved:
            tops = keyword_ids[: options.feedback_docs]
            if options.warm is not None:  # the rows as one matrix (as lists, 384 floats each went out and back in)
                top: Any = options.warm.gather(tops).matrix
                top = [] if top is None else top
            else:
                top = list(vectors_of(store, conn, options, tops).values())
            search_vector = scoring.feedback(search_vector, top, options.feedback_weight)
        mean = None
        if options.centering > 0:
            mean = options.mean(conn) if options.mean is not None else brain_mean(store, conn)
            if mean is not None and len(mean) != len(search_vector):
                mean = None  # vectors of another model (a switch under way): rank uncentered
        cosines = None
        if mean is None:
            seeds = vector_lane(store, conn, search_vector, options, width, keyword_nodes)
        else:
            # The centered query chooses the candidates and gives the relevance term; the threshold keeps
            # its meaning, a cosine to the uncentered query, so it is checked after the cut.
            centered = scoring.center(search_vector, mean, options.centering)
            seeds = vector_lane(store, conn, centered, evolve(options, threshold=-1.0), width, keyword_nodes)
            cosines = _SeedCosines(store, conn, options, [c.node.id for c in seeds])
            to_search = cosines.against(search_vector)
            seeds = [c for c in seeds if to_search.get(c.node.id, -1.0) >= options.threshold]
        if (moved or mean is not None) and seeds:
            # Relevance uses the expanded query (that is the gain, ADR 0010); the gate and the reported
            # similarity keep the cosine to the query the user asked (upstream's meaning of both).
            if cosines is None:
                cosines = _SeedCosines(store, conn, options, [c.node.id for c in seeds])
            _attach_raw_similarity(seeds, cosines.against(query_vector))  # type: ignore[arg-type]
        for rank, c in enumerate(seeds, start=1):
            c.lanes["vector"] = rank
    elif mode == "keyword" and keyword_ids:
        # Provider none: the graph lane grows from the keyword hits instead.
        nodes = active_nodes(store, conn, keyword_ids[:width], keyword_nodes)
        seeds = [Candidate(nodes[i], 0.0, 0.0) for i in keyword_ids[:width] if i in nodes]
    else:
        seeds = []

    # Upstream's keyword-only fallback (embedder down) never expands; everything else may.
    if seeds and options.expand and mode != "keyword-fallback":
        if options.as_of is not None:
            expansion = "forced"  # always expand, so the validity window always applies
        elif use_vector and scoring.should_skip_expansion(
            # Upstream's K hits: the lane's `limit` best cosines to the query as asked, not the deeper lane's
            heapq.nlargest(limit, (c.reported_similarity for c in seeds)),
            limit,
            options.expand_threshold,
            options.expand_spread_threshold,
        ):
            expansion = "gated"
        else:
            expansion = "expanded"
        if expansion != "gated":
            seeds = expand(store, conn, seeds, options.as_of)

    # The keyword hits that are not candidates already, and the in-degree baseline of every candidate: one read
    # each. A candidate's structure is the larger of its baseline and what expansion found.
    seen = {c.node.id: c.node for c in seeds}
    keyword_nodes = active_nodes(store, conn, [i for i in keyword_ids if i not in seen], keyword_nodes)
    baseline = structural_baseline(store, conn, [*seen, *keyword_nodes], options.indegree_enabled, options.as_of)
    for c in seeds:
        c.structural = max(c.structural, baseline.get(c.node.id, 0.0))
    scored = sorted((score_of(c, now) for c in seeds), key=lambda s: -s.score)  # stable on ties
    if options.subtype is not UNSET:  # before the cut (ADR 0008): neighbours of another subtype took the places
        scored = [s for s in scored if _subtype_matches(s.node, options.subtype)]
    primary = scored[:width]

    by_id: dict[str, ScoredNode] = {s.node.id: s for s in primary}
    cut = {s.node.id: s for s in scored[width:]} if keyword_ids and len(scored) > width else {}
    for node_id in keyword_ids:  # a hit outside the primary lane joins on its keyword value
        if node_id in by_id:
            continue
        if node_id in cut:  # scored already, past the cut: its similarity and lanes as the lane found them
            by_id[node_id] = cut[node_id]
        elif (node := seen.get(node_id) or keyword_nodes.get(node_id)) is not None:  # its structure the baseline
            by_id[node_id] = score_node(node, 0.0, 0.0, baseline.get(node_id, 0.0), {}, now)
    for rank, node_id in enumerate(keyword_ids, start=1):
        if node_id in by_id:
            by_id[node_id].lanes["keyword"] = rank
    for rank, s in enumerate(primary, start=1):
        if "vector" not in s.lanes:
            s.lanes.setdefault("graph", rank)

    if options.fusion == "blend":
        fused = scoring.blend(
            {s.node.id: s.score for s in primary},
            {node_id: -bm25 for node_id, bm25 in keyword_hits if node_id in by_id},
            options.keyword_weight,
        )
    else:
        fused = scoring.rrf(
            [[s.node.id for s in primary], [i for i in keyword_ids if i in by_id]],
            k=options.rrf_k,
            weights=options.lane_weights,
        )
    valued = [(by_id[node_id], value) for node_id, value in fused]
    if options.subtype is not UNSET:
        valued = [(s, value) for s, value in valued if _subtype_matches(s.node, options.subtype)]
    # The fused values × code-anchor factors (before adjacency: a stale memory lends its demoted value) × the length
    # prior (ADR 0035), re-sorted.
    ordered = ordering.ordered(valued, options.anchors, length="length" in options.lanes)
    ordered = favour_dated(query, ordered) if "dated" in options.lanes else ordered
    # Not without stored vectors (provider none) or in upstream's keyword-only fallback, which only searches keywords.
    if options.adjacency > 0 and "adjacent" in options.lanes and mode not in ("keyword", "keyword-fallback"):
        from cerebro import adjacency

        ordered = adjacency.arrange(
            store,
            conn,
            ordered,
            options.adjacency,
            vectors=lambda ids: vectors_of(store, conn, options, ids),
            score=lambda node: ordering.anchored([score_node(node, 0.0, 0.0, 0.0, {}, now)], options.anchors)[0],
            accept=lambda node: _subtype_matches(node, options.subtype),
            cosines=options.warm.pair_dots if options.warm is not None else None,
        )
    return RecallResult(query, ordered[:limit], mode, expansion, list(notices or []))
