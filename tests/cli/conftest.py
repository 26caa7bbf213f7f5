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


@pytest.fixture(scope="session")
def _template_brain(tmp_path_factory):
    """One freshly initialised brain per session; each test gets a copy (Brain.init runs every migration)."""
    from cerebro import Brain

    path = tmp_path_factory.mktemp("template") / "template.sqlite"
    Brain.init(path)
    assert not path.with_name(path.name + "-wal").exists()  # fully checkpointed: the file alone is the brain
    return path


@pytest.fixture
def brain_path(project, _template_brain):
    """Same contract as tests/conftest.py's brain_path (an initialised brain for ``project``), but copied."""
    import os
    import shutil

    from cerebro import paths

    path = paths.project_brain_path(project)
    paths.ensure_private_dir(path.parent)
    shutil.copyfile(_template_brain, path)
    os.chmod(path, paths.FILE_MODE)
    return path
