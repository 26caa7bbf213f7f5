"""The progress line: count, bar, rate and time left (issue 16); silent when stderr is not a terminal."""

from __future__ import annotations

import io

import pytest

from cerebro.cli import progress


def test_the_line_shows_the_rate_and_the_time_left() -> None:
    assert progress.line("embedding", 250, 1000, 50.0) == (
        "embedding [#######.......................] 250/1000  50.0/s  ETA 0:15"
    )
    assert progress.line("embedding", 0, 1000, 2.0).endswith("2.0/s  ETA 8:20")
    assert progress.line("importing", 1000, 1000, 1234.5).endswith("1,234.5/s  ETA 0:00")


def test_before_a_rate_is_known_the_line_is_the_count_alone() -> None:
    assert progress.line("embedding", 0, 10, None) == "embedding [..............................] 0/10"
    assert progress.line("embedding", 5, 0, None).endswith("[##############################] 5/0")


def test_nothing_is_written_when_stderr_is_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    monkeypatch.setattr("sys.stderr", piped)
    update, finish = progress.reporter("embedding")
    update(1, 2)
    finish()
    assert piped.getvalue() == ""


def test_on_a_terminal_the_rate_counts_from_the_first_update(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    ticks = iter([100.0, 102.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(ticks))
    update, finish = progress.reporter("re-embedding")
    update(40, 100)  # a resumed run: 40 done before it started
    update(60, 100)  # 20 more in 2 s
    finish()
    assert screen.getvalue() == (
        "\rre-embedding [############..................] 40/100"
        "\rre-embedding [##################............] 60/100  10.0/s  ETA 0:04\n"
    )
