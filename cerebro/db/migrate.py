"""Schema upgrades: what happens when a brain is opened (the helpers the revisions use: ``cerebro.db.revisions``).

Opening a brain (:func:`ensure_current`):
- at head → nothing, and Alembic is never imported (hooks open brains on every prompt);
- empty / new file → the whole chain v1 → head runs, so a new brain is born with both convention
  boundaries stamped at its birth (no legacy era);
- behind → under a file lock: re-check, back up with SQLite's backup API into ``backups/``, upgrade in one
  transaction, one log line on stderr;
- written by upstream Go cerebro (``schema_version`` but no ``alembic_version``) → stamped at ``v<N>``, then
  as above;
- ahead of this code (unknown revision, or ``schema_version`` above 7 with no revision) → refused with an
  error naming the fix.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro import paths
from cerebro.db.engine import WRITE_OPTION, connect_raw, dbapi_connection, ensure_wal
from cerebro.errors import MigrationFailed, SchemaTooNew

if TYPE_CHECKING:
    from alembic.config import Config

    from cerebro.db.types import Connection, Engine, SAConnection

HEAD_REVISION = "py0007"  # a test checks this against Alembic's script directory
# A schema_meta mark: a brain file loaded from a sql dump (store/dump.py) has no keyword index; the next open builds it.
NEEDS_FTS_REBUILD = "needs_fts_rebuild"
UPSTREAM_SCHEMA_VERSION = 7


@contextlib.contextmanager
def foreign_keys_off(connection: SAConnection) -> Iterator[None]:
    """``PRAGMA foreign_keys`` is a no-op inside a transaction, so flip it on the raw driver connection."""
    raw = dbapi_connection(connection)
    raw.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        raw.execute("PRAGMA foreign_keys = ON")


def check_foreign_keys(connection: SAConnection) -> None:
    problems = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if problems:
        raise MigrationFailed(
            f"upgrade would leave {len(problems)} dangling reference(s) (first: {tuple(problems[0])}); "
            "the brain was left unchanged"
        )


def compare_type(context: Any, inspected: Any, metadata: Any, inspected_type: Any, metadata_type: Any) -> bool | None:  # noqa: ANN401 - Alembic's compare_type hook signature
    """Our DATETIME columns are a custom type over text; compare them by the declared name."""
    from cerebro.models import StorageTime

    if isinstance(metadata_type, StorageTime):
        return type(inspected_type).__name__.upper() not in ("DATETIME",)
    return None  # Alembic's default comparison


def engine_for_alembic_cli(brain: str) -> Engine:
    """``alembic -x brain=PATH``: an engine on PATH, created private when missing."""
    from cerebro.db.engine import create_engine

    path = Path(brain).expanduser()
    if not path.exists():
        paths.create_private_file(path)
    return create_engine(path)


# --------------------------------------------------------------------------- opening a brain


def script_location() -> Path:
    """The migrations shipped in the wheel (``cerebro/_migrations``), else the checkout's ``alembic/``."""
    package_copy = Path(__file__).resolve().parent.parent / "_migrations"
    if (package_copy / "env.py").exists():
        return package_copy
    checkout = Path(__file__).resolve().parents[2] / "alembic"
    if (checkout / "env.py").exists():
        return checkout
    raise MigrationFailed("cerebro's migration scripts are missing from this installation; reinstall cerebro")


def read_state(raw: Connection) -> tuple[int | None, str | None, bool]:
    """(schema_version, alembic revision, has any table) read with plain SELECTs — never a write."""
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
    version = None
    if "schema_meta" in tables:
        row = raw.execute("SELECT value FROM schema_meta WHERE key='schema_version'").fetchone()
        if row is not None:
            try:
                version = int(row[0])
            except (TypeError, ValueError):
                version = None
    revision = None
    if "alembic_version" in tables:
        row = raw.execute("SELECT version_num FROM alembic_version").fetchone()
        revision = row[0] if row else None
    return version, revision, bool(tables - {"sqlite_sequence"})


def alembic_config(connection: SAConnection | None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(script_location()))
    cfg.attributes["connection"] = connection
    return cfg


def known_revision(revision: str) -> bool:
    from alembic.script import ScriptDirectory

    cfg = alembic_config(None)
    try:
        return ScriptDirectory.from_config(cfg).get_revision(revision) is not None
    except Exception:  # noqa: BLE001 - CommandError for an unknown id, AssertionError for an empty one
        return False


def too_new_message(path: Path, what: str) -> str:
    return (
        f"brain {path} was written by a newer cerebro ({what}) than this one; "
        "upgrade cerebro (pip install -U cerebro-memory) or restore a backup from "
        f"{paths.backups_dir()}"
    )


