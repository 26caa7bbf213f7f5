"""Derived session metrics, sparklines and the ``stats --metrics`` text block (spec §3–5).

Pure functions over :class:`TurnMetrics` rows: no I/O, no clock, no terminal. ``cerebro stats --metrics``
and the dashboard both render from here, so the two can never disagree about what a number means.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from cerebro.metrics.records import ToolCall, TurnMetrics

SPARK_GLYPHS = "▁▂▃▄▅▆▇█"  # U+2581..U+2588, lowest to highest
ZERO_GLYPH = "_"
THINKING_MARKER = "^"
STOP_GUARD_MARKER = "*"
STATS_SPARK_WIDTH = 50
READ_EDIT_WINDOW = 10


# ---------------------------------------------------------------------------------------------- sparklines


T = TypeVar("T")


def _keep_last(values: Sequence[T], width: int) -> Sequence[T]:
    return values[-width:] if 0 < width < len(values) else values


def sparkline(values: Sequence[float], width: int = 0) -> str:
    """One glyph per value (the last ``width`` values when there are more), scaled between min and max.

    Zeros in non-negative data render ``_`` so that "nothing happened" reads differently from "a little
    happened": ``[0, 1, 2]`` → ``_▄█``.
    """
    kept = [float(v) for v in _keep_last(values, width)]
    if not kept:
        return ""
    lo, hi = min(kept), max(kept)
    glyphs = []
    for value in kept:
        if value == 0 and lo >= 0:
            glyphs.append(ZERO_GLYPH)
        elif hi == lo:
            glyphs.append(SPARK_GLYPHS[-1])
        else:
            # int() truncates toward zero, as Go's conversion does; the clamp guards rounding at the top.
            level = int((value - lo) / (hi - lo) * 7)
            glyphs.append(SPARK_GLYPHS[min(max(level, 0), 7)])
    return "".join(glyphs)


def bool_sparkline(values: Sequence[bool], width: int, marker: str) -> str:
    """``marker`` for each true value, ``_`` for each false one (the last ``width`` values)."""
    return "".join(marker if value else ZERO_GLYPH for value in _keep_last(values, width))


# ---------------------------------------------------------------------------------------------- per turn


def read_edit_series(turns: Sequence[TurnMetrics]) -> list[float]:
    """Per-turn Read:Edit; a turn without edits (NULL ratio) counts as 0 on a sparkline."""
    return [turn.read_edit_ratio or 0.0 for turn in turns]


def windowed_read_edit_series(turns: Sequence[TurnMetrics], window: int = READ_EDIT_WINDOW) -> list[float]:
    """Read:Edit over the last ``window`` turns at each position: Σreads / Σedits, 0 without edits.

    Summing before dividing (rather than averaging ratios) keeps one read-only turn from dominating.
    """
    series = []
    for end in range(len(turns)):
        recent = turns[max(0, end - window + 1) : end + 1]
        series.append(_ratio(sum(t.tool_reads for t in recent), sum(t.tool_edits for t in recent)))
    return series


def thinking_flags(turns: Sequence[TurnMetrics]) -> list[bool]:
    return [turn.thinking_blocks > 0 for turn in turns]


def thinking_depth_series(turns: Sequence[TurnMetrics]) -> list[float]:
    return [float(turn.thinking_chars) for turn in turns]


def has_thinking_depth(turns: Iterable[TurnMetrics]) -> bool:
    """Whether any turn's thinking has content (newer Claude Code versions redact it to "")."""
    return any(turn.thinking_chars > 0 for turn in turns)


def thinking_redacted(turns: Sequence[TurnMetrics]) -> bool:
    """Thinking happened (blocks) yet no turn kept any of its text: the model's thinking is redacted."""
    return any(t.thinking_blocks > 0 for t in turns) and not has_thinking_depth(turns)


def cache_hit_rate(turn: TurnMetrics) -> float | None:
    """Share of the prompt served from cache; None when the turn used no prompt tokens at all."""
    denominator = turn.input_tokens + turn.cache_read_tokens + turn.cache_create_tokens
    return turn.cache_read_tokens / denominator if denominator > 0 else None


def cache_hit_series(turns: Sequence[TurnMetrics]) -> list[float]:
    return [cache_hit_rate(turn) or 0.0 for turn in turns]


