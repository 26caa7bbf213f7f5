"""``Brain``: the one public entry point. It owns transaction boundaries; the CLI is a thin layer over it.

Reads never write (no access touches, no counters): they run in plain ``BEGIN`` transactions. Every write
is one ``BEGIN IMMEDIATE`` transaction, retried as a whole when another writer holds the lock.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from cerebro import clock, paths, values
from cerebro.brain.embedding import EmbeddingMixin, _current_content, _default_warning
from cerebro.brain.exports import ExportMixin, ImportMixin
from cerebro.brain.inbox import InboxMixin
from cerebro.brain.lifecycle import LifecycleMixin
from cerebro.brain.promotion import PromotionMixin
from cerebro.brain.reembed import ReembedMixin
from cerebro.brain.retrieval import RetrievalMixin
from cerebro.brain.settings import SettingsMixin
from cerebro.brain.validate import (  # noqa: F401 - parse_metadata and UNSET are part of the API
    UNSET,
    _check_beads_id,
    _check_content,
    _check_importance,
    _check_status,
    _check_type,
    _text,
    parse_metadata,
)
from cerebro.errors import BrainNotFound, BrainUnreadable, InvalidInput, NotFound, quote
from cerebro.values import NODE_TYPES
from cerebro.store.vec import WRITTEN as VECTORS_WRITTEN

T = TypeVar("T")

DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 10**9  # SQLite's LIMIT is a 64-bit integer; anything near that is a mistake


class Brain(EmbeddingMixin, RetrievalMixin, LifecycleMixin, PromotionMixin, SettingsMixin, ExportMixin, ImportMixin, ReembedMixin, InboxMixin):
    """A brain file: open with :meth:`open` / :meth:`for_project`, create with :meth:`init`.

    Use as a context manager (``with Brain.open(path) as brain: ...``) or call :meth:`close`.
    """

    def __init__(self, path: Path, engine: Any = None, *, backup: str | None = None) -> None:
        self.path = path
        self._engine_obj = engine  # created on first ORM use: reads on the hot path never import SQLAlchemy
        self._raw: Any = None
        self._embedder: Any = None
        self.upgrade_backup = backup  # set when opening upgraded the brain
        self._settings: tuple[str, str, int] | None = None
        self.on_warning: Callable[[str], None] = _default_warning
        # Called after a commit that wrote or deleted vectors, with {node_id: vector or None} (see _session).
        self.on_vectors_written: Callable[[dict[str, Any]], None] | None = None
        # The project directory this brain belongs to (set by for_project; None for open): code anchors are
        # resolved and checked against it (ADR 0018).
        self.project: Path | None = None

    @property
    def _engine(self) -> Any:
        if self._engine_obj is None:
            from cerebro.db.engine import create_engine

            self._engine_obj = create_engine(self.path)
        return self._engine_obj

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> Brain:
        """Open the brain at ``path``, upgrading it first if it is behind. ``create`` makes a new one."""
        from cerebro.db.engine import connect_raw, create_engine, driver
        from cerebro.db.migrate import ensure_current, needs_upgrade

        brain_path = Path(path).expanduser()
        if not brain_path.exists() or (not create and brain_path.stat().st_size == 0):
            # An empty file is what an interrupted init leaves: not a brain until init runs again.
            if not create:
                raise BrainNotFound(f"no brain at {brain_path} — run 'cerebro init' first")
            paths.create_private_file(brain_path)
        paths.tighten_private_file(brain_path)
        # A cheap check on a raw connection: a brain at head never imports Alembic.
        try:
            raw = connect_raw(brain_path, wal=False)
            try:
                behind = needs_upgrade(raw, brain_path)
            finally:
                raw.close()
        except driver().DatabaseError as exc:
            raise BrainUnreadable(
                f"{brain_path} is not a readable brain ({exc}); restore a copy from {paths.backups_dir()}"
            ) from None
        if not behind:
            brain = cls(brain_path)
            brain._rebuild_keyword_lane_if_asked()
            return brain
        engine = create_engine(brain_path)
        try:
            backup = ensure_current(engine, brain_path)
        except BaseException:
            engine.dispose()
            raise
        brain = cls(brain_path, engine, backup=backup)
        brain._rebuild_keyword_lane_if_asked()
        return brain

    @classmethod
    def for_project(cls, project_dir: str | os.PathLike[str] | None = None, *, create: bool = False) -> Brain:
        """The brain of ``project_dir`` (default: ``$CLAUDE_PROJECT_DIR``, else the current directory);
        it remembers the directory as :attr:`project`."""
        directory = paths.resolve_project_dir(project_dir)
        brain = cls.open(paths.project_brain_path(directory), create=create)
        brain.project = directory
        return brain

    @classmethod
    def init(
        cls,
        path: str | os.PathLike[str],
        *,
        embed_provider: str | None = None,
        embed_model: str | None = None,
        embed_dims: int | None = None,
        force: bool = False,
    ) -> values.InitResult:
        """Create a brain at ``path`` (idempotent). ``force`` backs it up, then re-writes its embedding settings
        (the given ones; with none given, the stored ones stay).

        The default provider is ``local`` (MiniLM on onnxruntime: offline, no server). A brain that already
        holds vectors keeps its model: switching would mix vector spaces (re-embedding is a later command).
        """
        from cerebro.embed.registry import DEFAULT_PROVIDER

        keep_settings = embed_provider is None and embed_model is None and embed_dims is None
        embed_provider = embed_provider or DEFAULT_PROVIDER
        from cerebro.db import backup as backups
        from cerebro.embed.registry import resolve_settings

        provider, model, dims = resolve_settings(embed_provider, embed_model, embed_dims)
        brain_path = Path(path).expanduser()
        existed = brain_path.exists() and brain_path.stat().st_size > 0
        backup = None
        if existed and force:
            from cerebro.db.engine import driver

            try:
                backup = str(backups.backup(brain_path, "pre-init"))
            except driver().DatabaseError as exc:
                raise BrainUnreadable(
                    f"{brain_path} is not a readable brain ({exc}); move it aside before re-initialising"
                ) from None
        with cls.open(brain_path, create=True) as brain:
            stored = brain._read_embedding_settings()
            if existed and not force:
                return values.InitResult(str(brain_path), False, *stored, backup=brain.upgrade_backup)
            if existed and keep_settings and stored[0]:
                provider, model, dims = stored  # --force with no embedding flags refreshes, never switches

            def write(session: Any) -> None:
                from cerebro.store import meta, vec

                current_dims = vec.table_dimensions(session)
                if current_dims is not None and (stored[1], stored[2]) != (model, dims):
                    held = session.execute(_text("SELECT COUNT(*) FROM vec_nodes")).scalar_one()
                    if held:
                        raise InvalidInput(
                            f"this brain holds {held} vectors from {stored[1] or stored[0]} ({stored[2]} dims); "
                            f"switching to {model or provider} would mix vector spaces — keep "
                            f"--embed-provider {stored[0]}"
                        )
                    session.execute(_text("DROP TABLE vec_nodes"))
                meta.put(session, "embedding_provider", provider)
                meta.put(session, "embedding_model", model)
                meta.put(session, "embedding_dimensions", str(dims))
                vec.ensure_table(session, dims)

            brain._write(write)
        return values.InitResult(str(brain_path), not existed, provider, model, dims, backup=backup)

    def close(self) -> None:
        if self._engine_obj is not None:
            self._engine_obj.dispose()
        if self._raw is not None:
            self._raw.close()
            self._raw = None

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Brain({str(self.path)!r})"

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def _session(self, *, write: bool) -> Iterator[Any]:
        from cerebro.db.session import unit_of_work

        with unit_of_work(self._engine, write=write) as session:
            yield session
        # Committed: tell an in-memory vector copy what changed (a server's warm index, ADR 0020).
        written = session.info.get(VECTORS_WRITTEN) if self.on_vectors_written is not None else None
        if written:
            self.on_vectors_written(written)

    def _write(self, work: Callable[[Any], T]) -> T:
        """Run ``work(session)`` in one write transaction, retried whole on lock errors."""
        from cerebro.retry import run_with_retry

        def attempt() -> T:
            with self._session(write=True) as session:
                return work(session)

        return run_with_retry(attempt)

    def _read(self, work: Callable[[Any], T]) -> T:
        with self._session(write=False) as session:
            return work(session)

    def _embedding_settings(self) -> tuple[str, str, int]:
        """(provider, model, dimensions) as stored at init; read once per open Brain."""
        if self._settings is None:
            self._settings = self._read_embedding_settings()
        return self._settings

    def _read_embedding_settings(self) -> tuple[str, str, int]:
        from cerebro.store import reads

        with self._snapshot() as conn:
            provider = reads.meta(conn, "embedding_provider", "none") or "none"
            model = reads.meta(conn, "embedding_model", "") or ""
            try:
                dims = int(reads.meta(conn, "embedding_dimensions", "0") or 0)
            except ValueError:
                dims = 0
        return provider, model, dims

    # ------------------------------------------------------------------ memories

    def resolve_id(self, prefix: str) -> str:
        """A full id or a unique prefix of ≥4 characters → the full id."""
        from cerebro.store import nodes

        return self._read(lambda s: nodes.resolve_id(s, prefix))

    def add(
        self,
        content: str,
        *,
        type: str = "episode",
        subtype: str | None = None,
        importance: float = 0.5,
        metadata: dict[str, Any] | str | None = None,
        provenance_root: bool = False,
        origin: values.Origin | None = None,
        anchors: Sequence[str] | None = None,
        anchor_ref: str | None = None,
        beads_id: str | None = None,
    ) -> str:
        """Store a memory; returns its new id. The keyword index is updated in the same transaction.

        ``anchors``: files (``PATH[:START-END]``, relative to :attr:`project`) the memory is about; their
        hashes (and the git commit, ``anchor_ref``) are recorded, and reads report whether the code changed
        since (ADR 0018). ``beads_id``: a Beads issue id, stored as metadata ``beadsId``."""
        content = _check_content(content)
        _check_type(type)
        importance = _check_importance(importance)
        meta_dict = self._metadata_with(parse_metadata(metadata), anchors, anchor_ref, beads_id)
        stamp = origin or values.Origin.from_environment("api")
        vector, error = self._try_embed(content)  # outside the transaction: no lock held while embedding

        def write(session: Any) -> str:
            from cerebro.store import fts, nodes

            row = nodes.insert(
                session,
                content=content,
                type=type,
                subtype=subtype or None,
                importance=importance,
                metadata=meta_dict,
                provenance_root=provenance_root,
                origin=stamp,
                embedding_model="",
                now=clock.now(),
            )
            if fts.available(session):
                fts.index(session, row.id, row.content, row.subtype)
            self._store_vector(session, row, vector, error, fresh=True)
            return row.id

        node_id = self._write(write)
        self._warn_pending(node_id, error)
        return node_id

    def _metadata_with(
        self, meta_dict: dict[str, Any] | None, anchors: Any, anchor_ref: Any, beads_id: Any
    ) -> dict[str, Any] | None:
        """``metadata`` plus the Beads id and the anchors' records (files read, git asked: before any write)."""
        from cerebro import anchors as anchoring

        beads = _check_beads_id(beads_id)
        if beads is not None:
            meta_dict = {**(meta_dict or {}), "beadsId": beads}
        return anchoring.attach(meta_dict, anchoring.resolve(self.project, anchors, anchor_ref))

    def add_many(
        self,
        items: list[dict[str, Any]],
        *,
        batch_size: int = 128,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """Store many memories: each item takes :meth:`add`'s keyword arguments plus ``content``.

        Everything is validated before anything is written; batches are embedded together, then every
        memory is written in one transaction (the same write path as :meth:`add`). Returns the new ids.
        """
        prepared = []
        for item in items:
            unknown = set(item) - {
                "content", "type", "subtype", "importance", "metadata", "provenance_root", "origin",
                "anchors", "anchor_ref", "beads_id",
            }
            if unknown:
                raise InvalidInput(f"unknown memory fields: {', '.join(sorted(unknown))}")
            node_type = item.get("type", "episode")
            _check_type(node_type)
            prepared.append(
                {
                    "content": _check_content(item.get("content")),
                    "type": node_type,
                    "subtype": item.get("subtype") or None,
                    "importance": _check_importance(item.get("importance", 0.5)),
                    "metadata": self._metadata_with(
                        parse_metadata(item.get("metadata")), item.get("anchors"), item.get("anchor_ref"),
                        item.get("beads_id"),
                    ),
                    "provenance_root": bool(item.get("provenance_root", False)),
                    "origin": item.get("origin") or values.Origin.from_environment("api"),
                }
            )
        # Embed first (batch by batch, outside any lock), then write everything in one transaction:
        # either every memory lands or none does.
        dims = self._embedding_settings()[2]
        vectors: list[Any] = [None] * len(prepared)
        errors: list[str | None] = [None] * len(prepared)
        for start in range(0, len(prepared), batch_size):
            batch = prepared[start : start + batch_size]
            if dims > 0:
                try:
                    vectors[start : start + len(batch)] = self._embed([b["content"] for b in batch])
                except Exception as exc:  # noqa: BLE001 - memories are kept, vectors come later
                    reason = " ".join(str(exc).split()) or exc.__class__.__name__
                    errors[start : start + len(batch)] = [reason] * len(batch)
            if progress:
                progress(min(start + len(batch), len(prepared)), len(prepared))

        def write(session: Any) -> list[str]:
            from cerebro.store import fts, nodes

            has_fts = fts.available(session)
            now = clock.now()
            written = []
            for spec, vector, error in zip(prepared, vectors, errors, strict=True):
                row = nodes.insert(session, embedding_model="", now=now, **spec)
                if has_fts:
                    fts.index(session, row.id, row.content, row.subtype)
                self._store_vector(session, row, vector, error, fresh=True)
                written.append(row.id)
            return written

        ids = self._write(write)
        failed = sum(1 for e in errors if e is not None)
        if failed:
            first = next(e for e in errors if e is not None)
            self.on_warning(
                f"embedding failed for {failed} memories: {first} (stored; run `cerebro embed --pending`)"
            )
        return ids

    def get(self, node_id: str, *, as_of: Any = None) -> values.NodeDetail:
        """A memory and every edge touching it (only edges valid at ``as_of`` when given)."""
        from cerebro.store import edges, nodes

        try:
            when = clock.parse(as_of) if as_of not in (None, "") else None
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None

        def read(session: Any) -> values.NodeDetail:
            full = nodes.resolve_id(session, node_id)
            row = nodes.get_row(session, full)
            return values.NodeDetail(
                nodes.to_value(row), [edges.to_value(e) for e in edges.for_node(session, full, when)]
            )

        detail = self._read(read)
        (node,) = self._annotate([detail.node])
        return values.NodeDetail(node, detail.edges)

    def update(
        self,
        node_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        subtype: str | None = UNSET,
        metadata: dict[str, Any] | str | None = None,
    ) -> values.Node:
        """Change a memory in place. ``subtype=None`` or ``""`` clears it; ``metadata`` is merged key by key
        (a key set to null is removed). Content or subtype changes stamp ``updated_at``."""
        if content is not None:
            content = _check_content(content)
        if importance is not None:
            importance = _check_importance(importance)
        patch = parse_metadata(metadata)
        if content is None and importance is None and subtype is UNSET and patch is None:
            raise InvalidInput("nothing to update: give content, importance, subtype or metadata")
        vector, error = None, None
        if content is not None and self._embedding_settings()[2] > 0:
            current = self._read(lambda s: _current_content(s, node_id))
            if current != content:
                vector, error = self._try_embed(content)

        def write(session: Any) -> tuple[values.Node, bool]:
            from cerebro.store import fts, nodes

            row = nodes.get_row(session, nodes.resolve_id(session, node_id))
            text_changed = content_changed = False
            if content is not None and content != row.content:
                row.content = content
                text_changed = content_changed = True
            if subtype is not UNSET and (subtype or None) != row.subtype:
                row.subtype = subtype or None
                text_changed = True
            if importance is not None:
                row.importance = importance
            if patch is not None:
                merged = dict(row.metadata_ or {})
                for key, value in patch.items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                row.metadata_ = merged or None
            if text_changed:
                row.updated_at = clock.now()
                if row.status == "active" and fts.available(session):
                    fts.reindex(session, row.id, row.content, row.subtype)
            if content_changed:  # unchanged content is never re-embedded
                self._store_vector(session, row, vector, error)
            session.add(row)
            session.flush()
            return nodes.to_value(row), content_changed

        node, re_embedded = self._write(write)
        if re_embedded:
            self._warn_pending(node.id, error)
        return node

    def list(
        self,
        *,
        type: str | None = None,
        status: str | None = None,
        subtype: str | None = UNSET,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> list[values.Node]:
        """Memories, newest first. ``subtype=""`` lists those with no subtype."""
        from cerebro.store import nodes

        if type is not None:
            _check_type(type)
        if status is not None:
            _check_status(status)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= MAX_LIST_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIST_LIMIT}, got {quote(limit)}")
        return self._annotate(self._read(
            lambda s: [
                nodes.to_value(r)
                for r in nodes.list_rows(
                    s,
                    type=type,
                    status=status,
                    subtype=None if subtype is UNSET else subtype,
                    subtype_given=subtype is not UNSET,
                    limit=limit,
                )
            ]
        ))

    def add_edge(
        self,
        source: str,
        target: str,
        relation: str,
        *,
        weight: float | None = None,
        valid_at: Any = None,
        invalid_at: Any = None,
        metadata: dict[str, Any] | str | None = None,
    ) -> values.EdgeResult:
        """Link two memories. Re-adding an edge re-asserts its validity window (an omitted bound becomes
        open) and updates its weight when one is given. Relations outside the registry are allowed."""
        relation = (relation or "").strip()
        if not relation:
            raise InvalidInput("relation must not be empty")
        if weight is not None:
            try:
                weight = float(weight)
            except (TypeError, ValueError):
                raise InvalidInput(f"weight must be a number, got {quote(weight)}") from None
            if not math.isfinite(weight) or weight <= 0:
                raise InvalidInput(f"weight must be a finite number above 0, got {quote(weight)}")
        try:
            start = clock.parse(valid_at) if valid_at not in (None, "") else None
            end = clock.parse(invalid_at) if invalid_at not in (None, "") else None
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        if start is not None and end is not None and start > end:
            raise InvalidInput("invalid window: valid_at is after invalid_at")
        meta_dict = parse_metadata(metadata)

        def write(session: Any) -> values.EdgeResult:
            from cerebro.store import edges, nodes, relations

            src = nodes.resolve_id(session, source)
            dst = nodes.resolve_id(session, target)
            row, created = edges.upsert(
                session,
                source_id=src,
                target_id=dst,
                relation=relation,
                weight=weight,
                valid_at=start,
                invalid_at=end,
                metadata=meta_dict,
                now=clock.now(),
            )
            return values.EdgeResult(edges.to_value(row), created, relations.is_registered(session, relation))

        return self._write(write)

    def reinforce(self, node_id: str) -> values.Node:
        """Count a use: access and reinforcement counters up, both timestamps now. Active memories only."""

        def write(session: Any) -> values.Node:
            from cerebro.store import nodes

            full = nodes.resolve_id(session, node_id)
            row = nodes.get_row(session, full)
            if row.status != "active":
                raise NotFound(f"node {full} not found or not active")
            now = clock.now()
            row.access_count = (row.access_count or 0) + 1
            row.times_reinforced = (row.times_reinforced or 0) + 1
            row.last_accessed = now
            row.last_reinforced = now
            session.add(row)
            session.flush()
            return nodes.to_value(row)

        return self._write(write)

    def supersede(
        self,
        old_id: str,
        content: str,
        *,
        type: str | None = None,
        subtype: str | None = UNSET,
        importance: float = 0.5,
        metadata: dict[str, Any] | str | None = None,
        provenance_root: bool = False,
        origin: values.Origin | None = None,
        anchors: Sequence[str] | None = None,
        anchor_ref: str | None = None,
        beads_id: str | None = None,
    ) -> str:
        """Replace an active memory: the old one becomes ``superseded``, the new one (same type and subtype
        unless given) gets a ``supersedes`` edge to it. One transaction. Returns the new id. ``anchors``,
        ``anchor_ref`` and ``beads_id`` as for :meth:`add` (the replacement's own; none are inherited)."""
        content = _check_content(content)
        if type is not None:
            _check_type(type)
        importance = _check_importance(importance)
        meta_dict = self._metadata_with(parse_metadata(metadata), anchors, anchor_ref, beads_id)
        stamp = origin or values.Origin.from_environment("api")
        vector, error = self._try_embed(content)

        def write(session: Any) -> str:
            from cerebro.store import edges, fts, nodes

            full = nodes.resolve_id(session, old_id)
            old = nodes.get_row(session, full)
            if old.status != "active":
                raise NotFound(f"node {full} not found or not active")
            now = clock.now()
            old.status = "superseded"
            session.add(old)
            new = nodes.insert(
                session,
                content=content,
                type=type or old.type,
                subtype=old.subtype if subtype is UNSET else (subtype or None),
                importance=importance,
                metadata=meta_dict,
                provenance_root=provenance_root,
                origin=stamp,
                embedding_model="",
                now=now,
            )
            self._store_vector(session, new, vector, error, fresh=True)
            edges.upsert(
                session, source_id=new.id, target_id=full, relation="supersedes", weight=None,
                valid_at=None, invalid_at=None, metadata=None, now=now,
            )
            if fts.available(session):
                fts.unindex(session, full)
                fts.index(session, new.id, new.content, new.subtype)
            return new.id

        new_id = self._write(write)
        self._warn_pending(new_id, error)
        return new_id

    def stats(self) -> values.Stats:
        from cerebro.store import edges, meta, nodes, vec

        def read(session: Any) -> values.Stats:
            by_status, by_type = nodes.counts(session)
            revision = session.execute(_text("SELECT version_num FROM alembic_version")).scalar()
            try:
                dims = int(meta.get(session, "embedding_dimensions", "0") or 0)
            except ValueError:
                dims = 0
            return values.Stats(
                total_nodes=sum(by_status.values()),
                active_nodes=by_status.get("active", 0),
                consolidated_nodes=by_status.get("consolidated", 0),
                superseded_nodes=by_status.get("superseded", 0),
                archived_nodes=by_status.get("archived", 0),
                nodes_by_type={t: by_type.get(t, 0) for t in NODE_TYPES},
                total_edges=edges.count(session),
                pending_embeddings=vec.count_missing_active(session) if dims > 0 else 0,
                embedded_nodes=session.execute(
                    _text("SELECT COUNT(*) FROM nodes WHERE embedding_model = :m AND embedding_model != ''"),
                    {"m": meta.get(session, "embedding_model", "") or ""},
                ).scalar_one(),
                embedding_provider=meta.get(session, "embedding_provider", "none") or "none",
                embedding_model=meta.get(session, "embedding_model", "") or "",
                embedding_dimensions=dims,
                schema_version=int(meta.get(session, "schema_version", "0") or 0),
                revision=revision,
            )

        return self._read(read)
