"""Backups taken before an upgrade are reused only for the very same state (``fingerprint``): a failed upgrade
retried by every hook must not fill the disk, and a changed brain must never be "backed up" by an old copy."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from cerebro.db.migrate import fingerprint


@pytest.fixture
def brain(kit, tmp_path: Path) -> Path:
    return kit.load("v4", tmp_path / "brain.sqlite")


def _changed(path: Path, sql: str, *args: object) -> str:
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()
    return fingerprint(path)


def test_a_copy_has_the_fingerprint_of_its_original(brain: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite"
    shutil.copy(brain, copy)
    assert fingerprint(copy) == fingerprint(brain)


@pytest.mark.parametrize(
    ("what", "sql", "args"),
    [
        ("a meta value", "UPDATE schema_meta SET value = 'x' WHERE key = 'schema_version'", ()),
        ("a node", "DELETE FROM nodes WHERE rowid = (SELECT MAX(rowid) FROM nodes)", ()),
        ("an edge", "DELETE FROM edges WHERE rowid = (SELECT MIN(rowid) FROM edges)", ()),
        (
            "an archived node",
            "INSERT INTO nodes_archive (id, type, content, archive_reason) VALUES ('zz', 'episode', 'x', 'decayed')",
            (),
        ),
        (
            "only the size of the content",
            "UPDATE nodes SET content = ? WHERE rowid = (SELECT MIN(rowid) FROM nodes)",
            ("x" * 200_000,),
        ),
        # What Go cerebro's update and recall do between two attempts at an upgrade (from a review: the backup kept
        # was a copy from before them). Same length, same rows, same pages.
        (
            "an update of the same length",
            "UPDATE nodes SET content = upper(content), updated_at = '2099-01-01 00:00:00' "
            "WHERE rowid = (SELECT MIN(rowid) FROM nodes)",
            (),
        ),
        (
            "a recall's access",
            "UPDATE nodes SET access_count = access_count + 5 WHERE rowid = (SELECT MIN(rowid) FROM nodes)",
            (),
        ),
        (
            "an importance",
            "UPDATE nodes SET importance = importance / 2 WHERE rowid = (SELECT MAX(rowid) FROM nodes)",
            (),
        ),
        ("a status", "UPDATE nodes SET status = 'superseded' WHERE rowid = (SELECT MAX(rowid) FROM nodes)", ()),
        ("an edge's weight", "UPDATE edges SET weight = weight + 1 WHERE rowid = (SELECT MIN(rowid) FROM edges)", ()),
    ],
)
def test_any_change_of_state_changes_the_fingerprint(brain: Path, what: str, sql: str, args: tuple) -> None:
    before = fingerprint(brain)
    assert _changed(brain, sql, *args) != before, what


def test_fingerprinting_a_rollback_journal_copy_leaves_it_one_file(brain: Path) -> None:
    conn = sqlite3.connect(brain)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    fingerprint(brain)
    conn = sqlite3.connect(brain)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # never switched to WAL by a read
    conn.close()


def test_one_brain_reached_through_a_symlink_is_one_upgrade_lock(tmp_path: Path, isolated_home: Path) -> None:
    """Keyed by the absolute path, two processes upgrading one brain by two paths (a symlinked CEREBRO_HOME) both went
    ahead: a backup name collision, or Alembic's "overlaps with other requested revisions" (from a review)."""
    import threading

    from cerebro.db.migrate import upgrade_lock

    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    entered = threading.Event()

    def upgrade_through_the_link() -> None:
        with upgrade_lock(tmp_path / "link" / "brain.sqlite"):
            entered.set()

    with upgrade_lock(real / "brain.sqlite"):
        other = threading.Thread(target=upgrade_through_the_link)
        other.start()
        assert not entered.wait(0.5)  # waits for this one's lock
    other.join(10)
    assert entered.is_set()
