"""add, get, update, list."""

from __future__ import annotations

import sys
from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.common import OriginActor, OriginChannel, OriginHost, OriginSession, open_brain, origin
from cerebro.cli.fast import run_add
from cerebro.cli.output import emit, node_heading, render_nodes
from cerebro.config import MAX_CONTENT_BYTES
from cerebro.values import NodeStatus, NodeType, json_time

TypeOpt = Annotated[NodeType, Parameter(name="--type", help="episode, concept, procedure or reflection")]
AnchorOpt = Annotated[
    list[str] | None,
    Parameter(
        name="--anchor",
        help="PATH[:START-END] of code this memory is about, relative to the project (repeatable); its hash "
        "is recorded, and reads say when the code changed (verified, stale, missing)",
    ),
]
AnchorRefOpt = Annotated[
    str | None,
    Parameter(help="The git ref or commit to record with the anchors (the current commit is recorded anyway)"),
]
BeadsIdOpt = Annotated[str | None, Parameter(help="A Beads issue id (e.g. bd-a1b2), stored as metadata beadsId")]
# Shared by add and supersede, which write a memory with the same options.
ImportanceOpt = Annotated[float, Parameter(help="0 to 1; 0 means the default 0.5, as upstream")]
MetadataOpt = Annotated[str | None, Parameter(help="A JSON object stored with the memory")]
ProvenanceRootOpt = Annotated[bool, Parameter(help="Mark as an original source (provenance root)")]
AllowSecretOpt = Annotated[
    bool,
    Parameter(help="Store secrets (keys, tokens, passwords) as given instead of [secret:kind] markers"),
]


def read_content(text: str) -> str:
    """The text given, or stdin's when it is ``-`` — without the line ending(s) that close it, as a shell's
    ``$(…)`` reads a command's output (``echo … | cerebro add -`` stores what was echoed). Stdin is read up to
    the largest size a brain accepts: ``add - < /dev/zero`` ends with an error instead of filling memory."""
    if text != "-":
        return text
    from cerebro.errors import InvalidInput

    data = sys.stdin.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        raise InvalidInput(f"stdin holds more than {STDIN_LIMIT:,} characters: not a memory")
    return data.rstrip("\r\n")


STDIN_LIMIT = MAX_CONTENT_BYTES  # the most any brain accepts (its own max_content_bytes is checked on the write)


def add(  # noqa: PLR0913 - each option of the command is a parameter (Cyclopts)
    content: Annotated[str, Parameter(help="The memory's text ('-' reads stdin)")],
    *,
    type_: TypeOpt = "episode",
    subtype: Annotated[str | None, Parameter(help="Free-form subtype, e.g. decision or bug")] = None,
    importance: ImportanceOpt = 0.5,
    metadata: MetadataOpt = None,
    provenance_root: ProvenanceRootOpt = False,
    origin_actor: OriginActor = None,
    origin_channel: OriginChannel = None,
    origin_session: OriginSession = None,
    origin_host: OriginHost = None,
    anchor: AnchorOpt = None,
    anchor_ref: AnchorRefOpt = None,
    beads_id: BeadsIdOpt = None,
    allow_secret: AllowSecretOpt = False,
    share: Annotated[
        bool, Parameter(help='Mark it for the team brain: `cerebro team push` sends it (metadata "shared": true)')
    ] = False,
) -> None:
    """Store a new memory and print its id. Secrets in it are stored as [secret:kind] markers.

    Examples
      cerebro add "Use uv, not pip" --type procedure --importance 0.8
      cerebro add "Retries live in fetch()" --anchor src/net.py:10-42
      cerebro add "Staging deploys need the VPN" --share
      echo "from a script" | cerebro add -
    """
    run_add(
        {
            "content": read_content(content),
            "type": type_,
            "subtype": subtype,
            "importance": importance,
            "metadata": metadata,
            "provenance_root": provenance_root,
            "origin": origin(origin_actor, origin_channel, origin_session, origin_host),
            "anchors": anchor,
            "anchor_ref": anchor_ref,
            "beads_id": beads_id,
            "allow_secret": allow_secret,
            "share": share,
        }
    )


