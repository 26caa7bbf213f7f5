"""``cerebro dashboard``: a full-screen Textual app over the session metrics (spec §5.1).

Five views — Overview, Turns, Detail, Tools, Trends — switched with ``1``–``5``, ``tab``/``shift+tab`` and
the arrows. Every ``refresh_seconds`` a worker thread re-ingests the transcripts and reloads; ``r``
reloads at once without ingesting. The data source, the clock and the refresh interval are constructor
arguments, so tests drive the app headless over a database they built, at a fixed time, with no timer
(ADR 0015).

Textual is imported here and only here (plus the CLI command, lazily): ``import cerebro`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import ContentSwitcher, DataTable, Static, Tab, Tabs

from cerebro.metrics import dashboard_views as views
from cerebro.metrics import derive
from cerebro.metrics.dashboard_data import BrainHealth, DashboardData, DashboardSource, StoreSource
from cerebro.metrics.records import ToolCall, TurnMetrics

__all__ = ["BrainHealth", "DashboardApp", "DashboardData", "DashboardSource", "StoreSource"]

DEFAULT_REFRESH_SECONDS = 5.0
LIVE_REFRESH = "live-refresh"  # the worker group of the timer's ingest-and-reload
VIEWS: tuple[tuple[str, str], ...] = (
    ("overview", "1:Overview"),
    ("turns", "2:Turns"),
    ("detail", "3:Detail"),
    ("tools", "4:Tools"),
    ("trends", "5:Trends"),
)
VIEW_IDS = tuple(view_id for view_id, _ in VIEWS)


def _local_now() -> datetime:
    return datetime.now().astimezone()


class Panel(Widget):
    """A text view drawn from the app's current data at the terminal's current width."""

    DEFAULT_CSS = "Panel { height: auto; }"

    def __init__(self, draw: Callable[[int], Text], *, id: str) -> None:
        super().__init__(id=id)
        self._draw = draw

    def render(self) -> Text:
        return self._draw(self.app.size.width)


class _TurnsTable(DataTable[str]):
    """The Turns view's table, moved with j and k too (upstream's keys) as well as the arrows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
    ]


