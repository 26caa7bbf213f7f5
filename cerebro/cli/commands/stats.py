from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cyclopts import Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit
from cerebro.errors import InvalidInput

if TYPE_CHECKING:
    from cerebro.metrics.records import TurnMetrics

NO_METRICS = "\nNo metrics data. Run 'cerebro ingest' to collect session metrics."


def stats(
    *,
    metrics: Annotated[bool, Parameter(help="Also show session metrics per turn (run 'cerebro ingest' first)")] = False,
    last: Annotated[int | None, Parameter(help="With --metrics: how many recent turns (default 50)")] = None,
) -> None:
    """Brain health: memories by status and type, edges, pending embeddings, model, schema.

    Examples
      cerebro stats
      cerebro stats --metrics --last 20
      cerebro stats --format json
    """
    if last is not None and not metrics:  # it was silently ignored: the user asked for something not shown
        raise InvalidInput("--last applies with --metrics")
    last = 50 if last is None else last
    if last < 1:
        raise InvalidInput(f"--last must be at least 1, got {last}")
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

    if not metrics:
        emit(s.to_dict(), md)
        return
    turns = _recent_turns(last)

    def md_with_metrics() -> str:
        if turns is None:
            return md() + "\n" + NO_METRICS
        from cerebro.metrics.derive import render_stats_metrics

        return md() + "\n" + render_stats_metrics(turns).rstrip("\n")

    # One shape whatever the flags (issue 16): the brain's fields stay at the top; --metrics adds "turns".
    emit(s.to_dict() | {"turns": [t.to_dict() for t in turns or []]}, md_with_metrics)


def _recent_turns(last: int) -> list[TurnMetrics] | None:
    from cerebro import paths
    from cerebro.cli_state import state
    from cerebro.metrics.store import MetricsStore, metrics_path

    path = metrics_path(paths.resolve_project_dir(state.project))
    if not path.exists():
        return None
    with MetricsStore.open(path) as store:
        return store.recent_turns(limit=last)
