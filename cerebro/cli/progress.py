"""Progress for long work (embedding, import, re-embedding): one line on a terminal's stderr with the count, the
rate and the time left; nothing when stderr is piped or under ``-q``."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

WIDTH = 30


def line(label: str, done: int, total: int, rate: float | None) -> str:
    """``label [#####.....] done/total  rate/s  ETA m:ss`` — the rate (items a second) once one is known."""
    filled = int(WIDTH * done / total) if total else WIDTH
    text = f"{label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total}"
    if rate is not None and rate > 0:
        left = max(0, total - done) / rate
        minutes, seconds = divmod(round(left), 60)
        text += f"  {rate:,.1f}/s  ETA {minutes}:{seconds:02d}"
    return text


def reporter(label: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """(update(done, total), finish()) — both no-ops unless stderr is a terminal. The rate is measured from the
    first update (work done before it, a resumed run's, does not count)."""
    from cerebro.cli_state import state

    if state.quiet or not sys.stderr.isatty():
        return (lambda done, total: None), (lambda: None)
    first: list[tuple[float, int]] = []

    def update(done: int, total: int) -> None:
        now = time.monotonic()
        if not first:
            first.append((now, done))
        started, done_before = first[0]
        rate = (done - done_before) / (now - started) if now > started and done > done_before else None
        sys.stderr.write("\r" + line(label, done, total, rate))
        sys.stderr.flush()

    def finish() -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()

    return update, finish
