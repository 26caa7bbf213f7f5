"""``cerebro dashboard``, headless: Textual's pilot drives the app over a real metrics database.

Deterministic by construction (ADR 0015): the data is built through ``MetricsStore``, the clock is fixed,
the live-refresh timer is off (tests call ``live_refresh`` themselves) and the terminal size is fixed.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher, DataTable, Static

from cerebro import Brain, clock, paths
from cerebro.metrics.dashboard import DashboardApp, Panel, StoreSource
from cerebro.metrics.records import ToolCall, TurnMetrics
from cerebro.metrics.store import MetricsStore, metrics_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code"
SIZE = (100, 34)
NOW = datetime(2026, 3, 3, 18, 30, 0, tzinfo=UTC)
SESSIONS = ("a1b2c3d4-5e6f-4a1b-9c2d-000000000001", "f9e8d7c6-b5a4-4f3e-8d2c-000000000002")


def fixed_clock() -> datetime:
    return NOW


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # Textual runs on asyncio


# ------------------------------------------------------------------------------------------ data


def sample_turns() -> tuple[list[TurnMetrics], list[ToolCall]]:
    """24 turns over 3 days and 2 sessions, with varied (but fixed) reads, edits, thinking and tokens."""
    turns: list[TurnMetrics] = []
    calls: list[ToolCall] = []
    for i in range(24):
        session = SESSIONS[0] if i < 12 else SESSIONS[1]
        number = i + 1 if i < 12 else i - 11
        stamp = f"2026-03-0{1 + i // 8}T{9 + i % 8:02d}:{i * 13 % 60:02d}:{i * 29 % 60:02d}.000Z"
        reads = (i * 7 + 3) % 6
        edits = 1 + i % 2 if i % 3 == 0 else 0
        bash = 2 if i % 4 == 1 else 0
        other = 1 if i % 5 == 0 else 0
        ops = {5: "recall", 9: "add"}  # turns with Bash calls
        blocks = 0 if i % 4 == 3 else 1 + i % 2
        turn_calls = (
            [
                ToolCall(
                    session,
                    number,
                    stamp,
                    ("Read", "Grep", "Glob")[k % 3],
                    file_path=f"/work/proj/src/module_{i}_{k}.py" if k % 3 == 0 else None,
                )
                for k in range(reads)
            ]
            + [ToolCall(session, number, stamp, "Edit", file_path=f"/work/proj/src/module_{i}_0.py")] * edits
            + [ToolCall(session, number, stamp, "Bash", cerebro_op=ops.get(i) if k == 0 else None) for k in range(bash)]
            + [ToolCall(session, number, stamp, "Task")] * other
        )
        calls.extend(turn_calls)
        turns.append(
            TurnMetrics(
                session_id=session,
                turn_number=number,
                timestamp=stamp,
                input_tokens=1500 + i * 731,
                output_tokens=300 + i * 97,
                cache_read_tokens=0 if i % 6 == 5 else 20_000 + i * 50_111,
                cache_create_tokens=4000 if i % 8 == 0 else 512,
                thinking_chars=blocks * (200 + i * 37),
                thinking_blocks=blocks,
                tool_calls_total=len(turn_calls),
                tool_reads=reads,
                tool_edits=edits,
                tool_bash=bash,
                tool_other=other,
                cerebro_recalls=1 if ops.get(i) == "recall" else 0,
                cerebro_writes=1 if ops.get(i) == "add" else 0,
                read_edit_ratio=reads / edits if edits else None,
                assistant_messages=2,
            )
        )
    return turns, calls


@pytest.fixture
def metrics_db(project: Path) -> Path:
    """The project's metrics database, written through the store as ingest would write it."""
    turns, calls = sample_turns()
    path = metrics_path(project)
    with MetricsStore.open(path, create=True) as store:
        store.save_parse(turns, calls)
        # The stop-guard blocked once, at the start of turn 3 of the second session.
        store.record_stop_guard(SESSIONS[1], "premature-stopping", at=turns[14].timestamp)
    return path


