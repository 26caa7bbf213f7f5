"""anchors: memories tied to code, and whether that code is still as it was."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit, node_heading, one_line


def anchors(
    *,
    stale: Annotated[bool, Parameter(help="Only memories whose anchored code changed or is gone")] = False,
    limit: Annotated[int, Parameter(help="At most this many")] = 50,
) -> None:
    """List active memories with code anchors and each anchor's status (verified, stale, missing, unknown).

    Missing first, then stale, newest first within each. Nothing is changed here.
    Re-check each stale memory against the code, then: supersede it if the fact changed;
    supersede it with the same text and a fresh --anchor if it still holds; forget it if obsolete.

    Examples
      cerebro anchors
      cerebro anchors --stale --format json
    """
    from cerebro.cli.render import render_anchor

    with open_brain() as brain:
        nodes = brain.anchored(stale_only=stale, limit=limit)

    def md() -> str:
        if not nodes:
            return "No stale or missing anchors." if stale else "No memories with code anchors."
        blocks = []
        for node in nodes:
            lines = [node_heading(node), one_line(node.content, 200)]
            lines += [f"- anchor: {render_anchor(a)}" for a in node.anchors or []]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    emit({"memories": [n.to_dict() for n in nodes]}, md, items="memories")
