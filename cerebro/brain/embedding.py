"""The Brain's embedding side: the embedder built from the brain's own settings, vectors written with
their node, failures that never lose a memory, and the pending backfill."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from cerebro import values
from cerebro.brain.validate import (
    _text,
)
from cerebro.errors import InvalidInput


class EmbeddingMixin:
    @property
    def embedder(self) -> Any:
        """The brain's embedder, built from the settings stored at init (never another model)."""
        if self._embedder is None:
            from cerebro.embed.registry import make_embedder

            provider, model, dims = self._embedding_settings()
            self._embedder = make_embedder(provider, model, dims)
        return self._embedder

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """Embed and check the answer fits this brain's vector table."""
        from cerebro.embed.base import EmbeddingError

        _, model, dims = self._embedding_settings()
        vectors = self.embedder.embed(texts)
        if len(vectors) != len(texts):
            raise EmbeddingError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
        for vector in vectors:
            if len(vector) != dims:
                raise EmbeddingError(
                    f"{model} returned {len(vector)}-dimensional vectors but this brain stores {dims}: "
                    "the provider is serving a different model than the brain was created with"
                )
            if not all(math.isfinite(x) for x in vector):
                raise EmbeddingError("the embedder returned a non-finite vector")
        return vectors

    def _try_embed(self, content: str) -> tuple[list[float] | None, str | None]:
        """(vector, None), or (None, reason) when embedding failed; (None, None) without a provider."""
        if self._embedding_settings()[2] <= 0:
            return None, None
        try:
            return self._embed([content])[0], None
        except Exception as exc:  # noqa: BLE001 - a failed embed never loses the memory
            return None, " ".join(str(exc).split()) or exc.__class__.__name__

    def _store_vector(
        self, session: Any, row: Any, vector: list[float] | None, error: str | None, *, fresh: bool = False
    ) -> None:
        """Write a node's vector (and only then its model id); on failure mark the brain pending."""
        from cerebro.store import meta, vec

        _, model, dims = self._embedding_settings()
        if dims <= 0:
            return
        vec.ensure_table(session, dims)
        if vector is not None:
            vec.upsert(session, row.id, vector, fresh=fresh)
            row.embedding_model = model
            session.add(row)
        else:
            if not fresh:
                vec.delete(session, row.id)  # a stale vector of old content must not outlive it
            row.embedding_model = ""
            session.add(row)
            if error is not None:
                meta.put(session, "has_pending_embeddings", "true")

    def _warn_pending(self, node_id: str, error: str | None) -> None:
        if error is not None:
            self.on_warning(
                f"embedding failed for {node_id[:8]}: {error} (node stored; run `cerebro embed --pending`)"
            )

    def embed_pending(
        self, *, batch_size: int = 64, progress: Callable[[int, int], None] | None = None
    ) -> values.EmbedReport:
        """Embed every active memory that has no vector, in batches (each batch one transaction)."""
        from cerebro.store import meta, nodes, vec

        _, model, dims = self._embedding_settings()
        if dims <= 0:
            raise InvalidInput("this brain has no embedding provider (init --embed-provider local)")
        total = self._read(lambda s: vec.count_missing_active(s)) if self._has_vec_table() else self._read(
            lambda s: _count_active(s)
        )
        done = failed = 0
        errors: list[str] = []
        skip: set[str] = set()
        while True:
            ids = self._read(lambda s: _pending_ids(s, batch_size + len(skip)))
            ids = [i for i in ids if i not in skip][:batch_size]
            if not ids:
                break
            rows = self._read(lambda s: [(r.id, r.content) for r in (nodes.get_row(s, i) for i in ids)])
            try:
                vectors = self._embed([content for _, content in rows])
            except Exception as exc:  # noqa: BLE001
                errors.append(" ".join(str(exc).split()))
                failed += len(rows)
                skip.update(i for i, _ in rows)
                if progress:
                    progress(done + failed, total)
                continue

            def write(session: Any, rows: list[tuple[str, str]] = rows, vectors: list[list[float]] = vectors) -> None:
                vec.ensure_table(session, dims)
                for (node_id, _), vector in zip(rows, vectors, strict=True):
                    vec.upsert(session, node_id, vector)
                    session.execute(
                        _text("UPDATE nodes SET embedding_model = :m WHERE id = :id"), {"m": model, "id": node_id}
                    )

            self._write(write)
            done += len(rows)
            if progress:
                progress(done + failed, total)
        remaining = self._read(lambda s: vec.count_missing_active(s))
        if remaining == 0:
            self._write(lambda s: meta.delete(s, "has_pending_embeddings"))
        return values.EmbedReport(embedded=done, failed=failed, remaining=remaining, errors=errors[:5])

    def _has_vec_table(self) -> bool:
        from cerebro.store import vec

        return self._read(lambda s: vec.exists(s))


def _default_warning(message: str) -> None:
    from cerebro.logs import warn

    warn(message)


def _current_content(session: Any, node_id: str) -> str | None:
    from cerebro.store import nodes

    return nodes.get_row(session, nodes.resolve_id(session, node_id)).content


def _count_active(session: Any) -> int:
    return session.execute(_text("SELECT COUNT(*) FROM nodes WHERE status = 'active'")).scalar_one()


def _pending_ids(session: Any, limit: int) -> list[str]:
    from cerebro.store import vec

    if not vec.exists(session):
        rows = session.execute(
            _text("SELECT id FROM nodes WHERE status = 'active' ORDER BY created_at, id LIMIT :l"), {"l": limit}
        ).all()
        return [r[0] for r in rows]
    return vec.missing_active_ids(session, limit)

