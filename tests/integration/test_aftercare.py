"""End-of-session work in this process (ADR 0017): the job files SessionEnd leaves, the worker that does them
(``catch_up``), its lock, its log and what ``doctor`` reads. The detached worker runs exactly ``catch_up``;
tests/integration/test_hooks.py drives it through real processes."""

from __future__ import annotations

import calendar
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.integration.claude_code import aftercare
from tests.helpers import worker_running_elsewhere

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code"


def _backdate(path: Path, seconds: float) -> None:
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp))


def _enqueue_aged(project: Path, session: str, age: float, *, now: float | None = None) -> None:
    """A pending job created ``age`` seconds before ``now`` (default: the wall clock)."""
    aftercare.enqueue(project, session, None)
    path = aftercare.pending_dir() / aftercare._job_name(project, session)
    body = json.loads(path.read_text())
    body["created_at"] = (time.time() if now is None else now) - age
    path.write_text(json.dumps(body))


def _job_body(project: Path, session: str) -> dict:
    return json.loads((aftercare.pending_dir() / aftercare._job_name(project, session)).read_text())


def test_a_job_file_records_the_session_whole_and_private(project: Path, tmp_path: Path) -> None:
    before = time.time()
    assert aftercare.enqueue(project, "s-1", tmp_path) is True
    body = _job_body(project, "s-1")
    assert body["project"] == str(project.absolute()) and body["transcript_dir"] == str(tmp_path)
    assert body["attempts"] == 0 and before <= body["created_at"] <= time.time()
    files = list(aftercare.pending_dir().iterdir())
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600  # no temporary file left behind
    assert "s-1" not in files[0].name  # the session id never names a file
    assert aftercare.enqueue(project, "s-1", None) is False  # once per session
    assert aftercare.enqueue(project, "s-2", None) is True
    assert _job_body(project, "s-2")["transcript_dir"] is None


def test_the_job_name_depends_on_project_and_session() -> None:
    names = {aftercare._job_name(Path(p), s) for p in ("/a", "/b") for s in ("s", "t")}
    assert len(names) == 4 and all(n.endswith(".json") and len(n.split(".")[1]) == 32 for n in names)


