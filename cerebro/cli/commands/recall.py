"""recall, search, embed --pending."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.common import open_brain
from cerebro.cli.output import emit, one_line
from cerebro.cli.render import render_scored as _render
from cerebro.errors import InvalidInput
from cerebro.logs import warn


def recall(  # noqa: PLR0913 - each option of the command is a parameter (Cyclopts)
    *words: Annotated[str, Parameter(help="What to recall (omit with --prime); unquoted words are joined with spaces")],
    limit: Annotated[
        int | None,
        Parameter(name=["--limit", "-l"], help="At most this many results (default 20; prime: config prime_limit)"),
    ] = None,
    prime: Annotated[bool, Parameter(help="Session-start context: important, surprising, diverse memories")] = False,
    threshold: Annotated[
        float | None,
        Parameter(
            name=["--threshold", "-T"], help="Minimum cosine for the vector lane (default: config recall_threshold)"
        ),
    ] = None,
    subtype: Annotated[str | None, Parameter(help="Only this subtype (empty: no subtype)")] = None,
    as_of: Annotated[str | None, Parameter(help="Follow only edges valid at this instant")] = None,
    explain: Annotated[bool, Parameter(help="Show each result's score components, lanes and ranks")] = False,
    global_: Annotated[
        bool, Parameter(name="--global", help="Also recall from the global brain (its scores × 0.7)")
    ] = False,
    team: Annotated[
        bool, Parameter(name="--team", help="Also recall from the project's team brain (cerebro team connect)")
    ] = False,
    with_provenance: Annotated[bool, Parameter(help="Attach each result's derived_from sources (depth 1)")] = False,
    provenance_depth: Annotated[
        int | None, Parameter(help="Walk this deep (implies --with-provenance; at most 100)")
    ] = None,
) -> None:
    """Composite-scored recall: vector and keyword lanes, one graph hop, fused by rank.

    Examples
      cerebro recall "how do we run the tests"
      cerebro recall --prime
      cerebro recall flaky test --explain --limit 5 --format json
    """
    from cerebro.cli import fast

    query = " ".join(words) or None
    if not prime and (not query or not query.strip()):
        raise InvalidInput("give a query, or --prime for session-start context")
    if prime and query:
        raise InvalidInput("give a query or --prime, not both")
    if global_ and team:
        raise InvalidInput("--global and --team: one other brain at a time")
    if prime and as_of is not None:  # prime is now's context: the flag was ignored without a word
        raise InvalidInput("--prime primes from the brain as it is now: drop --as-of")
    if prime and (global_ or team):  # it was ignored without a word
        raise InvalidInput(f"--prime primes from this project's brain only: drop {'--global' if global_ else '--team'}")
    if limit is not None and limit < 1:  # as list and search refuse it (0 used to mean "the default")
        raise InvalidInput(f"--limit must be at least 1, got {limit}")
    from cerebro.cli.render import provenance_depth as depth_of

    fast.run(
        {
            "provenance_depth": depth_of(with_provenance, provenance_depth, default=1),
            "global_": global_,
            "team": team,
            "prime": prime,
            "query": query,
            "limit": limit,
            "explain": explain,
            "threshold": threshold,
            "subtype": subtype,
            "as_of": as_of,
        }
    )


def search(
    *words: Annotated[str, Parameter(help="Text to search for; unquoted words are joined with spaces")],
    limit: Annotated[
        int | None, Parameter(name=["--limit", "-l"], help="At most this many (default: config search_limit)")
    ] = None,
    threshold: Annotated[
        float | None,
        Parameter(
            name=["--threshold", "-T"], help="Minimum cosine for the vector lane (default: config search_threshold)"
        ),
    ] = None,
    as_of: Annotated[str | None, Parameter(help="Follow only edges valid at this instant")] = None,
) -> None:
    """Hybrid search as upstream runs it — recall's pipeline with the search defaults (needs an embedding provider).

    Examples
      cerebro search "database migrations"
      cerebro search retry logic --limit 5 --threshold 0.5
    """
    query = " ".join(words)
    if not query.strip():
        raise InvalidInput("give a query")
    with open_brain() as brain:
        result = brain.search(query, limit=limit, threshold=threshold, as_of=as_of)
        for notice in result.notices:
            warn(notice)
        brain.touch_accessed(result.ids)
        if result.expansion == "gated":  # as upstream's Search counts it (and recall does)
            brain.count_expansion_skip()
    emit(
        result.to_dict(),
        lambda: _render(result.results, explain=False, empty="No relevant memories found."),
        items="results",
    )


def embed(
    *,
    pending: Annotated[bool, Parameter(help="Embed every active memory that has no vector yet")] = False,
    batch_size: Annotated[int, Parameter(help="Memories per batch (one transaction each)")] = 64,
) -> None:
    """Backfill embeddings (after the provider was down, or after an import).

    Examples
      cerebro embed --pending
      cerebro embed --pending --batch-size 16
    """
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
