"""What kind of process this is, for settings that only pay off over many calls (ADR 0043, ADR 0046).

A library user and ``cerebro mcp`` serve many calls from one process; a CLI command serves one and exits. The CLI's
entry point marks its process one-shot before anything opens a brain, and ``cerebro mcp`` unmarks it again. It also
pauses the cyclic garbage collector for the start-up; a command that may run long resumes it.
"""

from __future__ import annotations

import gc

ONE_SHOT = False
_PAUSED = False  # the collector was turned off by pause_collector (not by whoever else runs this code)


def pause_collector() -> None:
    """Turn the cyclic garbage collector off (the CLI's entry point: ~23,000 start-up objects it would walk again and
    again), if it is on."""
    global _PAUSED  # noqa: PLW0603 - the process's one collector
    if gc.isenabled():
        gc.disable()
        _PAUSED = True


def resume_collector() -> None:
    """Turn the collector back on if pause_collector turned it off, the start-up's objects frozen first (set aside:
    never walked again). A program that calls the CLI's ``run`` itself keeps its collector as it was."""
    global _PAUSED  # noqa: PLW0603
    if _PAUSED:
        _PAUSED = False
        gc.freeze()
        gc.enable()
