"""The handle on one open brain file: its connections and transactions, and what a process keeps for it.

Every part of :class:`cerebro.Brain` is a module of plain functions over a :class:`Handle`; the handle is
the only object that holds state, and all of it is declared in ``__init__``:

- two ways to the file: a raw DB-API connection for snapshots (the hot read path: recall, prime, hooks —
  no ORM import) and new memories' writes, and a SQLAlchemy engine for the ORM write path, created on first use;
- the embedding settings read once, the embedder built from them, and — for a process that keeps the brain
  open — the warm vector index, the keyword and rows copies and the centering mean, each with its staleness rule.

Reads never write: snapshots and read sessions are plain ``BEGIN`` transactions. Every write is one
``BEGIN IMMEDIATE`` transaction, retried whole when another writer holds the lock.
"""

from __future__ import annotations

import _thread
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from cerebro.anchors import Checker
    from cerebro.db.types import Connection, Engine, Session
    from cerebro.embed.base import Embedder
    from cerebro.store.connectors import Connector
    from cerebro.store.interface import Store, WarmIndex

T = TypeVar("T")

# How long the centering mean is reused once other commits have happened (see Handle.brain_mean).
MEAN_TTL_SECONDS = 60.0
SETTINGS_TTL_SECONDS = 10.0  # a team brain's embedding settings, read again this often (another machine may reembed)


def default_warning(message: str) -> None:
    from cerebro.logs import warn

    warn(message)


_UNREAD = object()  # embedding settings not read yet, or to be read again whatever the commit count
_LONGEST_VECTOR = 1.8e19  # just under √(3.4028235e38): its squared length stays finite in float32