def test_pending_jobs_are_oldest_first_and_skip_what_is_not_a_job(project: Path) -> None:
    assert aftercare.pending_jobs() == [] and aftercare.has_pending() is False  # nothing created by reading
    assert not (paths.home() / "aftercare").exists()
    for session, age in (("new", 10), ("old", 300), ("middle", 100)):
        _enqueue_aged(project, session, age)
    pending = aftercare.pending_dir()
    (pending / "garbled.json").write_text("{not json")
    (pending / "no-project.json").write_text(json.dumps({"created_at": 1.0}))
    (pending / ".hidden.json").write_text(json.dumps({"project": "/x", "created_at": 0.0}))
    (pending / "notes.txt").write_text(json.dumps({"project": "/x", "created_at": 0.0}))
    # Each of these stopped every session's aftercare (an error escaping pending_jobs, a FIFO blocking the worker,
    # a link to a device read without end):
    (pending / "an-array.json").write_text("[1, 2]")
    (pending / "null.json").write_text("null")
    (pending / "infinite-attempts.json").write_text('{"project": "/x", "attempts": 1e400}')
    os.mkfifo(pending / "a-fifo.json")
    (pending / "zeros.json").symlink_to("/dev/zero")
    (pending / "huge.json").write_text(json.dumps({"project": "/x", "pad": "x" * 100_000}))
    found: list[list[aftercare.Job]] = []
    reading = threading.Thread(target=lambda: found.append(aftercare.pending_jobs()), daemon=True)
    reading.start()
    reading.join(20)
    if reading.is_alive():  # blocked opening the FIFO: let it go, then fail
        os.close(os.open(pending / "a-fifo.json", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("pending_jobs() blocked on a FIFO")
    (jobs,) = found
    assert [j.path.name for j in jobs] == [aftercare._job_name(project, s) for s in ("old", "middle", "new")]
    assert all(j.project == project.absolute() and j.attempts == 0 and j.transcript_dir is None for j in jobs)
    assert 299 < jobs[0].age_seconds < 400


def test_a_job_without_a_creation_time_is_as_old_as_its_file(project: Path) -> None:
    path = aftercare.pending_dir() / "legacy.json"
    path.write_text(json.dumps({"project": str(project), "transcript_dir": "", "attempts": "2"}))
    _backdate(path, 1000)
    (job,) = aftercare.pending_jobs()
    assert job.created_at == pytest.approx(path.stat().st_mtime)
    assert (job.transcript_dir, job.attempts) == (None, 2)


def test_has_pending_ignores_hidden_and_foreign_files(project: Path) -> None:
    pending = aftercare.pending_dir()
    (pending / ".x.json.123.tmp").write_text("{}")
    (pending / ".y.json").write_text("{}")
    (pending / "readme.txt").write_text("")
    assert aftercare.has_pending() is False
    aftercare.enqueue(project, "s", None)
    assert aftercare.has_pending() is True


def _brain_with_a_fleeting_memory(project: Path) -> Path:
    path = paths.project_brain_path(project)
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        brain.add("a fleeting thought about the café ☕", importance=0.0)
        brain.add("a lasting decision", importance=1.0)
        brain.config_set("gc_threshold", "0.6")
    return path


def test_catch_up_collects_garbage_logs_the_evictions_and_ingests_the_transcripts(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerebro import clock
    from cerebro.metrics.store import MetricsStore, metrics_path

    monkeypatch.setenv("CEREBRO_NOW", "2030-01-01T00:00:00Z")
    clock.set_now(None)
    path = _brain_with_a_fleeting_memory(project)
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    shutil.copy(FIXTURES / "cerebro__simple_session.jsonl", transcripts / "test-session-1.jsonl")
    assert aftercare.enqueue(project, "s", transcripts)
    assert aftercare.catch_up() == 1
    assert aftercare.pending_jobs() == [] and aftercare.has_pending() is False
    assert [p.name for p in aftercare.done_dir().iterdir()] == [aftercare._job_name(project, "s")]
    with Brain.open(path) as brain:
        assert [n.content for n in brain.list()] == ["a lasting decision"]
    (line,) = aftercare.gc_log_path(project).read_text().splitlines()
    assert "café" not in line  # a log holds ids and scores, never a memory's text (issue 17)
    logged = json.loads(line)
    assert logged["at"] == "2030-01-01T00:00:00Z" and logged["archived"] == 1
    assert set(logged["evicted"][0]) == {"id", "type", "importance", "retention_score"}
    with MetricsStore.open(metrics_path(project)) as store:
        assert [t.turn_number for t in store.recent_turns()] == [1, 2, 3]
    assert not aftercare.log_path().exists()  # nothing failed: nothing logged
    assert aftercare.enqueue(project, "s", None) is False  # done: a late duplicate is not redone


def test_a_gc_that_archives_nothing_writes_no_log_line(project: Path) -> None:
    Brain.init(paths.project_brain_path(project), embed_provider="none")
    aftercare.enqueue(project, "quiet", None)
    assert aftercare.catch_up() == 1
    assert not aftercare.gc_log_path(project).exists()


def test_a_project_without_a_brain_is_done_without_error(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no transcripts either
    aftercare.enqueue(project, "nothing", None)
    assert aftercare.catch_up() == 1
    assert not aftercare.log_path().exists()
    assert not paths.project_brain_path(project).exists()  # gc never creates a brain


def test_a_failing_step_does_not_stop_the_other_and_is_retried_then_given_up(project: Path, tmp_path: Path) -> None:
    brain_file = paths.project_brain_path(project)
    brain_file.parent.mkdir(parents=True)
    brain_file.write_bytes(b"this is not a database" * 100)
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    shutil.copy(FIXTURES / "cerebro__simple_session.jsonl", transcripts / "test-session-1.jsonl")
    aftercare.enqueue(project, "doomed", transcripts)
    zone = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"  # a local time 5.5 h off UTC: the log must still say UTC
    time.tzset()
    try:
        assert aftercare.catch_up() == 0
    finally:
        if zone is None:
            os.environ.pop("TZ")
        else:
            os.environ["TZ"] = zone
        time.tzset()
    (job,) = aftercare.pending_jobs()
    assert job.attempts == 1
    assert oct(job.path.stat().st_mode & 0o777) == oct(0o600)  # rewritten privately
    assert [p.name for p in aftercare.pending_dir().iterdir()] == [job.path.name]  # no temporary file left
    log = aftercare.log_path().read_text().splitlines()
    assert len(log) == 1 and log[0].endswith(  # one line; ingest ran and succeeded
        f"{job.path.name}: gc: {brain_file} is not a readable brain (file is not a database); restore a copy from "
        f"{paths.home() / 'backups'}"
    )
    import re

    stamp, _ = log[0].split(" ", 1)  # each line starts with its UTC time
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    assert abs(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) - time.time()) < 3600
    from cerebro.metrics.store import MetricsStore, metrics_path

    with MetricsStore.open(metrics_path(project)) as store:
        assert len(store.recent_turns()) == 3
    assert aftercare.catch_up() == 0
    assert aftercare.catch_up() == 1  # the third failure: given up, moved to done
    assert aftercare.pending_jobs() == []
    assert (
        aftercare.log_path()
        .read_text()
        .splitlines()[-1]
        .endswith(f"{job.path.name}: given up after {aftercare.MAX_ATTEMPTS} attempts")
    )


def test_a_worker_finding_the_lock_taken_leaves_the_work_to_its_holder(project: Path) -> None:
    Brain.init(paths.project_brain_path(project), embed_provider="none")
    aftercare.enqueue(project, "s", None)
    assert aftercare.worker_running() is False  # no lock file yet
    with worker_running_elsewhere():
        assert aftercare.worker_running() is True
        assert aftercare.status()["worker_running"] is True
        assert aftercare.catch_up() == 0
        assert len(aftercare.pending_jobs()) == 1
    assert aftercare.worker_running() is False
    assert aftercare.catch_up() == 1


def test_done_jobs_are_kept_seven_days(project: Path) -> None:
    Brain.init(paths.project_brain_path(project), embed_provider="none")
    for session in ("old", "recent"):
        aftercare.enqueue(project, session, None)
    assert aftercare.catch_up() == 2
    done = aftercare.done_dir()
    _backdate(done / aftercare._job_name(project, "old"), aftercare.KEEP_DONE_SECONDS + 60)
    _backdate(done / aftercare._job_name(project, "recent"), aftercare.KEEP_DONE_SECONDS - 60)
    aftercare.enqueue(project, "trigger", None)
    assert aftercare.catch_up() == 1  # every worker sweeps
    assert sorted(p.name for p in done.iterdir()) == sorted(
        aftercare._job_name(project, s) for s in ("recent", "trigger")
    )
    assert aftercare.enqueue(project, "old", None) is True  # forgotten after a week


def test_status_counts_overdue_jobs_only_when_no_worker_runs(project: Path) -> None:
    assert aftercare.status() == {"pending": 0, "overdue": 0, "worker_running": False, "oldest_age_seconds": None}
    for session, age in (("fresh", 5), ("stuck", aftercare.OVERDUE_SECONDS + 30)):
        _enqueue_aged(project, session, age)
    report = aftercare.status()
    assert (report["pending"], report["overdue"], report["worker_running"]) == (2, 1, False)
    assert aftercare.OVERDUE_SECONDS + 30 <= report["oldest_age_seconds"] < aftercare.OVERDUE_SECONDS + 90
    assert report["oldest_age_seconds"] == round(report["oldest_age_seconds"], 1)
    with worker_running_elsewhere():
        assert aftercare.status()["overdue"] == 0  # a worker is on it


def test_private_appends_create_a_private_file_in_a_private_folder(isolated_home: Path) -> None:
    target = isolated_home / "logs" / "x.log"
    paths.append_private(target, "one\n")
    paths.append_private(target, "two\n")
    assert target.read_text() == "one\ntwo\n"
    assert target.stat().st_mode & 0o777 == 0o600 and target.parent.stat().st_mode & 0o777 == 0o700


def test_a_job_enqueued_while_the_worker_runs_is_done_by_that_worker(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another session ends while the worker is busy: its hook sees the lock taken and starts nobody, so the
    worker must look again before it leaves."""
    Brain.init(paths.project_brain_path(project), embed_provider="none")
    real_ingest = aftercare._ingest_metrics

    def ingest_while_another_session_ends(job: aftercare.Job) -> str | None:
        aftercare.enqueue(project, "ended-meanwhile", None)
        return real_ingest(job)

    monkeypatch.setattr(aftercare, "_ingest_metrics", ingest_while_another_session_ends)
    aftercare.enqueue(project, "first", None)
    assert aftercare.catch_up() == 2
    assert aftercare.pending_jobs() == []


def test_status_reports_the_oldest_age_to_a_tenth_and_overdue_strictly_past_the_limit(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aftercare.time, "time", lambda: 10_000.0)
    for session, age in (("at-limit", aftercare.OVERDUE_SECONDS), ("old", 150.456)):
        _enqueue_aged(project, session, age, now=10_000.0)
    report = aftercare.status()
    assert report["oldest_age_seconds"] == 150.5
    assert report["overdue"] == 1  # 150.456 s is overdue; exactly the limit is not yet


def test_private_files_never_follow_a_planted_symlink(isolated_home: Path, tmp_path: Path) -> None:
    """Someone else's link at a log's or the lock's path must not redirect cerebro's writes."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("untouched\n")
    link = isolated_home / "logs" / "planted.log"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    with pytest.raises(OSError):
        paths.append_private(link, "secret\n")
    lock = aftercare._lock_path()
    lock.symlink_to(target)
    with pytest.raises(OSError):
        aftercare.catch_up()
    assert target.read_text() == "untouched\n"


def test_the_worker_lock_file_is_private(project: Path) -> None:
    aftercare.catch_up()
    assert aftercare._lock_path().stat().st_mode & 0o777 == 0o600


def test_a_step_that_fails_logs_its_error_on_one_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cerebro.metrics import ingest

    Brain.init(paths.project_brain_path(project), embed_provider="none")

    def ingest_fails(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("metrics database\n   is   locked")

    monkeypatch.setattr(ingest, "ingest_project", ingest_fails)
    aftercare.enqueue(project, "s", None)
    assert aftercare.catch_up() == 0
    (line,) = aftercare.log_path().read_text().splitlines()
    assert line.endswith(f"{aftercare._job_name(project, 's')}: metrics ingest: metrics database is locked")


def test_the_sweep_removes_only_old_regular_files(project: Path, tmp_path: Path) -> None:
    done = aftercare.done_dir()
    outside = tmp_path / "not-ours.json"
    outside.write_text("{}")
    link = done / "link.json"
    link.symlink_to(outside)
    old = aftercare.KEEP_DONE_SECONDS + 60
    os.utime(link, (time.time() - old,) * 2, follow_symlinks=False)
    _backdate(outside, old)
    aftercare.catch_up()
    assert link.is_symlink() and outside.exists()  # not a job file: left alone


def test_a_job_another_worker_finished_meanwhile_is_not_counted(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Brain.init(paths.project_brain_path(project), embed_provider="none")
    real_ingest = aftercare._ingest_metrics

    def finished_elsewhere(job: aftercare.Job) -> str | None:
        os.replace(job.path, aftercare.done_dir() / job.path.name)  # `hook catch-up` run by hand, say
        return real_ingest(job)

    monkeypatch.setattr(aftercare, "_ingest_metrics", finished_elsewhere)
    aftercare.enqueue(project, "s", None)
    assert aftercare.catch_up() == 0
    assert aftercare.pending_jobs() == []


def test_the_worker_starts_detached_from_the_hook(monkeypatch) -> None:
    """What spawn_worker's intermediate process starts (it cannot be watched from here: it is a forked child that
    exits at once): our interpreter and module, nothing on stdin, both outputs to the log, no inherited
    descriptors (Claude Code waits for the hook's pipes to close), its own session, marked as the worker."""
    monkeypatch.setenv("CEREBRO_HOME", "/somewhere")
    start = aftercare.worker_start(99)
    env = start.pop("env")
    assert start == {
        "args": [sys.executable, "-m", "cerebro", "hook", "catch-up"],
        "stdin": subprocess.DEVNULL,
        "stdout": 99,
        "stderr": 99,
        "close_fds": True,
        "start_new_session": True,
    }
    assert env[aftercare.WORKER_ENV] == "1" and env["CEREBRO_HOME"] == "/somewhere"


def test_a_job_file_without_attempts_or_time_reads_as_new_with_the_files_time(tmp_path: Path) -> None:
    """Job files written before a field existed (or by hand) still run: no attempts yet, the file's own time."""
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"project": str(tmp_path)}))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    job = aftercare._read_job(path)
    assert job is not None
    assert (job.project, job.transcript_dir, job.attempts, job.created_at) == (tmp_path, None, 0, 1_700_000_000.0)


def test_the_worker_log_is_where_the_docs_say() -> None:
    assert aftercare.log_path() == paths.logs_dir() / "aftercare.log"  # ADR 0017 and the hooks' messages name it


def test_a_worker_lock_that_is_a_link_is_never_followed(isolated_home: Path, tmp_path: Path) -> None:
    import fcntl

    elsewhere = tmp_path / "someone-elses.lock"
    elsewhere.write_text("")
    held = os.open(elsewhere, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # locked by another program
    try:
        lock = aftercare._root() / "worker.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.symlink_to(elsewhere)
        assert aftercare.worker_running() is False  # not our lock: no worker of ours holds it
    finally:
        os.close(held)


def test_spawning_the_worker_returns_to_the_hook_and_the_worker_does_the_job(project: Path, tmp_path: Path) -> None:
    """The hook's own process comes back from spawn_worker (only the intermediate exits), and the detached worker
    does the pending job. Run in a fresh interpreter: the intermediate is a fork of the caller."""
    from tests.conftest import env_without_home_leaks, wait_for_aftercare

    aftercare.enqueue(project, "spawned", None)
    code = "from cerebro.integration.claude_code import aftercare; aftercare.spawn_worker(); print('returned')"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env_without_home_leaks(HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.getcwd(),  # under make mutate, the mutated copy
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "returned\n", "")
    wait_for_aftercare()
    assert aftercare.pending_jobs() == []
