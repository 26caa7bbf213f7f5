"""Markdown rendering of scored results (no Cyclopts import: the hot path uses it too)."""

from __future__ import annotations


def render_scored(results, *, explain: bool, empty: str, expansion: str | None = None) -> str:  # noqa: ANN001
    if not results:
        return empty
    blocks = []
    for item in results:
        node = item.node
        sub = f"/{node.subtype}" if node.subtype else ""
        head = f"## {node.short_id} [{node.type}{sub}] score={item.score:.3f} sim={item.similarity:.3f} imp={node.importance:.2f}"
        block = f"{head}\n{node.content}"
        if explain and item.parts is not None:
            p = item.parts
            lanes = ", ".join(f"{lane} #{rank}" for lane, rank in item.lanes.items()) or "—"
            fused = f" fused={item.fused:.4f}" if item.fused is not None else ""
            block += (
                f"\n> relevance={p.relevance:.3f} importance={p.importance:.3f} recency={p.recency:.3f} "
                f"structural={p.structural:.3f} outcome×{p.outcome:.2f} → {p.score:.3f}; lanes: {lanes}{fused}"
            )
        blocks.append(block)
    text = "\n\n".join(blocks)
    if explain and expansion is not None:
        text = f"_graph expansion: {expansion}_\n\n" + text
    return text
