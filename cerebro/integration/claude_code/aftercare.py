"""End-of-session work (gc, then session-metrics ingest) that runs *after* the SessionEnd hook has returned.

Claude Code gives a SessionEnd hook 1.5 s and, in ``claude -p`` runs, cancels it when the client exits
whatever its ``timeout`` says; gc + ingest take 0.5–1 s or more on a busy machine. So the hook only
*records* the work — one job file per (project, session), created atomically, which doubles as the
once-per-session claim — and starts a detached worker (its own session, no pipes back to the client,
output to ``CEREBRO_HOME/logs/aftercare.log``) that does it (ADR 0017).

A job leaves ``pending/`` only when its work is done (it moves to ``done/``, kept 7 days so a second
registration of the same SessionEnd sees the session as handled). A worker that was killed leaves its job
pending; the next session start or end starts a worker again, so no session's work is silently dropped.
One worker runs at a time (an ``flock``), and a job whose work keeps failing is given up after
``MAX_ATTEMPTS``, with the reason in the log.

``cerebro hook catch-up`` runs the pending work in the foreground (what the detached worker runs, and what
``cerebro doctor`` suggests when work is overdue).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from cerebro import paths

MAX_ATTEMPTS = 3
KEEP_DONE_SECONDS = 7 * 24 * 3600
# A pending job older than this with no worker running is overdue: `doctor` warns about it.
OVERDUE_SECONDS = 120.0


def _root() -> Path:
    return paths.aftercare_dir()


def pending_dir() -> Path:
    return paths.ensure_private_dir(paths.aftercare_pending_dir())


def done_dir() -> Path:
    return paths.ensure_private_dir(_root() / "done")


def log_path() -> Path:
    return paths.logs_dir() / "aftercare.log"


class Job(NamedTuple):  # a NamedTuple, not a dataclass: ~1 ms less at import on the hooks' path (ADR 0053)
    path: Path
    project: Path
    transcript_dir: Path | None
    created_at: float
    attempts: int

    @property
    def age_seconds(self) -> float:
        return time.time() - self.created_at


def _job_name(project: Path, session_id: str) -> str:
    sid = paths.sha256(session_id.encode("utf-8")).hexdigest()[:32]
    return f"{paths.project_hash(project)}.{sid}.json"


def enqueue(project: Path, session_id: str, transcript_dir: Path | None) -> bool:
    """Record this session's end-of-session work; False when it was recorded (or done) already.

    The job file appears whole or not at all (written aside, then hard-linked into place, which fails
    if it exists): exactly one of two racing SessionEnd registrations enqueues."""
    name = _job_name(project, session_id)
    if (done_dir() / name).exists():
        return False
    target = pending_dir() / name
    body = {
        "project": str(project.absolute()),
        "transcript_dir": str(transcript_dir) if transcript_dir else None,
        "created_at": time.time(),
        "attempts": 0,
    }
    tmp = target.with_name(f".{name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, paths.FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(body, handle)
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        return True
    finally:
        tmp.unlink(missing_ok=True)


def pending_jobs() -> list[Job]:
    """Every job still to do, oldest first; unreadable job files are skipped (and reported by doctor)."""
    jobs = []
    try:
        entries = list(os.scandir(paths.aftercare_pending_dir()))  # a read: creates nothing
    except OSError:
        return []
    for entry in entries:
        if not entry.name.endswith(".json") or entry.name.startswith("."):
            continue
        job = _read_job(Path(entry.path))
        if job is not None:
            jobs.append(job)
    return sorted(jobs, key=lambda j: j.created_at)


_MAX_JOB_BYTES = 64 * 1024  # a job is a few hundred bytes: anything larger was not written by enqueue()


def _read_job(path: Path) -> Job | None:
    """The job in ``path``, or None for anything else found in the folder: not a regular file (a FIFO would block the
    worker for ever, a link to a device feed it without end), too large, not a JSON object, fields of the wrong kind
    — one such file must not stop every session's aftercare."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_JOB_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            return None
        transcript = data.get("transcript_dir")
        return Job(
            path=path,
            project=Path(str(data["project"])),
            transcript_dir=Path(transcript) if isinstance(transcript, str) and transcript else None,
            created_at=float(data.get("created_at", info.st_mtime)),
            attempts=int(data.get("attempts", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError, OverflowError):  # OverflowError: int() of an infinite float
        return None


def has_pending() -> bool:
    try:
        with os.scandir(paths.aftercare_pending_dir()) as entries:
            return any(e.name.endswith(".json") and not e.name.startswith(".") for e in entries)
    except OSError:
        return False


# --------------------------------------------------------------------------- the worker


def spawn_worker() -> None:
    """Start ``cerebro hook catch-up`` fully detached: double-forked (an intermediate process starts it and
    exits at once, so the worker is nobody's descendant — Claude Code sends SIGTERM to a cancelled hook's
    process group and its live descendants), in its own session, stdin from /dev/null and output to the
    log (the client waits for the hook's pipes to close)."""
    import subprocess  # here, not at the top: every session start imports this module to look for pending work

    log = _open_log()
    try:
        pid = os.fork()
        if pid == 0:  # the intermediate: start the worker, leave
            try:
                os.setsid()
                subprocess.Popen(**worker_start(log))
            finally:
                # Nobody reads the intermediate's status: a worker that failed to start leaves its job pending,
                # and the next session start or end starts one again.
                os._exit(0)
        os.waitpid(pid, 0)
    finally:
        os.close(log)


WORKER_ENV = "CEREBRO_AFTERCARE_WORKER"  # set in the worker's environment: it is the worker (hooks.catch_up)


def worker_start(log: int) -> dict[str, Any]:
    """How the worker process is started: our own interpreter and module (no shell), nothing on stdin, both
    outputs to the log, no inherited descriptors (a hook's pipes among them: Claude Code waits for them to
    close), a session of its own, and the environment marked so the worker knows it is one."""
    import subprocess

    return {
        "args": [sys.executable, "-m", "cerebro", "hook", "catch-up"],
        "stdin": subprocess.DEVNULL,
        "stdout": log,
        "stderr": log,
        "close_fds": True,
        "start_new_session": True,
        "env": {**os.environ, WORKER_ENV: "1"},
    }


def _open_log() -> int:
    path = log_path()
    paths.ensure_private_dir(path.parent)
    return os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW, paths.FILE_MODE)


def worker_running() -> bool:
    """Is a worker holding the lock right now?"""
    import fcntl

    try:
        fd = os.open(_root() / "worker.lock", os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False  # no worker ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock we just took
    return False


def _lock_path() -> Path:
    return paths.ensure_private_dir(_root()) / "worker.lock"


def catch_up() -> int:
    """Do every pending job once, one worker at a time; returns how many jobs this call completed.

    A worker that finds the lock taken leaves: the holder re-scans after releasing it, so a job enqueued
    while it was finishing is not stranded. A job that failed waits for the next worker (the next session
    start or end), not for this one to hammer it."""
    import fcntl

    completed = 0
    tried: set[str] = set()
    while True:
        fd = os.open(_lock_path(), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, paths.FILE_MODE)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return completed
            for job in pending_jobs():
                if job.path.name not in tried:
                    tried.add(job.path.name)
                    completed += run_job(job)
            _sweep_done()
        finally:
            os.close(fd)
        if all(job.path.name in tried for job in pending_jobs()):
            return completed


def run_job(job: Job) -> int:
    """gc, then ingest; each step's failure is logged and never stops the other. Done → 1."""
    failed = False
    for step in (_collect_garbage, _ingest_metrics):
        error = step(job)
        if error:
            failed = True
            _log(f"{job.path.name}: {error}")
    if failed and job.attempts + 1 < MAX_ATTEMPTS:
        _rewrite_attempts(job, job.attempts + 1)
        return 0
    if failed:
        _log(f"{job.path.name}: given up after {MAX_ATTEMPTS} attempts")
    try:
        os.replace(job.path, done_dir() / job.path.name)
    except FileNotFoundError:
        return 0  # another worker (started by hand) finished it
    return 1


def _rewrite_attempts(job: Job, attempts: int) -> None:
    try:
        data = json.loads(job.path.read_text(encoding="utf-8"))
        data["attempts"] = attempts
        with paths.written_in_one_step(job.path, overwrite=True) as partial:  # a fresh name: no link followed
            partial.write_text(json.dumps(data), encoding="utf-8")
    except OSError:
        pass


def _collect_garbage(job: Job) -> str | None:
    from cerebro.api import Brain
    from cerebro.errors import BrainNotFound

    try:
        with Brain.for_project(job.project) as brain:
            report = brain.gc()
    except BrainNotFound:
        return None  # nothing to collect; metrics may still be worth ingesting
    except Exception as exc:  # noqa: BLE001 - logged, retried
        return f"gc: {' '.join(str(exc).split())}"
    if report.archived:
        from cerebro import clock

        line = json.dumps(report.log_entry(clock.rfc3339(clock.now())), ensure_ascii=False)
        try:
            paths.append_private(gc_log_path(job.project), line + "\n")
        except OSError as exc:
            return f"gc log: {exc}"
    return None


def _ingest_metrics(job: Job) -> str | None:
    try:
        from cerebro.metrics.ingest import ingest_project

        ingest_project(job.project, session_dir=job.transcript_dir)
    except Exception as exc:  # noqa: BLE001 - logged, retried
        return f"metrics ingest: {' '.join(str(exc).split())}"
    return None


def _sweep_done() -> None:
    cutoff = time.time() - KEEP_DONE_SECONDS
    try:
        for entry in os.scandir(done_dir()):
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                Path(entry.path).unlink(missing_ok=True)
    except OSError:
        pass


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        fd = _open_log()
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {message}\n")
    except OSError:
        pass


# --------------------------------------------------------------------------- the gc log


gc_log_path = paths.gc_log_path  # where the worker's gc writes its evictions (the session-start hook reads them)


def status() -> dict[str, Any]:
    """For ``doctor``: pending jobs, the overdue ones, whether a worker runs."""
    jobs = pending_jobs()
    running = worker_running()
    overdue = [j for j in jobs if j.age_seconds > OVERDUE_SECONDS] if not running else []
    return {
        "pending": len(jobs),
        "overdue": len(overdue),
        "worker_running": running,
        "oldest_age_seconds": round(jobs[0].age_seconds, 1) if jobs else None,
    }
