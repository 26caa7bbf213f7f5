"""The lock-retry layer's timing, seen without waiting: the waits it takes between attempts, and which errors it
retries at all (issue 14: "many agents share one brain")."""

from __future__ import annotations

import random
import re

import pytest

from cerebro import logs, retry
from cerebro.errors import BrainBusy


class Locked(Exception):
    def __str__(self) -> str:
        return "database is locked"


def _failing(times: int, error: Exception) -> tuple[list[int], object]:
    calls: list[int] = []

    def work() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return "done"

    return calls, work


def test_each_retry_waits_a_jittered_growing_time_capped_at_the_maximum() -> None:
    random.seed(14)
    waits: list[float] = []
    calls, work = _failing(retry.ATTEMPTS - 1, Locked())
    assert retry.run_with_retry(work, sleep=waits.append) == "done"
    assert len(calls) == retry.ATTEMPTS and len(waits) == retry.ATTEMPTS - 1
    assert all(0 < wait <= retry.MAX_WAIT for wait in waits)
    # Full jitter under an exponential ceiling: the n-th wait is at most INITIAL_WAIT·2^n (and MAX_WAIT).
    for n, wait in enumerate(waits):
        assert wait <= min(retry.MAX_WAIT, retry.INITIAL_WAIT * 2 ** (n + 1)), (n, wait)
    assert max(waits[4:]) > retry.INITIAL_WAIT * 2  # the ceiling grew: later waits can be longer


def test_a_lock_held_past_every_attempt_is_brain_busy() -> None:
    calls, work = _failing(retry.ATTEMPTS, Locked())
    with pytest.raises(BrainBusy):
        retry.run_with_retry(work, sleep=lambda _: None)
    assert len(calls) == retry.ATTEMPTS


def test_attempts_that_each_wait_out_a_held_lock_stop_after_the_time_budget() -> None:
    """A writer holding its lock makes each attempt wait SQLite's busy_timeout (5 s) before it fails: the retries stop
    once MAX_SECONDS have gone, not after eight of those (~40 s, an MCP server's queued calls waiting behind)."""
    now = [0.0]
    calls: list[int] = []

    def held_lock() -> str:
        calls.append(1)
        now[0] += 5.0  # busy_timeout, waited inside the statement
        raise Locked()

    with pytest.raises(BrainBusy):
        retry.run_with_retry(
            held_lock, sleep=lambda seconds: now.__setitem__(0, now[0] + seconds), clock=lambda: now[0]
        )
    assert len(calls) == 2 and now[0] < retry.MAX_SECONDS + 5.0 + retry.MAX_WAIT


def test_an_error_that_is_not_a_lock_is_raised_at_once_without_a_retry() -> None:
    calls, work = _failing(1, ValueError("bad input"))
    waits: list[float] = []
    with pytest.raises(ValueError, match="bad input"):
        retry.run_with_retry(work, sleep=waits.append)
    assert (len(calls), waits) == (1, [])


def test_each_retry_is_a_debug_diagnostic(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CEREBRO_LOG", "debug")
    monkeypatch.setattr(logs, "_structlog_level", None)  # configure afresh, on this test's stderr
    _, work = _failing(2, Locked())
    retry.run_with_retry(work, sleep=lambda _: None)
    lines = [line for line in capsys.readouterr().err.splitlines() if "retrying" in line]
    assert len(lines) == 2
    assert re.search(r"(^|\s)brain locked; retrying the transaction\s", lines[0]), lines[0]  # the words alone
    assert "attempt=1" in lines[0]
    assert "attempt=2" in lines[1]
    monkeypatch.setattr(logs, "_structlog_level", None)
