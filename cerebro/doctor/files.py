"""Checks 6–8: file modes, session metrics, pending end-of-session work."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cerebro import clock
from cerebro.doctor.base import (
    INGEST_GRACE_SECONDS,
    WARN,
    Check,
    _cmd,
    _Findings,
    _flat,
    _n,
    _q,
    _reader,
)

# --------------------------------------------------------------------------- 6. file-modes


def check_file_modes(project: Path) -> Check:
    """Memories and transcripts may hold secrets: the brain and metrics files (and their -wal/-shm) and the
    files in backups/ and logs/ are 0600, cerebro's folders under CEREBRO_HOME 0700, all owned by you."""
    from cerebro import paths
    from cerebro.metrics.store import metrics_path

    home = paths.home()
    folders = [
        home / "projects",
        home / "backups",
        home / "logs",
        home / "session-state",
        home / "aftercare",
        home / "aftercare" / "pending",
        home / "aftercare" / "done",
    ]
    files: list[Path] = []
    for database in (paths.project_brain_path(project), metrics_path(project), paths.global_brain_path()):
        files += [Path(str(database) + suffix) for suffix in ("", "-wal", "-shm")]
    databases = set(files)
    for folder in (home / "backups", home / "logs"):
        try:
            files += sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink())
        except OSError:
            pass
    loose_files: list[Path] = []
    loose_dirs: list[Path] = []
    foreign: list[Path] = []
    # A read of a read-only brain leaves its -wal/-shm read-only too: every write fails after the brain is made
    # writable again ("attempt to write a readonly database"), and the modes looked private (a review).
    stuck: list[Path] = []
    uid = os.getuid()
    checked = 0
    for path, wanted, bucket in [(f, paths.FILE_MODE, loose_files) for f in files] + [
        (d, paths.DIR_MODE, loose_dirs) for d in folders
    ]:
        try:
            info = path.lstat()
        except OSError:
            continue
        checked += 1
        if info.st_uid != uid:
            foreign.append(path)
        elif info.st_mode & 0o777 & ~wanted:
            bucket.append(path)
        elif path in databases and not info.st_mode & 0o200:
            stuck.append(path)
    findings = _Findings("file-modes")
    extra: dict[str, Any] = {
        "checked": checked,
        "too_open": [str(p) for p in loose_files + loose_dirs],
        "not_owned": [str(p) for p in foreign],
        "not_writable": [str(p) for p in stuck],
    }
    if loose_files:
        findings.add(
            WARN,
            f"{_n(len(loose_files), 'file')} readable by others ({', '.join(_short(p, home) for p in loose_files)})",
            "chmod 600 " + " ".join(_q(p) for p in loose_files),
        )
    if loose_dirs:
        findings.add(
            WARN,
            f"{_n(len(loose_dirs), 'folder')} open to others ({', '.join(_short(p, home) for p in loose_dirs)})",
            "chmod 700 " + " ".join(_q(p) for p in loose_dirs),
        )
    if stuck:
        findings.add(
            WARN,
            f"{_n(len(stuck), 'database file')} not writable by you, so writes fail "
            f"({', '.join(_short(p, home) for p in stuck)})",
            "chmod 600 " + " ".join(_q(p) for p in stuck),
        )
    if foreign:
        findings.add(
            WARN,
            f"{_n(len(foreign), 'path')} owned by another user ({', '.join(_short(p, home) for p in foreign)})",
            'sudo chown "$(id -un)" ' + " ".join(_q(p) for p in foreign),
        )
    return findings.check(f"{checked} files and folders under {home} are private (0600/0700)", **extra)


def _short(path: Path, home: Path) -> str:
    try:
        return str(path.relative_to(home))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- 7. metrics


