"""The one transaction seam: ``unit_of_work``.

Callers that compose several operations pass their session in and the work runs in a SAVEPOINT;
otherwise a new session opens one transaction (``BEGIN IMMEDIATE`` for writers) and commits at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cerebro.db.engine import WRITE_OPTION

if TYPE_CHECKING:
    from collections.abc import Callable

    from cerebro.db.types import Connection, Engine, Session


@contextmanager
def unit_of_work(engine: Engine, *, write: bool, session: Session | None = None) -> Iterator[Any]:
    from sqlmodel import Session

    if session is not None:
        with session.begin_nested():
            yield session
        return
    bind = engine.execution_options(**{WRITE_OPTION: write})
    with Session(bind, expire_on_commit=False, autoflush=True) as new_session, new_session.begin():
        yield new_session


# --------------------------------------------------------------------------- the raw connection (no ORM)


@contextmanager
def raw_read(conn: Connection) -> Iterator[Any]:
    """A read transaction on a raw DB-API connection: one consistent snapshot (WAL) for everything read in it.
    Nested: joins the transaction already open."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


@contextmanager
def raw_write(conn: Connection) -> Iterator[Connection]:
    """One ``BEGIN IMMEDIATE`` transaction on a raw DB-API connection, committed at the end and rolled back on
    an error: the write path that never loads the ORM (ADR 0028). The brain is switched to WAL first, as the
    ORM's connections do (a connection opened for reading leaves the journal mode alone)."""
    if conn.in_transaction:
        raise RuntimeError("a raw write cannot run inside another transaction on its connection")
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite rolls some failures back itself (a full disk, an I/O error)
            conn.execute("ROLLBACK")
        raise


def try_write(conn: Connection, work: Callable[[Connection], object], *, wait_ms: int) -> bool:
    """``work(conn)`` in one ``BEGIN IMMEDIATE`` transaction, waiting at most ``wait_ms`` for the lock; False
    instead of an error when it could not run (busy, or the work failed, which is rolled back)."""
    from cerebro.db.engine import BUSY_TIMEOUT_MS

    try:
        conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
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
        except Exception:  # noqa: BLE001, S110 - restoring the wait is best effort: the connection may be gone
            pass


def data_version(conn: Connection) -> int:
    """SQLite's counter of commits by *other* connections to this file (unchanged by this one's own)."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def schema_version(conn: Connection) -> int:
    """SQLite's counter of schema changes (a table created or dropped — a re-embed's vector table swap)."""
    return conn.execute("PRAGMA schema_version").fetchone()[0]