class DashboardApp(App[None]):
    """The dashboard. ``source`` supplies the data; ``clock`` stamps "refreshed"; ``refresh_seconds``
    sets the live refresh (``None`` or 0 turns it off — tests call :meth:`live_refresh` themselves)."""

    TITLE = "Cerebro Dashboard"
    CSS_PATH = "dashboard.tcss"
    ENABLE_COMMAND_PALETTE = False
    # priority: the turns table and the scroll views must not take tab/left/right/q for themselves.
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"show_view('{view_id}')", show=False) for n, view_id in enumerate(VIEW_IDS, 1)),
        Binding("tab,right", "cycle_view(1)", "next", show=False, priority=True),
        Binding("shift+tab,left", "cycle_view(-1)", "previous", show=False, priority=True),
        Binding("r", "reload", "refresh", show=False),
        Binding("q,ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(
        self,
        source: DashboardSource,
        *,
        last: int = 200,
        clock: Callable[[], datetime] = _local_now,
        refresh_seconds: float | None = DEFAULT_REFRESH_SECONDS,
    ) -> None:
        super().__init__()
        self.source = source
        self.last = last
        self.clock = clock
        self.refresh_seconds = refresh_seconds
        self.data = DashboardData(turns=[], tool_distribution={})
        self.error: str | None = None
        self.refreshed_at: datetime | None = None
        self.selected: TurnMetrics | None = None
        self.selected_calls: list[ToolCall] = []

    # ------------------------------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="top-bar"):
            yield Static(self.TITLE, id="title")
            yield Tabs(*(Tab(label, id=f"tab-{view_id}") for view_id, label in VIEWS), id="tabs")
        with ContentSwitcher(initial="overview", id="views"):
            with VerticalScroll(id="overview"):
                yield Panel(lambda width: views.overview(self.data, width), id="overview-panel")
            table: DataTable[str] = _TurnsTable(id="turns", cursor_type="row", zebra_stripes=True)
            yield table
            with VerticalScroll(id="detail"), Horizontal(id="detail-columns"):
                yield Panel(lambda _width: views.detail_summary(self.selected), id="detail-panel")
                yield Panel(lambda _width: views.detail_calls(self.selected, self.selected_calls), id="detail-calls")
            with VerticalScroll(id="tools"):
                yield Panel(lambda width: views.tools(self.data, width), id="tools-panel")
            with VerticalScroll(id="trends"):
                yield Panel(lambda width: views.trends(self.data.turns, width), id="trends-panel")
        with Vertical(id="status"):
            yield Static("", id="error")
            yield Static("", id="help")

    def on_mount(self) -> None:
        self.query_one(Tabs).can_focus = False  # tab is ours (next view), not a focus move onto the tab bar
        table = self.query_one("#turns", DataTable)
        for label, width in views.TURN_COLUMNS:
            table.add_column(label, width=width, key=label)
        self.action_reload()
        if self.refresh_seconds:
            self.set_interval(self.refresh_seconds, self.live_refresh, name=LIVE_REFRESH)
        self._focus_view("overview")

    # ------------------------------------------------------------------------------------------ views

    @property
    def current_view(self) -> str:
        return self.query_one(ContentSwitcher).current or "overview"

    def action_show_view(self, view_id: str) -> None:
        self.query_one(Tabs).active = f"tab-{view_id}"  # → on_tabs_tab_activated switches the content

    def action_cycle_view(self, step: int) -> None:
        index = VIEW_IDS.index(self.current_view)
        self.action_show_view(VIEW_IDS[(index + step) % len(VIEW_IDS)])

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is None or event.tab.id is None:
            return
        view_id = event.tab.id.removeprefix("tab-")
        self.query_one(ContentSwitcher).current = view_id
        self._focus_view(view_id)

    def _focus_view(self, view_id: str) -> None:
        # Focus the visible view, so up/down/page keys move the table's cursor or scroll the text.
        self.query_one(f"#{view_id}").focus()

    # ------------------------------------------------------------------------------------------ turns → detail

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        index = event.cursor_row
        if not 0 <= index < len(self.data.turns):
            return
        self.select_turn(self.data.turns[index])
        self.action_show_view("detail")

    def select_turn(self, turn: TurnMetrics) -> None:
        self.selected = turn
        try:
            self.selected_calls = self.source.tool_calls_for_turn(turn.session_id, turn.turn_number)
        except Exception as exc:  # noqa: BLE001 - shown, not raised: the dashboard keeps running
            self.selected_calls = []
            self._show_error(exc)
        for panel in self.query("#detail Panel"):
            panel.refresh(layout=True)

    # ------------------------------------------------------------------------------------------ data

    def action_reload(self) -> None:
        """``r``: read the database again (no ingest), on the UI thread — a read takes milliseconds."""
        self._apply(*self._load())

    def live_refresh(self) -> None:
        """The timer's work: ingest new transcript lines, then reload — in a thread, so keys stay live.

        A tick that finds the previous refresh still running is skipped: a thread cannot be cancelled,
        and two ingests at once would only queue on the database lock.
        """
        if any(worker.group == LIVE_REFRESH and worker.is_running for worker in self.workers):
            return
        self.run_worker(self._ingest_and_load, thread=True, group=LIVE_REFRESH, name=LIVE_REFRESH)

    def _ingest_and_load(self) -> None:
        try:
            self.source.ingest()
        except Exception:  # noqa: BLE001, S110 - as upstream: a failed ingest still shows what is stored
            pass
        loaded = self._load()
        try:
            self.call_from_thread(self._apply, *loaded)
        except RuntimeError:  # the app quit while this refresh ran
            pass

    def _load(self) -> tuple[DashboardData | None, list[ToolCall] | None, str | None]:
        try:
            data = self.source.load(self.last)
            calls = None
            if self.selected is not None:
                calls = self.source.tool_calls_for_turn(self.selected.session_id, self.selected.turn_number)
            return data, calls, None
        except Exception as exc:  # noqa: BLE001 - shown as "Error: …"; the last good data stays on screen
            return None, None, _one_line(exc)

    def _apply(self, data: DashboardData | None, calls: list[ToolCall] | None, error: str | None) -> None:
        from textual.css.query import NoMatches

        try:
            self._apply_now(data, calls, error)
        except NoMatches:  # a refresh that finished while the app was quitting: its widgets are gone
            pass

    def _apply_now(self, data: DashboardData | None, calls: list[ToolCall] | None, error: str | None) -> None:
        self.refreshed_at = self.clock()
        self.error = error
        if data is not None:
            self.data = data
            if self.selected is not None:
                self.selected = _same_turn(data.turns, self.selected)
                self.selected_calls = (calls or []) if self.selected is not None else []
            self._fill_table()
            for panel in self.query(Panel):
                panel.refresh(layout=True)
        self._update_status()

    def _fill_table(self) -> None:
        table = self.query_one("#turns", DataTable)
        cursor = table.cursor_row
        table.clear()
        for turn in self.data.turns:
            table.add_row(*derive.turn_row_cells(turn), key=f"{turn.session_id}:{turn.turn_number}")
        if self.data.turns:
            table.move_cursor(row=min(cursor, len(self.data.turns) - 1), animate=False)

    def _show_error(self, exc: BaseException) -> None:
        self.error = _one_line(exc)
        self._update_status()

    def _update_status(self) -> None:
        error = self.query_one("#error", Static)
        error.update(f"  Error: {self.error}" if self.error else "")
        error.display = self.error is not None
        stamp = self.refreshed_at.strftime("%H:%M:%S") if self.refreshed_at else "--:--:--"
        self.query_one("#help", Static).update(f"{views.HELP} | refreshed {stamp}")


def _same_turn(turns: list[TurnMetrics], wanted: TurnMetrics) -> TurnMetrics | None:
    """The reloaded row of the selected turn (its numbers may have grown), or None if it left the window."""
    for turn in turns:
        if (turn.session_id, turn.turn_number) == (wanted.session_id, wanted.turn_number):
            return turn
    return None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or exc.__class__.__name__
