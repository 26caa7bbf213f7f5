"""The transaction seam: reads never write, failed writes leave nothing, savepoints roll back alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import text

from cerebro import Brain
from cerebro.db.session import unit_of_work
from cerebro.errors import CerebroError, InvalidInput
from tests.conftest import snapshot


def _files_state(path: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for suffix in ("", "-wal"):
        f = Path(str(path) + suffix)
        if f.exists():
            st = f.stat()
            out[suffix] = (st.st_size, st.st_mtime_ns)
    return out


def test_reads_never_write(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        node_id = brain.add("a memory to read", type="concept")
    # Checkpoint so that the main file holds everything, then read through every read API.
    before_rows = snapshot(brain_path)
    with Brain.open(brain_path) as brain:
        brain.handle.engine.connect().exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").close()
    before_files = _files_state(brain_path)
    with Brain.open(brain_path) as brain:
        brain.get(node_id[:8])
        brain.list()
        brain.stats()
        brain.config_list()
        brain.config_get("prime_limit")
        brain.relations()
        brain.resolve_id(node_id)
    assert snapshot(brain_path) == before_rows
    after = _files_state(brain_path)
    assert after.get("")[0] == before_files.get("")[0]
    assert after.get("-wal", (0, 0))[0] == before_files.get("-wal", (0, 0))[0] == 0


def test_failed_write_leaves_brain_unchanged(brain: Brain, brain_path: Path) -> None:
    brain.add("kept")
    before = snapshot(brain_path)
    with pytest.raises(InvalidInput):
        brain.add("bad", importance=float("nan"))
    with pytest.raises(CerebroError):
        brain.supersede("0000", "replacement")  # no such node
    assert snapshot(brain_path) == before


def test_savepoint_rolls_back_alone(brain: Brain) -> None:
    with unit_of_work(brain.handle.engine, write=True) as session:
        session.execute(text("INSERT INTO schema_meta (key, value) VALUES ('outer', '1')"))
        with pytest.raises(RuntimeError), unit_of_work(brain.handle.engine, write=True, session=session):
            session.execute(text("INSERT INTO schema_meta (key, value) VALUES ('inner', '1')"))
            raise RuntimeError("boom")
    with unit_of_work(brain.handle.engine, write=False) as session:
        keys = {r[0] for r in session.execute(text("SELECT key FROM schema_meta")).all()}
    assert "outer" in keys
    assert "inner" not in keys


def test_writes_use_begin_immediate(brain: Brain) -> None:
    """A writer takes the write lock when its transaction begins — before its first write — so two writers
    never both read and then collide on the upgrade (a deferred BEGIN would let the probe below in)."""
    from cerebro.db.engine import connect_raw

    with unit_of_work(brain.handle.engine, write=True) as session:
        session.execute(text("SELECT COUNT(*) FROM nodes")).scalar_one()  # begun, nothing written yet
        other = connect_raw(brain.path)
        try:
            other.execute("PRAGMA busy_timeout = 0")
            with pytest.raises(Exception, match=r"locked|busy"):
                other.execute("BEGIN IMMEDIATE")
            # ...while a reader still reads (WAL).
            assert other.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 0
        finally:
            other.close()


def test_raw_writes_use_begin_immediate_too(brain: Brain) -> None:
    """A new memory is written on the raw connection (no ORM, ADR 0028): it takes the write lock when it begins."""
    from cerebro.db.engine import connect_raw

    seen: list[int] = []

    def work(conn) -> None:
        conn.execute("SELECT COUNT(*) FROM nodes").fetchone()  # begun, nothing written yet
        other = connect_raw(brain.path)
        try:
            other.execute("PRAGMA busy_timeout = 0")
            with pytest.raises(Exception, match=r"locked|busy"):
                other.execute("BEGIN IMMEDIATE")
            seen.append(other.execute("SELECT COUNT(*) FROM nodes").fetchone()[0])  # a reader still reads
        finally:
            other.close()

    brain.handle.write_raw(work)
    assert seen == [0]


def test_a_failed_raw_write_leaves_nothing_and_the_connection_usable(brain: Brain) -> None:
    from cerebro import clock, values

    def work(conn) -> None:
        brain.handle.store.inserts.node(
            conn,
            content="half written",
            type="episode",
            subtype=None,
            importance=0.5,
            metadata=None,
            provenance_root=False,
            origin=values.Origin.from_environment("api"),
            embedding_model="",
            now=clock.now(),
        )
        raise InvalidInput("refused after the insert")

    with pytest.raises(InvalidInput, match="refused after the insert"):
        brain.handle.write_raw(work)
    assert brain.stats().total_nodes == 0
    brain.add("the next write works")
    assert brain.stats().total_nodes == 1


def test_a_raw_write_never_commits_a_snapshot_it_is_called_inside(brain: Brain) -> None:
    with brain.handle.snapshot(), pytest.raises(RuntimeError, match="inside another transaction"):
        brain.handle.write_raw(lambda conn: None)


def test_the_first_add_switches_a_rollback_journal_brain_to_wal(brain_path: Path) -> None:
    """A restored copy is left in rollback-journal mode; the first write switches it to WAL (readers then never
    wait for the writer), as the ORM's connections do."""
    from cerebro.db.engine import connect_raw

    conn = connect_raw(brain_path, wal=False)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    with Brain.open(brain_path) as brain:
        brain.add("written on the raw connection")
    conn = connect_raw(brain_path, wal=False)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_a_lock_error_retries_the_whole_unit_of_work() -> None:
    """busy_timeout cannot help a lock upgrade SQLite refuses at once: the retry layer re-runs the work."""
    import sqlite3

    from cerebro import retry

    calls = []

    def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert retry.run_with_retry(work) == "done" and len(calls) == 3