@pytest.fixture
def brain(project: Path) -> Iterator[Path]:
    """A small brain: 3 active memories (one surfaced at session start a day ago) and one edge."""
    path = paths.project_brain_path(project)
    Brain.init(path, embed_provider="none")
    clock.set_now(NOW - timedelta(days=1))
    with Brain.open(path) as b:
        first = b.add("Metrics live beside the brain", type="concept", importance=0.9)
        second = b.add("Ran the dashboard tests", type="episode")
        b.add("Keep snapshots deterministic", type="procedure")
        b.add_edge(first, second, "supports")
        b.touch_surfaced([first])  # what `recall --prime` does for what it injects
    clock.set_now(None)
    yield path


def make_app(project: Path, **options: object) -> DashboardApp:
    source = StoreSource(project, clock=fixed_clock, session_dir=project / "no-transcripts")
    return DashboardApp(source, clock=fixed_clock, refresh_seconds=None, **options)  # type: ignore[arg-type]


def panel_text(app: DashboardApp, panel_id: str) -> str:
    return app.query_one(f"#{panel_id}", Panel).render().plain


def help_text(app: DashboardApp) -> str:
    return str(app.query_one("#help", Static).render())


# ------------------------------------------------------------------------------------------ the source


def test_store_source_reads_turns_tools_and_brain_health(project: Path, metrics_db: Path, brain: Path) -> None:
    data = StoreSource(project, clock=fixed_clock).load(last=10)
    assert [t.timestamp[:10] for t in data.turns][:1] == ["2026-03-02"]  # the 10 most recent, oldest first
    assert [t.timestamp for t in data.turns] == sorted(t.timestamp for t in data.turns)
    assert len(data.turns) == 10
    assert data.session_count == 1
    assert data.tool_distribution["Bash"] == 12  # across every session, not just the loaded window
    assert data.brain is not None
    assert (data.brain.active_nodes, data.brain.total_edges) == (3, 1)
    assert sum(data.brain.nodes_by_type.values()) == 3


def test_cold_nodes_are_those_prime_has_not_surfaced_for_seven_days(project: Path, brain: Path) -> None:
    from cerebro.metrics.dashboard_data import read_brain_health

    a_day_later = read_brain_health(project, NOW)
    a_week_later = read_brain_health(project, NOW + timedelta(days=7))
    assert a_day_later is not None and a_week_later is not None
    assert a_day_later.cold_nodes == 2  # one memory was surfaced a day before NOW
    assert a_week_later.cold_nodes == 3


def test_no_brain_means_no_health_and_no_brain_is_created(project: Path, metrics_db: Path) -> None:
    assert StoreSource(project, clock=fixed_clock).load(last=5).brain is None
    assert not paths.project_brain_path(project).exists()


# ------------------------------------------------------------------------------------------ the app, driven


