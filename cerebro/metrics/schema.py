"""The metrics database's schema history: bring a file to head when it is opened (ADR 0014).

Its own Alembic script directory (``cerebro/metrics/migrations``), apart from the brain's chain: the two
files are versioned independently, and a broken metrics file never blocks a brain upgrade.

Opening (:func:`ensure_current`), the cheap path first:
- at head → one ``SELECT`` on a raw connection, and Alembic/SQLAlchemy are never imported (the session-end
  hook and the stop-guard open this file);
- empty / new file → the whole chain runs;
- written by upstream (its tables, no ``alembic_version``) → stamped ``m0001`` (upstream's schema,
  verbatim), then upgraded;
- a revision this code does not know → refused (:class:`SchemaTooNew`), the file left untouched.

No backup is taken before an upgrade, unlike brains: the chain runs in one transaction (a failure leaves
the file as it was) and every row can be re-derived from the transcripts with ``cerebro ingest --force``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cerebro.db.engine import WRITE_OPTION, connect_raw, dbapi_connection
from cerebro.db.migrate import upgrade_lock
from cerebro.errors import MigrationFailed, SchemaTooNew

if TYPE_CHECKING:
    from alembic.config import Config

    from cerebro.db.types import Connection, SAConnection

__all__ = ["HEAD_REVISION", "KNOWN_REVISIONS", "WRITE_OPTION", "ensure_current", "script_location"]

# In chain order. A test checks this against the script directory, so opening can refuse a too-new file
# without importing Alembic.
KNOWN_REVISIONS = ("m0001", "m0002", "m0003")
HEAD_REVISION = KNOWN_REVISIONS[-1]
ADOPTED_REVISION = "m0001"  # what a database written by upstream already is
UPSTREAM_TABLES = frozenset({"turn_metrics", "tool_calls", "ingest_state"})


def script_location() -> Path:
    return Path(__file__).resolve().parent / "migrations"


def read_state(raw: Connection) -> tuple[str | None, set[str]]:
    """(alembic revision, table names), with plain SELECTs: never a write."""
    tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
    revision = None
    if "alembic_version" in tables:
        row = raw.execute("SELECT version_num FROM alembic_version").fetchone()
        revision = row[0] if row else None
    return revision, tables - {"sqlite_sequence", "alembic_version"}


def too_new_message(path: Path | str, revision: str) -> str:
    return (
        f"metrics database {path} was written by a newer cerebro (revision {revision}); "
        "upgrade cerebro (pip install -U cerebro-memory)"
    )


def _stamp_for(path: Path | str, revision: str | None, tables: set[str]) -> tuple[bool, str | None]:
    """(needs an upgrade, revision to stamp first), or an error for a file we must not touch."""
    if revision == HEAD_REVISION:
        return False, None
    if revision is not None:
        if revision not in KNOWN_REVISIONS:
            raise SchemaTooNew(too_new_message(path, revision))
        return True, None
    if not tables:
        return True, None
    if tables >= UPSTREAM_TABLES:
        return True, ADOPTED_REVISION
    raise MigrationFailed(f"{path} is an SQLite file but not a cerebro metrics database")


def check_current(raw: Connection, path: Path) -> bool:
    """True when the file is at head; raises for a file we refuse. The cheap path of every open."""
    revision, tables = read_state(raw)
    needed, _ = _stamp_for(path, revision, tables)
    return not needed


def ensure_current(path: Path) -> None:
    """Bring the metrics database at ``path`` to head (it must exist, possibly empty)."""
    with upgrade_lock(path, "metrics.lock"):  # beside the brains' upgrade locks
        raw = connect_raw(path, wal=False)
        try:
            revision, tables = read_state(raw)
        finally:
            raw.close()
        needed, stamp_at = _stamp_for(path, revision, tables)
        if needed:  # re-checked under the lock: another process may have finished meanwhile
            _upgrade(path, stamp_at=stamp_at)


def _alembic_config(connection: SAConnection) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(script_location()))
    cfg.attributes["connection"] = connection
    return cfg


def _stamp(conn: SAConnection, revision: str) -> None:
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS alembic_version "
        "(version_num VARCHAR(32) NOT NULL, CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
    )
    conn.exec_driver_sql("INSERT INTO alembic_version (version_num) VALUES (?)", (revision,))


def _upgrade(path: Path, *, stamp_at: str | None) -> None:
    """Stamp (an upstream file) and upgrade in ONE transaction: a failure leaves no trace, not even the stamp."""
    from alembic import command
    from cerebro.db.engine import create_engine

    engine = create_engine(path)
    try:
        with engine.connect() as plain:
            conn = plain.execution_options(**{WRITE_OPTION: True})
            try:
                with conn.begin():
                    if stamp_at is not None:
                        _stamp(conn, stamp_at)
                    command.upgrade(_alembic_config(conn), "head")
            except (SchemaTooNew, MigrationFailed):
                raise
            except Exception as exc:
                raise MigrationFailed(f"metrics database upgrade failed and was rolled back: {exc}") from exc
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- alembic -n metrics (checkout)


def adopt_for_alembic_cli(connection: SAConnection, db: str) -> None:
    """``alembic -n metrics -x db=PATH …``: refuse a too-new file and stamp an upstream one at m0001 first,
    as :func:`ensure_current` does, so the chain never replays over it from base."""
    raw = dbapi_connection(connection)
    revision, tables = read_state(raw)
    try:
        _, stamp_at = _stamp_for(db, revision, tables)
    except (SchemaTooNew, MigrationFailed) as exc:
        raise SystemExit(str(exc)) from None
    if stamp_at is not None:
        raw.execute("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)")
        raw.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (stamp_at,))
