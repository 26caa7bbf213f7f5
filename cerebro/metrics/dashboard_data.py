"""What the dashboard shows, and where it comes from — kept free of Textual so it loads (and tests) cheaply.

The app depends only on :class:`DashboardSource`. :class:`StoreSource` is the real one: the project's
metrics database (through ``cerebro.metrics.store``), its transcripts (through ``cerebro.metrics.ingest``)
and, when it exists, its brain, read for health figures only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from cerebro.metrics.records import ToolCall, TurnMetrics
from cerebro.reports import Health as BrainHealth  # the health panel's figures (Brain.health)


@dataclass(frozen=True)
class DashboardData:
    turns: list[TurnMetrics]  # the most recent turns, chronological
    tool_distribution: dict[str, int]  # tool name → calls, across every session
    brain: BrainHealth | None = None  # None when the project has no (readable) brain

    @property
    def session_count(self) -> int:
        return len({turn.session_id for turn in self.turns})


class DashboardSource(Protocol):
    """Where the dashboard reads from. Tests pass a source over a metrics database they built."""

    def load(self, last: int) -> DashboardData:
        """The last ``last`` turns and everything drawn beside them."""
        ...

    def ingest(self) -> None:
        """Read new transcript lines into the metrics database (the live refresh calls it off the UI thread)."""
        ...

    def tool_calls_for_turn(self, session_id: str, turn_number: int) -> list[ToolCall]:
        """The tool calls of one turn, for its Detail view."""
        ...


class StoreSource:
    """The project's metrics database, transcripts and brain.

    Every call opens and closes its own connection: the live refresh runs in a worker thread, and a
    short-lived connection never holds a lock between refreshes while Claude Code's hooks write.
    """

    def __init__(
        self,
        project_dir: str | os.PathLike[str],
        *,
        metrics_path: Path | None = None,
        session_dir: Path | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        from cerebro import clock as cerebro_clock
        from cerebro.metrics.store import metrics_path as default_metrics_path

        self.project_dir = Path(project_dir)
        self.metrics_path = metrics_path or default_metrics_path(self.project_dir)
        self.session_dir = session_dir
        self._clock = clock or cerebro_clock.now

    def load(self, last: int) -> DashboardData:
        from cerebro.metrics.store import MetricsStore

        with MetricsStore.open(self.metrics_path) as store:
            turns = store.recent_turns(limit=last)
            distribution = store.tool_distribution()
        return DashboardData(turns, distribution, read_brain_health(self.project_dir, self._clock()))

    def ingest(self) -> None:
        from cerebro.metrics.ingest import ingest_project

        ingest_project(self.project_dir, session_dir=self.session_dir)

    def tool_calls_for_turn(self, session_id: str, turn_number: int) -> list[ToolCall]:
        from cerebro.metrics.store import MetricsStore

        with MetricsStore.open(self.metrics_path) as store:
            return store.tool_calls_for_turn(session_id, turn_number)


def read_brain_health(project_dir: str | os.PathLike[str], now: datetime) -> BrainHealth | None:
    """Active nodes, edges and cold nodes of the project's brain; None when there is no readable brain.

    Health is a side panel: a missing, locked or newer brain must never stop the dashboard, so every
    failure reads as "no brain".
    """
    from cerebro import paths

    if not paths.project_brain_path(paths.resolve_project_dir(project_dir)).exists():
        return None  # checked first so that opening never creates a brain
    from cerebro.api import Brain

    try:
        with Brain.for_project(project_dir) as brain:
            return brain.health(now=now)
    except Exception:  # noqa: BLE001 - locked, corrupt, too new…: all mean "no health panel"
        return None
