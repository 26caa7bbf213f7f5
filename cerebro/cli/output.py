"""The only writer of results to stdout: JSON for machines (``--format json``), markdown-ish text for people."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cerebro.cli_state import state

if TYPE_CHECKING:
    from cerebro.values import Node


def emit(data: dict[str, Any], render_md: Callable[[], str] | str, *, items: str | None = None) -> None:
    """Print ``data`` as JSON, JSON lines or the markdown text, according to ``--format``.

    Every JSON output is one object whose shape no flag changes (its schema: ``cerebro/cli/schemas/``).
    ``items`` names the list a ``--format jsonl`` reader wants one per line (``list``'s memories, recall's
    results); an output with no list prints its object as one line.
    """
    if state.format in ("json", "jsonl"):
        import json  # here: the text output (the hooks', prime's) does without it (~1.5 ms of import)

        if state.format == "json":
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            return
        rows = data[items] if items is not None else [data]
        sys.stdout.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    else:
        text = render_md() if callable(render_md) else render_md
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def node_heading(node: Node) -> str:
    from cerebro.anchors import marker

    return f"## {node.short_id} [{node.type}/{node.status}] (importance: {node.importance:.2f}){marker(node)}"


def render_nodes(nodes: list[Any], empty: str = "No memories found.") -> str:
    if not nodes:
        return empty
    blocks = []
    for node in nodes:
        sub = f" · {node.subtype}" if node.subtype else ""
        blocks.append(f"{node_heading(node)}{sub}\n{node.content}")
    return "\n\n".join(blocks)
