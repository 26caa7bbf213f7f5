"""Backups and sqlite exports (cerebro.db.backup): where they go, what they are called, and that nothing is
ever overwritten."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.db import backup
from cerebro.errors import InvalidInput


@pytest.fixture
def brain_file(tmp_path: Path) -> Path:
    path = tmp_path / "proj.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        brain.add("worth keeping")
    return path


def test_backups_are_named_by_brain_label_and_utc_second_then_numbered(
    brain_file: Path, isolated_home: Path, pinned_clock
) -> None:
    folder = isolated_home / "backups"
    made = [backup.backup(brain_file) for _ in range(3)] + [backup.backup(brain_file, "pre-init")]
    assert made == [
        folder / "proj-20260311T100000Z.sqlite",
        folder / "proj-20260311T100000Z-1.sqlite",
        folder / "proj-20260311T100000Z-2.sqlite",
        folder / "proj-pre-init-20260311T100000Z.sqlite",
    ]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for copy in made:
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600
        conn = sqlite3.connect(copy)
        assert conn.execute("SELECT content FROM nodes").fetchall() == [("worth keeping",)]
        conn.close()


def test_a_backup_whose_name_another_one_took_meanwhile_takes_the_next(
    brain_file: Path, isolated_home: Path, pinned_clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two backups in one second (parallel commands): the name is chosen before the copy, so both chose the same one,
    and the second to finish failed with "already exists: choose another path" — a path the user never gave."""
    from cerebro.db import engine

    folder = isolated_home / "backups"
    taken = folder / "proj-20260311T100000Z.sqlite"
    copy_database = engine.copy_database

    def while_another_backup_finishes_first(source, target, **kwargs):
        if not taken.exists():
            taken.write_bytes(b"the other backup")
        copy_database(source, target, **kwargs)

    monkeypatch.setattr(engine, "copy_database", while_another_backup_finishes_first)
    assert backup.backup(brain_file) == folder / "proj-20260311T100000Z-1.sqlite"
    assert taken.read_bytes() == b"the other backup"  # never overwritten


def test_a_copy_never_overwrites_and_makes_its_folder_private(brain_file: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken.sqlite"
    taken.write_text("keep me")
    with pytest.raises(InvalidInput) as refused:
        backup.copy(brain_file, taken)
    assert str(refused.value) == f"{taken} already exists: choose another path (nothing was overwritten)"
    assert taken.read_text() == "keep me"
    nested = tmp_path / "new" / "deeper" / "copy.sqlite"
    backup.copy(brain_file, nested)
    assert stat.S_IMODE(nested.parent.stat().st_mode) == 0o700


def test_a_failed_copy_leaves_no_file(brain_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.sqlite"
    from cerebro.db.engine import driver

    with pytest.raises(driver().OperationalError, match="unable to open database file"):
        backup.copy(tmp_path / "missing" / "none.sqlite", target)
    assert not target.exists()


def test_a_copy_replaces_its_target_only_when_asked(brain_file: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken.sqlite"
    taken.write_text("an older copy")
    with pytest.raises(InvalidInput):
        backup.copy(brain_file, taken)
    assert taken.read_text() == "an older copy"
    backup.copy(brain_file, taken, overwrite=True)
    conn = sqlite3.connect(taken)
    assert conn.execute("SELECT content FROM nodes").fetchall() == [("worth keeping",)]
    conn.close()


def test_copying_a_rollback_journal_brain_leaves_the_source_as_it_was(brain_file: Path, tmp_path: Path) -> None:
    conn = sqlite3.connect(brain_file)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    backup.copy(brain_file, tmp_path / "copy.sqlite")
    conn = sqlite3.connect(brain_file)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # a copy never writes to its source
    conn.close()


def test_an_unreadable_marker_does_not_hide_an_older_backup_of_the_same_state(
    brain_file: Path, isolated_home: Path
) -> None:
    from cerebro.db.migrate import fingerprint, reusable_backup

    folder = isolated_home / "backups"
    older = backup.copy(brain_file, folder / "proj-pre-upgrade-20260101T000000Z.sqlite")
    older.with_suffix(".fingerprint").write_text(fingerprint(brain_file))
    newer = backup.copy(brain_file, folder / "proj-pre-upgrade-20260102T000000Z.sqlite")
    newer.with_suffix(".fingerprint").mkdir()  # unreadable as a file
    assert reusable_backup(brain_file, "pre-upgrade") == older


def test_settle_refuses_a_brain_another_connection_has_open_and_leaves_it_as_it_was(brain_file: Path) -> None:
    """Before a brain's file is moved (migrate --realpath-hashes, brains move): a writer still attached would keep
    writing into a log the moved file no longer has."""
    from cerebro.db.engine import connect_raw
    from cerebro.errors import BrainBusy

    other = connect_raw(brain_file)  # an agent with the brain open
    try:
        other.execute("UPDATE nodes SET importance = 0.7")
        with pytest.raises(BrainBusy, match="open in another process"):
            backup.settle(brain_file)
        assert other.execute("SELECT importance FROM nodes").fetchone()[0] == 0.7
    finally:
        other.close()
    backup.settle(brain_file)  # the last connection gone: the log is folded in, nothing is left beside the file
    assert [p.name for p in brain_file.parent.iterdir() if p.name.startswith(brain_file.name)] == [brain_file.name]
    conn = sqlite3.connect(brain_file)
    assert conn.execute("SELECT importance FROM nodes").fetchone()[0] == 0.7
    conn.close()


def test_settle_leaves_a_rollback_journal_brain_in_its_mode(brain_file: Path) -> None:
    conn = sqlite3.connect(brain_file)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    backup.settle(brain_file)
    conn = sqlite3.connect(brain_file)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_a_killed_backups_unfinished_copy_is_swept_by_the_next(brain_file: Path, isolated_home: Path) -> None:
    """A backup killed half way left `.proj-….sqlite.<random>.partial` (a full-size copy of every memory, secrets
    included) that nothing ever removed (a review). One still being written (recent) is left alone."""
    import os
    import time

    folder = isolated_home / "backups"
    folder.mkdir(mode=0o700)
    old, journal, fresh = (
        folder / name
        for name in (
            ".proj-x.sqlite.ab12.partial",
            ".proj-x.sqlite.ab12.partial-journal",
            ".proj-y.sqlite.cd34.partial",
        )
    )
    for leftover in (old, journal, fresh):
        leftover.write_bytes(b"every memory")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    os.utime(journal, (hours_ago, hours_ago))
    backup.backup(brain_file)
    assert not old.exists() and not journal.exists() and fresh.exists()