# What an edit changes, per table, beside the row counts and extremes: an update stamps updated_at, a recall
# last_accessed and access_count, a reinforcement its count; a text edited to another length changes a total. Each
# aggregate with the column it reads (an old brain may not have it yet).
_CHANGES = {
    "nodes": {
        "content": "total(length(content))",
        "metadata": "total(length(metadata))",
        "access_count": "total(access_count)",
        "times_reinforced": "total(times_reinforced)",
        "importance": "total(importance)",
        "status": "total(rowid * length(status))",  # the four statuses have four lengths
        "updated_at": "max(updated_at)",
        "last_accessed": "max(last_accessed)",
        "last_reinforced": "max(last_reinforced)",
    },
    "edges": {"weight": "total(weight)", "metadata": "total(length(metadata))", "invalid_at": "max(invalid_at)"},
    "nodes_archive": {"content": "total(length(content))", "archived_at": "max(archived_at)"},
}


def fingerprint(path: Path) -> str:
    """A cheap summary of a brain's content (page count, meta, row counts and extremes, and the sums and latest times
    an edit changes: ``_CHANGES``), to recognise a backup of the same state without hashing the whole file."""
    import hashlib

    conn = connect_raw(path, wal=False)
    try:
        parts = [conn.execute("PRAGMA page_count").fetchone()[0]]
        parts += conn.execute("SELECT key, value FROM schema_meta ORDER BY key").fetchall()
        for table, changes in _CHANGES.items():
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}  # none: no such table
            if columns:
                read = ", ".join(
                    ["COUNT(*)", "MAX(rowid)", "MIN(rowid)", *(a for c, a in changes.items() if c in columns)]
                )
                parts += conn.execute(f"SELECT {read} FROM {table}").fetchall()
    finally:
        conn.close()
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def reusable_backup(path: Path, label: str) -> Path | None:
    """A backup of this brain, under ``label``, of the state it is in now: a failed upgrade retried by
    every hook call must not fill the disk with identical copies."""
    try:
        current = fingerprint(path)
    except Exception:  # noqa: BLE001 - no reuse, then
        return None
    for candidate in sorted(paths.backups_dir().glob(f"{path.stem}-{label}-*.sqlite"), reverse=True):
        marker = candidate.with_suffix(".fingerprint")
        try:
            if marker.read_text().strip() == current:
                return candidate
        except OSError:
            continue
    return None


@contextlib.contextmanager
def upgrade_lock(path: Path, suffix: str = "lock") -> Iterator[None]:
    """An exclusive lock per database file for the length of an upgrade (brains and metrics files).

    Locks live in CEREBRO_HOME/locks (keyed by the file's real path: one brain reached through a symlink is one
    lock), not beside the file, so renaming or copying a brain never drags a stale lock file along."""
    import hashlib

    lock_dir = paths.ensure_private_dir(paths.home() / "locks")
    key = hashlib.sha256(os.path.realpath(path).encode("utf-8")).hexdigest()[:32]
    lock_path = lock_dir / f"{key}.{suffix}"
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, paths.FILE_MODE)
    try:
        _wait_for_lock(fd, path)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


UPGRADE_WAIT_SECONDS = 120.0  # a 60,000-memory upgrade of a Go brain takes ~30 s here: room for it, not for ever


def _wait_for_lock(fd: int, path: Path) -> None:
    """The lock, waiting for another process's upgrade at most :data:`UPGRADE_WAIT_SECONDS`: a process stopped in
    the middle of one (Ctrl-Z on a terminal's upgrade) held every hook and server that opened the brain for ever."""
    import time

    from cerebro.errors import BrainBusy

    deadline = time.monotonic() + UPGRADE_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise BrainBusy(
                    f"another cerebro process has been upgrading {path} for {UPGRADE_WAIT_SECONDS:.0f} s: let it "
                    "finish, or look for a stopped one (a suspended job, `jobs`)"
                ) from None
            time.sleep(0.1)


