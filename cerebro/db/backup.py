"""Consistent copies of a brain file: backups (before an upgrade, an ``init --force``, a purge, or asked for)
and ``export --format sqlite``. One copy routine, one naming rule.

A copy is taken with SQLite's backup API, so it is consistent while other processes write; it is private
(0600) from the moment it exists, and a failed copy leaves no file where a user would look for a backup.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cerebro import clock, paths


def backup_path(brain: Path, label: str | None = None) -> Path:
    """A free name in the backups folder: ``<stem>[-<label>]-<UTC time>.sqlite``, then ``…-1``, ``…-2``
    when two backups fall within one second."""
    paths.ensure_private_dir(paths.backups_dir())
    _sweep_partial_copies()
    prefix = f"{brain.stem}-{label}" if label else brain.stem
    stamp = clock.now().strftime("%Y%m%dT%H%M%SZ")
    target = paths.backups_dir() / f"{prefix}-{stamp}.sqlite"
    counter = 1
    while target.exists():
        target = paths.backups_dir() / f"{prefix}-{stamp}-{counter}.sqlite"
        counter += 1
    return target


PARTIAL_HOURS = 1.0  # a copy unfinished for this long was killed: no copy still being written is this old


def _sweep_partial_copies() -> None:
    """Remove the unfinished copies a killed backup left in the backups folder (``.<name>.<random>.partial`` and its
    journal): full-size copies of every memory, secrets included, that nothing would ever remove (a review)."""
    import time

    cutoff = time.time() - PARTIAL_HOURS * 3600
    for leftover in paths.backups_dir().glob(".*.partial*"):
        try:
            if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:  # another process's, gone meanwhile: nothing to do
            continue


def copy(source: Path, target: Path, *, overwrite: bool = False, leave_out: Sequence[str] = ()) -> Path:
    """Copy the brain at ``source`` to ``target`` (0600), in one step: a partial copy is never left behind, and an
    existing ``target`` is refused unless ``overwrite``. ``leave_out``: settings (``schema_meta`` keys) not copied."""
    from cerebro.db.engine import copy_database

    target = Path(target)
    with paths.written_in_one_step(target, overwrite=overwrite) as partial:
        copy_database(source, partial, leave_out=leave_out)
    return target


def backup(brain: Path, label: str | None = None) -> Path:
    """A backup of ``brain`` in the backups folder (see :func:`backup_path`); returns its path. Two backups started
    within one second may choose one name: the one that finds it taken when its copy is done takes the next."""
    from cerebro.errors import TargetExists

    for _attempt in range(99):
        try:
            return copy(brain, backup_path(brain, label))
        except TargetExists:
            continue
    return copy(brain, backup_path(brain, label))


def settle(path: Path) -> None:
    """Fold a brain's WAL into its file, so that the file alone is the whole brain (before it is moved). SQLite
    removes the -wal and -shm files when the last connection closes; if either remains, another connection has the
    brain open, and moving the file under it would split its writes from the brain: refused (BrainBusy)."""
    from cerebro.db.engine import connect_raw
    from cerebro.errors import BrainBusy

    conn = connect_raw(path, wal=False)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    if any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm")):
        raise BrainBusy(f"{path} is open in another process (an agent, the MCP server): close it, then try again")