def test_a_lock_held_past_every_retry_is_exit_7_and_changes_nothing(brain_path: Path, tmp_path: Path) -> None:
    """Another process holds the brain's write lock longer than cerebro waits: `add` gives up with exit 7 and
    its one-line message — not an internal error — and the brain is as it was."""
    import subprocess
    import sys

    from cerebro import paths
    from cerebro.db.engine import connect_raw

    project = tmp_path / "locked-project"
    project.mkdir()
    target = paths.project_brain_path(project)
    Brain.init(target, embed_provider="none")
    before = snapshot(target)
    holder = connect_raw(target)
    holder.execute("BEGIN IMMEDIATE")
    try:
        env = {**os.environ, "CEREBRO_BUSY_TIMEOUT_MS": "20"}
        ran = subprocess.run(
            [sys.executable, "-m", "cerebro", "add", "blocked", "-p", str(project)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        holder.rollback()
        holder.close()
    assert ran.returncode == 7, ran
    assert ran.stderr.strip() == (
        "cerebro: error: the brain stayed locked by other writers; try again, or look for a stuck cerebro process"
    )
    assert snapshot(target) == before


def test_brain_files_are_private(brain_path: Path, isolated_home: Path) -> None:
    with Brain.open(brain_path) as brain:
        brain.add("secret")
        assert (os.stat(brain_path).st_mode & 0o777) == 0o600
        wal = Path(str(brain_path) + "-wal")
        if wal.exists():
            assert (os.stat(wal).st_mode & 0o777) == 0o600
    assert (os.stat(brain_path.parent).st_mode & 0o777) == 0o700
    assert (os.stat(isolated_home).st_mode & 0o777) == 0o700


def test_journal_mode_is_wal_and_foreign_keys_on(brain: Brain) -> None:
    with brain.handle.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
        assert conn.exec_driver_sql("SELECT vec_version()").scalar().startswith("v")


def test_a_best_effort_write_that_fails_is_rolled_back_and_leaves_the_connection_as_it_was(brain: Brain) -> None:
    """Bookkeeping after a read (access touches) gives up quietly: False, nothing written, the connection out of
    its transaction and back on the normal lock wait — the next one works."""
    from cerebro.db.engine import BUSY_TIMEOUT_MS

    node_id = brain.add("touched after a read")
    h = brain.handle

    def fails(conn) -> None:
        conn.execute("UPDATE nodes SET importance = 0.9")
        raise ValueError("half way")

    assert h.best_effort(fails) is False
    assert not h.raw.in_transaction
    assert h.raw.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    assert brain.get(node_id).node.importance == 0.5
    assert h.best_effort(lambda conn: conn.execute("UPDATE nodes SET importance = 0.7")) is True
    assert brain.get(node_id).node.importance == 0.7


def test_a_best_effort_write_gives_up_when_the_brain_is_locked(brain: Brain) -> None:
    from cerebro.db.engine import BUSY_TIMEOUT_MS, connect_raw

    node_id = brain.add("touched after a read")
    other = connect_raw(brain.path)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock past the quarter second
    try:
        assert brain.handle.best_effort(lambda conn: conn.execute("UPDATE nodes SET importance = 0.7")) is False
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert brain.handle.raw.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    assert brain.get(node_id).node.importance == 0.5


def test_a_raw_write_that_sqlite_already_rolled_back_raises_its_own_error(brain: Brain) -> None:
    """SQLite ends the transaction itself on some failures (a full disk, an I/O error): the caller then sees that
    error, not a second one from a ROLLBACK with no transaction to roll back."""

    def fails_after_sqlite_rolled_back(conn) -> None:
        conn.execute("ROLLBACK")  # as SQLite does on SQLITE_FULL
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        brain.handle.write_raw(fails_after_sqlite_rolled_back)
    assert not brain.handle.raw.in_transaction
    brain.add("the next write works")


def test_a_brain_whose_open_time_check_fails_is_closed_not_leaked(brain_path: Path, monkeypatch) -> None:
    """Opening reads the sql-dump mark after the connections are made: a failure there (a disk error) closes them
    rather than leaving a handle nobody holds."""
    from cerebro.brain.handle import Handle
    from cerebro.store import reads

    closed: list[Handle] = []
    real_close = Handle.close

    def close(self: Handle) -> None:
        closed.append(self)
        real_close(self)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(Handle, "close", close)
    monkeypatch.setattr(reads, "meta", broken)
    with pytest.raises(OSError, match="disk I/O error"):
        Brain.open(brain_path)
    assert len(closed) == 1
