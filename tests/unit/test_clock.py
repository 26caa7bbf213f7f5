from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from cerebro import clock


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-11 10:00:00", "2026-03-11 10:00:00"),
        ("2026-03-11T10:00:00Z", "2026-03-11 10:00:00"),
        ("2026-03-11T10:00:00.123456789Z", "2026-03-11 10:00:00"),
        ("2026-03-11T12:00:00+02:00", "2026-03-11 10:00:00"),
        ("2026-03-11T05:30:00-04:30", "2026-03-11 10:00:00"),
        ("2026-03-11", "2026-03-11 00:00:00"),
        ("2026-03-11 10:00", "2026-03-11 10:00:00"),
    ],
)
def test_parse_accepts_layout_rfc3339_and_dates(text: str, expected: str) -> None:
    assert clock.normalise(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "2026-02-30T00:00:00Z", "", "10:00"])
def test_parse_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        clock.parse(text)


def test_format_is_storage_layout_in_utc() -> None:
    value = datetime(2026, 3, 11, 12, 0, 0, 999, tzinfo=timezone(timedelta(hours=2)))
    assert clock.format_ts(value) == "2026-03-11 10:00:00"


def test_clock_can_be_pinned_in_process_and_by_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clock.set_now(datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert clock.now_text() == "2030-01-02 03:04:05"
    clock.set_now(None)
    monkeypatch.setenv("CEREBRO_NOW", "2031-06-01T00:00:00Z")
    assert clock.now_text() == "2031-06-01 00:00:00"
    monkeypatch.delenv("CEREBRO_NOW")
    assert abs((clock.now() - datetime.now(UTC)).total_seconds()) < 5


def test_stored_timestamps_come_from_the_clock(brain) -> None:
    clock.set_now(datetime(2029, 5, 6, 7, 8, 9, tzinfo=UTC))
    node_id = brain.add("pinned")
    node = brain.get(node_id).node
    assert node.created_at == datetime(2029, 5, 6, 7, 8, 9, tzinfo=UTC)
    raw = brain.handle.engine.connect().exec_driver_sql("SELECT created_at, last_accessed FROM nodes").fetchone()
    assert tuple(raw) == ("2029-05-06 07:08:09", "2029-05-06 07:08:09")
