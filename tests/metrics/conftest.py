"""Fixtures for the metrics tests: a private HOME (Claude Code's ~/.claude) and the transcript fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cerebro.metrics.ingest import claude_code_slug

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code"
SIMPLE = FIXTURES / "cerebro__simple_session.jsonl"
SIDECHAIN = FIXTURES / "cerebro__sidechain_session.jsonl"
REPRESENTATIVE = FIXTURES / "daaain-claude-code-log__representative_messages.jsonl"
INTEGRATED = FIXTURES / "daaain-claude-code-log__sidechain_integrated.jsonl"


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME for this test: transcripts are looked for under HOME/.claude/projects."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def session_dir(claude_home: Path, project: Path) -> Path:
    """The project's transcript folder, named by Claude Code's rule, empty."""
    directory = claude_home / ".claude" / "projects" / claude_code_slug(str(project))
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def add_transcript(session_dir: Path):
    """Copy a fixture transcript into the session folder (as ``name``); returns its path."""

    def _add(source: Path, name: str | None = None) -> Path:
        target = session_dir / (name or source.name)
        shutil.copyfile(source, target)
        return target

    return _add
