"""One SQLAlchemy engine per brain file, with every connection set up the same way.

Driver: ``sqlean.py`` (SQLite 3.50 with FTS5 and extension loading on Linux and macOS wheels); the
standard library's ``sqlite3`` is used only where it can load extensions (ADR 0001). Each connection:
loads sqlite-vec, turns on foreign keys, WAL, ``busy_timeout`` and ``synchronous=NORMAL``, and puts the
driver in autocommit so that SQLAlchemy — not the driver — emits ``BEGIN`` (``BEGIN IMMEDIATE`` for
writers). That is SQLAlchemy's documented recipe for working SAVEPOINTs on SQLite, and ``BEGIN
IMMEDIATE`` takes the write lock up front so two writers never deadlock on a lock upgrade.
"""

from __future__ import annotations

import _thread
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cerebro import process
from cerebro.errors import DriverUnavailable

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Engine, SAConnection


def _busy_timeout_ms(default: int = 5000) -> int:
    """How long one statement waits for another writer before SQLITE_BUSY: 5 s, or ``$CEREBRO_BUSY_TIMEOUT_MS``
    (tests that hold a brain's lock past it set it low)."""
    try:
        value = int(os.environ.get("CEREBRO_BUSY_TIMEOUT_MS", ""))
    except ValueError:
        return default
    return value if value >= 0 else default


def _page_cache_kib(default: int = 64 * 1024) -> int:
    """A connection's page cache ceiling (ADR 0042): 64 MiB, or ``$CEREBRO_PAGE_CACHE_MIB`` (a process holding many
    brains open may want less; the cache only grows as pages are read)."""
    try:
        value = int(os.environ.get("CEREBRO_PAGE_CACHE_MIB", ""))
    except ValueError:
        return default
    return value * 1024 if value > 0 else default


PAGE_CACHE_KIB = _page_cache_kib()
BUSY_TIMEOUT_MS = _busy_timeout_ms()

WRITE_OPTION = "cerebro_write"
FIX = "install the sqlean.py package (pip install sqlean.py), which bundles SQLite with FTS5 and extension loading"


def _usable(driver: ModuleType) -> bool:
    try:
        conn = driver.connect(":memory:")
        try:
            if not hasattr(conn, "enable_load_extension"):
                return False
            conn.enable_load_extension(True)
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            return True
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - any failure means this SQLite cannot do FTS5
        return False


def driver() -> ModuleType:
    """The DB-API module to use: sqlean.dbapi2, else a stdlib sqlite3 that can load extensions."""
    with _CHOOSING:  # one thread chooses: another's test connection must not open while SQLite restarts
        return _chosen_driver()


@cache
def _chosen_driver() -> ModuleType:
    return pick_driver(_candidates())


_CHOOSING = _thread.allocate_lock()


def _candidates() -> Iterator[ModuleType]:
    # Imported only when wanted: the standard library's sqlite3 loads another SQLite (~2 ms of every hook) that the
    # sqlean wheel makes unnecessary.
    try:
        first = "sqlean" not in sys.modules  # imported here first: no connection of its SQLite can be open yet
        import sqlean.dbapi2 as sqlean_driver

        # A one-shot CLI process keeps the mutexes: switching them off loads ctypes (~2 ms), more than one command's
        # queries save (cerebro.process).
        if first and not process.ONE_SHOT:
            unshared_connections()
        yield sqlean_driver
    except ImportError:
        pass
    import sqlite3

    yield sqlite3


