"""recall, search, embed --pending."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit, one_line
from cerebro.errors import InvalidInput
from cerebro.logs import warn


def _render(results, *, explain: bool, empty: str, expansion: str | None = None) -> str:  # noqa: ANN001
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


def recall(
    query: Annotated[str | None, Parameter(help="What to recall (omit with --prime)")] = None,
    *,
    limit: Annotated[int, Parameter(name=["--limit", "-l"], help="At most this many results")] = 20,
    prime: Annotated[bool, Parameter(help="Session-start context: important, surprising, diverse memories")] = False,
    threshold: Annotated[float | None, Parameter(name=["--threshold", "-T"], help="Minimum cosine for the vector lane (default: config recall_threshold)")] = None,
    subtype: Annotated[str | None, Parameter(help="Only this subtype (empty: no subtype)")] = None,
    as_of: Annotated[str | None, Parameter(help="Follow only edges valid at this instant")] = None,
    explain: Annotated[bool, Parameter(help="Show each result's score components, lanes and ranks")] = False,
) -> None:
    """Composite-scored recall: vector and keyword lanes, one graph hop, fused by rank."""
    from cerebro.api import UNSET

    if prime:
        with open_brain() as brain:
            primed = brain.prime(limit=limit if limit != 20 else None)
            brain.touch_surfaced([p.node.id for p in primed])
        emit(
            {"mode": "prime", "results": [p.to_dict() for p in primed]},
            lambda: _render(primed, explain=False, empty="No memories found."),
        )
        return
    if not query or not query.strip():
        raise InvalidInput("give a query, or --prime for session-start context")
    with open_brain() as brain:
        result = brain.recall(
            query, limit=limit, threshold=threshold, subtype=UNSET if subtype is None else subtype, as_of=as_of
        )
        for notice in result.notices:
            warn(notice)
        brain.touch_accessed(result.ids)
        if result.expansion == "gated":
            brain.count_expansion_skip()
    emit(
        result.to_dict(explain=explain),
        lambda: _render(result.results, explain=explain, empty="No relevant memories found.", expansion=result.expansion),
    )


def search(
    query: Annotated[str, Parameter(help="Text to match by meaning")],
    *,
    limit: Annotated[int | None, Parameter(name=["--limit", "-l"], help="At most this many (default: config search_limit)")] = None,
    threshold: Annotated[float | None, Parameter(name=["--threshold", "-T"], help="Minimum cosine (default: config search_threshold)")] = None,
) -> None:
    """Vector similarity search alone (needs an embedding provider)."""
    with open_brain() as brain:
        result = brain.search(query, limit=limit, threshold=threshold)
        brain.touch_accessed(result.ids)
    emit(result.to_dict(), lambda: _render(result.results, explain=False, empty="No relevant memories found."))


def embed(
    *,
    pending: Annotated[bool, Parameter(help="Embed every active memory that has no vector yet")] = False,
    batch_size: Annotated[int, Parameter(help="Memories per batch (one transaction each)")] = 64,
) -> None:
    """Backfill embeddings (after the provider was down, or after an import)."""
    from cerebro.cli.progress import reporter

    if not pending:
        raise InvalidInput("say what to embed: --pending")
    if batch_size <= 0:
        raise InvalidInput(f"--batch-size must be above 0, got {batch_size}")
    update, finish = reporter("embedding")
    with open_brain() as brain:
        report = brain.embed_pending(batch_size=batch_size, progress=update)
    finish()
    for error in report.errors:
        warn(one_line(error))
    emit(
        report.to_dict(),
        f"Embedded {report.embedded} memories"
        + (f", {report.failed} failed" if report.failed else "")
        + f"; {report.remaining} pending.",
    )
