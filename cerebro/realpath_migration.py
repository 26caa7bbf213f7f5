"""``cerebro migrate --realpath-hashes``: re-key brains named by the hash of a path through a symlink.

Older cerebro hashed the absolute path; brains are now keyed by the hash of the *real* path, so a project
opened through a symlink and directly shares one brain (upstream's ADR-0002). For every directory under
the scan roots whose absolute path differs from its real path:
- only the old brain exists (Case A): fold its write-ahead log into it, then rename it (one atomic step);
- both exist (Case C): back both up, merge the old into the new (its memories, links and archive imported with
  ``skip``, its inbox candidates copied as they are), delete the old — refused while another process has the old
  brain open (its later writes would be deleted with it).
Symlinked sub-directories are skipped; directories are de-duplicated by real path; a lock file keeps two
runs apart; running it again finds nothing to do.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cerebro import clock, paths
from cerebro.db.backup import settle
from cerebro.errors import MigrationLocked
from cerebro.portability import INBOX_COLUMNS

if TYPE_CHECKING:
    from cerebro.brain.handle import Handle

DEFAULT_MAX_DEPTH = 4


@dataclass
class MigrationReport:
    scanned: int = 0
    renamed: list[dict[str, str]] = field(default_factory=list)
    merged: list[dict[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "scanned": self.scanned,
            "renamed": self.renamed,
            "merged": self.merged,
            "errors": self.errors,
            "dry_run": self.dry_run,
        }


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def walk(roots: list[Path], max_depth: int) -> Iterator[Path]:
    """Directories under the roots (each root itself too, even when it is a symlink), symlinked
    sub-directories skipped, each real directory once."""
    seen: set[str] = set()
    for root in roots:
        stack = [(Path(os.path.abspath(root)), 0)]
        while stack:
            directory, depth = stack.pop()
            try:
                real = os.path.realpath(directory, strict=True)
            except OSError:
                continue
            if real in seen:
                continue
            seen.add(real)
            yield directory
            if depth >= max_depth:
                continue
            try:
                children = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
            except OSError:
                continue
            for entry in children:
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                    stack.append((Path(entry.path), depth + 1))


class _Lock:
    """One migration at a time: a lock file holding its owner's process id. A lock whose owner is gone (a migration
    killed with -9) is taken over, not left to refuse every later run."""

    def __init__(self) -> None:
        self.path = paths.home() / "migrate.lock"

    def __enter__(self) -> _Lock:
        paths.ensure_private_dir(self.path.parent)
        for attempt in (1, 2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, paths.FILE_MODE)
            except FileExistsError:
                if attempt == 1 and not _owner_alive(self.path):
                    self.path.unlink(missing_ok=True)
                    continue
                raise MigrationLocked(
                    f"another migration is in progress (lock at {self.path}, held by a running process)"
                ) from None
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            break
        return self

    def __exit__(self, *exc: object) -> None:
        self.path.unlink(missing_ok=True)


def _owner_alive(lock: Path) -> bool:
    """Whether the process named in ``lock`` still runs (an unreadable or foreign lock counts as held)."""
    try:
        pid = int(lock.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def _fresh_folder(name: str) -> Path:
    """A new private folder in the backups folder: ``name``, or ``name-1``, ``name-2`` … when a run in the same second
    made one (its backups are never overwritten)."""
    parent = paths.ensure_private_dir(paths.backups_dir())
    for number in range(1000):
        folder = parent / (name if number == 0 else f"{name}-{number}")
        try:
            folder.mkdir(mode=0o700)  # the umask can only take bits away
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"{parent / name} and 999 more exist: remove some of them")


def _inbox(h: Handle) -> list[dict[str, Any]]:
    """A brain's inbox candidates, as rows (no export carries them: they are quarantined)."""
    with h.snapshot() as conn:
        rows = h.store.reads.rows(conn, "inbox_candidates", INBOX_COLUMNS, "id")
    return [dict(zip(INBOX_COLUMNS, row, strict=True)) for row in rows]


def _put_inbox(h: Handle, rows: list[dict[str, Any]]) -> int:
    """The candidates written into ``h`` in one transaction, each as it was (one whose id is there already left)."""
    return h.write(lambda session: sum(h.store.bulk.put_inbox(session, row, INBOX_COLUMNS) for row in rows))


def migrate(
    roots: list[Path],
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> MigrationReport:
    from cerebro.api import Brain

    report = MigrationReport(dry_run=dry_run)
    say = progress or (lambda line: None)
    projects = paths.projects_dir()
    with _Lock():
        backup_dir: Path | None = None
        for directory in walk(roots, max_depth):
            absolute = os.path.abspath(directory)
            real = os.path.realpath(absolute)
            if absolute == real:
                continue
            report.scanned += 1
            old, new = projects / f"{_hash(absolute)}.sqlite", projects / f"{_hash(real)}.sqlite"
            if not old.exists():
                continue  # Case B (already migrated) or D (no brain)
            entry = {"project": absolute, "old": old.stem, "new": new.stem}
            try:
                if not new.exists():
                    say(f"  [rename] {old.stem[:12]} → {new.stem[:12]} (project: {absolute})")
                    if not dry_run:
                        # Fold the write-ahead log into the file first (refused if another process has the brain
                        # open): then one rename moves the whole brain, and a kill at any point leaves it whole
                        # under one name or the other, never its recent writes behind in an orphaned -wal.
                        settle(old)
                        os.replace(old, new)
                    report.renamed.append(entry)
                    continue
                say(f"  [merge] {old.stem[:12]} → {new.stem[:12]} (project: {absolute})")
                if not dry_run:
                    if backup_dir is None:
                        backup_dir = _fresh_folder(f"migrate-{clock.now().strftime('%Y-%m-%dT%H-%M-%S')}")
                    settle(old)  # BrainBusy while another process has it open: its later writes would be lost
                    with Brain.open(old) as old_brain:
                        old_brain.backup(backup_dir / old.name)
                        lines = old_brain.export("jsonl")  # memories, links and the archive (json has no archive)
                        inbox = _inbox(old_brain.handle)
                    with Brain.open(new) as target:
                        target.backup(backup_dir / new.name)
                        dump = backup_dir / f"{old.stem}.jsonl"
                        fd = os.open(dump, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, paths.FILE_MODE)
                        with os.fdopen(fd, "w", encoding="utf-8") as handle:
                            handle.write("".join(line + "\n" for line in lines))
                        target.import_file(dump, on_conflict="skip")
                        _put_inbox(target.handle, inbox)
                    settle(old)  # still no one else's: nothing written since the export is deleted
                    for suffix in ("", "-wal", "-shm"):
                        Path(str(old) + suffix).unlink(missing_ok=True)
                report.merged.append(entry)
            except Exception as exc:  # noqa: BLE001 - one project's trouble must not stop the rest
                report.errors.append(f"{absolute}: {exc}")
    return report
