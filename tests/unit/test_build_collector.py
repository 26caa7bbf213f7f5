"""The cyclic garbage collector around bulk builds (``cerebro.process.collector_paused``): off while any build runs,
back on when the last ends, and never turned on by cerebro when it was off before."""

from __future__ import annotations

import gc
import threading

import pytest

from cerebro import process


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_off_during_a_build_and_on_after() -> None:
    with process.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_back_on_after_a_build_that_failed() -> None:
    with pytest.raises(RuntimeError), process.collector_paused():
        raise RuntimeError("the build broke")
    assert gc.isenabled()


def test_overlapping_builds_in_two_threads_keep_it_off_until_the_last_ends() -> None:
    first_in, second_in, first_may_end = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with process.collector_paused():
            first_in.set()
            first_may_end.wait(10)
        seen.append(gc.isenabled())  # the second build still runs

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(10)
    with process.collector_paused():
        second_in.set()
        first_may_end.set()
        thread.join(10)
        assert seen == [False] and not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_someone_else_turned_off_stays_off() -> None:
    gc.disable()  # a program that manages its own collector, or the CLI's start-up pause
    with process.collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
