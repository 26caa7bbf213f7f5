"""The text of the dashboard's panels (spec §5.1) as Rich ``Text``: pure functions of the data and the width.

Kept out of the Textual app so that each panel's wording and numbers can be checked without a terminal,
and so that the app module is only layout, keys and refresh.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from cerebro.metrics import derive
from cerebro.metrics.dashboard_data import DashboardData
from cerebro.metrics.records import ToolCall, TurnMetrics

HEADING = "bold"
LABEL = "dim"
SPARK = "cyan"
WARNING = "bold yellow"
FLAG_STYLES = {"warning": WARNING, "info": "cyan", "note": "dim"}
TREND_DAYS = 14

NO_SELECTION = "Select a turn from the Turns panel (2) and press Enter."
NO_TOOL_DATA = "No tool call data."
NO_TREND_DATA = "No trend data. Run 'cerebro ingest' to collect metrics."
NO_TURN_DATA = "No turn data. Run 'cerebro ingest' to collect metrics."
HELP = "  1-5: panels  tab/arrows: navigate  r: refresh  q: quit"


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def overview_spark_width(terminal_width: int) -> int:
    return _clamp(terminal_width // 2 - 4, 20, 60)


def tool_bar_width(terminal_width: int) -> int:
    return _clamp(terminal_width // 2 - 20, 10, 40)


def trend_spark_width(terminal_width: int) -> int:
    return _clamp(terminal_width - 30, 20, 60)


class _Lines:
    """A small builder: one styled line at a time, so each panel reads top to bottom like its output."""

    def __init__(self) -> None:
        self.text = Text()

    def heading(self, title: str) -> None:
        if self.text:
            self.text.append("\n")
        self.text.append(title + "\n", style=HEADING)

    def field(self, label: str, value: str, *, pad: int, style: str = "") -> None:
        self.text.append(f"  {label:<{pad}}", style=LABEL)
        self.text.append(value + "\n", style=style)

    def line(self, value: str = "", style: str = "") -> None:
        self.text.append(value + "\n", style=style)


# ---------------------------------------------------------------------------------------------- 1 Overview


def overview(data: DashboardData, terminal_width: int) -> Text:
    turns = data.turns
    out = _Lines()
    out.heading("Session Summary")
    out.field("Turns:", str(len(turns)), pad=14)
    out.field("Sessions:", str(data.session_count), pad=14)
    out.field("Reads:", str(sum(t.tool_reads for t in turns)), pad=14)
    out.field("Edits:", str(sum(t.tool_edits for t in turns)), pad=14)
    brain = data.brain
    if brain is not None and brain.active_nodes > 0:
        out.field("Brain nodes:", str(brain.active_nodes), pad=14)
        out.field("Brain edges:", str(brain.total_edges), pad=14)
        if brain.cold_nodes > 0:
            out.field("Cold nodes:", f"{brain.cold_nodes} (not surfaced in 7 days)", pad=14, style=WARNING)
    if not turns:
        out.line()
        out.line("  " + NO_TURN_DATA, style=LABEL)
        return out.text
    width = overview_spark_width(terminal_width)
    out.heading("Quality Signals")
    out.field("R:E (turn):", derive.sparkline(derive.read_edit_series(turns), width), pad=14, style=SPARK)
    out.field("R:E (w10):", derive.sparkline(derive.windowed_read_edit_series(turns), width), pad=14, style=SPARK)
    thinking = derive.bool_sparkline(derive.thinking_flags(turns), width, derive.THINKING_MARKER)
    out.field("Thinking:", thinking, pad=14, style=SPARK)
    if derive.has_thinking_depth(turns):
        out.field("Think Depth:", derive.sparkline(derive.thinking_depth_series(turns), width), pad=14, style=SPARK)
    out.field("Cache Hit:", derive.sparkline(derive.cache_hit_series(turns), width), pad=14, style=SPARK)
    stops = derive.bool_sparkline(derive.stop_guard_flags(turns), width, derive.STOP_GUARD_MARKER)
    out.field("Stop Guard:", stops, pad=14, style=SPARK)
    out.line()
    out.line("  " + derive.summarize(turns).line(), style=HEADING)
    return out.text


# ---------------------------------------------------------------------------------------------- 2 Turns

TURN_COLUMNS: tuple[tuple[str, int], ...] = (
    ("#", 5),
    ("Time", 10),
    ("Session", 10),
    ("In Tok", 8),
    ("Out Tok", 8),
    ("Think", 6),
    ("R:E", 5),
    ("Reads", 6),
    ("Edits", 6),
    ("Tools", 6),
)


# ---------------------------------------------------------------------------------------------- 3 Detail


def detail_summary(turn: TurnMetrics | None) -> Text:
    """The left column of Detail: the turn's numbers (or how to pick a turn)."""
    out = _Lines()
    if turn is None:
        out.line(NO_SELECTION, style=LABEL)
        return out.text
    out.heading(f"Turn {turn.turn_number} Detail")
    out.field("Session:", turn.session_id[:12], pad=14)
    out.field("Timestamp:", turn.timestamp, pad=14)

    out.heading("Tokens")
    out.field("Input:", derive.compact_tokens(turn.input_tokens), pad=14)
    out.field("Output:", derive.compact_tokens(turn.output_tokens), pad=14)
    out.field("Cache read:", derive.compact_tokens(turn.cache_read_tokens), pad=14)
    out.field("Cache create:", derive.compact_tokens(turn.cache_create_tokens), pad=14)

    out.heading("Thinking")
    out.field("Blocks:", str(turn.thinking_blocks), pad=14)
    out.field("Chars:", str(turn.thinking_chars), pad=14)

    out.heading("Tools")
    for label, count in (
        ("Reads:", turn.tool_reads),
        ("Edits:", turn.tool_edits),
        ("Bash:", turn.tool_bash),
        ("Other:", turn.tool_other),
        ("Total:", turn.tool_calls_total),
    ):
        out.field(label, str(count), pad=14)
    if turn.read_edit_ratio is not None:
        out.field("R:E Ratio:", f"{turn.read_edit_ratio:.1f}", pad=14)
    if turn.cerebro_recalls or turn.cerebro_writes:
        out.field("Cerebro:", f"{turn.cerebro_recalls} recalls, {turn.cerebro_writes} writes", pad=14)
    return out.text