def get(
    node_id: Annotated[str, Parameter(name="id", help="Full id or a unique prefix of 4+ characters")],
    *,
    as_of: Annotated[str | None, Parameter(help="Only edges valid at this instant (RFC 3339 or YYYY-MM-DD)")] = None,
    with_provenance: Annotated[
        bool, Parameter(help="Also walk derived_from edges back to the sources (depth 5)")
    ] = False,
    provenance_depth: Annotated[
        int | None, Parameter(help="Walk this deep (implies --with-provenance; at most 100)")
    ] = None,
) -> None:
    """Show a memory with its edges (and, on request, where it came from).

    Examples
      cerebro get 3f2a9c1e
      cerebro get 3f2a9c1e --with-provenance --format json
    """
    from cerebro.cli.render import provenance_depth as depth_of
    from cerebro.cli.render import render_provenance

    depth = depth_of(with_provenance, provenance_depth, default=5)
    with open_brain() as brain:
        detail = brain.get(node_id, as_of=as_of)
        chain = brain.walk_provenance(detail.node.id, depth=depth) if depth is not None else None

    def md() -> str:
        node = detail.node
        lines = [node_heading(node), node.content, ""]
        lines.append(f"- id: {node.id}")
        if node.subtype:
            lines.append(f"- subtype: {node.subtype}")
        lines.append(
            f"- created: {json_time(node.created_at)}  accessed: {node.access_count}x  "
            f"reinforced: {node.times_reinforced}x"
        )
        if node.updated_at:
            lines.append(f"- updated: {json_time(node.updated_at)}")
        if node.origin.actor or node.origin.channel:
            lines.append(f"- origin: {node.origin.actor or '?'} via {node.origin.channel or '?'}")
        if node.metadata:
            import json

            lines.append(f"- metadata: {json.dumps(node.metadata, ensure_ascii=False)}")
        if node.anchors:
            from cerebro.cli.render import render_anchor

            lines += [f"- anchor: {render_anchor(a)}" for a in node.anchors]
        if detail.edges:
            from cerebro.cli.render import weight_text

            lines += ["", "### Edges"]
            for edge in detail.edges:
                arrow = f"→ {edge.target_id[:8]}" if edge.source_id == node.id else f"← {edge.source_id[:8]}"
                window = ""
                if edge.valid_at or edge.invalid_at:
                    window = f" [{json_time(edge.valid_at) or '-∞'}, {json_time(edge.invalid_at) or '∞'})"
                lines.append(f"- {arrow} {edge.relation} (weight {weight_text(edge.weight)}){window}")
        if chain is not None:
            lines += ["", render_provenance(chain)]
        return "\n".join(lines)

    data = detail.to_dict()
    if chain is not None:
        data["provenance"] = [{"depth": d, **n.to_dict()} for n, d in chain[1:]]
    emit(data, md)


def update(
    node_id: Annotated[str, Parameter(name="id", help="Full id or a unique prefix of 4+ characters")],
    *,
    content: Annotated[str | None, Parameter(help="New text (re-indexed)")] = None,
    importance: Annotated[float | None, Parameter(help="0 to 1")] = None,
    subtype: Annotated[str | None, Parameter(help="New subtype; an empty value clears it")] = None,
    metadata: Annotated[str | None, Parameter(help="JSON object merged into the metadata (null removes a key)")] = None,
    allow_secret: AllowSecretOpt = False,
) -> None:
    """Change a memory's content, importance, subtype or metadata.

    Examples
      cerebro update 3f2a9c1e --importance 0.9
      cerebro update 3f2a9c1e --content "Use uv for every install"
      cerebro update 3f2a9c1e --metadata '{"ticket": "BUG-12"}'
    """
    from cerebro.api import UNSET

    with open_brain() as brain:
        node = brain.update(
            node_id,
            content=content,
            importance=importance,
            subtype=UNSET if subtype is None else subtype,
            metadata=metadata,
            allow_secret=allow_secret,
        )
    emit(node.to_dict(), f"Updated {node.short_id}")


def list_(
    *,
    type_: Annotated[NodeType | None, Parameter(name="--type", help="Only this type")] = None,
    status: Annotated[NodeStatus | None, Parameter(help="active, consolidated, superseded or archived")] = None,
    subtype: Annotated[str | None, Parameter(help="Only this subtype (empty: no subtype)")] = None,
    limit: Annotated[int, Parameter(help="At most this many")] = 50,
) -> None:
    """List memories, newest first.

    Examples
      cerebro list
      cerebro list --type procedure --limit 10
      cerebro list --status superseded --format json
    """
    from cerebro.api import UNSET

    with open_brain() as brain:
        nodes = brain.list(type=type_, status=status, subtype=UNSET if subtype is None else subtype, limit=limit)
    emit({"memories": [n.to_dict() for n in nodes]}, lambda: render_nodes(nodes), items="memories")
