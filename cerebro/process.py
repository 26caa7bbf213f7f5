"""What kind of process this is, for settings that only pay off over many calls (ADR 0043, ADR 0046).

A library user and ``cerebro mcp`` serve many calls from one process; a CLI command serves one and exits. The CLI's
entry point marks its process one-shot before anything opens a brain, and ``cerebro mcp`` unmarks it again. It also
pauses the cyclic garbage collector for the start-up; a command that may run long resumes it. Bulk builds of a
long-lived process (a rows or keyword copy) pause it while they run (:func:`collector_paused`).
"""

from __future__ import annotations

import _thread
import gc
from collections.abc import Iterator
from contextlib import contextmanager

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


_BUILDS = 0  # bulk builds under way in this process (collector_paused)
_BUILDS_LOCK = _thread.allocate_lock()  # _thread: built in, where threading costs a hook ~1 ms to import
_BUILDS_PAUSED = False  # the first of them turned the collector off


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off while a bulk build makes long-lived objects (a rows or keyword copy: ~300,000 at 100k
    memories, which the collector walked ~470 times — a fifth of the build's CPU, and pauses of up to ~50 ms for
    every thread of the process, recalls included). Builds in other threads may overlap: the collector comes back on
    when the last one ends, and only if it was on when the first began."""
    global _BUILDS, _BUILDS_PAUSED  # noqa: PLW0603 - the process's one collector
    with _BUILDS_LOCK:
        if _BUILDS == 0:
            _BUILDS_PAUSED = gc.isenabled()
            gc.disable()
        _BUILDS += 1
    try:
        yield
    finally:
        with _BUILDS_LOCK:
            _BUILDS -= 1
            if _BUILDS == 0 and _BUILDS_PAUSED:
                _BUILDS_PAUSED = False
                gc.enable()