def detail_calls(turn: TurnMetrics | None, calls: Sequence[ToolCall]) -> Text:
    """The right column of Detail: what stands out in the turn, then its tool calls."""
    out = _Lines()
    if turn is None:
        return out.text
    flags = derive.quality_flags(turn)
    out.heading("Quality Flags")
    for flag in flags:
        out.line("  " + flag.text, style=FLAG_STYLES[flag.severity])
    if not flags:
        out.line("  (none)", style=LABEL)
    out.heading("Tool Calls")
    lines = derive.tool_call_lines(calls)
    for line in lines:
        out.line("  " + line)
    if not lines:
        out.line("  (none)", style=LABEL)
    return out.text


# ---------------------------------------------------------------------------------------------- 4 Tools


def tools(data: DashboardData, terminal_width: int) -> Text:
    out = _Lines()
    bars = derive.tool_bars(data.tool_distribution, tool_bar_width(terminal_width))
    if not bars:
        out.line(NO_TOOL_DATA, style=LABEL)
        return out.text
    out.heading("Tool Distribution")
    name_width = max(len(bar.name) for bar in bars)
    bar_width = max(len(bar.bar) for bar in bars)
    for bar in bars:
        out.text.append(f"  {bar.name:<{name_width}} ", style=LABEL)
        out.text.append(f"{bar.bar:<{bar_width}}", style=SPARK)
        out.text.append(f" {bar.count} ({bar.percent:.0f}%)\n")
    out.line()
    out.line(f"  Total calls: {sum(data.tool_distribution.values())}", style=HEADING)
    recalls = sum(t.cerebro_recalls for t in data.turns)
    writes = sum(t.cerebro_writes for t in data.turns)
    if recalls or writes:
        out.heading("Cerebro Operations")
        out.line(f"  Recalls: {recalls}  Writes: {writes}")
    return out.text


# ---------------------------------------------------------------------------------------------- 5 Trends


def trends(turns: Sequence[TurnMetrics], terminal_width: int) -> Text:
    out = _Lines()
    days = derive.daily_trends(turns)
    if not days:
        out.line(NO_TREND_DATA, style=LABEL)
        return out.text
    first, last = days[0], days[-1]
    if first.date[:4] == last.date[:4]:
        span = f"{first.short_date} to {last.short_date}"
    else:  # across a new year, MM-DD alone would read backwards
        span = f"{first.date[:10]} to {last.date[:10]}"
    out.heading(f"Trends ({span}, {len(days)} days)")
    width = trend_spark_width(terminal_width)
    out.field("R:E (daily):", derive.sparkline([d.read_edit for d in days], width), pad=15, style=SPARK)
    out.field("Zero-think %:", derive.sparkline([d.zero_think_percent for d in days], width), pad=15, style=SPARK)
    out.field("Cache hit %:", derive.sparkline([d.cache_percent for d in days], width), pad=15, style=SPARK)
    fires = derive.bool_sparkline([d.stop_guard_fires > 0 for d in days], width, derive.STOP_GUARD_MARKER)
    out.field("Stop guard:", fires, pad=15, style=SPARK)
    out.field("Turn volume:", derive.sparkline([float(d.turns) for d in days], width), pad=15, style=SPARK)

    out.heading("Daily Summary")
    out.line(f"  {'Date':<7}{'Turns':>6}{'R:E':>7}{'0-Think':>9}{'Cache':>7}{'Stops':>7}", style=LABEL)
    for day in reversed(days[-TREND_DAYS:]):  # most recent first
        out.line(
            f"  {day.short_date:<7}{day.turns:>6}{day.read_edit:>7.1f}{day.zero_think_percent:>8.0f}%"
            f"{day.cache_percent:>6.0f}%{day.stop_guard_fires:>7}"
        )
    return out.text
