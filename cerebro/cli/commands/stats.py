from __future__ import annotations

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit


def stats() -> None:
    """Brain health: memories by status and type, edges, pending embeddings, model, schema."""
    with open_brain() as brain:
        s = brain.stats()

    def md() -> str:
        types = ", ".join(f"{t} {n}" for t, n in s.nodes_by_type.items())
        model = s.embedding_model or "none"
        return "\n".join(
            [
                "# Cerebro Brain Stats",
                f"Memories: {s.total_nodes} (active {s.active_nodes}, consolidated {s.consolidated_nodes}, "
                f"superseded {s.superseded_nodes}, archived {s.archived_nodes})",
                f"By type: {types}",
                f"Edges: {s.total_edges}",
                f"Embeddings: {s.embedding_provider} / {model} ({s.embedding_dimensions} dims), "
                f"{s.embedded_nodes} embedded with it, pending {s.pending_embeddings}",
                f"Schema: v{s.schema_version} (revision {s.revision})",
            ]
        )

    emit(s.to_dict(), md)
