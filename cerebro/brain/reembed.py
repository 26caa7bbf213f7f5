"""Switching a brain to another embedding model, resumably.

The new vectors are built in a side table (``vec_nodes_next``, ``cerebro.store.vec``) while the brain keeps
serving recall with
its current model; the switch — new ``vec_nodes``, new settings, model ids — is one transaction at the
end. The target is recorded in ``schema_meta`` (``reembed.*``), so an interrupted run resumes where it
stopped and never embeds a node twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cerebro.brain.embedding import tend_vector_index
from cerebro.brain.handle import Handle
from cerebro.errors import InvalidInput

if TYPE_CHECKING:
    from cerebro.db.types import Session

KEYS = ("reembed.provider", "reembed.model", "reembed.dimensions")
BATCH = 64


def reembed(
    h: Handle,
    *,
    provider: str | None = None,
    model: str | None = None,
    dims: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Switch the brain to another embedding model (or re-embed on its own): new vectors are built in a side
    table while recall keeps working, then swapped in. Nothing is done when the brain is already on that model
    with every active memory's vector from it, unless ``force``."""
    from cerebro.embed.registry import make_embedder, resolve_settings

    with h.snapshot() as conn:
        pending = [h.store.reads.meta(conn, k) for k in KEYS]
    if pending[0] is not None and provider is None:
        target = (pending[0], pending[1] or "", int(pending[2] or 0))  # resume as recorded
    else:
        own = h.embedding_settings()
        if provider is None and model is None:  # the brain's own model, not its provider's default (ADR 0041)
            model, dims = own[1] or None, dims or own[2] or None
        target = resolve_settings(provider or own[0], model, dims)
    # Another target than a half-done switch's: that switch is abandoned (it may be one that can never finish — a
    # model that answers with other dimensions, a server gone — and refusing every other left no way out).
    abandoned = pending[0] is not None and tuple(pending) != (target[0], target[1], str(target[2]))
    new_provider, new_model, new_dims = target
    if new_dims <= 0:
        raise InvalidInput("re-embedding needs a provider with vectors (local, ollama or voyage)")
    if pending[0] is None and not force and target == h.embedding_settings():

        def up_to_date(session: Session) -> tuple[bool, int]:
            vectors = h.store.vectors
            active = h.store.nodes.count_with_status(session, "active")
            complete = (
                vectors.table_dimensions(session) == new_dims
                and vectors.element(session) == vectors.element_for_provider(new_provider)  # ADR 0029
                and vectors.count_missing_active(session) == 0
                and h.store.nodes.count_active_not_from(session, new_model) == 0
            )
            return complete, active

        complete, active = h.read(up_to_date)
        if complete:
            return _report(target, 0, active, active, skipped=True)
    embedder = make_embedder(new_provider, new_model, new_dims)
    # One text first, before the target is recorded: a model that is down, unknown or of other dimensions leaves the
    # brain as it was rather than a switch that cannot finish.
    if pending[0] is None or abandoned:  # a resumed switch was checked when it was recorded
        probe = embedder.embed(["cerebro checks the embedding model before switching to it"])[0]
        if len(probe) != new_dims:
            raise InvalidInput(f"{new_model} returned {len(probe)} dimensions, not {new_dims}: nothing was changed")

    def start(session: Session) -> None:
        for key, value in zip(KEYS, (new_provider, new_model, str(new_dims)), strict=True):
            h.store.meta.put(session, key, value)
        h.store.vectors.ensure_next_table(session, new_dims, new_provider, fresh=abandoned)

    h.write(start)
    if abandoned:
        h.on_warning(f"the half-done switch to {pending[1] or pending[0]} was abandoned for {new_model}")
    with h.snapshot() as conn:
        total = h.store.reads.count_active(conn)
    done_now = 0
    written: set[int] = set()  # each row embedded at most once a pass: the loop ends whatever the store reports
    for _ in range(MAX_PASSES):
        done_now += _fill_next(h, embedder, new_model, new_dims, total, written, progress)
        moved = h.write(lambda session: _switch(h, session, target))
        if moved is not None:
            break
        written.clear()  # memories written since the last batch: embed them, then try the switch again
    else:
        raise InvalidInput("the brain kept changing while it was re-embedded: run `cerebro reembed` again to finish")
    # Vectors of another model: the embedder, the warm index and the centering mean (cached up to a minute)
    # are stale.
    h.forget_model()
    tend_vector_index(h)  # a team brain's index went with the old vectors
    return _report(target, done_now, moved, total, skipped=False)


MAX_PASSES = 5  # switch attempts a run makes while other writers keep adding memories


def _fill_next(
    h: Handle,
    embedder: Any,  # noqa: ANN401 - the target model's embedder
    new_model: str,
    new_dims: int,
    total: int,
    written: set[int],
    progress: Callable[[int, int], None] | None,
) -> int:
    """Embed every active memory the side table lacks (a run resumed, or one written meanwhile); how many."""
    done_now = 0
    while True:
        with h.snapshot() as conn:
            batch = [row for row in h.store.vectors.next_missing(conn, BATCH) if row[0] not in written]
            finished = h.store.vectors.next_count(conn)
        if progress:
            progress(min(finished, total), total)
        if not batch:
            break
        written.update(rowid for rowid, _, _ in batch)
        vectors = embedder.embed([content for _, _, content in batch])
        for vector in vectors:
            if len(vector) != new_dims:
                raise InvalidInput(f"{new_model} returned {len(vector)} dimensions, not {new_dims}")

        def write(session: Session, batch: list[Any] = batch, vectors: list[Any] = vectors) -> None:
            for (rowid, node_id, _), vector in zip(batch, vectors, strict=True):
                h.store.vectors.put_next(session, rowid, node_id, vector)

        h.write(write)
        done_now += len(batch)
    return done_now


def _switch(h: Handle, session: Session, target: tuple[str, str, int]) -> int | None:
    """Swap the side table in and record the new model — unless a memory written since the last batch has no
    vector there yet (then None: the caller embeds it first). One transaction, so nothing slips in between."""
    if h.store.vectors.next_incomplete(session):
        return None
    new_provider, new_model, new_dims = target
    moved = h.store.vectors.switch_to_next(session, new_dims, new_model)
    h.store.meta.put(session, "embedding_provider", new_provider)
    h.store.meta.put(session, "embedding_model", new_model)
    h.store.meta.put(session, "embedding_dimensions", str(new_dims))
    for key in KEYS:
        h.store.meta.delete(session, key)
    return moved


def _report(target: tuple[str, str, int], now: int, total: int, active: int, *, skipped: bool) -> dict[str, Any]:
    provider, model, dims = target
    return {
        "provider": provider,
        "model": model,
        "dimensions": dims,
        "embedded_now": now,
        "embedded_total": total,
        "active": active,
        "skipped": skipped,  # already on this model with every active memory embedded by it (no --force)
    }
