"""The Brain's read side for recall: raw-SQL snapshots (no ORM on the hot path), recall, search, prime,
and the best-effort bookkeeping the CLI does after a read (the library's reads never write)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cerebro import clock, config, values
from cerebro.brain.validate import (
    UNSET,
    _check_limit,
    _check_query,
    _check_unit,
    _parse_instant,
)

MEAN_TTL_SECONDS = 60.0


class RetrievalMixin:
    @contextmanager
    def _snapshot(self) -> Iterator[Any]:
        """A read transaction on a raw DB-API connection (no ORM): the hot path for recall and prime."""
        from cerebro.db.engine import connect_raw

        if self._raw is None:
            # wal=False: a read leaves a rollback-journal brain (a restored backup, say) as it is.
            self._raw = connect_raw(self.path, wal=False)
        if self._raw.in_transaction:  # nested: share the outer snapshot
            yield self._raw
            return
        self._raw.execute("BEGIN")
        try:
            yield self._raw
        finally:
            self._raw.execute("COMMIT")

    def _warm(self, conn: Any) -> Any:
        """The in-memory vector index when this process keeps using a big brain (else None)."""
        from cerebro.store.warm import WarmVectors

        warm = self.__dict__.setdefault("_warm_vectors", WarmVectors())
        return warm if warm.ready(conn) else None

    def _brain_mean(self, conn: Any) -> Any:
        """The brain's mean vector for centering (ADR 0010), cached: re-read once a commit has happened and
        a minute has passed. Every recall commits its access touches, and a mean of 256 vectors barely moves
        with a few writes; re-reading it on each commit would cost a long-lived agent ~6 ms per recall."""
        import time

        from cerebro.recall import brain_mean

        version = conn.execute("PRAGMA data_version").fetchone()[0]
        now = time.monotonic()
        cached = self.__dict__.get("_mean")
        fresh = cached is not None and cached[0] is conn and (cached[1] == version or now - cached[2] < MEAN_TTL_SECONDS)
        if not fresh:
            cached = self.__dict__["_mean"] = (conn, version, now, brain_mean(conn))
        return cached[3]

    def _anchor_checker(self) -> Any:
        """Anchor statuses for one call, against the project this brain was opened for (None: unknown)."""
        from cerebro.anchors import Checker

        return Checker(getattr(self, "project", None))

    def _annotate(self, nodes: list[values.Node], checker: Any = None) -> list[values.Node]:
        """Fill the read-time statuses (provenance_status, origin_status, anchor_status) in one batch."""
        from dataclasses import replace

        from cerebro import provenance

        if not nodes:
            return nodes
        with self._snapshot() as conn:
            prov = provenance.provenance_statuses(conn, nodes)
            orig = provenance.origin_statuses(conn, nodes)
        checker = checker or self._anchor_checker()
        return [checker.annotate(replace(n, provenance_status=prov[n.id], origin_status=orig[n.id])) for n in nodes]

    def _annotate_scored(self, result: values.RecallResult) -> values.RecallResult:
        from dataclasses import replace

        annotated = self._annotate([r.node for r in result.results])
        return replace(result, results=[replace(r, node=n) for r, n in zip(result.results, annotated, strict=True)])

    def _recall_options(self, conn: Any, **given: Any) -> Any:
        from cerebro.recall import RecallOptions
        from cerebro.store import reads

        stored = reads.config_values(conn)

        def setting(key: str) -> Any:
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
        }
        options.update({k: v for k, v in given.items() if v is not None})
        return RecallOptions(**options)

    def recall(
        self,
        query: str,
        *,
        limit: int = 20,
        threshold: float | None = None,
        subtype: str | None = UNSET,
        as_of: Any = None,
        lanes: tuple[str, ...] | None = None,
    ) -> values.RecallResult:
        """Hybrid recall: vector + keyword lanes, graph expansion, composite score, RRF (read-only)."""
        from cerebro.recall import keyword_hits_for
        from cerebro.recall import recall as run_recall

        query = _check_query(query)
        limit = _check_limit(limit)
        when = _parse_instant(as_of)
        provider, _, dims = self._embedding_settings()
        # The query is embedded on another thread while this one reads the settings and runs the keyword
        # lane, which needs no vector (ONNX Runtime, HTTP and SQLite all release the GIL).
        embedding = _Background(self._embed, [query]) if dims > 0 else None
        vector, mode, notices = None, "keyword", []
        with self._snapshot() as conn:
            threshold_value = threshold
            if threshold_value is None:
                threshold_value = config.effective("recall_threshold", _stored_config(conn, "recall_threshold"))
            options = self._recall_options(
                conn,
                limit=limit,
                threshold=_check_unit(threshold_value, "threshold"),
                as_of=when,
                lanes=lanes,
                mean=self._brain_mean,
                anchors=self._anchor_checker(),
            )
            # None is meaningful here ("no subtype"), so it is set after the None-dropping merge above.
            options = _replace_options(options, subtype=subtype if subtype is UNSET else (subtype or ""))
            rerank = _rerank_settings(conn)
            if rerank is not None:
                from cerebro import rerank as reranker

                run_options = _replace_options(options, limit=max(limit, reranker.OVER_RETRIEVE))
            else:
                run_options = options
            keyword_hits = keyword_hits_for(conn, query, run_options)
            if embedding is not None:
                try:
                    vector, mode = embedding.result()[0], "hybrid"
                except Exception as exc:  # noqa: BLE001 - recall degrades to the keyword lane
                    mode = "keyword-fallback"
                    notices.append(f"embedding unavailable ({' '.join(str(exc).split())}); keyword-only recall")
            if vector is not None:
                warm = self._warm(conn)
                options = _replace_options(options, warm=warm)
                run_options = _replace_options(run_options, warm=warm)
            if mode == "keyword-fallback" and not _fts_ready(conn):
                raise _embedding_error(notices[0])
            # Upstream's keyword-only fallback has no expansion and no reranker.
            if mode == "keyword-fallback" and rerank is not None:
                rerank, run_options, keyword_hits = None, options, None
            if rerank is None:
                return self._annotate_scored(
                    run_recall(conn, query, vector, options, mode=mode, notices=notices, keyword_hits=keyword_hits)
                )
            from dataclasses import replace as _replace

            wide = run_recall(conn, query, vector, run_options, mode=mode, notices=notices, keyword_hits=keyword_hits)
        command, fusion = rerank
        results = wide.results
        if not command:
            notices.append("rerank enabled but no reranker command configured; using composite order")
        elif results:
            try:
                scores = reranker.score(command, query, [r.node.content for r in results])
                results = reranker.reorder(results, scores, fusion)
            except reranker.RerankError as exc:
                notices.append(
                    f'reranker "command:{reranker.command_name(command)}" failed ({exc}); using composite order'
                )
        return self._annotate_scored(_replace(wide, results=results[:limit], notices=list(notices)))

    def search(
        self, query: str, *, limit: int | None = None, threshold: float | None = None, as_of: Any = None
    ) -> values.RecallResult:
        """``search`` as upstream runs it: the hybrid recall pipeline with the search defaults (config
        ``search_limit``, ``search_threshold`` as the vector lane's minimum cosine), so an identifier such as
        ``HS-049`` is found by the keyword lane. Needs an embedding provider, as upstream's does."""
        from cerebro.embed.base import EmbeddingError

        query = _check_query(query)
        _, _, dims = self._embedding_settings()
        if dims <= 0:
            raise EmbeddingError("no embedding provider configured — search requires embeddings")
        with self._snapshot() as conn:
            stored_limit = config.effective("search_limit", _stored_config(conn, "search_limit"))
            stored_threshold = config.effective("search_threshold", _stored_config(conn, "search_threshold"))
        return self.recall(
            query,
            limit=_check_limit(limit if limit is not None else stored_limit),
            threshold=_check_unit(threshold if threshold is not None else stored_threshold, "threshold"),
            as_of=as_of,
        )

    def prime(self, *, limit: int | None = None) -> list[values.ScoredNode]:
        """Session-start context: per-type pools scored by importance and surprise, diversified by MMR."""
        from cerebro.prime import prime as run_prime

        with self._snapshot() as conn:
            if limit is None:
                limit = config.effective("prime_limit", _stored_config(conn, "prime_limit"))
            return run_prime(conn, _check_limit(limit), clock.now(), anchors=self._anchor_checker())

    def anchored(self, *, stale_only: bool = False, limit: int = 50) -> list[values.Node]:
        """Active memories with code anchors, each with its anchors' statuses: missing first, then stale,
        then the rest, newest first within each. ``stale_only``: only stale or missing ones."""
        from cerebro.anchors import STATUSES
        from cerebro.store import reads

        limit = _check_limit(limit)
        with self._snapshot() as conn:
            rows = conn.execute(
                f"SELECT {reads.NODE_COLUMNS} FROM nodes WHERE status = 'active' "
                "AND instr(CAST(metadata AS TEXT), '\"anchor') > 0 ORDER BY created_at DESC, id"
            ).fetchall()
        checker = self._anchor_checker()
        found = [n for n in (checker.annotate(reads.node_from_row(r)) for r in rows) if n.anchor_status]
        if stale_only:
            found = [n for n in found if n.anchor_status in ("stale", "missing")]
        found.sort(key=lambda n: -STATUSES.index(n.anchor_status) if n.anchor_status in STATUSES else -1)
        return self._annotate(found[:limit], checker)

    # Best-effort bookkeeping the CLI does after a read (the library's reads never write).

    def touch_accessed(self, ids: list[str]) -> bool:
        """access_count + 1 and last_accessed = now for recalled memories; never raises."""
        return self._best_effort(
            lambda conn: _touch(conn, ids, "access_count = COALESCE(access_count, 0) + 1, last_accessed = ?")
        )

    def touch_surfaced(self, ids: list[str]) -> bool:
        return self._best_effort(lambda conn: _touch(conn, ids, "last_surfaced = ?"))

    def count_expansion_skip(self) -> bool:
        return self._best_effort(
            lambda conn: conn.execute(
                "INSERT INTO schema_meta (key, value) VALUES ('stats.expansion_skips', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CASE WHEN CAST(value AS INTEGER) || '' = value "
                "THEN CAST(CAST(value AS INTEGER) + 1 AS TEXT) ELSE '1' END"
            )
        )

    def _best_effort(self, work: Callable[[Any], Any]) -> bool:
        """A short write on the raw connection (no ORM on the hot path). It waits at most a quarter second
        for the lock and gives up quietly: bookkeeping must never fail or stall the read it follows."""
        from cerebro.db.engine import BUSY_TIMEOUT_MS, connect_raw

        if self._raw is None:
            self._raw = connect_raw(self.path, wal=False)
        conn = self._raw
        try:
            conn.execute("PRAGMA busy_timeout = 250")
            conn.execute("BEGIN IMMEDIATE")
            try:
                work(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return True
        except Exception:  # noqa: BLE001
            return False
        finally:
            try:
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            except Exception:  # noqa: BLE001
                pass

def _touch(conn: Any, ids: list[str], assignment: str) -> None:
    stamp = clock.now_text()
    conn.executemany(f"UPDATE nodes SET {assignment} WHERE id = ?", [(stamp, node_id) for node_id in ids])


def _stored_config(conn: Any, key: str) -> str | None:
    from cerebro.store import reads

    return reads.config_values(conn).get(key)


class _Background:
    """``work(*args)`` on a thread of its own; :meth:`result` waits for it and returns or raises as it did."""

    def __init__(self, work: Callable[..., Any], *args: Any) -> None:
        import threading

        self._outcome: tuple[bool, Any] = (False, None)
        self._thread = threading.Thread(target=self._run, args=(work, args), name="cerebro-embed", daemon=True)
        self._thread.start()

    def _run(self, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._outcome = (True, work(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to result()
            self._outcome = (False, exc)

    def result(self) -> Any:
        self._thread.join()
        ok, value = self._outcome
        if not ok:
            raise value
        return value


def _fts_ready(conn: Any) -> bool:
    from cerebro.store import reads

    return reads.table_exists(conn, "nodes_fts")


def _embedding_error(message: str) -> Exception:
    from cerebro.embed.base import EmbeddingError

    return EmbeddingError(message)


def _rerank_settings(conn: Any) -> tuple[str, str] | None:
    """(command, fusion) when reranking is on — only the literal "true" turns it on, and no environment
    variable can (upstream's deliberate choice); the command may come from the environment."""
    import os

    from cerebro.store import reads

    stored = reads.config_values(conn)
    if stored.get("rerank_enabled") != "true":
        return None
    command = stored.get("rerank_command") or os.environ.get("CEREBRO_RERANK_COMMAND", "")
    return command.strip(), stored.get("rerank_fusion", "rrf")


def _replace_options(options: Any, **changes: Any) -> Any:
    from dataclasses import replace

    return replace(options, **changes)
