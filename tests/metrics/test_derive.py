"""Derived metrics and sparklines (spec §3–5): the spec's examples and hand-computed values."""

from __future__ import annotations

import pytest

from cerebro.metrics.derive import (
    bool_sparkline,
    cache_hit_rate,
    cache_hit_series,
    compact_tokens,
    daily_trends,
    quality_flags,
    read_edit_series,
    render_stats_metrics,
    sparkline,
    summarize,
    thinking_redacted,
    tool_bars,
    tool_call_lines,
    turn_row_cells,
    windowed_read_edit_series,
)
from cerebro.metrics.records import ToolCall, TurnMetrics


def turn(number: int = 1, *, reads: int = 0, edits: int = 0, day: str = "2026-03-01", **fields: int) -> TurnMetrics:
    ratio = reads / edits if edits else None
    return TurnMetrics(
        session_id=str(fields.pop("session", "sess-abcdef-123456")),
        turn_number=number,
        timestamp=f"{day}T10:{number % 60:02d}:05.123Z",
        tool_reads=reads,
        tool_edits=edits,
        tool_calls_total=reads + edits + fields.get("tool_bash", 0) + fields.get("tool_other", 0),
        read_edit_ratio=ratio,
        **fields,
    )


# --------------------------------------------------------------------------------- sparklines (spec §4)


@pytest.mark.parametrize(
    ("values", "width", "expected"),
    [
        ([0, 1, 2], 0, "_▄█"),  # the spec's example: lo = 0, so 1 maps to int(3.5) = 3
        ([], 10, ""),
        ([5, 5, 5], 0, "███"),  # flat non-zero data: all full
        ([0, 0], 0, "__"),  # zeros are "nothing happened", never a bar
        ([1, 2, 3, 4, 5, 6, 7, 8], 0, "▁▂▃▄▅▆▇█"),  # (v-1)/7*7 = v-1: every level once
        ([1, 2, 3, 4], 2, "▁█"),  # only the last `width` values, rescaled among themselves
        ([-1, 0, 1], 0, "▁▄█"),  # with negative data a zero is an ordinary value
        ([0.0, 0.3, 1.0], 0, "_▃█"),  # 0.3*7 = 2.1 truncates to 2
    ],
)
def test_sparkline(values: list[float], width: int, expected: str) -> None:
    assert sparkline(values, width) == expected


def test_bool_sparkline_marks_true_values_and_keeps_the_last_width() -> None:
    assert bool_sparkline([True, False, True], 0, "^") == "^_^"
    assert bool_sparkline([True, False, False, True], 2, "*") == "_*"
    assert bool_sparkline([], 5, "*") == ""


# --------------------------------------------------------------------------------- derived metrics (spec §3)


def test_read_edit_series_shows_null_ratio_as_zero() -> None:
    assert read_edit_series([turn(reads=2, edits=1), turn(reads=3), turn(reads=1, edits=4)]) == [2.0, 0.0, 0.25]


def test_windowed_read_edit_sums_the_last_ten_turns_before_dividing() -> None:
    # Turn 1 edits once; then 11 read-only turns. The window keeps turn 1 until position 9, then loses it.
    turns = [turn(1, reads=1, edits=1)] + [turn(n, reads=2) for n in range(2, 13)]
    series = windowed_read_edit_series(turns)
    assert series[0] == 1.0
    assert series[1] == 3.0  # (1+2) / 1
    assert series[9] == 19.0  # (1 + 9*2) / 1: positions 0..9
    assert series[10] == 0.0  # positions 1..10: no edits left in the window
    assert len(series) == 12


def test_cache_hit_rate_per_turn_and_its_average_leaves_empty_turns_out() -> None:
    busy = turn(input_tokens=11000, cache_read_tokens=6500, cache_create_tokens=4000)
    warm = turn(input_tokens=7000, cache_read_tokens=6800)
    empty = turn()
    assert cache_hit_rate(busy) == pytest.approx(6500 / 21500)
    assert cache_hit_rate(empty) is None
    assert cache_hit_series([busy, empty]) == [pytest.approx(6500 / 21500), 0.0]
    # mean of the two rates (not token-weighted), the empty turn excluded: (0.3023 + 0.4928) / 2
    assert summarize([busy, warm, empty]).cache_percent == pytest.approx((6500 / 21500 + 6800 / 13800) / 2 * 100)


def test_summary_line() -> None:
    turns = [
        turn(1, reads=2, edits=1, thinking_blocks=1, thinking_chars=49),
        turn(2, reads=1, stop_guard_fired=1),
        turn(3, edits=2),
    ]
    summary = summarize(turns)
    assert summary.read_edit == 1.0  # Σreads 3 / Σedits 3, not the mean of per-turn ratios
    assert summary.think_percent == pytest.approx(100 / 3)
    assert summary.stops == 1
    assert summary.line() == "R:E: 1.0  Think: 33% active  Cache: 0%  Stops: 1"


def test_summary_of_no_edits_and_no_turns_is_zero_not_an_error() -> None:
    assert summarize([turn(reads=4)]).read_edit == 0.0
    assert summarize([]).line() == "R:E: 0.0  Think: 0% active  Cache: 0%  Stops: 0"


def test_thinking_is_redacted_only_when_blocks_exist_and_no_turn_kept_text() -> None:
    assert thinking_redacted([turn(thinking_blocks=2), turn()])
    assert not thinking_redacted([turn(thinking_blocks=2), turn(thinking_blocks=1, thinking_chars=10)])
    assert not thinking_redacted([turn(), turn()])  # no thinking at all is not "redacted"
    assert summarize([turn(thinking_blocks=1)]).line().endswith("active (redacted)  Cache: 0%  Stops: 0")


