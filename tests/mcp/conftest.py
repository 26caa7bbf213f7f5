"""Fixtures for the MCP server tests (helpers in tests/mcp/helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(isolated_home: Path) -> Path:
    """CEREBRO_HOME of this test, handed to the server and CLI subprocesses."""
    return isolated_home
