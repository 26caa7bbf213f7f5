"""``Brain``: the one public entry point, and only a face. Each method is one call into the module under
``cerebro.brain`` that owns the concept (memories, retrieval, lifecycle, promotion, sync, settings, exports, …)
over the brain's :class:`~cerebro.brain.handle.Handle` (connections, transactions, caches), with its docstring.

Reads never write (no access touches, no counters): they run in plain ``BEGIN`` transactions. Every write
is one ``BEGIN IMMEDIATE`` transaction, retried as a whole when another writer holds the lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import cerebro  # annotations say cerebro.reports.X: get_type_hints imports it when asked (PEP 562, ADR 0036)
from cerebro import values
from cerebro.brain import (
    edges,
    embedding,
    exports,
    inbox,
    lifecycle,
    memories,
    opening,
    promotion,
    reembed,
    retrieval,
    secrets,
    settings,
    status,
    sync,
)
from cerebro.brain.handle import Handle
from cerebro.brain.validate import UNSET, parse_metadata  # noqa: F401 - part of the API
from cerebro.provenance import GET_DEFAULT_DEPTH

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.embed.base import Embedder

F = TypeVar("F", bound=Callable[..., Any])
# `Brain.list` shadows the builtin inside the class body, so annotations there spell it `List`.
List = list


def _doc(implementation: Callable[..., Any]) -> Callable[[F], F]:
    """Give a delegating method its implementation's docstring: one text, where the code is."""

    def decorate(method: F) -> F:
        method.__doc__ = implementation.__doc__
        return method

    return decorate