@pytest.mark.anyio
async def test_every_view_is_reachable_by_key_and_wraps(project: Path, metrics_db: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        switcher = app.query_one(ContentSwitcher)
        assert switcher.current == "overview"
        assert app.title == "Cerebro Dashboard"
        for key, view in zip("12345", ("overview", "turns", "detail", "tools", "trends"), strict=True):
            await pilot.press(key)
            assert switcher.current == view
        await pilot.press("tab")  # from the last view back to the first
        assert switcher.current == "overview"
        await pilot.press("shift+tab")
        assert switcher.current == "trends"
        await pilot.press("left", "left")
        assert switcher.current == "detail"
        await pilot.press("right")
        assert switcher.current == "tools"


@pytest.mark.anyio
async def test_overview_shows_totals_signals_and_summary(project: Path, metrics_db: Path, brain: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE):
        text = panel_text(app, "overview-panel")
        help_line = help_text(app)
    assert help_line == "  1-5: panels  tab/arrows: navigate  r: refresh  q: quit | refreshed 18:30:00"
    assert "Turns:        24" in text
    assert "Sessions:     2" in text
    assert "Brain nodes:  3" in text
    assert "Cold nodes:   2" in text
    assert "Stop Guard:" in text
    stop_line = next(line for line in text.splitlines() if "Stop Guard:" in line)
    assert stop_line.count("*") == 1  # the one recorded stop-guard decision
    assert "Stops: 1" in text


@pytest.mark.anyio
async def test_enter_on_a_turn_opens_its_detail_with_tool_calls(project: Path, metrics_db: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        assert "Select a turn from the Turns panel (2) and press Enter." in panel_text(app, "detail-panel")
        await pilot.press("2")
        table = app.query_one("#turns", DataTable)
        assert table.row_count == 24
        assert table.has_focus
        await pilot.press("down", "down", "down", "down", "down", "enter")  # the sixth turn: i = 5
        assert app.query_one(ContentSwitcher).current == "detail"
        text = panel_text(app, "detail-panel") + panel_text(app, "detail-calls")
    assert "Turn 6 Detail" in text
    assert "Session:      a1b2c3d4-5e6" in text
    assert "Cerebro:      1 recalls, 0 writes" in text
    assert "Read module_5_0.py" in text
    assert "Bash (recall)" in text
    assert "[!] EDIT WITHOUT READS" not in text


@pytest.mark.anyio
async def test_j_and_k_move_the_turns_cursor_as_upstream_does(project: Path, metrics_db: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2", "j", "j", "j", "k", "enter")  # down three, up one: the third turn
        assert app.query_one(ContentSwitcher).current == "detail"
        assert "Turn 3 Detail" in panel_text(app, "detail-panel")


@pytest.mark.anyio
async def test_r_reloads_what_was_written_since(project: Path, metrics_db: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        with MetricsStore.open(metrics_db) as store:
            store.save_parse([TurnMetrics("new-session-0001", 1, "2026-03-04T08:00:00.000Z", tool_edits=3)], [])
        assert "Turns:        24" in panel_text(app, "overview-panel")
        await pilot.press("r")
        assert "Turns:        25" in panel_text(app, "overview-panel")
        assert "(03-01 to 03-04, 4 days)" in panel_text(app, "trends-panel")


@pytest.mark.anyio
async def test_live_refresh_ingests_new_transcripts_then_reloads(project: Path, tmp_path: Path) -> None:
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    MetricsStore.open(metrics_path(project), create=True).close()
    ticks = iter([NOW, NOW + timedelta(seconds=5)])
    source = StoreSource(project, session_dir=transcripts, clock=fixed_clock)
    app = DashboardApp(source, clock=lambda: next(ticks), refresh_seconds=None)
    async with app.run_test(size=SIZE) as pilot:
        assert "Turns:        0" in panel_text(app, "overview-panel")
        shutil.copy(FIXTURES / "cerebro__simple_session.jsonl", transcripts / "test-session-1.jsonl")
        app.live_refresh()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Turns:        3" in panel_text(app, "overview-panel")
        assert "refreshed 18:30:05" in help_text(app)
        await pilot.press("4")
        assert "Total calls: 6" in panel_text(app, "tools-panel")


@pytest.mark.anyio
async def test_the_timer_refreshes_on_its_own(project: Path, metrics_db: Path) -> None:
    source = StoreSource(project, session_dir=project / "none", clock=fixed_clock)
    loads: list[datetime] = []

    def counting_clock() -> datetime:
        loads.append(NOW)
        return NOW

    app = DashboardApp(source, clock=counting_clock, refresh_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(100):  # up to 5 s on a busy machine; usually a few ticks
            await pilot.pause(0.05)
            if len(loads) >= 3:
                break
        await app.workers.wait_for_complete()
    assert len(loads) >= 3  # the first load, then at least two timer ticks


@pytest.mark.anyio
async def test_a_refresh_that_lands_after_quitting_is_dropped(project: Path, metrics_db: Path) -> None:
    """A timer tick's worker can finish while the app quits: its result finds no widgets, and is dropped."""
    source = StoreSource(project, session_dir=project / "none", clock=fixed_clock)
    app = DashboardApp(source, clock=fixed_clock, refresh_seconds=0)
    async with app.run_test(size=SIZE):
        loaded = app._load()
    app._apply(*loaded)  # must not raise NoMatches


class HeldIngest(StoreSource):
    """The real source, with an ingest that waits until the test lets it finish."""

    def __init__(self, project: Path) -> None:
        super().__init__(project, session_dir=project / "none", clock=fixed_clock)
        self.release = threading.Event()
        self.ingests = 0

    def ingest(self) -> None:
        self.ingests += 1
        self.release.wait(timeout=10)


@pytest.mark.anyio
async def test_a_tick_during_a_slow_refresh_is_skipped(project: Path, metrics_db: Path) -> None:
    source = HeldIngest(project)
    app = DashboardApp(source, clock=fixed_clock, refresh_seconds=None)
    async with app.run_test(size=SIZE) as pilot:
        app.live_refresh()
        await pilot.pause(0.1)
        app.live_refresh()  # the first is still ingesting
        source.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert source.ingests == 1
        app.live_refresh()  # once finished, the next tick runs again
        await app.workers.wait_for_complete()
        assert source.ingests == 2


@pytest.mark.anyio
async def test_a_load_error_is_shown_and_the_app_keeps_running(project: Path) -> None:
    app = make_app(project)  # no metrics database at all
    async with app.run_test(size=SIZE) as pilot:
        error = str(app.query_one("#error", Static).render())
        assert error.startswith("  Error: metrics database not found at ")
        await pilot.press("5")
        assert "No trend data. Run 'cerebro ingest' to collect metrics." in panel_text(app, "trends-panel")
        assert "No tool call data." in panel_text(app, "tools-panel")


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_q_and_ctrl_c_quit_cleanly(project: Path, metrics_db: Path, key: str) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2", key)
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0


def test_the_metrics_database_is_only_read(project: Path, metrics_db: Path) -> None:
    before = sqlite3.connect(metrics_db).execute("SELECT COUNT(*), SUM(tool_reads) FROM turn_metrics").fetchone()
    StoreSource(project, clock=fixed_clock).load(last=200)
    after = sqlite3.connect(metrics_db).execute("SELECT COUNT(*), SUM(tool_reads) FROM turn_metrics").fetchone()
    assert before == after


# ------------------------------------------------------------------------------------------ snapshots


async def _open_sixth_turn(pilot) -> None:
    await pilot.press("2", "down", "down", "down", "down", "down", "enter")


@pytest.mark.parametrize(
    ("press", "before"),
    [
        pytest.param(["1"], None, id="overview"),
        pytest.param(["2", "down", "down"], None, id="turns"),
        pytest.param([], _open_sixth_turn, id="detail"),
        pytest.param(["4"], None, id="tools"),
        pytest.param(["5"], None, id="trends"),
    ],
)
def test_snapshot_of_each_view(
    snap_compare, project: Path, metrics_db: Path, brain: Path, press: list[str], before
) -> None:
    assert snap_compare(make_app(project), press=press, terminal_size=SIZE, run_before=before)


# ------------------------------------------------------------------------------------------ panel text


@pytest.mark.parametrize(
    ("terminal", "overview", "bars", "trend"),
    [(40, 20, 10, 20), (100, 46, 30, 60), (200, 60, 40, 60)],  # clamped to 20..60, 10..40, 20..60
)
def test_panel_widths_follow_the_terminal_within_bounds(terminal: int, overview: int, bars: int, trend: int) -> None:
    from cerebro.metrics import dashboard_views as views

    assert views.overview_spark_width(terminal) == overview
    assert views.tool_bar_width(terminal) == bars
    assert views.trend_spark_width(terminal) == trend


def test_trends_table_lists_the_latest_fourteen_days_newest_first() -> None:
    from cerebro.metrics import dashboard_views as views

    turns = [TurnMetrics("s", n, f"2026-02-{n:02d}T12:00:00Z", tool_reads=n, tool_edits=1) for n in range(1, 21)]
    lines = views.trends(turns, 100).plain.splitlines()
    assert lines[0] == "Trends (02-01 to 02-20, 20 days)"
    rows = lines[lines.index("Daily Summary") + 2 :]
    assert [row.split()[0] for row in rows] == [f"02-{n:02d}" for n in range(20, 6, -1)]
    assert rows[0].split() == ["02-20", "1", "20.0", "100%", "0%", "0"]


def test_trends_across_a_new_year_name_the_years() -> None:
    from cerebro.metrics import dashboard_views as views

    turns = [TurnMetrics("s", 1, "2025-12-31T23:00:00Z"), TurnMetrics("s", 2, "2026-01-01T01:00:00Z")]
    assert views.trends(turns, 100).plain.splitlines()[0] == "Trends (2025-12-31 to 2026-01-01, 2 days)"
