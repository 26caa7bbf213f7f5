"""Fixtures for the CLI tests (the shared ones live in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def add(cli, brain_path):
    """Add a memory through the CLI and return its id. Extra CLI arguments pass through."""

    def _add(content: str = "a memory", *args: str) -> str:
        result = cli("add", content, *args)
        assert result.exit_code == 0, result
        node_id = result.stdout.strip()
        assert len(node_id) == 36
        return node_id

    return _add
