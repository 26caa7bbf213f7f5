"""What every doctor check shares: the result type, statuses, budgets, and the helpers that let doctor
inspect without writing (byte copies of databases, a scratch CEREBRO_HOME for subprocesses)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
_RANK = {SKIP: 0, OK: 0, WARN: 1, FAIL: 2}

CHECK_NAMES = (
    "cli-on-path",
    "hooks",
    "hook-latency",
    "brain",
    "embedder",
    "file-modes",
    "metrics",
    "end-of-session",
)

# Milliseconds (warn above, fail above) per Claude Code hook event. SessionEnd hooks get 1.5 s from the client
# whatever their declared timeout; the others get the timeout we declare (templates.TIMEOUTS), and a prime
# slower than a second is felt on every prompt.
SESSION_END_BUDGET_MS = (750.0, 1500.0)
PRIME_WARN_MS = 1000.0
LATENCY_RUNS = 3
# A transcript changed this long ago and still not ingested is not the live session's: the end-of-session
# ingest missed it.
INGEST_GRACE_SECONDS = 3600.0


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail | skip
    detail: str
    fix: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            **self.extra,
        }


def default_budgets() -> dict[str, tuple[float, float]]:
    """``{event: (warn_ms, fail_ms)}`` — the client's limits for each hook event we wire."""
    from cerebro.integration.claude_code import templates

    budgets = {"SessionEnd": SESSION_END_BUDGET_MS}
    for event in ("SessionStart", "UserPromptSubmit"):
        budgets[event] = (PRIME_WARN_MS, float(templates.TIMEOUTS[event]) * 1000.0)
    return budgets


def passed(checks: list[Check]) -> bool:
    """No check failed (warnings allowed)."""
    return all(c.status != FAIL for c in checks)


def _guard(name: str, work: Callable[[], Check]) -> Check:
    """A check that crashes is reported as failing, never takes the others down."""
    try:
        return work()
    except Exception as exc:  # noqa: BLE001 - doctor reports; it does not crash
        if os.environ.get("CEREBRO_LOG", "").lower() == "debug":
            import traceback

            traceback.print_exc()
        return Check(
            name,
            FAIL,
            f"the check itself failed: {exc.__class__.__name__}: {_flat(str(exc))}",
            "CEREBRO_LOG=debug cerebro doctor",
        )


# --------------------------------------------------------------------------- helpers


class _Findings:
    """Problems found by one check: the worst status wins, details and fixes are kept in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.status = OK
        self.details: list[str] = []
        self.fixes: list[str] = []

    def add(self, status: str, detail: str, fix: str | None = None) -> None:
        if _RANK[status] > _RANK[self.status]:
            self.status = status
        self.details.append(detail)
        if fix and fix not in self.fixes:
            self.fixes.append(fix)

    def check(self, ok_detail: str, **extra: object) -> Check:
        if self.status == OK:
            return Check(self.name, OK, ok_detail, None, extra)
        return Check(
            self.name,
            self.status,
            "; ".join(self.details),
            "; ".join(self.fixes) or None,
            {**extra, "fixes": list(self.fixes)},
        )


def _flat(text: str) -> str:
    return " ".join(str(text).split())


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _q(value: object) -> str:
    import shlex

    return shlex.quote(str(value))


def _cmd(project: Path, command: str) -> str:
    """``command`` as it must be typed to act on ``project``: with ``-p`` unless it is the project cerebro
    would pick anyway (the current directory, no ``$CLAUDE_PROJECT_DIR`` pointing elsewhere)."""
    from cerebro import paths

    try:
        here = paths.canonical_project_path(paths.resolve_project_dir(None))
    except OSError:
        here = None
    if here == paths.canonical_project_path(project):
        return command
    return f"{command} -p {_q(project)}"


def _reads(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _edit(path: Path) -> str:
    return f"${{EDITOR:-vi}} {_q(str(path))}"


def _n(count: int, word: str, plural: str | None = None) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {word if count == 1 else (plural or word + 's')}"


@contextmanager
def _scratch_home() -> Iterator[Path]:
    """An empty, private CEREBRO_HOME in a temporary folder, deleted afterwards (with everything in it)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cerebro-doctor-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir(mode=0o700)
        yield home


def _stamps(database: Path, wal: Path) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """(size, mtime) of a database file and of its -wal (None without one): what a writer changes."""
    info = database.stat()
    try:
        log = wal.stat()
    except FileNotFoundError:
        return (info.st_size, info.st_mtime_ns), None
    return (info.st_size, info.st_mtime_ns), (log.st_size, log.st_mtime_ns)


def _copy_into(database: Path, home: Path) -> Path:
    """Copy a database file into ``home/projects/`` (its name kept: a cerebro pointed at ``home`` finds it).

    Even a read leaves traces beside a WAL database (SQLite creates ``-wal``/``-shm`` for the reader, and the last
    connection to close folds the log in and deletes it), so the original and its log are only read as bytes. When
    a writer keeps changing them meanwhile, SQLite's backup API makes the copy instead: consistent, through the
    WAL. Raises the driver's DatabaseError for a file that is not SQLite only on that second path."""
    import shutil

    target = home / "projects" / database.name
    target.parent.mkdir(mode=0o700, exist_ok=True)
    wal = Path(str(database) + "-wal")
    copied_wal = Path(str(target) + "-wal")
    # The file and, when there is one, its -wal as bytes (a crashed writer's log: SQLite recovers it in the copy, where
    # opening the original would fold it in and delete it), as long as neither changed while they were read.
    for _attempt in range(3):
        before = _stamps(database, wal)
        shutil.copyfile(database, target)
        if before[1] is not None:
            shutil.copyfile(wal, copied_wal)
        if _stamps(database, wal) == before:
            for path in (target, copied_wal):
                if path.exists():
                    os.chmod(path, 0o600)
            return target
        target.unlink()
        copied_wal.unlink(missing_ok=True)
    from cerebro.db.engine import copy_database

    target.touch(mode=0o600)
    try:
        copy_database(database, target)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


@contextmanager
def _reader(database: Path) -> Iterator[Any]:
    """A connection to a private copy of ``database`` (see :func:`_copy_into`): whatever it runs, the
    original is never opened by SQLite, so not even a lock or a ``-shm`` file touches it."""
    from cerebro.db.engine import connect_raw

    with _scratch_home() as home:
        conn = connect_raw(_copy_into(database, home), wal=False)
        try:
            yield conn
        finally:
            conn.close()


def _subprocess_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_ENV_FILE", "CEREBRO_AFTERCARE_WORKER")}
    env["CEREBRO_HOME"] = str(home)
    return env


def _which_cerebro() -> str | None:
    import shutil

    return shutil.which("cerebro", path=os.environ.get("PATH", os.defpath))