class Handle:
    """One open brain file. Made by :func:`cerebro.brain.opening.open_handle`; closed by :meth:`close`."""

    def __init__(
        self,
        path: Path | None,
        engine: Engine | None = None,
        *,
        backup: str | None = None,
        store: Store | None = None,
        connector: Connector | None = None,
    ) -> None:
        from cerebro.store.connectors import SQLiteConnector

        if connector is not None:
            reach: Connector = connector
        elif path is not None:
            reach = SQLiteConnector(path)
        else:
            raise ValueError("a handle needs a brain file's path or a connector")
        # How this handle reaches its brain: a file, or a project in a team database (ADR 0030).
        self.connector = reach
        self.path = path  # None for a team brain, which is no file
        # The storage engine's operations (cerebro.store.interface): the domain reaches the store only here.
        self.store: Store = reach.store if store is None else store
        # The project directory this brain belongs to (set by Brain.for_project): code anchors are resolved
        # and checked against it (ADR 0018).
        self.project: Path | None = None
        self.upgrade_backup = backup  # the backup taken when opening upgraded the brain
        self.on_warning: Callable[[str], None] = default_warning
        # Called after a commit that wrote or deleted vectors, with {node_id: vector or None} (see session).
        self.on_vectors_written: Callable[[dict[str, Any]], None] | None = None
        self._engine: Engine | None = engine  # created on first ORM use: reads on the hot path never import SQLAlchemy
        self._raw: Connection | None = None
        # Held while the raw connection is in use: SQLite runs in multi-thread mode (ADR 0043), where one connection
        # must never serve two threads at once — a Brain called from several threads takes turns. Re-entrant:
        # snapshots nest. (_thread: threading's own lock, without importing threading on the hooks' path.)
        self._raw_lock = _thread.RLock()
        self._engine_on_raw = False  # the ORM's engine runs on the raw connection (use_engine)
        self._settings: tuple[str, str, int] | None = None
        self._settings_seen: object = _UNREAD  # the other connections' commit count they were read at (data_version)
        self._embedder: Any = None
        self._warm: WarmIndex | None = None  # a WarmVectors, made on first use
        self._warm_made = False  # a team brain has none: asked once
        self._keywords: Any = None  # a WarmKeywords (a long-lived process's keyword copy), made on first use
        self._rows: Any = None  # a WarmRows (a long-lived process's copy of the rows), made on first use; False: none
        self._mean: tuple[Any, tuple[int | None, int], float, Any] | None = None  # (connection, version, when, mean)
        self._raw_commits = 0  # writes committed on the raw connection (write_raw): invisible to data_version

    @property
    def location(self) -> str:
        """Where the brain is, for messages: its file, or its team database (password hidden) and project."""
        return self.connector.location

    @property
    def is_team(self) -> bool:
        return self.connector.dialect == "postgresql"

    @property
    def name(self) -> str:
        """A short name: the brain file's stem, or the team brain's project key."""
        return self.path.stem if self.path is not None else str(getattr(self.connector, "project", ""))

    @property
    def trust_key(self) -> str:
        """What this machine's approvals (the reranker's command, ADR 0026) are recorded against."""
        import os

        return os.path.realpath(self.path) if self.path is not None else self.location

    def file(self, what: str) -> Path:
        """The brain file, for what only a file has (``what``: a copy, a backup); a team brain has none."""
        if self.path is None:
            from cerebro.errors import InvalidInput

            raise InvalidInput(
                f"{what} is made from a brain file; {self.location} is a team brain on PostgreSQL "
                "(its database is backed up with the server's tools, e.g. pg_dump)"
            )
        return self.path

    # ------------------------------------------------------------------ connections

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = self.connector.create_engine()
        return self._engine

    def use_engine(self, engine: Engine, *, on_raw: bool) -> None:
        """Run the ORM on ``engine`` from now on; ``on_raw``: on the raw connection (the MCP server), lock included."""
        with self._raw_lock:
            if self._engine is not None:
                self._engine.dispose()
            self._engine, self._engine_on_raw = engine, on_raw

    @property
    def raw(self) -> Connection:
        """The raw DB-API connection (opened on first use)."""
        if self._raw is None:
            self._raw = self.connector.connect_raw()
        return self._raw

    def rollback(self) -> None:
        """Roll back a snapshot left open on the raw connection (a call that failed half way)."""
        with self._raw_lock:
            if self._raw is not None and self._raw.in_transaction:
                self._raw.rollback()

    def close(self) -> None:
        with self._raw_lock:
            if self._rows:
                self._rows.close()  # a copy's build under way stops before its brain is let go of
            if self._engine is not None:
                self._engine.dispose()
            if self._raw is not None:
                self._raw.close()
                self._raw = None
            # Stamped by the closed connection's counters, which a reopened one starts afresh: dropped with it.
            self._warm, self._warm_made, self._rows, self._mean = None, False, None, None

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def session(self, *, write: bool) -> Iterator[Session]:
        from cerebro.db.session import unit_of_work

        # A server's ORM works on the raw connection itself (use_engine): its sessions take that connection's lock.
        # An engine of its own hands each session a pooled connection of its own: no lock, so that a write waiting
        # for another process's lock (busy_timeout) does not hold up this brain's reads on other threads.
        with (
            self._raw_lock if self._engine_on_raw else nullcontext(),
            unit_of_work(self.engine, write=write) as session,
        ):
            yield session
        # Committed: tell an in-memory vector copy what changed (a server's warm index, ADR 0020).
        notify = self.on_vectors_written
        written = session.info.get(self.store.vectors.WRITTEN) if notify is not None else None
        if notify is not None and written:
            notify(written)

    def write(self, work: Callable[[Session], T]) -> T:
        """Run ``work(session)`` in one write transaction, retried whole on lock errors."""
        from cerebro.retry import run_with_retry

        def attempt() -> T:
            with self.session(write=True) as session:
                return work(session)

        return run_with_retry(attempt)

    def write_raw(self, work: Callable[[Connection], T]) -> T:
        """Run ``work(conn)`` in one write transaction on the raw connection, retried whole on lock errors: for
        writes that need no ORM object (a new memory), so that a one-shot ``cerebro add`` never imports
        SQLAlchemy (ADR 0028). Vectors written here are not seen by ``on_vectors_written`` on their own: the
        caller reports them (:meth:`vectors_written`)."""
        from cerebro.retry import run_with_retry

        def attempt() -> T:
            with self._raw_lock, self.connector.write(self.raw) as conn:
                return work(conn)

        result = run_with_retry(attempt)
        # A commit on the raw connection leaves its own PRAGMA data_version as it was: the caches that watch it
        # for changes (the centering mean) count these commits instead.
        self._raw_commits += 1
        return result

    def vectors_written(self, written: dict[str, Any]) -> None:
        """Tell the in-memory vector copy what a committed raw write changed ({node_id: vector or None}): the
        server's (``on_vectors_written``), else this handle's own warm index, which data_version cannot tell."""
        if not written:
            return
        if self.on_vectors_written is not None:
            self.on_vectors_written(written)
        elif self._warm is not None:
            self._warm.apply(written)

    def read(self, work: Callable[[Session], T]) -> T:
        with self.session(write=False) as session:
            return work(session)

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read transaction on the raw connection (no ORM): the hot path for recall and prime."""
        with self._raw_lock, self.connector.read(self.raw) as conn:
            yield conn

    @contextmanager
    def raw_in_use(self) -> Iterator[Connection]:
        """The raw connection, this thread's alone meanwhile, for work that manages its own transactions."""
        with self._raw_lock:
            yield self.raw

    def best_effort(self, work: Callable[[Connection], object], mirror: Callable[[Any], None] | None = None) -> bool:
        """A short write on the raw connection (no ORM on the hot path). It waits at most a quarter second
        for the lock and gives up quietly: bookkeeping must never fail or stall the read it follows. ``mirror``: the
        same change made to a rows copy (``WarmRows.after_write``), which then stays current."""
        with self._raw_lock:
            raw = self.raw
            before = raw.total_changes if self._rows else 0
            done = self.connector.try_write(raw, work, wait_ms=250)
            if self._rows:
                self._rows.after_write(before, raw.total_changes, mirror if done else None)
            return done

    # ------------------------------------------------------------------ embedding

    def embedding_settings(self) -> tuple[str, str, int]:
        """(provider, model, dimensions) as stored; read again once another connection has committed (another process
        may have switched the model with ``reembed``): what was built for the old model is dropped then."""
        with self._raw_lock:
            seen = self.connector.data_version(self.raw)
        if seen is None:  # a team brain, without a counter of other machines' commits: a time bucket instead
            seen = -int(time.monotonic() // SETTINGS_TTL_SECONDS)
        if self._settings is None or seen != self._settings_seen:
            previous, self._settings, self._settings_seen = self._settings, self.read_embedding_settings(), seen
            if previous is not None and self._settings != previous:
                self._embedder = self._warm = self._mean = None
                self._warm_made = False
        return self._settings

    def read_embedding_settings(self) -> tuple[str, str, int]:
        reads = self.store.reads
        with self.snapshot() as conn:
            provider = reads.meta(conn, "embedding_provider", "none") or "none"
            model = reads.meta(conn, "embedding_model", "") or ""
            try:
                dims = int(reads.meta(conn, "embedding_dimensions", "0") or 0)
            except ValueError:
                dims = 0
        return provider, model, dims

    def reload_settings(self) -> bool:
        """Re-read the embedding settings now; True when they changed (what was built for the old model dropped)."""
        previous, self._settings_seen, self._mean = self._settings, _UNREAD, None
        return previous is not None and self.embedding_settings() != previous

    def forget_model(self) -> None:
        """After this process switched the model: everything built from the old one is stale."""
        self._settings = self._embedder = self._warm = self._mean = None
        self._warm_made = False

    @property
    def embedder(self) -> Embedder:
        """The brain's embedder, built from the settings stored at init (never another model)."""
        if self._embedder is None:
            from cerebro.embed.registry import make_embedder

            self._embedder = make_embedder(*self.embedding_settings())
        return self._embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def loaded_embedder(self, settings: tuple[str, str, int]) -> Embedder | None:
        """The embedder already built, if it serves ``settings`` (else None): a reopened brain keeps its model."""
        return self._embedder if self._settings == settings else None

    def embed(
        self, texts: list[str], *, settings: tuple[str, str, int] | None = None, embedder: Embedder | None = None
    ) -> list[list[float]]:
        """Embed and check the answer fits this brain's vector table. ``settings`` and ``embedder``: as read already
        (a worker thread must not read the brain: the thread waiting for it may hold the raw connection's lock)."""
        from cerebro.embed.base import EmbeddingError

        _, model, dims = settings or self.embedding_settings()
        vectors = (embedder or self.embedder).embed(texts)
        if len(vectors) != len(texts):
            raise EmbeddingError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
        for vector in vectors:
            if len(vector) != dims:
                raise EmbeddingError(
                    f"{model} returned {len(vector)}-dimensional vectors but this brain stores {dims}: "
                    "the provider is serving a different model than the brain was created with"
                )
            # Its length in one C call (NaN and ±inf carry through): sqlite-vec compares vectors in float32, where a
            # vector longer than √(float32's largest) squares to infinity and every distance to it is NULL.
            if not math.hypot(*vector) <= _LONGEST_VECTOR:
                raise EmbeddingError("the embedder returned a non-finite vector (or one too long for float32)")
        return vectors

    def try_embed(self, content: str) -> tuple[list[float] | None, str | None]:
        """(vector, None), or (None, reason) when embedding failed; (None, None) without a provider."""
        if self.embedding_settings()[2] <= 0:
            return None, None
        try:
            return self.embed([content])[0], None
        except Exception as exc:  # noqa: BLE001 - a failed embed never loses the memory
            return None, " ".join(str(exc).split()) or exc.__class__.__name__

    # ------------------------------------------------------------------ recall's caches

    def warm(self, conn: Connection) -> WarmIndex | None:
        """The in-memory vector index when this process keeps using a big brain (else None)."""
        if self._warm is None and not self._warm_made:
            self._warm, self._warm_made = self.connector.warm_index(), True
        warm = self._warm
        return warm if warm is not None and warm.ready(conn) else None

    def keyword_copy(self) -> Any:  # noqa: ANN401 - a cerebro.store.warm_keywords.WarmKeywords
        """This process's keyword copy (ADR 0044), or None: not for a one-shot command, nor a team brain (server)."""
        from cerebro import process

        if process.ONE_SHOT:
            return None
        if self._keywords is None:
            self._keywords = self.connector.keyword_copy() or False  # False: this engine keeps none (asked once)
        return self._keywords or None

    def recall_store(self, conn: Connection) -> Store:
        """The store recall reads through in ``conn``'s snapshot: with this process's copy of the rows when it keeps
        one and it is current (ADR 0051), else the store itself. A one-shot CLI command keeps none."""
        from cerebro import process

        if process.ONE_SHOT:
            return self.store
        if self._rows is None:
            self._rows = self.connector.warm_rows(self._raw_lock) or False  # False: this engine keeps none (asked once)
        return self._rows.store(self.store, conn) if self._rows else self.store

    def warm_vectors(self) -> int:
        """How many vectors this process's warm index holds (0 without one): how big the brain is, without a query."""
        return len(self._warm) if self._warm is not None else 0

    def use_warm(self, warm: WarmIndex) -> None:
        """Keep vectors in ``warm`` from now on (a server's index, loaded on its own thread)."""
        self._warm = warm

    def brain_mean(self, conn: Connection) -> list[float] | None:
        """The brain's mean vector for centering (ADR 0010), cached: re-read once a commit has happened and
        a minute has passed. Every recall commits its access touches, and a mean of 256 vectors barely moves
        with a few writes; re-reading it on each commit would cost a long-lived agent ~6 ms per recall. A one-shot
        process keeps a brain file's in a file for the next one (ADR 0055)."""
        from cerebro.recall import brain_mean

        # A team brain has no counter of other sessions' commits (None): its mean is re-read once a minute.
        version = (self.connector.data_version(conn), self._raw_commits)
        now = time.monotonic()
        cached = self._mean
        changed = cached is not None and (cached[1] != version or version[0] is None)
        if cached is None or cached[0] is not conn or (changed and now - cached[2] >= MEAN_TTL_SECONDS):
            cached = self._mean = (conn, version, now, brain_mean(self.store, conn, self.connector.centering_file()))
        return cached[3]

    def anchor_checker(self) -> Checker:
        """Anchor statuses for one call, against the project this brain was opened for (None: unknown)."""
        from cerebro.anchors import Checker

        return Checker(self.project)