def stop_guard_flags(turns: Sequence[TurnMetrics]) -> list[bool]:
    return [turn.stop_guard_fired > 0 for turn in turns]


# ---------------------------------------------------------------------------------------------- summary


def _ratio(reads: int, edits: int) -> float:
    return reads / edits if edits > 0 else 0.0


@dataclass(frozen=True)
class MetricsSummary:
    """The one-line verdict over a window of turns (spec §3)."""

    turns: int
    read_edit: float  # Σreads / Σedits, 0 without edits
    think_percent: float  # share of turns with thinking blocks, × 100
    thinking_redacted: bool
    cache_percent: float  # mean of the per-turn cache hit rates (turns with no prompt tokens left out), × 100
    stops: int

    def line(self) -> str:
        redacted = " (redacted)" if self.thinking_redacted else ""
        return (
            f"R:E: {self.read_edit:.1f}  Think: {self.think_percent:.0f}% active{redacted}  "
            f"Cache: {self.cache_percent:.0f}%  Stops: {self.stops}"
        )


def summarize(turns: Sequence[TurnMetrics]) -> MetricsSummary:
    rates = [rate for turn in turns if (rate := cache_hit_rate(turn)) is not None]
    thinking = sum(1 for turn in turns if turn.thinking_blocks > 0)
    return MetricsSummary(
        turns=len(turns),
        read_edit=_ratio(sum(t.tool_reads for t in turns), sum(t.tool_edits for t in turns)),
        think_percent=thinking / len(turns) * 100 if turns else 0.0,
        thinking_redacted=thinking_redacted(turns),
        cache_percent=sum(rates) / len(rates) * 100 if rates else 0.0,
        stops=sum(1 for turn in turns if turn.stop_guard_fired > 0),
    )


# ---------------------------------------------------------------------------------------------- daily trends


@dataclass(frozen=True)
class DailyTrend:
    date: str  # YYYY-MM-DD, the UTC date as Claude Code wrote it
    turns: int
    reads: int
    edits: int
    read_edit: float
    zero_think_percent: float
    cache_percent: float  # Σ per-turn rates / all the day's turns (zero-denominator turns included), × 100
    stop_guard_fires: int

    @property
    def short_date(self) -> str:
        return self.date[5:10]


def daily_trends(turns: Sequence[TurnMetrics]) -> list[DailyTrend]:
    """One row per day, in the order the days first appear (chronological for chronological input)."""
    by_day: dict[str, list[TurnMetrics]] = {}
    for turn in turns:
        by_day.setdefault(turn.timestamp[:10], []).append(turn)
    trends = []
    for day, day_turns in by_day.items():
        count = len(day_turns)
        reads = sum(t.tool_reads for t in day_turns)
        edits = sum(t.tool_edits for t in day_turns)
        trends.append(
            DailyTrend(
                date=day,
                turns=count,
                reads=reads,
                edits=edits,
                read_edit=_ratio(reads, edits),
                zero_think_percent=sum(1 for t in day_turns if t.thinking_blocks == 0) / count * 100,
                cache_percent=sum(cache_hit_series(day_turns)) / count * 100,
                stop_guard_fires=sum(1 for t in day_turns if t.stop_guard_fired > 0),
            )
        )
    return trends


# ---------------------------------------------------------------------------------------------- cells


def compact_tokens(count: int) -> str:
    """``1.2M``, ``3.4K`` or the plain integer: token counts that fit a 8-column cell."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}K"
    return str(count)


def ratio_cell(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.1f}"


def thinking_cell(turn: TurnMetrics) -> str:
    """``-`` without thinking, the character count when it has text, ``^`` when it was redacted."""
    if turn.thinking_blocks == 0:
        return "-"
    return str(turn.thinking_chars) if turn.thinking_chars > 0 else THINKING_MARKER


def turn_time(turn: TurnMetrics) -> str:
    return turn.timestamp[11:19]  # HH:MM:SS out of an ISO 8601 timestamp


def turn_row_cells(turn: TurnMetrics) -> tuple[str, ...]:
    """The Turns table row: #, Time, Session, In Tok, Out Tok, Think, R:E, Reads, Edits, Tools."""
    return (
        str(turn.turn_number),
        turn_time(turn),
        turn.session_id[:8],
        compact_tokens(turn.input_tokens),
        compact_tokens(turn.output_tokens),
        thinking_cell(turn),
        ratio_cell(turn.read_edit_ratio),
        str(turn.tool_reads),
        str(turn.tool_edits),
        str(turn.tool_calls_total),
    )


