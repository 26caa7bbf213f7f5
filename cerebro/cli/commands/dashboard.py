"""cerebro dashboard: the live, full-screen terminal view of this project's session metrics (spec §5.1)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli_state import state
from cerebro.errors import InvalidInput


def dashboard(
    *,
    last: Annotated[int, Parameter(help="Show the N most recent turns")] = 200,
    session_dir: Annotated[
        Path | None,
        Parameter(name="--session-dir", help="Read transcripts from DIR (default ~/.claude/projects/<slug>/)"),
    ] = None,
) -> None:
    """Live dashboard: overview, turns, turn detail, tools, trends; re-ingests every 5 s. q quits.

    Examples
      cerebro dashboard
      cerebro dashboard --last 50 -p ~/code/app
    """
    if last < 1:
        raise InvalidInput(f"--last must be at least 1, got {last}")
    if state.format != "md":
        raise InvalidInput(
            "dashboard draws on a terminal and has no JSON form; use 'cerebro stats --metrics --format json'"
        )
    if not sys.stdout.isatty():
        raise InvalidInput("dashboard needs a terminal on stdout; use 'cerebro stats --metrics' for text")
    if session_dir is not None and not session_dir.is_dir():
        raise InvalidInput(f"--session-dir {session_dir} is not a directory")

    from cerebro.metrics.dashboard_data import StoreSource
    from cerebro.metrics.store import MetricsStore, metrics_path

    project_dir = paths.resolve_project_dir(state.project)
    path = metrics_path(project_dir)
    MetricsStore.open(path, create=True).close()  # read-write from the start: the live refresh ingests
    source = StoreSource(project_dir, metrics_path=path, session_dir=session_dir)

    _progress("Ingesting session data...")
    try:
        source.ingest()
    except Exception:  # noqa: BLE001, S110 - as upstream: a failed ingest still shows what is stored
        pass
    _progress(" done.\n")

    from cerebro.metrics.dashboard import (
        DashboardApp,  # Textual loads only here: `cerebro --help` stays cheap
    )

    DashboardApp(source, last=last).run()


def _progress(text: str) -> None:
    """Startup notes go to stderr, so nothing but the app ever writes to the terminal's stdout."""
    if not state.quiet:
        sys.stderr.write(text)
        sys.stderr.flush()
