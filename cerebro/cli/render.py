"""Markdown rendering of scored results (no Cyclopts import: the hot path uses it too)."""

from __future__ import annotations


def render_scored(results, *, explain: bool, empty: str, expansion: str | None = None, suffixes=None) -> str:  # noqa: ANN001
    from cerebro.anchors import marker
    from cerebro.mcp.framing import PROJECT_SOURCE, header, neutralise, new_nonce

    if not results:
        return empty
    # What recall shows lands in an agent's context (the /recall skill reads it): each memory's content is framed
    # as quoted data between delimiters its text cannot forge, as the prime and the MCP server frame it (ADR 0020).
    nonce = new_nonce()
    blocks = [header(nonce, PROJECT_SOURCE)]
    for item in results:
        node = item.node
        sub = f"/{node.subtype}" if node.subtype else ""
        where = " (global)" if getattr(item, "store", None) == "global" else ""
        head = (
            f"## {node.short_id} [{node.type}{sub}]{where} score={item.score:.3f} sim={item.similarity:.3f} "
            f"imp={node.importance:.2f}{marker(node)}"
        )
        block = f"{head}\n<memory-{nonce}>\n{neutralise(node.content)}\n</memory-{nonce}>"
        if explain and item.parts is not None:
            p = item.parts
            lanes = ", ".join(f"{lane} #{rank}" for lane, rank in item.lanes.items()) or "—"
            fused = f" fused={item.fused:.4f}" if item.fused is not None else ""
            anchor = f" anchor×{p.anchor:.2f} ({node.anchor_status})" if p.anchor != 1.0 else ""
            block += (
                f"\n> relevance={p.relevance:.3f} importance={p.importance:.3f} recency={p.recency:.3f} "
                f"structural={p.structural:.3f} outcome×{p.outcome:.2f}{anchor} → {p.score:.3f}; lanes: {lanes}{fused}"
            )
        if suffixes and node.id in suffixes:
            block += "\n" + suffixes[node.id]
        blocks.append(block)
    text = "\n\n".join(blocks)
    if explain and expansion is not None:
        text = f"_graph expansion: {expansion}_\n\n" + text
    return text


def weight_text(weight: float) -> str:
    """An edge's weight as upstream prints it (two decimals), or in three figures when that would run to hundreds of
    digits (1e308 is a weight too)."""
    return f"{weight:.2f}" if abs(weight) < 1e6 else f"{weight:.3g}"


def render_anchor(anchor) -> str:  # noqa: ANN001
    """``src/a.py:3-9 stale (commit 1a2b3c4d, ref v1)`` — one anchor and its status, for a bullet."""
    from cerebro.anchors import label

    notes = []
    if anchor.get("moved_to"):
        notes.append(f"now at lines {anchor['moved_to'][0]}-{anchor['moved_to'][1]}")
    if anchor.get("commit"):
        notes.append(f"commit {anchor['commit'][:12]}")
    if anchor.get("ref"):
        notes.append(f"ref {anchor['ref']}")
    return f"{label(anchor)} {anchor['status']}" + (f" ({', '.join(notes)})" if notes else "")


def provenance_depth(flag: bool, depth: int | None, *, default: int) -> int | None:
    """None when no provenance was asked for; else the depth, clamped to [0, 100]."""
    from cerebro.errors import InvalidInput
    from cerebro.provenance import clamp_depth

    if depth is not None:
        if depth < 0:
            raise InvalidInput(f"--provenance-depth must be 0 or more, got {depth}")
        return clamp_depth(depth)
    return default if flag else None


def render_provenance(chain) -> str:  # noqa: ANN001
    if len(chain) <= 1:
        return "### Provenance\n(no derived_from sources)"
    lines = ["### Provenance"]
    for node, depth in chain[1:]:
        lines.append(
            f"{'  ' * (depth - 1)}- {node.short_id} [{node.type}/{node.status}] {' '.join(node.content.split())[:100]}"
        )
    return "\n".join(lines)
