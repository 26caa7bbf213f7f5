"""inbox add|list|approve|discard — quarantine for memories an agent is unsure about (upstream 3.4.0)."""

from __future__ import annotations

from typing import Annotated

from cyclopts import App, Parameter

from cerebro.cli.commands.memory import AllowSecretOpt, TypeOpt, read_content
from cerebro.cli.common import OriginActor, OriginChannel, OriginHost, OriginSession, open_brain, origin
from cerebro.cli.fast import insert_importance
from cerebro.cli.output import emit, one_line

app = App(
    name="inbox",
    help="""Quarantine uncertain memories: recall, list, gc and export never see a candidate until it is approved.

    Examples
      cerebro inbox add "The tests may need Docker running"
      cerebro inbox list
      cerebro inbox approve 3f2a9c1e
    """,
)

CandidateId = Annotated[str, Parameter(name="id", help="Full candidate id or a unique prefix of 4+ characters")]


@app.command(name="add")
def inbox_add(  # noqa: PLR0913 - each option of the command is a parameter (Cyclopts)
    content: Annotated[str, Parameter(help="The candidate's text ('-' reads stdin)")],
    *,
    type_: TypeOpt = "episode",
    subtype: Annotated[str | None, Parameter(help="Free-form subtype, e.g. decision or bug")] = None,
    importance: Annotated[float, Parameter(help="0 to 1; 0 means the default 0.5, as add")] = 0.5,
    metadata: Annotated[str | None, Parameter(help="A JSON object stored with the candidate")] = None,
    origin_actor: OriginActor = None,
    origin_channel: OriginChannel = None,
    origin_session: OriginSession = None,
    origin_host: OriginHost = None,
    allow_secret: AllowSecretOpt = False,
) -> None:
    """Quarantine a candidate memory and print its id (not indexed, not embedded, never recalled).

    Examples
      cerebro inbox add "The tests may need Docker running" --type concept
      echo "from a script" | cerebro inbox add - --subtype guess
    """
    with open_brain() as brain:
        candidate_id = brain.inbox_add(
            read_content(content),
            type=type_,
            subtype=subtype,
            importance=insert_importance(importance),
            metadata=metadata,
            origin=origin(origin_actor, origin_channel, origin_session, origin_host),
            allow_secret=allow_secret,
        )
    emit({"id": candidate_id}, candidate_id)


@app.command(name="list")
def inbox_list(*, limit: Annotated[int | None, Parameter(help="At most this many (default: all)")] = None) -> None:
    """List the candidates, oldest first.

    Examples
      cerebro inbox list
      cerebro inbox list --limit 10 --format json
    """
    from cerebro.values import json_time

    with open_brain() as brain:
        candidates = brain.inbox_list(limit=limit)

    def md() -> str:
        if not candidates:
            return "The inbox is empty."
        blocks = []
        for c in candidates:
            sub = f" · {c.subtype}" if c.subtype else ""
            who = f" by {c.origin.actor}" if c.origin.actor else ""
            blocks.append(
                f"## {c.short_id} [{c.type}] (importance: {c.importance:.2f}){sub}\n"
                f"{c.content.rstrip()}\n- added {json_time(c.created_at) or '?'}{who}"
            )
        return "\n\n".join(blocks)

    emit({"candidates": [c.to_dict() for c in candidates]}, md, items="candidates")


@app.command(name="approve")
def inbox_approve(candidate_id: CandidateId) -> None:
    """Make a candidate a memory (same id, origin and creation time), indexed and embedded; print its id.

    Examples
      cerebro inbox approve 3f2a9c1e
    """
    with open_brain() as brain:
        node_id = brain.inbox_approve(candidate_id)
    emit({"id": node_id}, node_id)


@app.command(name="discard")
def inbox_discard(candidate_id: CandidateId) -> None:
    """Delete a candidate.

    Examples
      cerebro inbox discard 3f2a9c1e
    """
    with open_brain() as brain:
        candidate = brain.inbox_discard(candidate_id)
    emit(
        {"discarded": candidate.to_dict()},
        f"Discarded {candidate.short_id} [{candidate.type}]: {one_line(candidate.content, 120)}",
    )