def unshared_connections() -> bool:
    """SQLite's multi-thread mode and no memory statistics, for every connection sqlean opens from now (ADR 0043).

    sqlean's SQLite is built serialized: each connection has a mutex that every call on it takes, down to each column
    of each row read — ~9,000 lock and unlock pairs a recall at 10,000 memories — and its memory statistics take a
    global mutex at every allocation: ~5 % of a recall's CPU. Multi-thread mode asks that no connection be used by two
    threads at once, which is sqlean's own promise (``threadsafety`` 1: threads share the module, not connections)
    and cerebro's way: the MCP server works on one brain thread, a warm build opens its own connection, and a
    handle's raw connection is used under the handle's lock. Both settings change only while SQLite is shut down,
    which is safe only before any connection is open: called when cerebro imports sqlean itself. Linux only:
    ``sqlite3_config`` is variadic, and a plain ctypes call passes its arguments as such a callee expects them on
    Linux (x86-64, aarch64) but not on Apple silicon. False when anything refuses (a setting that took stays).

    The mode is the process's: a sqlean connection opened after this one by other code in the process must not be used
    by two threads at once either (README, "Python API")."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        library = ctypes.CDLL(sys.modules["sqlean._sqlite3"].__file__)
        if library.sqlite3_shutdown() != 0:
            return False
        multi_thread = library.sqlite3_config(2) == 0  # SQLITE_CONFIG_MULTITHREAD
        no_statistics = library.sqlite3_config(9, ctypes.c_int(0)) == 0  # SQLITE_CONFIG_MEMSTATUS, off
        return library.sqlite3_initialize() == 0 and multi_thread and no_statistics
    except Exception:  # noqa: BLE001 - an unusual build: connections keep their mutexes, as before
        return False


def pick_driver(candidates: Iterable[ModuleType]) -> ModuleType:
    """The first candidate that can load extensions and has FTS5, or an error that names the fix."""
    for candidate in candidates:
        if _usable(candidate):
            return candidate
    raise DriverUnavailable(f"no SQLite driver here can load sqlite-vec with FTS5: {FIX}")


@cache
def vec_extension_path() -> str:
    """Where the sqlite-vec package keeps its loadable extension — found without importing the package,
    whose ``__init__`` imports numpy (~150 ms on every hook call)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise DriverUnavailable("the sqlite-vec package is missing: pip install sqlite-vec")
    return os.path.normpath(os.path.join(next(iter(spec.submodule_search_locations)), "vec0"))


def lenient_text(raw: bytes) -> str:
    """A stored text as ``str``, bytes that are not UTF-8 as U+FFFD. Go cerebro stores whatever bytes its strings
    held (a pasted binary, a transcript cut inside a character), and the driver's own decoding fails the whole
    statement: every command that read such a memory stopped with an internal error. Costs ~0.1 µs a text more than
    the driver's C decoder, which a bulk read may take back (:func:`fast_text`)."""
    return raw.decode("utf-8", "replace")


def not_utf8(exc: BaseException) -> bool:
    """``exc`` is the driver's failure to decode a stored text (with its own decoder: :func:`fast_text`)."""
    return "Could not decode to UTF-8" in str(exc)


def fast_text(conn: Connection) -> None:
    """Decode ``conn``'s texts with the driver's C decoder (~2× faster over a whole table) until
    ``conn.text_factory = lenient_text`` again: for a bulk read that reads again leniently on :func:`not_utf8`."""
    conn.text_factory = str


def setup_connection(dbapi_conn: Connection, *, wal: bool = True) -> None:
    """Per-connection set-up, shared by the engine and by raw connections (hot read paths).

    ``wal=False`` leaves the journal mode alone: used to inspect a file before deciding to open it, so
    that a refused brain is left byte for byte as it was.
    """
    dbapi_conn.isolation_level = None  # the driver must not open transactions behind SQLAlchemy's back
    dbapi_conn.text_factory = lenient_text
    try:
        dbapi_conn.enable_load_extension(True)
        dbapi_conn.load_extension(vec_extension_path())
        dbapi_conn.enable_load_extension(False)
    except Exception as exc:  # pragma: no cover - depends on the platform's build
        raise DriverUnavailable(f"could not load sqlite-vec ({exc}): {FIX}") from exc
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA synchronous = NORMAL")
    # Memories may hold secrets: text that is deleted or replaced is zeroed where that costs no extra I/O, rather
    # than left readable in the file's free space (ADR 0027; `secrets redact` compacts the rest).
    cursor.execute("PRAGMA secure_delete = FAST")
    # SQLite's default page cache (2 MiB) holds a fifth of a 10,000-memory brain: a long-lived process's recalls
    # then read most pages through the OS again (~0.15 ms of a 3.6 ms recall). The cache grows only as pages are
    # read, so a one-shot command pays nothing for the ceiling.
    cursor.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    # Only switch when needed: setting WAL on a WAL brain is a no-op, but on a rollback-journal brain
    # it is a write, so a plain read of a WAL brain never writes.
    if wal:
        mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            cursor.execute("PRAGMA journal_mode = WAL")
    cursor.close()


def dbapi_connection(connection: SAConnection) -> Connection:
    """The DB-API connection under a SQLAlchemy one (PRAGMAs that must run outside a transaction go here)."""
    raw: Connection | None = connection.connection.driver_connection
    if raw is None:
        raise RuntimeError("the connection is closed")
    return raw


