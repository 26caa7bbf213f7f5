"""Recall and its neighbours on the read side: search, prime, anchored memories, and the best-effort
bookkeeping the CLI does after a read (the library's reads never write). The pipeline itself — lanes,
expansion, fusion — is ``cerebro.recall``; this module reads the brain's settings, embeds the query and
applies the reranker."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from cerebro import clock, config, values
from cerebro.brain import query_embedding, status
from cerebro.brain.handle import Handle
from cerebro.brain.validate import (
    UNSET,
    _check_limit,
    _check_query,
    _check_unit,
    _parse_instant,
    check_label,
)
from cerebro.errors import quote

if TYPE_CHECKING:
    from cerebro.db.types import Connection
    from cerebro.recall import RecallOptions
    from cerebro.store.interface import Store


def recall_options(
    store: Store, conn: Connection, stored: dict[str, str] | None = None, **given: object
) -> RecallOptions:
    """The pipeline's options: the brain's stored settings (``stored``: read already), overridden by the ``given``
    ones that are not None."""
    from cerebro.recall import RecallOptions

    if stored is None:
        stored = store.reads.config_values(conn)

    def setting(key: str) -> Any:  # noqa: ANN401 - the setting's own type (int, float, bool or text)
        return config.effective(key, stored.get(key))

    options = {
        "bm25_enabled": setting("bm25_enabled"),
        "indegree_enabled": setting("indegree_bonus_enabled"),
        "expand_threshold": setting("expand_threshold"),
        "expand_spread_threshold": setting("expand_spread_threshold"),
        "fusion": setting("fusion"),
        "keyword_weight": setting("keyword_weight"),
        "depth": setting("lane_depth"),
        "feedback_docs": setting("feedback_docs"),
        "feedback_weight": setting("feedback_weight"),
        "centering": setting("centering"),
        "adjacency": setting("adjacency"),
    }
    options.update({k: v for k, v in given.items() if v is not None})
    return RecallOptions(**options)


def recall(
    h: Handle,
    query: str,
    *,
    limit: int = 20,
    threshold: float | None = None,
    subtype: str | None = UNSET,
    as_of: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated
    lanes: tuple[str, ...] | None = None,
) -> values.RecallResult:
    """Hybrid recall: vector + keyword lanes, graph expansion, composite score, RRF (read-only)."""
    from cerebro.recall import keyword_hits_for
    from cerebro.recall import recall as run_recall

    query = _check_query(query)
    limit = _check_limit(limit)
    if subtype is not UNSET:  # a NUL in the filter failed on a team brain ("text fields cannot contain NUL")
        check_label(subtype, "subtype")
    when = _parse_instant(as_of)
    dims = h.embedding_settings()[2]
    embedding = query_embedding.under_way(h, query) if dims > 0 else None
    vector, mode, notices = None, "keyword", []
    with h.snapshot() as conn:
        stored = h.store.reads.config_values(conn)  # once: the threshold, the options and the reranker read it
        store = h.recall_store(conn)  # the rows from this process's copy when it keeps a current one (ADR 0051)
        threshold_value = threshold
        if threshold_value is None:
            threshold_value = config.effective("recall_threshold", stored.get("recall_threshold"))
        options = recall_options(
            h.store,
            conn,
            stored,
            limit=limit,
            threshold=_check_unit(threshold_value, "threshold"),
            as_of=when,
            lanes=lanes,
            mean=h.brain_mean,
            anchors=h.anchor_checker(),
            keywords=h.keyword_copy(),
        )
        # None is meaningful here ("no subtype"), so it is set after the None-dropping merge above.
        options = _replace_options(options, subtype=subtype if subtype is UNSET else (subtype or ""))
        rerank = _rerank_settings(stored)
        if rerank is not None:
            from cerebro import rerank as reranker

            run_options = _replace_options(options, limit=max(limit, reranker.OVER_RETRIEVE))
        else:
            run_options = options
        keyword_nodes: dict[str, values.Node] = {}  # the hits' nodes, read with them: the pipeline needs them too
        keyword_hits: list[tuple[str, float]] | None = keyword_hits_for(store, conn, query, run_options, keyword_nodes)
        if embedding is not None:
            try:
                vector, mode = embedding.result()[0], "hybrid"
            except Exception as exc:  # noqa: BLE001 - recall degrades to the keyword lane
                mode = "keyword-fallback"
                notices.append(f"embedding unavailable ({' '.join(str(exc).split())}); keyword-only recall")
        if vector is not None:
            warm = h.warm(conn)
            options = _replace_options(options, warm=warm)
            run_options = _replace_options(run_options, warm=warm)
        if mode == "keyword-fallback" and not _fts_ready(h.store, conn):
            raise _embedding_error(notices[0])
        # Upstream's keyword-only fallback has no expansion and no reranker.
        if mode == "keyword-fallback" and rerank is not None:
            rerank, run_options, keyword_hits = None, options, None
        if rerank is None:
            return status.annotate_scored(
                h,
                run_recall(
                    store,
                    conn,
                    query,
                    vector,
                    options,
                    mode=mode,
                    notices=notices,
                    keyword_hits=keyword_hits,
                    keyword_nodes=keyword_nodes,
                ),
                store,  # in this snapshot: the copy it read through is current here
            )
        wide = run_recall(
            store,
            conn,
            query,
            vector,
            run_options,
            mode=mode,
            notices=notices,
            keyword_hits=keyword_hits,
            keyword_nodes=keyword_nodes,
        )
    command, fusion, from_brain = rerank
    results = wide.results
    name = quote("command:" + reranker.command_name(command))  # escaped: a received brain's value may hold anything
    if not command:
        notices.append("rerank enabled but no reranker command configured; using composite order")
    elif from_brain and not _approved(h, command):
        approve = "(run `cerebro config set rerank_command …` to approve it); using composite order"
        notices.append(f"reranker {name} came with this brain and is not approved on this machine {approve}")
    elif results:
        try:
            scores = reranker.score(command, query, [r.node.content for r in results])
            results = reranker.reorder(results, scores, fusion)
        except reranker.RerankError as exc:
            notices.append(f"reranker {name} failed ({exc}); using composite order")
    return status.annotate_scored(h, values.evolve(wide, results=results[:limit], notices=list(notices)))


def search(
    h: Handle,
    query: str,
    *,
    limit: int | None = None,
    threshold: float | None = None,
    as_of: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated
) -> values.RecallResult:
    """``search`` as upstream runs it: the hybrid recall pipeline with the search defaults (config
    ``search_limit``, ``search_threshold`` as the vector lane's minimum cosine), so an identifier such as
    ``HS-049`` is found by the keyword lane. Needs an embedding provider, as upstream's does."""
    from cerebro.embed.base import EmbeddingError

    query = _check_query(query)
    _, _, dims = h.embedding_settings()
    if dims <= 0:
        raise EmbeddingError("no embedding provider configured — search requires embeddings")
    with h.snapshot() as conn:
        stored_limit = config.effective("search_limit", _stored_config(h.store, conn, "search_limit"))
        stored_threshold = config.effective(
            "search_threshold", _stored_config(h.store, conn, "search_threshold"), h.embedding_settings()[0]
        )
    return recall(
        h,
        query,
        limit=_check_limit(limit if limit is not None else stored_limit),
        threshold=_check_unit(threshold if threshold is not None else stored_threshold, "threshold"),
        as_of=as_of,
    )


def prime(h: Handle, *, limit: int | None = None, statuses: bool = True) -> list[values.ScoredNode]:
    """Session-start context: per-type pools scored by importance and surprise, diversified by MMR. ``statuses``:
    fill each memory's provenance and origin statuses, as a recall does (a caller that shows only text skips them)."""
    from cerebro.prime import prime as run_prime

    with h.snapshot() as conn:
        if limit is None:
            limit = config.effective("prime_limit", _stored_config(h.store, conn, "prime_limit"))
        primed = run_prime(h.store, conn, _check_limit(limit), clock.now(), anchors=h.anchor_checker())
    if not statuses or not primed:
        return primed
    annotated = status.annotate(h, [p.node for p in primed])
    return [values.evolve(p, node=node) for p, node in zip(primed, annotated, strict=True)]


def anchored(h: Handle, *, stale_only: bool = False, limit: int = 50) -> list[values.Node]:
    """Active memories with code anchors, each with its anchors' statuses: missing first, then stale,
    then the rest, newest first within each. ``stale_only``: only stale or missing ones."""
    from cerebro.anchors import STATUSES

    limit = _check_limit(limit)
    with h.snapshot() as conn:
        candidates = h.store.reads.active_with_anchors(conn)
    checker = h.anchor_checker()
    found = [n for n in (checker.annotate(n) for n in candidates) if n.anchor_status]
    if stale_only:
        found = [n for n in found if n.anchor_status in ("stale", "missing")]
    found.sort(key=lambda n: -STATUSES.index(n.anchor_status) if n.anchor_status in STATUSES else -1)
    return status.annotate(h, found[:limit], checker)


def nearest(h: Handle, vector: list[float], k: int) -> list[tuple[values.Node, float]]:
    """The ``k`` stored vectors nearest ``vector`` that belong to active memories, with their cosine
    similarity (the warm index when this process keeps one)."""

    with h.snapshot() as conn:
        warm = h.warm(conn)
        hits = warm.knn(vector, k) if warm is not None else h.store.vectors.knn(conn, vector, k)
        found = h.store.reads.nodes_by_id(conn, [node_id for node_id, _ in hits], active_only=True)
    return [(found[i], 1.0 - distance) for i, distance in hits if i in found]


def keyword_matches(h: Handle, text: str, k: int) -> list[values.Node]:
    """Active memories among the keyword lane's ``k`` best hits for ``text``, best first."""

    with h.snapshot() as conn:
        hits = h.store.keywords.search(conn, text, k)
        found = h.store.reads.nodes_by_id(conn, [node_id for node_id, _ in hits], active_only=True)
    return [found[i] for i, _ in hits if i in found]


# Best-effort bookkeeping the CLI does after a read (the library's reads never write).


def touch_accessed(h: Handle, ids: list[str]) -> bool:
    """access_count + 1 and last_accessed = now for recalled memories; never raises."""
    stamp, ids = clock.now_text(), list(ids)  # read once: the write and its mirror see the same ids
    return h.best_effort(
        lambda conn: h.store.bookkeeping.touch_accessed(conn, ids, stamp),
        mirror=lambda rows: rows.touched(ids, accessed=stamp),  # a rows copy stays current (ADR 0051)
    )


def touch_surfaced(h: Handle, ids: list[str]) -> bool:
    stamp, ids = clock.now_text(), list(ids)
    return h.best_effort(
        lambda conn: h.store.bookkeeping.touch_surfaced(conn, ids, stamp),
        mirror=lambda rows: rows.touched(ids, surfaced=stamp),
    )


def count_expansion_skip(h: Handle) -> bool:
    # A counter in schema_meta: no memory's row changes, so a rows copy has nothing to mirror.
    return h.best_effort(lambda conn: h.store.bookkeeping.increment(conn, "stats.expansion_skips"), lambda _: None)


def _stored_config(store: Store, conn: Connection, key: str) -> str | None:
    return store.reads.config_values(conn).get(key)


def _fts_ready(store: Store, conn: Connection) -> bool:
    return store.keywords.available(conn)


def _embedding_error(message: str) -> Exception:
    from cerebro.embed.base import EmbeddingError

    return EmbeddingError(message)


def _rerank_settings(stored: dict[str, str]) -> tuple[str, str, bool] | None:
    """(command, fusion, whether the command is the brain's) when reranking is on — only the literal "true" turns
    it on, and no environment variable can (upstream's deliberate choice); the command may come from the
    environment, which needs no approval (ADR 0026)."""

    if stored.get("rerank_enabled") != "true":
        return None
    own = (stored.get("rerank_command") or "").strip()
    command = own or os.environ.get("CEREBRO_RERANK_COMMAND", "").strip()
    return command, stored.get("rerank_fusion", "rrf"), bool(own)


def _approved(h: Handle, command: str) -> bool:
    from cerebro import trust

    return trust.approved(h.trust_key, command)


def _replace_options(options: RecallOptions, **changes: Any) -> RecallOptions:  # noqa: ANN401 - fields of RecallOptions, each its own type
    # values.evolve, not dataclasses.replace: four copies of 25 fields a recall, ~6× cheaper (no __post_init__ here)
    return values.evolve(options, **changes)
