"""``cerebro dashboard`` as a command: it refuses to draw where there is no terminal, and starts by ingesting."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from cerebro.cli.app import run
from cerebro.metrics.store import MetricsStore, metrics_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "dashboard needs a terminal on stdout"),  # pytest captures stdout: not a terminal
        (["--format", "json"], "dashboard draws on a terminal and has no JSON form"),
        (["--last", "0"], "--last must be at least 1, got 0"),
    ],
)
def test_refuses_without_a_terminal_in_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code = run(["dashboard", "-p", str(project), *args])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    if "--format" in args:  # an error under --format json is a JSON object (issue 16)
        import json

        assert json.loads(err)["error"]["message"].startswith(message)
    else:
        assert err.startswith("cerebro: error: " + message)
    assert err.count("\n") == 1
    assert not metrics_path(project).exists()  # refused before touching anything


def test_startup_creates_the_database_ingests_then_runs_the_app(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerebro.metrics.dashboard import DashboardApp

    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    shutil.copy(FIXTURES / "cerebro__simple_session.jsonl", transcripts / "test-session-1.jsonl")
    started: list[DashboardApp] = []
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)

    def run_app(app: DashboardApp) -> None:  # no real terminal to draw on
        started.append(app)

    monkeypatch.setattr(DashboardApp, "run", run_app)

    code = run(["dashboard", "-p", str(project), "--last", "7", "--session-dir", str(transcripts)])
    out, err = capsys.readouterr()
    assert code == 0
    assert err == "Ingesting session data... done.\n"
    assert out == ""
    (app,) = started
    assert app.last == 7
    assert app.refresh_seconds == 5.0
    with MetricsStore.open(metrics_path(project)) as store:
        assert len(store.recent_turns()) == 3  # the fixture's three turns, ingested before the app started