def writable_sidecars(path: str | os.PathLike[str]) -> None:
    """SQLite makes a brain's -wal and -shm with the brain's mode: a read of a read-only (0400) brain left them
    read-only, and once the brain was writable again every write failed ("attempt to write a readonly database").
    Before a connection opens a brain this process may write, its own sidecars are made writable again (0600)."""
    uid = os.getuid()
    try:
        brain = os.stat(path)
    except OSError:
        return  # no brain yet: SQLite makes it, and its sidecars, with this process's mode
    if not (brain.st_mode & stat.S_IWUSR if brain.st_uid == uid else os.access(path, os.W_OK)):
        return  # a read-only brain (by its mode: root may write anything): its sidecars stay as SQLite made them
    for suffix in ("-wal", "-shm"):
        sidecar = f"{os.fspath(path)}{suffix}"
        try:
            info = os.lstat(sidecar)
            if stat.S_ISREG(info.st_mode) and info.st_uid == uid and not info.st_mode & stat.S_IWUSR:
                os.chmod(sidecar, 0o600)
        except OSError:
            continue  # none there, or not ours to change: SQLite's own error says what it cannot open


def connect_raw(path: str | os.PathLike[str], *, wal: bool = True, create: bool = True) -> Connection:
    """A plain DB-API connection set up like the engine's (for hot paths that skip the ORM). ``create=False``: only
    to a file that exists (SQLite makes an empty one otherwise)."""
    writable_sidecars(path)
    if create:
        conn = driver().connect(os.fspath(path), check_same_thread=False)
    else:
        conn = driver().connect(f"{Path(path).absolute().as_uri()}?mode=rw", uri=True, check_same_thread=False)
    try:
        setup_connection(conn, wal=wal)
    except BaseException:
        conn.close()
        raise
    return conn


def create_engine(path: str | os.PathLike[str], *, connection: Connection | None = None) -> Engine:
    """The ORM engine for a brain. ``connection``: run every session on this one DB-API connection (from
    :func:`connect_raw`) instead of a pool of new ones — a long-lived server's single brain thread does, so
    that its own commits never change ``PRAGMA data_version`` on its read connection (ADR 0020)."""
    import sqlalchemy as sa
    from sqlalchemy import event

    from cerebro import metadata

    module = driver()
    pooling: dict[str, Any] = {"connect_args": {"check_same_thread": False}}
    if connection is not None:
        from sqlalchemy.pool import StaticPool

        # reset_on_return=None: returning the connection must not roll back a raw read snapshot open on it.
        pooling = {"creator": lambda: connection, "poolclass": StaticPool, "pool_reset_on_return": None}
    engine = sa.create_engine(
        f"sqlite:///{Path(path)}",
        module=module,
        # JSON columns hold metadata; one that is not a JSON object (Go-made, BLOB, hand-edited) must read
        # as flagged raw text, never fail every query that touches its row.
        json_deserializer=metadata.load,
        # A statement's parameters are memories' text: an error must never print them (ADR 0027), into an
        # "internal error" on stderr, an MCP error result or the session-end worker's log.
        hide_parameters=True,
        **pooling,
    )

    @event.listens_for(engine, "do_connect")
    def _before_connect(*_: object) -> None:
        writable_sidecars(path)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Connection, _record: object) -> None:
        # WAL is switched on by the first write (below), not on open: a read of a rollback-journal brain (a restored
        # backup) changed the file, and failed on a read-only one (a review).
        setup_connection(dbapi_conn, wal=False)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: SAConnection) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        if write:
            ensure_wal(conn)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def ensure_wal(conn: SAConnection) -> None:
    """Switch the brain to WAL before its connection's first write (outside a transaction: the pragma is refused in
    one); a switch needs the write lock of a rollback-journal brain, and fails at once when another process has it."""
    if conn.connection.info.get("wal"):
        return
    raw = dbapi_connection(conn)
    if str(raw.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        raw.execute("PRAGMA journal_mode = WAL")
    conn.connection.info["wal"] = True


def copy_database(
    source: str | os.PathLike[str], target: str | os.PathLike[str], *, leave_out: Sequence[str] = ()
) -> None:
    """Copy a brain with SQLite's backup API — consistent while other processes write — into ``target``
    (an existing empty file), left in rollback-journal mode: a copy at rest is one file, no -wal. ``leave_out``:
    ``schema_meta`` keys the copy does not keep."""
    src = connect_raw(source, wal=False)
    try:
        dest = driver().connect(os.fspath(target))
        try:
            src.backup(dest)
            if leave_out:
                dest.execute(f"DELETE FROM schema_meta WHERE key IN ({','.join('?' * len(leave_out))})", leave_out)
                dest.commit()
            dest.execute("PRAGMA journal_mode = DELETE")
        finally:
            dest.close()
    finally:
        src.close()
