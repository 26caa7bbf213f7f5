"""Which brain a command works on. No Cyclopts import: the hot path uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro import paths
from cerebro.cli_state import state

if TYPE_CHECKING:
    from pathlib import Path

    from cerebro.api import Brain


def brain_path() -> Path:
    return paths.project_brain_path(paths.resolve_project_dir(state.project))


def open_brain() -> Brain:
    """The current project's brain (``--project`` > ``$CLAUDE_PROJECT_DIR`` > cwd); it must exist. It knows
    its project directory (code anchors are resolved and checked against it)."""
    from cerebro.api import Brain

    brain = Brain.open(brain_path())
    brain.project = paths.resolve_project_dir(state.project)
    return brain
