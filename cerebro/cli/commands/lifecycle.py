"""reinforce, supersede."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.commands.memory import _content
from cerebro.cli.common import OriginActor, OriginChannel, OriginHost, OriginSession, open_brain, origin
from cerebro.cli.output import emit

IdArg = Annotated[str, Parameter(name="id", help="Full id or a unique prefix of 4+ characters")]


def reinforce(node_id: IdArg) -> None:
    """Count a use of an active memory: access and reinforcement counters up, timestamps now."""
    with open_brain() as brain:
        node = brain.reinforce(node_id)
    emit(node.to_dict(), f"Reinforced {node.short_id} (access count {node.access_count}, reinforced {node.times_reinforced}x)")


def supersede(
    old_id: Annotated[str, Parameter(name="old-id", help="The active memory being replaced")],
    content: Annotated[str, Parameter(help="The replacement's text ('-' reads stdin)")],
    *,
    type_: Annotated[str | None, Parameter(name="--type", help="Type of the replacement (default: the old one's)")] = None,
    subtype: Annotated[str | None, Parameter(help="Subtype of the replacement (default: the old one's)")] = None,
    importance: Annotated[float, Parameter(help="0 to 1")] = 0.5,
    metadata: Annotated[str | None, Parameter(help="A JSON object stored with the replacement")] = None,
    provenance_root: Annotated[bool, Parameter(help="Mark the replacement as an original source")] = False,
    origin_actor: OriginActor = None,
    origin_channel: OriginChannel = None,
    origin_session: OriginSession = None,
    origin_host: OriginHost = None,
) -> None:
    """Replace a memory: the old one is marked superseded and linked from the new one."""
    from cerebro.api import UNSET

    with open_brain() as brain:
        new_id = brain.supersede(
            old_id,
            _content(content),
            type=type_,
            subtype=UNSET if subtype is None else subtype,
            importance=importance,
            metadata=metadata,
            provenance_root=provenance_root,
            origin=origin(origin_actor, origin_channel, origin_session, origin_host),
        )
        old_full = brain.resolve_id(old_id)
    emit({"id": new_id, "superseded": old_full}, new_id)