class Brain:
    """A brain file: open with :meth:`open` / :meth:`for_project`, create with :meth:`init`.

    Use as a context manager (``with Brain.open(path) as brain: ...``) or call :meth:`close`.
    """

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False, team_project: str | None = None) -> Brain:
        """Open the brain at ``path``, upgrading it first if it is behind (a backup is taken before).
        ``create`` makes a new one. ``path`` may be a team database's URL (``postgresql+psycopg://…``), with
        ``team_project`` naming this project's brain in it (ADR 0030)."""
        return cls(opening.open_handle(path, create=create, team_project=team_project))

    @classmethod
    def for_project(cls, project_dir: str | os.PathLike[str] | None = None, *, create: bool = False) -> Brain:
        """The brain of ``project_dir`` (default: ``$CLAUDE_PROJECT_DIR``, else the current directory);
        it remembers the directory as :attr:`project`."""
        return cls(opening.project_handle(project_dir, create=create))

    @classmethod
    @_doc(opening.init)
    def init(
        cls,
        path: str | os.PathLike[str],
        *,
        embed_provider: str | None = None,
        embed_model: str | None = None,
        embed_dims: int | None = None,
        force: bool = False,
        project: str | os.PathLike[str] | None = None,
        team_project: str | None = None,
    ) -> cerebro.reports.InitResult:
        return opening.init(
            path,
            embed_provider=embed_provider,
            embed_model=embed_model,
            embed_dims=embed_dims,
            force=force,
            project=project,
            team_project=team_project,
        )

    @classmethod
    def create_for_project(
        cls,
        project_dir: str | os.PathLike[str],
        *,
        embed_provider: str | None = None,
        embed_model: str | None = None,
        embed_dims: int | None = None,
    ) -> Brain:
        """Initialise the brain of ``project_dir`` (an existing folder) if it has none — with these embedding
        settings, default the local model — and open it. What ``cerebro init --skip-integration`` does, for
        Python: no Claude Code files are written."""
        from cerebro import paths
        from cerebro.errors import InvalidInput

        directory = paths.resolve_project_dir(project_dir)
        if not directory.is_dir():
            raise InvalidInput(f"project folder {directory} does not exist: a brain belongs to an existing folder")
        opening.init(
            paths.project_brain_path(directory),
            embed_provider=embed_provider,
            embed_model=embed_model,
            embed_dims=embed_dims,
            force=False,
            project=paths.brain_owner(directory),
        )
        return cls.for_project(directory)

    @classmethod
    def brains(cls) -> List[cerebro.reports.BrainInfo]:
        """Every brain under ``CEREBRO_HOME`` — the project each serves (recorded at init), whether that folder
        still exists, active memories, size and last use — read without upgrading or changing any of them."""
        from cerebro.brain import registry

        return registry.brains()

    @classmethod
    def relink(cls, old: str | os.PathLike[str], new: str | os.PathLike[str]) -> cerebro.reports.BrainInfo:
        """Give the brain of a moved or renamed project folder (``old``, its former path) to ``new``: the file takes
        the new folder's name and records it. Refused when ``new`` does not exist or has a brain already, or
        while another process has the brain open."""
        from cerebro.brain import registry

        return registry.relink(old, new)

    @classmethod
    @_doc(opening.purge)
    def purge(cls, path: str | os.PathLike[str]) -> Path:
        return opening.purge(path)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Brain({self.location!r})"

    # ------------------------------------------------------------------ attributes

    @property
    def handle(self) -> Handle:
        """The open file's connections and caches: for hosts that keep a brain open (the MCP server), not
        needed for ordinary use."""
        return self._handle

    @property
    def path(self) -> Path | None:
        """The brain file (None for a team brain on PostgreSQL, which is no file: see :attr:`location`)."""
        return self._handle.path

    @property
    def location(self) -> str:
        """Where the brain is: its file, or its team database (password hidden) and project."""
        return self._handle.location

    @property
    def upgrade_backup(self) -> str | None:
        """The backup taken when opening upgraded the brain (None when it was current)."""
        return self._handle.upgrade_backup

    @property
    def project(self) -> Path | None:
        """The project directory this brain belongs to: code anchors are resolved against it."""
        return self._handle.project

    @project.setter
    def project(self, directory: Path | None) -> None:
        self._handle.project = directory

    @property
    def on_warning(self) -> Callable[[str], None]:
        """Called with each warning (an embedding that failed, a source not marked); default: stderr."""
        return self._handle.on_warning

    @on_warning.setter
    def on_warning(self, callback: Callable[[str], None]) -> None:
        self._handle.on_warning = callback

    @property
    def on_vectors_written(self) -> Callable[[dict[str, Any]], None] | None:
        """Called after a commit that wrote or deleted vectors, with {node_id: vector or None}."""
        return self._handle.on_vectors_written

    @on_vectors_written.setter
    def on_vectors_written(self, callback: Callable[[dict[str, Any]], None] | None) -> None:
        self._handle.on_vectors_written = callback

    @property
    def embedder(self) -> Embedder:
        """The brain's embedder, built from the settings stored at init (never another model)."""
        return self._handle.embedder

    # ------------------------------------------------------------------ memories

    @_doc(memories.resolve_id)
    def resolve_id(self, prefix: str) -> str:
        return memories.resolve_id(self._handle, prefix)

    @_doc(memories.add)
    def add(  # noqa: PLR0913 - the keyword-only fields of a memory
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
        allow_secret: bool = False,
    ) -> str:
        return memories.add(
            self._handle,
            content,
            type=type,
            subtype=subtype,
            importance=importance,
            metadata=metadata,
            provenance_root=provenance_root,
            origin=origin,
            anchors=anchors,
            anchor_ref=anchor_ref,
            beads_id=beads_id,
            allow_secret=allow_secret,
        )

    @_doc(memories.add_many)
    def add_many(
        self,
        items: List[dict[str, Any]],
        *,
        batch_size: int = 128,
        progress: Callable[[int, int], None] | None = None,
        allow_secret: bool = False,
    ) -> List[str]:
        return memories.add_many(
            self._handle, items, batch_size=batch_size, progress=progress, allow_secret=allow_secret
        )

    @_doc(memories.get)
    def get(self, node_id: str, *, as_of: Any = None) -> cerebro.reports.NodeDetail:  # noqa: ANN401 - a datetime or RFC 3339 text, validated; the public signature, pinned in tests/api/brain_api.txt
        return memories.get(self._handle, node_id, as_of=as_of)

    @_doc(memories.update)
    def update(
        self,
        node_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        subtype: str | None = UNSET,
        metadata: dict[str, Any] | str | None = None,
        allow_secret: bool = False,
    ) -> values.Node:
        return memories.update(
            self._handle,
            node_id,
            content=content,
            importance=importance,
            subtype=subtype,
            metadata=metadata,
            allow_secret=allow_secret,
        )

    @_doc(memories.list_memories)
    def list(
        self,
        *,
        type: str | None = None,
        status: str | None = None,
        subtype: str | None = UNSET,
        limit: int = memories.DEFAULT_LIST_LIMIT,
    ) -> List[values.Node]:
        return memories.list_memories(self._handle, type=type, status=status, subtype=subtype, limit=limit)

    @_doc(edges.add_edge)
    def add_edge(
        self,
        source: str,
        target: str,
        relation: str,
        *,
        weight: float | None = None,
        valid_at: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated; the public signature, pinned in tests/api/brain_api.txt
        invalid_at: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated; the public signature, pinned in tests/api/brain_api.txt
        metadata: dict[str, Any] | str | None = None,
    ) -> cerebro.reports.EdgeResult:
        return edges.add_edge(
            self._handle,
            source,
            target,
            relation,
            weight=weight,
            valid_at=valid_at,
            invalid_at=invalid_at,
            metadata=metadata,
        )

    @_doc(lifecycle.reinforce)
    def reinforce(self, node_id: str) -> values.Node:
        return lifecycle.reinforce(self._handle, node_id)

    @_doc(memories.supersede)
    def supersede(  # noqa: PLR0913 - the keyword-only fields of a memory
        self,
        old_id: str,
        content: str,
        *,
        type: str | None = None,
        subtype: str | None = UNSET,
        importance: float | None = None,
        metadata: dict[str, Any] | str | None = None,
        provenance_root: bool = False,
        origin: values.Origin | None = None,
        anchors: Sequence[str] | None = None,
        anchor_ref: str | None = None,
        beads_id: str | None = None,
        allow_secret: bool = False,
    ) -> str:
        return memories.supersede(
            self._handle,
            old_id,
            content,
            type=type,
            subtype=subtype,
            importance=importance,
            metadata=metadata,
            provenance_root=provenance_root,
            origin=origin,
            anchors=anchors,
            anchor_ref=anchor_ref,
            beads_id=beads_id,
            allow_secret=allow_secret,
        )

    @_doc(status.stats)
    def stats(self) -> cerebro.reports.Stats:
        return status.stats(self._handle)

    @_doc(status.active_count)
    def active_count(self) -> int:
        return status.active_count(self._handle)

    @_doc(status.health)
    def health(self, *, now: datetime | None = None) -> cerebro.reports.Health:
        return status.health(self._handle, now)

    # ------------------------------------------------------------------ embedding

    @_doc(embedding.embed_pending)
    def embed_pending(
        self, *, batch_size: int = 64, progress: Callable[[int, int], None] | None = None
    ) -> cerebro.reports.EmbedReport:
        return embedding.embed_pending(self._handle, batch_size=batch_size, progress=progress)

    @_doc(reembed.reembed)
    def reembed(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        dims: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        return reembed.reembed(self._handle, provider=provider, model=model, dims=dims, progress=progress, force=force)

    # ------------------------------------------------------------------ retrieval

    @_doc(retrieval.recall)
    def recall(
        self,
        query: str,
        *,
        limit: int = 20,
        threshold: float | None = None,
        subtype: str | None = UNSET,
        as_of: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated; the public signature, pinned in tests/api/brain_api.txt
        lanes: tuple[str, ...] | None = None,
    ) -> values.RecallResult:
        return retrieval.recall(
            self._handle, query, limit=limit, threshold=threshold, subtype=subtype, as_of=as_of, lanes=lanes
        )

    @_doc(retrieval.search)
    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        threshold: float | None = None,
        as_of: Any = None,  # noqa: ANN401 - a datetime or RFC 3339 text, validated; the public signature, pinned in tests/api/brain_api.txt
    ) -> values.RecallResult:
        return retrieval.search(self._handle, query, limit=limit, threshold=threshold, as_of=as_of)

    @_doc(retrieval.prime)
    def prime(self, *, limit: int | None = None) -> List[values.ScoredNode]:
        return retrieval.prime(self._handle, limit=limit)

    @_doc(retrieval.anchored)
    def anchored(self, *, stale_only: bool = False, limit: int = 50) -> List[values.Node]:
        return retrieval.anchored(self._handle, stale_only=stale_only, limit=limit)

    @_doc(retrieval.touch_accessed)
    def touch_accessed(self, ids: List[str]) -> bool:
        return retrieval.touch_accessed(self._handle, ids)

    @_doc(retrieval.touch_surfaced)
    def touch_surfaced(self, ids: List[str]) -> bool:
        return retrieval.touch_surfaced(self._handle, ids)

    @_doc(retrieval.count_expansion_skip)
    def count_expansion_skip(self) -> bool:
        return retrieval.count_expansion_skip(self._handle)

    # ------------------------------------------------------------------ lifecycle and provenance

    @_doc(lifecycle.gc)
    def gc(self, *, threshold: float | None = None, dry_run: bool = False) -> cerebro.reports.GcReport:
        return lifecycle.gc(self._handle, threshold=threshold, dry_run=dry_run)

    @_doc(lifecycle.mark_consolidated)
    def mark_consolidated(self, ids: Sequence[str]) -> cerebro.reports.ConsolidateReport:
        return lifecycle.mark_consolidated(self._handle, ids)

    @_doc(lifecycle.consolidate)
    def consolidate(self, into: str, sources: Sequence[str]) -> cerebro.reports.ConsolidateReport:
        return lifecycle.consolidate(self._handle, into, sources)

    @_doc(lifecycle.consolidation_suggestions)
    def consolidation_suggestions(self, *, limit: int = 20) -> List[dict[str, Any]]:
        return lifecycle.consolidation_suggestions(self._handle, limit=limit)

    @_doc(lifecycle.record_outcome)
    def record_outcome(self, node_id: str, *, success: bool) -> values.Node:
        return lifecycle.record_outcome(self._handle, node_id, success=success)

    @_doc(lifecycle.forget)
    def forget(
        self, subject: str, *, subtype: str | None = None, apply: bool = False, hard: bool = False
    ) -> cerebro.reports.ForgetReport:
        return lifecycle.forget(self._handle, subject, subtype=subtype, apply=apply, hard=hard)

    @_doc(lifecycle.walk_provenance)
    def walk_provenance(self, node_id: str, *, depth: int = GET_DEFAULT_DEPTH) -> List[tuple[values.Node, int]]:
        return lifecycle.walk_provenance(self._handle, node_id, depth=depth)

    @_doc(lifecycle.provenance_status)
    def provenance_status(self, ids: Sequence[str]) -> dict[str, str]:
        return lifecycle.provenance_status(self._handle, ids)

    # ------------------------------------------------------------------ the global brain

    @_doc(promotion.promote)
    def promote(self, node_id: str, *, content: str | None = None) -> str:
        return promotion.promote(self._handle, node_id, content=content)

    @_doc(sync.push)
    def team_push(self, team: Brain, *, everything: bool = False) -> sync.SyncReport:
        return sync.push(self._handle, team._handle, everything=everything)

    @_doc(sync.pull)
    def team_pull(self, team: Brain) -> sync.SyncReport:
        return sync.pull(self._handle, team._handle)

    @_doc(sync.share)
    def team_share(self, team: Brain, node_id: str) -> sync.SyncReport:
        return sync.share(self._handle, team._handle, node_id)

    @_doc(promotion.recall_with_team)
    def recall_with_team(self, team: Brain, query: str, *, limit: int = 20, **options: Any) -> values.RecallResult:  # noqa: ANN401 - recall's keyword options, passed on; the public signature, pinned in tests/api/brain_api.txt
        return promotion.recall_with_team(self._handle, team._handle, query, limit=limit, **options)

    @_doc(promotion.recall_with_global)
    def recall_with_global(self, query: str, *, limit: int = 20, **options: Any) -> values.RecallResult:  # noqa: ANN401 - recall's keyword options, passed on; the public signature, pinned in tests/api/brain_api.txt
        return promotion.recall_with_global(self._handle, query, limit=limit, **options)

    # ------------------------------------------------------------------ settings

    @_doc(settings.config_get)
    def config_get(self, key: str) -> cerebro.reports.ConfigEntry:
        return settings.config_get(self._handle, key)

    @_doc(settings.config_value)
    def config_value(self, key: str) -> Any:  # noqa: ANN401 - the setting's own type (int, float, bool or text); the public signature, pinned in tests/api/brain_api.txt
        return settings.config_value(self._handle, key)

    @_doc(settings.config_list)
    def config_list(self) -> List[cerebro.reports.ConfigEntry]:
        return settings.config_list(self._handle)

    @_doc(settings.config_set)
    def config_set(self, key: str, value: str) -> cerebro.reports.ConfigChange:
        return settings.config_set(self._handle, key, value)

    @_doc(settings.config_reset)
    def config_reset(self, key: str | None = None, *, all: bool = False) -> List[str]:
        return settings.config_reset(self._handle, key, all=all)

    @_doc(settings.relations)
    def relations(self) -> List[cerebro.reports.RelationInfo]:
        return settings.relations(self._handle)

    @_doc(settings.add_relation)
    def add_relation(
        self, name: str, *, traversal_class: str | None = None
    ) -> tuple[cerebro.reports.RelationInfo, bool]:
        return settings.add_relation(self._handle, name, traversal_class=traversal_class)

    @_doc(settings.remove_relation)
    def remove_relation(self, name: str) -> None:
        settings.remove_relation(self._handle, name)

    # ------------------------------------------------------------------ export, import, backup

    @_doc(exports.export)
    def export(self, format: str = "json") -> Any:  # noqa: ANN401 - a dict (json) or a list of lines (jsonl, sql); the public signature, pinned in tests/api/brain_api.txt
        return exports.export(self._handle, format)

    @_doc(exports.export_sqlite)
    def export_sqlite(self, target: str | Path, *, overwrite: bool = False) -> Path:
        return exports.export_sqlite(self._handle, target, overwrite=overwrite)

    @_doc(exports.backup)
    def backup(self, target: str | Path | None = None) -> Path:
        return exports.backup(self._handle, target)

    @_doc(exports.import_file)
    def import_file(self, path: str | Path, *, on_conflict: str = "skip", progress: Any = None) -> dict[str, Any]:  # noqa: ANN401 - a progress callback or None; the public signature, pinned in tests/api/brain_api.txt
        return exports.import_file(self._handle, path, on_conflict=on_conflict, progress=progress)

    # ------------------------------------------------------------------ secrets

    @_doc(secrets.scan)
    def scan_secrets(self) -> cerebro.reports.SecretScan:
        return secrets.scan(self._handle)

    @_doc(secrets.redact_stored)
    def redact_secrets(
        self, *, dry_run: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> cerebro.reports.SecretScan:
        return secrets.redact_stored(self._handle, dry_run=dry_run, progress=progress)

    # ------------------------------------------------------------------ the inbox

    @_doc(inbox.inbox_add)
    def inbox_add(
        self,
        content: str,
        *,
        type: str = "episode",
        subtype: str | None = None,
        importance: float = 0.5,
        metadata: dict[str, Any] | str | None = None,
        origin: values.Origin | None = None,
        allow_secret: bool = False,
    ) -> str:
        return inbox.inbox_add(
            self._handle,
            content,
            type=type,
            subtype=subtype,
            importance=importance,
            metadata=metadata,
            origin=origin,
            allow_secret=allow_secret,
        )

    @_doc(inbox.inbox_list)
    def inbox_list(self, *, limit: int | None = None) -> List[cerebro.reports.InboxCandidate]:
        return inbox.inbox_list(self._handle, limit=limit)

    @_doc(inbox.inbox_get)
    def inbox_get(self, candidate_id: str) -> cerebro.reports.InboxCandidate:
        return inbox.inbox_get(self._handle, candidate_id)

    @_doc(inbox.inbox_approve)
    def inbox_approve(self, candidate_id: str) -> str:
        return inbox.inbox_approve(self._handle, candidate_id)

    @_doc(inbox.inbox_discard)
    def inbox_discard(self, candidate_id: str) -> cerebro.reports.InboxCandidate:
        return inbox.inbox_discard(self._handle, candidate_id)
