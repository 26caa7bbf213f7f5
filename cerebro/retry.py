"""Retry a whole unit of work when SQLite says the database is locked or busy (or PostgreSQL, that a concurrent
transaction won: a serialization failure or a deadlock).

``busy_timeout`` already makes SQLite wait inside one statement; this covers the cases it cannot
(a lock upgrade that would deadlock returns SQLITE_BUSY at once) with bounded, jittered retries of the
whole transaction, so many agents can share one brain.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from cerebro.errors import BrainBusy

if TYPE_CHECKING:
    from tenacity import RetryCallState

T = TypeVar("T")

ATTEMPTS = 8  # a lock upgrade that fails at once (no busy_timeout wait) is tried this many times, ~3 s in all
INITIAL_WAIT = 0.05
MAX_WAIT = 1.0
# A writer holding its lock makes each attempt wait busy_timeout (5 s) first: eight of those kept a caller — and an MCP
# server's every queued call — waiting ~40 s before saying the brain is busy. No new attempt starts after this long.
MAX_SECONDS = 10.0


# PostgreSQL's answers that mean "another writer got there first; the whole transaction may simply run again"
# (a team brain, ADR 0030): serialization failure, deadlock detected, lock not available.
RETRYABLE_SQLSTATES = {"40001", "40P01", "55P03"}


def is_lock_error(exc: BaseException) -> bool:
    cause = getattr(exc, "orig", None) or exc
    if getattr(cause, "sqlstate", None) in RETRYABLE_SQLSTATES:
        return True
    text = str(cause).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def run_with_retry(
    work: Callable[[], T],
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    max_seconds: float = MAX_SECONDS,
) -> T:
    """Run ``work``; on a lock error retry it with exponential backoff and jitter — up to ATTEMPTS times, none begun
    ``max_seconds`` (MAX_SECONDS) after the first — then raise BrainBusy. ``sleep`` waits between attempts and
    ``clock`` reads the time (a test passes its own, to see the waits without taking them)."""
    from tenacity import Retrying, retry_if_exception, wait_random_exponential

    started = clock()

    def stop(state: RetryCallState) -> bool:
        return state.attempt_number >= ATTEMPTS or clock() - started >= max_seconds

    def note(state: RetryCallState) -> None:
        from cerebro import logs

        logs.debug("brain locked; retrying the transaction", attempt=state.attempt_number)

    retrying = Retrying(
        retry=retry_if_exception(is_lock_error),
        before_sleep=note,
        stop=stop,
        wait=wait_random_exponential(multiplier=INITIAL_WAIT, max=MAX_WAIT),
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(work)
    except Exception as exc:
        if is_lock_error(exc):
            raise BrainBusy(
                "the brain stayed locked by other writers; try again, or look for a stuck cerebro process"
            ) from exc
        raise
