"""Switching a brain to another embedding model, resumably.

The new vectors are built in a side table (``vec_nodes_next``) while the brain keeps serving recall with
its current model; the switch — new ``vec_nodes``, new settings, model ids — is one transaction at the
end. The target is recorded in ``schema_meta`` (``reembed.*``), so an interrupted run resumes where it
stopped and never embeds a node twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cerebro.errors import InvalidInput

NEXT_TABLE = "vec_nodes_next"
KEYS = ("reembed.provider", "reembed.model", "reembed.dimensions")
BATCH = 64


class ReembedMixin:
    def reembed(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        dims: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        from cerebro.embed.registry import make_embedder, resolve_settings
        from cerebro.store import reads

        with self._snapshot() as conn:
            pending = [reads.meta(conn, k) for k in KEYS]
        if pending[0] is not None and provider is None:
            target = (pending[0], pending[1] or "", int(pending[2] or 0))  # resume as recorded
        else:
            target = resolve_settings(provider or self._embedding_settings()[0], model, dims)
            if pending[0] is not None and tuple(pending) != (target[0], target[1], str(target[2])):
                raise InvalidInput(
                    f"a switch to {pending[1] or pending[0]} is half done; run `cerebro reembed` with no options "
                    "to finish it first"
                )
        new_provider, new_model, new_dims = target
        if new_dims <= 0:
            raise InvalidInput("re-embedding needs a provider with vectors (local, ollama or voyage)")
        embedder = make_embedder(new_provider, new_model, new_dims)

        def start(session: Any) -> None:
            from cerebro.brain.validate import _text
            from cerebro.store import meta

            for key, value in zip(KEYS, (new_provider, new_model, str(new_dims)), strict=True):
                meta.put(session, key, value)
            session.execute(
                _text(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS {NEXT_TABLE} USING "
                    f"vec0(node_id TEXT, embedding float[{int(new_dims)}] distance_metric=cosine)"
                )
            )

        self._write(start)
        with self._snapshot() as conn:
            total = conn.execute("SELECT COUNT(*) FROM nodes WHERE status = 'active'").fetchone()[0]
        done_now = 0
        while True:
            with self._snapshot() as conn:
                batch = conn.execute(
                    f"SELECT n.rowid, n.id, n.content FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
                    f"(SELECT 1 FROM {NEXT_TABLE} v WHERE v.rowid = n.rowid) ORDER BY n.rowid LIMIT ?",
                    (BATCH,),
                ).fetchall()
                finished = conn.execute(f"SELECT COUNT(*) FROM {NEXT_TABLE}").fetchone()[0]
            if progress:
                progress(min(finished, total), total)
            if not batch:
                break
            vectors = embedder.embed([content for _, _, content in batch])
            for vector in vectors:
                if len(vector) != new_dims:
                    raise InvalidInput(f"{new_model} returned {len(vector)} dimensions, not {new_dims}")

            def write(session: Any, batch: list[Any] = batch, vectors: list[Any] = vectors) -> None:
                from cerebro.brain.validate import _text
                from cerebro.store.vec import to_blob

                for (rowid, node_id, _), vector in zip(batch, vectors, strict=True):
                    session.execute(
                        _text(f"INSERT INTO {NEXT_TABLE} (rowid, node_id, embedding) VALUES (:r, :id, :v)"),
                        {"r": rowid, "id": node_id, "v": to_blob(vector)},
                    )

            self._write(write)
            done_now += len(batch)

        def switch(session: Any) -> int:
            from cerebro.brain.validate import _text
            from cerebro.store import meta

            session.execute(_text("DROP TABLE IF EXISTS vec_nodes"))
            session.execute(
                _text(
                    "CREATE VIRTUAL TABLE vec_nodes USING "
                    f"vec0(node_id TEXT, embedding float[{int(new_dims)}] distance_metric=cosine)"
                )
            )
            session.execute(
                _text(f"INSERT INTO vec_nodes (rowid, node_id, embedding) SELECT rowid, node_id, embedding FROM {NEXT_TABLE}")
            )
            session.execute(_text(f"DROP TABLE {NEXT_TABLE}"))
            session.execute(_text("UPDATE nodes SET embedding_model = ''"))
            moved = session.execute(
                _text("UPDATE nodes SET embedding_model = :m WHERE rowid IN (SELECT rowid FROM vec_nodes)"),
                {"m": new_model},
            ).rowcount
            meta.put(session, "embedding_provider", new_provider)
            meta.put(session, "embedding_model", new_model)
            meta.put(session, "embedding_dimensions", str(new_dims))
            for key in KEYS:
                meta.delete(session, key)
            return moved

        moved = self._write(switch)
        self._settings = None
        self._embedder = None
        # Vectors of another model: the warm index and the centering mean (cached up to a minute) are stale.
        self.__dict__.pop("_warm_vectors", None)
        self.__dict__.pop("_mean", None)
        return {
            "provider": new_provider, "model": new_model, "dimensions": new_dims,
            "embedded_now": done_now, "embedded_total": moved, "active": total,
        }