def test_daily_trends_group_by_utc_date_in_first_seen_order() -> None:
    turns = [
        turn(1, reads=4, edits=1, day="2026-03-01", thinking_blocks=1, input_tokens=50, cache_read_tokens=50),
        turn(2, reads=2, edits=1, day="2026-03-01"),
        turn(3, reads=1, day="2026-03-02", stop_guard_fired=1, thinking_blocks=1),
    ]
    first, second = daily_trends(turns)
    assert (first.date, first.short_date, first.turns, first.reads, first.edits) == ("2026-03-01", "03-01", 2, 6, 2)
    assert first.read_edit == 3.0
    assert first.zero_think_percent == 50.0
    assert first.cache_percent == 25.0  # rates 0.5 and 0 (no tokens) over both turns
    assert (second.read_edit, second.zero_think_percent, second.stop_guard_fires) == (0.0, 0.0, 1)


# --------------------------------------------------------------------------------- cells and detail


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, "0"), (999, "999"), (1000, "1.0K"), (3449, "3.4K"), (999_999, "1000.0K"), (1_250_000, "1.2M")],
)
def test_compact_tokens(count: int, expected: str) -> None:
    assert compact_tokens(count) == expected


def test_turn_row_cells() -> None:
    row = turn(
        7, reads=2, edits=1, input_tokens=11000, output_tokens=800, thinking_blocks=1, thinking_chars=49, tool_bash=1
    )
    assert turn_row_cells(row) == ("7", "10:07:05", "sess-abc", "11.0K", "800", "49", "2.0", "2", "1", "4")
    assert turn_row_cells(turn(2, reads=1))[5:7] == ("-", "-")  # no thinking, no ratio
    assert turn_row_cells(turn(2, thinking_blocks=3))[5] == "^"  # redacted thinking


def test_quality_flags() -> None:
    assert [f.text for f in quality_flags(turn(edits=1))] == ["[!] ZERO THINKING", "[!] EDIT WITHOUT READS"]
    assert [f.text for f in quality_flags(turn(reads=3, thinking_blocks=1))] == [
        "[i] Thinking redacted (blocks present, content empty)",
        "[ ] Research turn (reads only, no edits)",
    ]
    assert [
        f.text for f in quality_flags(turn(reads=1, edits=1, thinking_blocks=1, thinking_chars=5, stop_guard_fired=1))
    ] == ["[!] STOP GUARD FIRED"]


def test_tool_call_lines_show_basenames_ops_and_cap_at_fifteen() -> None:
    calls = [
        ToolCall("s", 1, "t", "Read", file_path="/src/pkg/main.go"),
        ToolCall("s", 1, "t", "Bash", cerebro_op="recall"),
    ] + [ToolCall("s", 1, "t", "Grep") for _ in range(16)]
    lines = tool_call_lines(calls)
    assert lines[:2] == ["Read main.go", "Bash (recall)"]
    assert len(lines) == 16
    assert lines[-1] == "... and 3 more"


def test_tool_bars_scale_to_the_busiest_and_never_hide_a_used_tool() -> None:
    bars = tool_bars({"Edit": 5, "Read": 100, "Skill": 1}, width=10)
    assert [(b.name, len(b.bar)) for b in bars] == [("Read", 10), ("Edit", 1), ("Skill", 1)]
    assert bars[0].percent == pytest.approx(100 / 106 * 100)
    assert tool_bars({}, 10) == []


# --------------------------------------------------------------------------------- stats --metrics (spec §5)


def test_render_stats_metrics_exact_block() -> None:
    turns = [
        turn(
            1,
            reads=2,
            edits=1,
            thinking_blocks=1,
            thinking_chars=49,
            input_tokens=11000,
            cache_read_tokens=6500,
            cache_create_tokens=4000,
        ),
        turn(2, tool_bash=1, input_tokens=7000, cache_read_tokens=6800),
        turn(3, tool_bash=2),
    ]
    assert render_stats_metrics(turns) == (
        "\n## Session Metrics (last 3 turns)\n\n"
        "  R:E          █__\n"
        "  R:E (w10)    ███\n"
        "  Thinking     ^__\n"
        "  Think Depth  █__\n"
        "  Cache Hit    ▅█_\n"  # 0.302/0.493*7 = 4.29 → level 4
        "  Stop Guard   ___\n"
        "\n"
        "  R:E: 2.0  Think: 33% active  Cache: 40%  Stops: 0\n"
    )


def test_render_stats_metrics_redacted_thinking_has_no_depth_line() -> None:
    text = render_stats_metrics([turn(1, thinking_blocks=1), turn(2)])
    assert "Think Depth" not in text
    assert "Think: 50% active (redacted)" in text


def test_render_stats_metrics_draws_only_the_last_fifty_turns() -> None:
    turns = [turn(n, reads=n % 3, edits=1, thinking_blocks=n % 2) for n in range(1, 61)]
    lines = render_stats_metrics(turns).splitlines()
    assert lines[1] == "## Session Metrics (last 60 turns)"
    sparks = {line[15:] for line in lines[3:8]}
    assert {len(s) for s in sparks} == {50}


def test_render_stats_metrics_without_turns_points_at_ingest() -> None:
    assert render_stats_metrics([]) == "\nNo turn data. Run 'cerebro ingest' to collect session metrics.\n"
