"""Helpers shared by commands: which brain, origin stamping, value parsing."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli_state import state
from cerebro.values import Origin

OriginActor = Annotated[str | None, Parameter(name="--origin-actor", help="Who wrote it (default $CEREBRO_ORIGIN_ACTOR)")]
OriginChannel = Annotated[str | None, Parameter(name="--origin-channel", help="Through what (default cli)")]
OriginSession = Annotated[
    str | None,
    Parameter(name="--origin-session", help="Session id (default $CEREBRO_ORIGIN_SESSION, else $CLAUDE_SESSION_ID)"),
]
OriginHost = Annotated[str | None, Parameter(name="--origin-host", help="Host name (default this machine's)")]


def brain_path():  # noqa: ANN201
    return paths.project_brain_path(paths.resolve_project_dir(state.project))


def open_brain():  # noqa: ANN201
    """The current project's brain (``--project`` > ``$CLAUDE_PROJECT_DIR`` > cwd); it must exist."""
    from cerebro.api import Brain

    return Brain.open(brain_path())


def origin(actor: str | None, channel: str | None, session: str | None, host: str | None) -> Origin:
    return Origin.from_environment("cli", actor=actor, channel=channel, session=session, host=host)
