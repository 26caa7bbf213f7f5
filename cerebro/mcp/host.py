"""The brains a long-lived server keeps open, kept correct while other processes write (ADR 0020).

A :class:`Slot` holds one open :class:`~cerebro.api.Brain` — its raw read connection, ORM engine, embedder,
warm vector index and centering mean — across tool calls. Before each call :meth:`Slot.brain` checks, in
this order and in microseconds:

1. the brain file's identity (device, inode): a file replaced by another process (a restored backup, a
   purge and re-init) is opened afresh, as a new process would;
2. ``PRAGMA data_version`` on the long-lived read connection, which changes exactly when *another*
   connection committed (a hook, the CLI, another server — or this server's own ORM writes). Unchanged:
   nothing is re-read. Changed: when the schema changed (``PRAGMA schema_version``: a re-embed's table
   swap, an upgrade) or the brain's revision is no longer this code's head (a newer cerebro wrote it, an
   older one restored it), the brain is opened afresh — upgraded, or refused with one line when it is too
   new; otherwise the cached embedding settings and centering mean are dropped — the embedder is kept
   unless the brain's model changed, and the warm vector index re-checks the same counter itself.

No timer is involved: a write committed before a call starts is seen by that call.

A project folder bound to a team brain (``cerebro init --store``, ADR 0030) has no file to watch: its slot keeps
the team brain open, each read is a snapshot of the database as it is, and the folder's binding is re-read at
every call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cerebro.db.session import data_version, schema_version  # raw PRAGMAs: no ORM import
from cerebro.errors import BrainNotFound
from cerebro.mcp.warm import BackgroundWarm, MemoEmbedder

if TYPE_CHECKING:
    from cerebro.api import Brain
    from cerebro.db.types import Connection
    from cerebro.team import Binding
    from cerebro.values import Origin


class Slot:
    """One brain the server serves (the project's, or the global one)."""

    def __init__(self, locate: Callable[[], Path], missing: Callable[[Path], str], project: Path | None = None) -> None:
        self._locate = locate
        self._missing = missing
        self.project = project
        self._brain: Brain | None = None
        self._identity: object = None  # the brain file's (device, inode), or the team brain's binding
        self._version: int | None = None
        self._schema: int | None = None
        self.reopened = 0  # how many times the brain was opened afresh (tests and logs)

    @property
    def path(self) -> Path:
        return self._locate()

    @property
    def is_open(self) -> bool:
        return self._brain is not None

    def brain(self) -> Brain:
        """The open brain, made current with what other processes committed (see the module docstring)."""
        bound = self._team_binding()
        if bound is not None:
            return self._team_brain(bound)
        path = self._locate()
        try:
            info = os.stat(path)
        except FileNotFoundError:
            self.close()
            raise BrainNotFound(self._missing(path)) from None
        identity: object = (info.st_dev, info.st_ino)
        if self._brain is None or identity != self._identity or info.st_size == 0:
            return self._open(path, identity)
        conn = self._connection_of(self._brain)
        version = data_version(conn)
        if version != self._version:
            from cerebro.db.migrate import needs_upgrade

            schema = schema_version(conn)
            try:
                behind = needs_upgrade(conn, path)  # raises when a newer cerebro wrote it
            except BaseException:
                self.close()
                raise
            if behind or schema != self._schema:
                return self._open(path, identity)
            self._forget_cached(self._brain)
            self._version = version
        return self._brain

    def _team_binding(self) -> Binding | None:
        """The team brain the project folder is bound to (``init --store``), read at every call: a folder bound
        or unbound while the server runs is served as a new process would serve it."""
        if self.project is None:
            return None
        from cerebro import team

        return team.binding(self.project)

    def _team_brain(self, bound: Binding) -> Brain:
        """The project's team brain (ADR 0030), kept open across calls. Nothing to watch: each read is a snapshot
        of the server's current state, and the settings and centering mean a brain caches are re-read once a
        minute (a team brain has no commit counter); the vector lane is the server's (no warm copy)."""
        if self._brain is not None and self._identity == bound:
            return self._brain
        from cerebro.api import Brain

        old = self._brain
        self.close()
        brain = Brain.open(bound.url, team_project=bound.project)
        brain.project = self.project
        kept = old.handle.loaded_embedder(brain.handle.embedding_settings()) if old is not None else None
        if kept is not None:
            brain.handle.embedder = kept
        self._brain, self._identity = brain, bound
        self.reopened += 1
        return brain

    def _open(self, path: Path, identity: object) -> Brain:
        from cerebro.api import Brain

        old = self._brain
        self.close()
        if path.stat().st_size == 0:
            raise BrainNotFound(self._missing(path))
        brain = Brain.open(path)
        brain.project = self.project
        try:
            self._share_connection(brain)
            # A server keeps using its brain: the in-memory vector index pays off at any size.
            self._install_warm(brain)
            kept = old.handle.loaded_embedder(brain.handle.embedding_settings()) if old is not None else None
            if kept is not None:
                brain.handle.embedder = kept  # the same model: keep it loaded
            conn = self._connection_of(brain)
            self._version = data_version(conn)
            self._schema = schema_version(conn)
        except BaseException:
            brain.close()
            raise
        self._brain, self._identity = brain, identity
        self.reopened += 1
        return brain

    @classmethod
    def _share_connection(cls, brain: Brain) -> None:
        """Run the brain's ORM sessions on its raw read connection (one brain thread uses both), so that
        ``PRAGMA data_version`` there changes only when another process commits: the server's own writes
        reach the warm index through ``on_vectors_written`` instead of forcing a reload."""
        from cerebro.db.engine import create_engine

        brain.handle.use_engine(
            create_engine(brain.handle.file("a shared connection"), connection=cls._connection_of(brain)), on_raw=True
        )

    @staticmethod
    def _install_warm(brain: Brain) -> None:
        warm = BackgroundWarm(brain.handle.file("a warm index"))
        brain.handle.use_warm(warm)
        brain.on_vectors_written = warm.apply

    @staticmethod
    def _connection_of(brain: Brain) -> Connection:
        return brain.handle.raw

    @staticmethod
    def _forget_cached(brain: Brain) -> None:
        """Another connection committed: drop what was derived from the brain's contents."""
        if brain.handle.reload_settings():  # another model now: its embedder is built afresh on the next embed
            Slot._install_warm(brain)

    def embedder(self) -> MemoEmbedder | None:
        """The brain's embedder wrapped for :meth:`MemoEmbedder.hold` (None without a provider)."""
        brain = self._brain
        if brain is None or brain.handle.embedding_settings()[2] <= 0:
            return None
        current = brain.embedder
        if not isinstance(current, MemoEmbedder):
            current = brain.handle.embedder = MemoEmbedder(current)
        return current

    def rewarm(self) -> None:
        """After an answer: rebuild what the last writes invalidated — the centering mean here, the warm
        vector index on its own thread — while the client reads the answer. Best effort."""
        if self._brain is None:
            return
        try:
            brain = self.brain()
            if brain.handle.embedding_settings()[2] <= 0:
                return
            with brain.handle.snapshot() as conn:
                brain.handle.warm(conn)
                brain.handle.brain_mean(conn)
        except Exception:  # noqa: BLE001 - the next call reports whatever is wrong
            self.reset()

    def warm_up(self) -> None:
        """Open the brain and load what the first calls would pay for: the embedder and its model, the ORM
        used by writes, the warm vector index. Best effort (a missing brain is reported by the calls)."""
        try:
            brain = self.brain()
            from cerebro.models import Node

            # A statement through the ORM the writes use: its import, first connection and dialect set-up (a session
            # that runs nothing connects nothing).
            brain.handle.read(lambda session: session.get(Node, ""))
            if brain.handle.embedding_settings()[2] > 0:
                brain.handle.embed(["warm-up"])
        except Exception:  # noqa: BLE001
            return
        self.rewarm()

    def reset(self) -> None:
        """Forget the open brain after an unexpected failure: the next call opens it afresh (the local
        model stays loaded: it is shared by every brain in the process)."""
        self.close()

    def close(self) -> None:
        brain, self._brain = self._brain, None
        self._identity = self._version = self._schema = None
        if brain is not None:
            try:
                brain.handle.rollback()
            except Exception:  # noqa: BLE001, S110 - best effort: a broken connection is closed next anyway
                pass
            try:
                brain.close()
            except Exception:  # noqa: BLE001, S110 - best effort: the brain is forgotten whatever close() says
                pass


class Host:
    """What one server serves: the project's brain (its directory known at start, or from the client's roots at
    the first call) and, on request, the global brain — with the notices a call collects on the way."""

    def __init__(self, project_dir: Path | None = None, *, include_global: bool = False) -> None:
        from cerebro import paths

        self.include_global = include_global
        self.client_name: str | None = None
        self.notices: list[str] = []
        self.project_dir: Path | None = None
        self._project: Slot | None = None
        self._global = Slot(
            paths.global_brain_path, lambda _path: "global store not initialized — run 'cerebro init --global' first"
        )
        if project_dir is not None:
            self.set_project(project_dir)

    def set_project(self, directory: Path) -> None:
        from cerebro import paths

        directory = Path(directory)
        if self._project is not None:
            self._project.close()
        self.project_dir = directory
        self._project = Slot(
            lambda: paths.project_brain_path(directory),
            lambda path: f"no brain for {directory} — run 'cerebro init' there first (looked for {path})",
            project=directory,
        )

    @property
    def project_slot(self) -> Slot:
        if self._project is None:  # the server resolves the directory before the first call
            raise RuntimeError("the project directory is not resolved yet")
        return self._project

    @property
    def global_slot(self) -> Slot:
        return self._global

    def begin(self) -> None:
        self.notices = []

    def _collect(self, brain: Brain) -> Brain:
        from cerebro.brain.secrets import without_hint

        brain.on_warning = lambda message: self.notices.append(without_hint(message))  # no --allow-secret here
        return brain

    def project(self) -> Brain:
        return self._collect(self.project_slot.brain())

    def global_brain(self) -> Brain:
        return self._collect(self._global.brain())

    def origin(self) -> Origin:
        """Who writes: ``$CEREBRO_ORIGIN_ACTOR``, else the MCP client's name; channel ``mcp``."""
        from cerebro.values import Origin

        actor = None if os.environ.get("CEREBRO_ORIGIN_ACTOR") else (self.client_name or None)
        return Origin.from_environment("mcp", actor=actor)

    def slots(self) -> list[Slot]:
        return [s for s in (self._project, self._global) if s is not None]

    def rewarm(self) -> None:
        for slot in self.slots():
            slot.rewarm()

    def reset(self) -> None:
        for slot in self.slots():
            slot.reset()

    def close(self) -> None:
        for slot in self.slots():
            slot.close()
