"""Which brain a command works on. No Cyclopts import: the hot path uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro import paths
from cerebro.cli_state import state

if TYPE_CHECKING:
    from pathlib import Path

    from cerebro.api import Brain
    from cerebro.brain.handle import Handle


def brain_path() -> Path:
    return paths.project_brain_path(paths.resolve_project_dir(state.project))


def open_handle() -> Handle:
    """The current project's brain (``--project`` > ``$CLAUDE_PROJECT_DIR`` > cwd) as a handle; it must exist. It
    knows its project directory (code anchors are resolved and checked against it). ``recall --prime`` calls the
    brain modules on it directly: the ``Brain`` facade imports every module it delegates to (~6 ms, ADR 0053)."""
    from cerebro import team
    from cerebro.brain.opening import project_handle
    from cerebro.errors import BrainNotFound

    project = paths.resolve_project_dir(state.project)
    try:
        return project_handle(project)
    except BrainNotFound as exc:
        if team.binding(project) is not None:  # a team brain on PostgreSQL (ADR 0030): no file was moved
            raise
        raise BrainNotFound(f"{exc}{moved_hint(project)}") from None


def open_brain() -> Brain:
    """:func:`open_handle`'s brain."""
    from cerebro.api import Brain

    return Brain(open_handle())


def open_team_brain(option: str) -> Brain:
    """The team brain this project's brain file shares with (``team connect``), opened; ``option`` names what
    needed it in the one-line error when there is none."""
    from cerebro import team
    from cerebro.api import Brain
    from cerebro.errors import InvalidInput

    found = team.remote(paths.resolve_project_dir(state.project))
    if found is None:
        raise InvalidInput(f"{option}: this project shares with no team brain yet — run 'cerebro team connect URL'")
    return Brain.open(found.url, team_project=found.project)


def moved_hint(project: Path) -> str:
    """When a brain recorded for this project's git repository serves another folder: where, and what to run.
    Asked only after a command found no brain (it runs git and reads every brain's identity)."""
    from cerebro import identity
    from cerebro.api import Brain

    mine = identity.describe(project)
    if identity.GIT_ROOT not in mine and identity.GIT_DIR not in mine:
        return ""
    for info in Brain.brains():
        if info.project in (None, mine[identity.PATH]):
            continue
        same_repository = (info.git_root is not None and info.git_root == mine.get(identity.GIT_ROOT)) or (
            info.git_dir is not None and info.git_dir == mine.get(identity.GIT_DIR)
        )
        if not same_repository:
            continue
        if not info.project_exists:
            return (
                f"; a brain recorded for this repository served {info.project}, which is gone — if the project "
                f"moved here, `cerebro brains relink {info.project} {project}` gives it its brain back"
            )
        return f"; another checkout of this repository has a brain: {info.project} (use -p {info.project})"
    return ""