def check_metrics(project: Path) -> Check:
    """When this project's session metrics were last ingested; a warning when Claude Code transcripts exist
    that were never ingested (and are not the live session's)."""
    import time

    from cerebro.db.engine import driver
    from cerebro.metrics.ingest import session_dir_candidates, transcript_files
    from cerebro.metrics.store import metrics_path

    findings = _Findings("metrics")
    target = metrics_path(project)
    transcripts = [f for d in session_dir_candidates(project) for f in transcript_files(d)]
    extra: dict[str, Any] = {
        "path": str(target),
        "transcripts": len(transcripts),
        "last_ingest": None,
        "turns": 0,
        "not_ingested": 0,
    }
    offsets: dict[str, int] = {}
    if target.is_file() and target.stat().st_size > 0:
        try:
            from cerebro.metrics.store import ingest_summary

            with _reader(target) as conn:
                last, offsets, extra["turns"] = ingest_summary(conn)
                extra["last_ingest"] = clock.rfc3339_optional(last) or last  # unreadable text: shown as stored
        except (driver().DatabaseError, ValueError) as exc:
            return Check(
                "metrics",
                WARN,
                f"{target} is unreadable ({_flat(str(exc))})",
                f"mv {_q(target)} {_q(str(target) + '.broken')} && {_cmd(project, 'cerebro ingest --force')}",
                extra,
            )
    now = time.time()
    behind = []
    for file in transcripts:
        try:
            info = file.stat()
        except OSError:
            continue
        done = max(offsets.get(str(file), 0), offsets.get(os.path.realpath(file), 0))
        if info.st_size > done and now - info.st_mtime > INGEST_GRACE_SECONDS:
            behind.append(file)
    extra["not_ingested"] = len(behind)
    ingest = _cmd(project, "cerebro ingest")
    if transcripts and not offsets:
        findings.add(
            WARN,
            f"never ingested, though this project has {_n(len(transcripts), 'Claude Code transcript')}",
            ingest,
        )
    elif behind:
        findings.add(
            WARN,
            f"{_n(len(behind), 'transcript')} changed more than an hour ago not ingested "
            f"(last ingest {extra['last_ingest'] or 'unknown'}); the session-end ingest missed them",
            ingest,
        )
    if not transcripts and not offsets:
        return findings.check("no Claude Code transcripts for this project yet", **extra)
    return findings.check(
        f"last ingest {extra['last_ingest'] or 'unknown'} ({_n(extra['turns'], 'turn')}, "
        f"{_n(len(transcripts), 'transcript')})",
        **extra,
    )


# --------------------------------------------------------------------------- 8. end-of-session


def check_end_of_session() -> Check:
    """End-of-session work (gc + ingest, run by a detached worker after SessionEnd): none overdue."""
    from cerebro.integration.claude_code import aftercare

    status = aftercare.status()
    log = aftercare.log_path()
    extra: dict[str, Any] = {**status, "log": str(log)}
    unreadable = _unreadable_jobs(status["pending"])
    extra["unreadable_jobs"] = [str(p) for p in unreadable]
    findings = _Findings("end-of-session")
    if status["overdue"]:
        findings.add(
            WARN,
            f"end-of-session work of {_n(status['overdue'], 'session')} is overdue (oldest "
            f"{_age(status['oldest_age_seconds'])}) and no worker runs; log: {log}",
            "cerebro hook catch-up",
        )
    if unreadable:
        findings.add(
            WARN,
            f"{_n(len(unreadable), 'unreadable job file')} in the queue (never run)",
            "rm " + " ".join(_q(p) for p in unreadable),
        )
    running = ", a worker is running" if status["worker_running"] else ""
    return findings.check(f"{status['pending']} pending{running}; log: {log}", **extra)


def _unreadable_jobs(readable: int) -> list[Path]:
    """Job files in the queue that the worker skips (not JSON, or no project): they never run."""
    import json

    from cerebro import paths

    try:
        entries = [
            e
            for e in os.scandir(paths.home() / "aftercare" / "pending")
            if e.name.endswith(".json") and not e.name.startswith(".")
        ]
    except OSError:
        return []
    if len(entries) <= readable:
        return []
    broken = []
    for entry in entries:
        try:
            data = json.loads(Path(entry.path).read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("project"):
                continue
        except (OSError, ValueError):
            pass
        broken.append(Path(entry.path))
    return sorted(broken)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
