"""Progress for long work: a one-line counter on a terminal's stderr, nothing when piped."""

from __future__ import annotations

import sys
from collections.abc import Callable


def reporter(label: str) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """(update(done, total), finish()) — both no-ops unless stderr is a terminal."""
    from cerebro.cli_state import state

    if state.quiet or not sys.stderr.isatty():
        return (lambda done, total: None), (lambda: None)

    def update(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()

    def finish() -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()

    return update, finish
