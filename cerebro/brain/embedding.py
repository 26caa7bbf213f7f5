"""Vectors: written with their node (the model id only once the vector is there), failures that never lose
a memory, and the pending backfill. The embedder itself and the dimension checks live on the handle."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro.brain.handle import Handle
from cerebro.errors import InvalidInput

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session, Transaction
    from cerebro.models import Node as NodeRow
    from cerebro.store.interface import Store


def model_for(h: Handle, vector: list[float] | None) -> str:
    """The model a new memory's row names: the brain's, when the memory got a vector; '' otherwise."""
    _, model, dims = h.embedding_settings()
    return model if dims > 0 and vector is not None else ""


def embed_for_write(h: Handle, content: str) -> tuple[list[float] | None, str | None, str]:
    """(vector, error, the model it is made with) for a write to store: the model is read *before* embedding, so that
    a switch (``reembed``) committed meanwhile is caught by :func:`switched` — read after, it named the new model, and
    a vector of the old one went into the new table under the new label."""
    made_with = h.embedding_settings()[1]
    vector, error = h.try_embed(content)
    return vector, error, made_with


def store_new_vector(
    h: Handle, db: Transaction, node_id: str, vector: list[float] | None, error: str | None, *, made_with: str
) -> None:
    """Write a new memory's vector (its row names the model already: :func:`model_for`); when embedding
    failed, mark the brain pending. ``made_with``: the model that made the vector (:func:`embed_for_write`)."""
    dims = h.embedding_settings()[2]
    if dims <= 0:
        return
    h.store.vectors.ensure_table(db, dims)
    if vector is not None and switched(h, db, node_id, vector, made_with, dims):
        vector, error = None, "switched"
        h.store.nodes.set_embedding_model(db, node_id, "")  # its row named the model: it has no vector of it
    if vector is not None:
        h.store.vectors.upsert(db, node_id, vector, fresh=True)
    elif error is not None:
        h.store.meta.put(db, "has_pending_embeddings", "true")


def store_vector(
    h: Handle, session: Session, row: NodeRow, vector: list[float] | None, error: str | None, *, made_with: str
) -> None:
    """Write a changed memory's vector (and only then its model id), dropping the stale one; on failure mark the
    brain pending. ``made_with``: the model that made the vector (read before embedding, :func:`embed_for_write`)."""

    _, model, dims = h.embedding_settings()
    if dims <= 0:
        return
    h.store.vectors.ensure_table(session, dims)
    if vector is not None and switched(h, session, row.id, vector, made_with, dims):
        vector, error = None, "switched"
    if vector is not None:
        h.store.vectors.upsert(session, row.id, vector)
        row.embedding_model = model
        session.add(row)
    else:
        h.store.vectors.delete(session, row.id)  # a stale vector of old content must not outlive it
        row.embedding_model = ""
        session.add(row)
        if error is not None:
            h.store.meta.put(session, "has_pending_embeddings", "true")


def switched(h: Handle, db: Transaction, node_id: str, vector: list[float], made_with: str, dims: int) -> bool:
    """Whether another process switched the brain's model (``reembed``) after this vector was made: then it is not
    stored — a vector of the old model in the new table mixed two vector spaces under one label, or failed with
    "Dimension mismatch" — and the memory is left pending, with a warning (a review of concurrency)."""
    stored = h.store.meta.get(db, "embedding_model")
    if len(vector) == dims and (not made_with or stored is None or stored == made_with):
        return False
    h.on_warning(
        f"{node_id[:8]}: the brain switched models while it was embedded: stored without a vector "
        "(run `cerebro embed --pending`)"
    )
    return True  # the caller stores no vector and marks the brain pending


def warn_pending(h: Handle, node_id: str, error: str | None) -> None:
    if error is not None:
        h.on_warning(f"embedding failed for {node_id[:8]}: {error} (node stored; run `cerebro embed --pending`)")


def embed_pending(
    h: Handle, *, batch_size: int = 64, progress: Callable[[int, int], None] | None = None
) -> cerebro.reports.EmbedReport:
    """Embed every active memory that has no vector, in batches (each batch one transaction)."""

    _, model, dims = h.embedding_settings()
    if dims <= 0:
        raise InvalidInput("this brain has no embedding provider (init --embed-provider local)")
    total = h.read(
        lambda s: (
            h.store.vectors.count_missing_active(s)
            if h.store.vectors.exists(s)
            else h.store.nodes.count_with_status(s, "active")
        )
    )
    done = failed = 0
    errors: list[str] = []
    # Each memory is tried at most once a run, whatever the store reports: a failed one stays pending for the
    # next run, and the loop ends even if a vector written were not seen as written.
    tried: set[str] = set()
    while True:
        ids = h.read(lambda s: _pending_ids(h.store, s, batch_size + len(tried)))
        ids = [i for i in ids if i not in tried][:batch_size]
        if not ids:
            break
        tried.update(ids)

        def read(session: Session, ids: list[str] = ids) -> list[tuple[str, str]]:
            return [(r.id, r.content) for r in (h.store.nodes.get_row(session, i) for i in ids)]

        rows = h.read(read)
        try:
            vectors = h.embed([content for _, content in rows])
        except Exception as exc:  # noqa: BLE001 - a failed batch is reported and skipped; the rest go on
            errors.append(" ".join(str(exc).split()))
            failed += len(rows)
            if progress:
                progress(done + failed, total)
            continue

        def write(session: Session, rows: list[tuple[str, str]] = rows, vectors: list[list[float]] = vectors) -> int:
            if h.store.meta.get(session, "embedding_model") not in (None, model):  # switched since: see switched()
                raise InvalidInput("the brain switched models during this run: run `cerebro embed --pending` again")
            h.store.vectors.ensure_table(session, dims)
            written = 0
            for (node_id, text), vector in zip(rows, vectors, strict=True):
                # Only for the text it was made from: a memory updated (or forgotten) by another process since the
                # read kept a vector of its old text for good (a review). Left pending for the next run.
                now = h.store.nodes.get_row(session, node_id) if h.store.nodes.exists(session, node_id) else None
                if now is None or now.content != text:
                    continue
                h.store.vectors.upsert(session, node_id, vector)
                h.store.nodes.set_embedding_model(session, node_id, model)
                written += 1
            return written

        done += h.write(write)
        if progress:
            progress(done + failed, total)
    remaining = h.read(h.store.vectors.count_missing_active)
    if remaining == 0:
        h.write(lambda s: h.store.meta.delete(s, "has_pending_embeddings"))
    if done:
        tend_vector_index(h)
    return cerebro.reports.EmbedReport(embedded=done, failed=failed, remaining=remaining, errors=errors[:5])


def current_content(store: Store, session: Session, node_id: str) -> str | None:
    return store.nodes.get_row(session, store.nodes.resolve_id(session, node_id)).content


def _pending_ids(store: Store, session: Session, limit: int) -> list[str]:
    vectors = store.vectors
    return (
        vectors.missing_active_ids(session, limit)
        if vectors.exists(session)
        else store.nodes.active_ids(session, limit)
    )


def tend_vector_index(h: Handle) -> None:
    """After bulk work (gc, import, sync, embedding): the vector lane's index as its size calls for (a team
    brain's HNSW index, ADR 0030). Best effort: without it, search stays exact — a warning says why."""
    if not h.is_team:
        return  # sqlite-vec's table is its own index
    try:
        made = h.store.vectors.tend_index(h.raw)
    except Exception as exc:  # noqa: BLE001 - e.g. a role that may not create indexes: exact search goes on
        h.on_warning(f"the vector index was not built (search stays exact): {' '.join(str(exc).split())}")
        return
    if made is not None:
        from cerebro import logs

        logs.info("vector_index_built", index=made)  # checks the level first: no structlog import to say nothing