# ---------------------------------------------------------------------------------------------- one turn


@dataclass(frozen=True)
class QualityFlag:
    text: str
    severity: str  # "warning" | "info" | "note"


def quality_flags(turn: TurnMetrics) -> list[QualityFlag]:
    """What stands out in one turn: the signals that an agent skimped on thinking or reading."""
    flags = []
    if turn.thinking_blocks == 0:
        flags.append(QualityFlag("[!] ZERO THINKING", "warning"))
    if turn.tool_edits > 0 and turn.tool_reads == 0:
        flags.append(QualityFlag("[!] EDIT WITHOUT READS", "warning"))
    if turn.stop_guard_fired > 0:
        flags.append(QualityFlag("[!] STOP GUARD FIRED", "warning"))
    if turn.thinking_blocks > 0 and turn.thinking_chars == 0:
        flags.append(QualityFlag("[i] Thinking redacted (blocks present, content empty)", "info"))
    if turn.thinking_blocks > 0 and turn.tool_reads > 0 and turn.tool_edits == 0:
        flags.append(QualityFlag("[ ] Research turn (reads only, no edits)", "note"))
    return flags


def tool_call_lines(calls: Sequence[ToolCall], limit: int = 15) -> list[str]:
    """``Read main.go``, ``Bash (recall)``…: at most ``limit`` lines, then ``... and N more``."""
    lines = []
    for call in calls[:limit]:
        line = call.tool_name
        if call.file_path:
            line += " " + call.file_path.rsplit("/", 1)[-1]
        if call.cerebro_op:
            line += f" ({call.cerebro_op})"
        lines.append(line)
    if len(calls) > limit:
        lines.append(f"... and {len(calls) - limit} more")
    return lines


# ---------------------------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ToolBar:
    name: str
    count: int
    bar: str
    percent: float


def tool_bars(distribution: dict[str, int], width: int) -> list[ToolBar]:
    """Horizontal ``█`` bars, most used first, scaled so the busiest tool fills ``width``.

    Any tool that was used gets at least one block, so a rare tool never looks unused.
    """
    total = sum(distribution.values())
    if total == 0:
        return []
    peak = max(distribution.values())
    ordered = sorted(distribution.items(), key=lambda item: (-item[1], item[0]))
    bars = []
    for name, count in ordered:
        length = int(count / peak * width)
        if count > 0:
            length = max(length, 1)
        bars.append(ToolBar(name, count, "█" * length, count / total * 100))
    return bars


# ---------------------------------------------------------------------------------------------- stats --metrics


def _stats_line(label: str, spark: str) -> str:
    return f"  {label:<13}{spark}\n"


def render_stats_metrics(turns: list[TurnMetrics]) -> str:
    """The ``cerebro stats --metrics`` block for ``turns`` (chronological): sparklines, then the summary."""
    if not turns:
        return "\nNo turn data. Run 'cerebro ingest' to collect session metrics.\n"
    width = STATS_SPARK_WIDTH
    parts = [
        f"\n## Session Metrics (last {len(turns)} turns)\n\n",
        _stats_line("R:E", sparkline(read_edit_series(turns), width)),
        _stats_line("R:E (w10)", sparkline(windowed_read_edit_series(turns), width)),
        _stats_line("Thinking", bool_sparkline(thinking_flags(turns), width, THINKING_MARKER)),
    ]
    if has_thinking_depth(turns):
        parts.append(_stats_line("Think Depth", sparkline(thinking_depth_series(turns), width)))
    parts.append(_stats_line("Cache Hit", sparkline(cache_hit_series(turns), width)))
    parts.append(_stats_line("Stop Guard", bool_sparkline(stop_guard_flags(turns), width, STOP_GUARD_MARKER)))
    parts.append("\n")
    parts.append(f"  {summarize(turns).line()}\n")
    return "".join(parts)
