"""Helpers shared by commands: which brain, origin stamping, value parsing."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.values import Origin

OriginActor = Annotated[
    str | None, Parameter(name="--origin-actor", help="Who wrote it (default $CEREBRO_ORIGIN_ACTOR)")
]
OriginChannel = Annotated[str | None, Parameter(name="--origin-channel", help="Through what (default cli)")]
OriginSession = Annotated[
    str | None,
    Parameter(name="--origin-session", help="Session id (default $CEREBRO_ORIGIN_SESSION, else $CLAUDE_SESSION_ID)"),
]
OriginHost = Annotated[str | None, Parameter(name="--origin-host", help="Host name (default this machine's)")]


from cerebro.cli.context import brain_path, open_brain  # noqa: E402,F401 - re-exported for commands


def origin(actor: str | None, channel: str | None, session: str | None, host: str | None) -> Origin:
    return Origin.from_environment("cli", actor=actor, channel=channel, session=session, host=host)