def has_no_tables(conn: Connection) -> bool:
    """A database with no table at all: what an init killed before its first table leaves (not a brain)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'").fetchone() is None


def needs_upgrade(raw: Connection, path: Path) -> bool:
    """True when the brain is behind head. Refuses a brain newer than this code, whatever its revision:
    Go cerebro may have moved ``schema_version`` past 7 on a brain we had already upgraded."""
    version, revision, _ = read_state(raw)
    if version is not None and version > UPSTREAM_SCHEMA_VERSION:
        raise SchemaTooNew(too_new_message(path, f"schema_version {version}"))
    return revision != HEAD_REVISION


def adopt_for_alembic_cli(connection: SAConnection, path: str) -> None:
    """``alembic -x brain=PATH …`` from a checkout: refuse a too-new brain and stamp a Go brain at its
    version first (as :func:`ensure_current` does), so the chain never replays over it from v1."""
    raw = dbapi_connection(connection)
    version, revision, _ = read_state(raw)
    if version is not None and version > UPSTREAM_SCHEMA_VERSION:
        raise SystemExit(too_new_message(Path(path), f"schema_version {version}"))
    if revision is None and version is not None and version >= 1:
        raw.execute("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)")
        raw.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (f"v{version}",))


def ensure_current(engine: Engine, path: Path) -> str | None:
    """Bring the brain at ``path`` to head. Returns the backup path when one was taken."""
    with upgrade_lock(path):
        raw = connect_raw(path, wal=False)
        try:
            version, revision, has_tables = read_state(raw)
        finally:
            raw.close()
        if revision == HEAD_REVISION:
            return None  # another process finished the upgrade while we waited for the lock
        if revision is None and not has_tables:
            _upgrade(engine, stamp_at=None)
            return None
        if revision is not None and not known_revision(revision):
            raise SchemaTooNew(too_new_message(path, f"revision {revision}"))
        if revision is None:
            if version is None:
                raise MigrationFailed(f"{path} is an SQLite file but not a cerebro brain (no schema_version)")
            if version > UPSTREAM_SCHEMA_VERSION:
                raise SchemaTooNew(too_new_message(path, f"schema_version {version}"))
            if version < 1:
                raise MigrationFailed(f"{path} has an invalid schema_version {version}")
        if revision is not None and _only_markers_after(revision):
            _upgrade(engine, stamp_at=None)  # one transaction writing the revision alone: nothing to back up
            return None
        label = f"pre-{revision or f'v{version}'}-upgrade"
        backup = reusable_backup(path, label)
        if backup is None:
            from cerebro.db.backup import backup as take_backup

            backup = take_backup(path, label)
            try:
                marker = backup.with_suffix(".fingerprint")
                marker.write_text(fingerprint(backup))
                os.chmod(marker, paths.FILE_MODE)
            except Exception:  # noqa: BLE001, S110 - the marker only saves disk space later
                pass
        from cerebro import logs

        logs.info("upgrading brain", brain=str(path), backup=str(backup))
        _upgrade(engine, stamp_at=None if revision else f"v{version}")
        return str(backup)


def _only_markers_after(revision: str) -> bool:
    """Whether every revision from ``revision`` to head is a marker (``MARKER = True`` in its script: it changes no
    table or row — only the revision older cerebros read, or an index) — an upgrade across them needs no backup.
    The alembic import this costs is paid by the upgrade anyway."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config(None))
    pending = [script for script in scripts.iterate_revisions(HEAD_REVISION, revision) if script.revision != revision]
    return bool(pending) and all(getattr(script.module, "MARKER", False) for script in pending)


def _upgrade(engine: Engine, *, stamp_at: str | None, target: str = "head") -> None:
    """Stamp (for a Go brain) and upgrade in ONE transaction: a failure leaves no trace, not even the stamp.

    Foreign keys go off before BEGIN (the pragma is a no-op inside a transaction); env.py sees the
    caller's transaction and runs inside it, ending with ``PRAGMA foreign_key_check``.
    """
    from alembic import command

    opened = engine.connect()
    try:
        ensure_wal(opened)
    except Exception as exc:  # a rollback-journal brain: switching it to WAL needs its write lock, without waiting
        opened.close()
        if "locked" in str(exc):
            from cerebro.errors import BrainBusy

            raise BrainBusy("the brain is being written by another process: try again once it is done") from exc
        raise
    with opened as plain:
        conn = plain.execution_options(**{WRITE_OPTION: True})
        raw = dbapi_connection(conn)
        raw.execute("PRAGMA foreign_keys = OFF")
        cfg = alembic_config(conn)
        try:
            with conn.begin():
                if stamp_at is not None:
                    conn.exec_driver_sql(
                        "CREATE TABLE IF NOT EXISTS alembic_version "
                        "(version_num VARCHAR(32) NOT NULL, CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
                    )
                    conn.exec_driver_sql("INSERT INTO alembic_version (version_num) VALUES (?)", (stamp_at,))
                command.upgrade(cfg, target)
        except (SchemaTooNew, MigrationFailed):
            raise
        except Exception as exc:
            raise MigrationFailed(f"brain upgrade failed and was rolled back: {exc}") from exc
        finally:
            raw.execute("PRAGMA foreign_keys = ON")
