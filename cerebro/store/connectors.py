"""How a handle reaches its brain and its store: a file (SQLite) or a project in a team database (PostgreSQL, ADR 0030).

A connector makes the handle's two ways in — the SQLAlchemy engine (ORM writes) and the raw DB-API connection
(hot reads, new memories) — and owns what differs between the engines around a transaction: how a raw read or
write begins and ends, the short best-effort write, how a cache learns that other connections have committed,
and whether a long-lived process keeps a warm copy of the vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Engine, Session
    from cerebro.store.interface import Store, WarmIndex


class Connector(Protocol):
    dialect: str  # "sqlite" or "postgresql"
    location: str  # for messages: the file, or the database (password hidden) and project

    @property
    def path(self) -> Path | None:
        """The brain file; None for a team brain."""

    @property
    def store(self) -> Store: ...

    def create_engine(self) -> Engine: ...

    def connect_raw(self) -> Connection: ...

    def read(self, conn: Connection) -> AbstractContextManager[Any]:
        """One read snapshot on the raw connection (joins one already open)."""

    def write(self, conn: Connection) -> AbstractContextManager[Connection]:
        """One write transaction on the raw connection, committed at the end, rolled back on an error."""

    def try_write(self, conn: Connection, work: Callable[[Connection], object], *, wait_ms: int) -> bool:
        """``work`` in one short write transaction, waiting at most ``wait_ms`` for locks; False if it could not."""

    def data_version(self, conn: Connection) -> int | None:
        """A counter of other connections' commits, or None when the engine has no cheap one."""

    def warm_index(self) -> WarmIndex | None:
        """A new in-memory vector index for a long-lived process, or None when the engine searches itself."""

    def keyword_copy(self) -> Any:  # noqa: ANN401 - a cerebro.store.warm_keywords.WarmKeywords, or None
        """A new in-memory copy of the keyword index for a long-lived process (ADR 0044), or None when the engine ranks
        keywords itself."""

    def warm_rows(self, turns: Any = None) -> Any:  # noqa: ANN401 - a lock; a cerebro.store.warm_rows.WarmRows, or None
        """A new in-memory copy of the memory rows for a long-lived process (ADR 0051), or None; its builds wait while
        this process holds ``turns`` (the lock of the brain's connection)."""

    def centering_file(self) -> Path | None:
        """Where a one-shot process keeps the brain's centering mean for the next one (ADR 0055), or None."""

    def prepare_new_brain(self, session: Session) -> None:
        """What a new brain needs beyond its settings (a brain file's migrations wrote it already)."""


class SQLiteConnector:
    """A brain file."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)

    @property
    def store(self) -> Store:
        from cerebro.store.sqlite import SQLITE

        return SQLITE

    def create_engine(self) -> Engine:
        from cerebro.db.engine import create_engine

        return create_engine(self.path)

    def connect_raw(self) -> Connection:
        from cerebro.db.engine import connect_raw

        # wal=False: a read leaves a rollback-journal brain (a restored backup, say) as it is.
        return connect_raw(self.path, wal=False)

    def read(self, conn: Connection) -> AbstractContextManager[Any]:
        from cerebro.db.session import raw_read

        return raw_read(conn)

    def write(self, conn: Connection) -> AbstractContextManager[Connection]:
        from cerebro.db.session import raw_write

        return raw_write(conn)

    def try_write(self, conn: Connection, work: Callable[[Connection], object], *, wait_ms: int) -> bool:
        from cerebro.db.session import try_write

        return try_write(conn, work, wait_ms=wait_ms)

    def data_version(self, conn: Connection) -> int | None:
        from cerebro.db.session import data_version

        return data_version(conn)

    def warm_index(self) -> WarmIndex | None:
        from cerebro.store.warm import WarmVectors

        return WarmVectors()

    def keyword_copy(self) -> Any:  # noqa: ANN401 - a WarmKeywords
        from cerebro.store.warm_keywords import WarmKeywords

        return WarmKeywords(self.path)

    def warm_rows(self, turns: Any = None) -> Any:  # noqa: ANN401 - a lock; a WarmRows
        from cerebro.store.warm_rows import WarmRows

        return WarmRows(self.path, turns)

    def centering_file(self) -> Path | None:
        from cerebro import process
        from cerebro.store import centering

        return centering.file_for(self.path) if process.ONE_SHOT else None  # a long-lived process keeps it in memory

    def prepare_new_brain(self, session: Session) -> None:
        """Nothing: the migrations seeded the relations and stamped the boundaries."""


class PostgresConnector:
    """One project's brain in a team database. psycopg's transactions are begun and ended explicitly on the raw
    connection, as sqlite3's are; a raw read is one REPEATABLE READ snapshot, like a SQLite read transaction."""

    dialect = "postgresql"

    def __init__(self, url: str, project: str) -> None:
        from cerebro import team
        from cerebro.db import postgres

        self.url = url
        self.path: Path | None = None
        self.project = team.check_project_key(project)
        self.location = f"{postgres.redact(url)} (project {project})"

    @property
    def store(self) -> Store:
        from cerebro.store.postgres import POSTGRES

        return POSTGRES

    def create_engine(self) -> Engine:
        from cerebro.db import postgres

        return postgres.create_engine(self.url, self.project)

    def connect_raw(self) -> Connection:
        from cerebro.db import postgres

        return postgres.connect(self.url, self.project)  # type: ignore[return-value] # sqlite3's API, on psycopg

    @contextmanager
    def read(self, conn: Connection) -> Iterator[Connection]:
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    @contextmanager
    def write(self, conn: Connection) -> Iterator[Connection]:
        if conn.in_transaction:
            raise RuntimeError("a raw write cannot run inside another transaction on its connection")
        from cerebro.db.postgres import WRITER_LOCK

        conn.execute("BEGIN")
        try:
            conn.execute(WRITER_LOCK)
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()
            raise

    def try_write(self, conn: Connection, work: Callable[[Connection], object], *, wait_ms: int) -> bool:
        try:
            from cerebro.db.postgres import WRITER_LOCK

            conn.execute("BEGIN")
            try:
                conn.execute(f"SET LOCAL lock_timeout = {int(wait_ms)}")
                conn.execute(WRITER_LOCK)
                work(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.rollback()
                raise
            return True
        except Exception:  # noqa: BLE001 - best effort: another writer held the rows, or the server is gone
            return False

    def data_version(self, conn: Connection) -> int | None:
        return None  # no cheap counter of other sessions' commits: caches fall back to their time limit

    def warm_index(self) -> WarmIndex | None:
        return None  # pgvector searches on the server

    def keyword_copy(self) -> None:
        return None  # PostgreSQL ranks keywords on the server

    def warm_rows(self, turns: Any = None) -> None:  # noqa: ANN401 - a lock
        return None  # no cheap counter of other sessions' commits: a copy could not know it is stale

    def centering_file(self) -> None:
        return None  # the server computes the mean

    def prepare_new_brain(self, session: Session) -> None:
        from cerebro.store.postgres import start_project

        start_project(session)
