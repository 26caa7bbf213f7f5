"""Lifecycle: gc to the archive, consolidation with provenance edges, outcomes, forget.

Every operation is one transaction and fail-closed: ids are all resolved and checked before the first
write, so a bad id changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro import clock, config, lifecycle, provenance, values
from cerebro.brain import memories, status
from cerebro.brain.embedding import tend_vector_index
from cerebro.brain.handle import Handle
from cerebro.brain.validate import _check_limit, _check_unit, check_label
from cerebro.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session
    from cerebro.store.interface import Store


def _load_nodes(store: Store, session: Session, ids: Sequence[str]) -> list[Any]:
    return [store.nodes.to_value(store.nodes.get_row(session, node_id)) for node_id in ids]


# What a summary or a replacement is to the memories it holds: archiving it would leave them (consolidated, superseded:
# never recalled, never collected) unreachable, the topic gone from recall with no way back (ADR 0058).
HOLDING_RELATIONS = ("derived_from", "supersedes")


def gc(h: Handle, *, threshold: float | None, dry_run: bool) -> cerebro.reports.GcReport:
    """Archive active memories whose retention fell below the threshold (flag > config > 0.01), but those that
    hold others' content (a consolidation's summary, a supersession's replacement: ADR 0058) — asked within the
    write, where a supersession made since gc's start counts (read before it, the replacement was archived)."""

    now = clock.now()

    def scored(session: Session) -> tuple[float, int, list[str]]:
        """(the threshold, how many were evaluated, the ids below it): every active memory read outside the write —
        at 60,000 memories loading them held the write lock 15 s, and other writers gave up (a review)."""
        limit = threshold
        if limit is None:
            limit = config.effective("gc_threshold", h.store.meta.get(session, config.META_PREFIX + "gc_threshold"))
        limit = _check_unit(limit, "threshold")
        active = _load_nodes(h.store, session, h.store.nodes.ids_with_status(session, "active"))
        return limit, len(active), [node.id for node in active if lifecycle.retention(node, now) < limit]

    limit, evaluated, candidates = h.read(scored)

    def work(session: Session) -> cerebro.reports.GcReport:
        # The candidates as they are now: one reinforced, superseded or forgotten since the read is judged on that.
        present = [node_id for node_id in candidates if h.store.nodes.exists(session, node_id)]
        current = [node for node in _load_nodes(h.store, session, present) if node.status == "active"]
        below = [(node, score) for node in current if (score := lifecycle.retention(node, now)) < limit]
        ids_below = [node.id for node, _ in below]
        holders = set().union(*(h.store.graph.sources_with(session, ids_below, r) for r in HOLDING_RELATIONS))
        evicted = [(node, score) for node, score in below if node.id not in holders]
        by_type: dict[str, int] = {}
        for node, _ in evicted:
            by_type[node.type] = by_type.get(node.type, 0) + 1
        if not dry_run:
            stamp = clock.format_ts(now)
            for node, _ in evicted:
                h.store.archive.move_out(session, node, "decayed", stamp)
        return cerebro.reports.GcReport(
            evaluated=evaluated,
            archived=len(evicted),
            by_type=by_type,
            evicted=[
                {
                    "id": n.id,
                    "type": n.type,
                    "content": n.content,
                    "importance": n.importance,
                    "retention_score": round(score, 6),
                }
                for n, score in evicted
            ],
            threshold=limit,
            dry_run=dry_run,
        )

    if dry_run:
        return h.read(work)
    report = h.write(work)
    tend_vector_index(h)  # gc runs at every session's end: when a brain outgrew exact search, now
    return report


def mark_consolidated(h: Handle, ids: Sequence[str]) -> cerebro.reports.ConsolidateReport:
    """Mark active episodes consolidated (status only, no edges). Fail-closed and idempotent."""
    return _consolidate(h, None, ids)


def consolidate(h: Handle, into: str, sources: Sequence[str]) -> cerebro.reports.ConsolidateReport:
    """Record that ``into`` was derived from the ``sources`` episodes: ``derived_from`` edges into →
    source, sources marked consolidated and out of the keyword lane. One transaction; every id must
    resolve (sources to episodes that are active or already consolidated) or nothing is written;
    running it again adds nothing and leaves existing edges as they are."""
    if not into:
        raise InvalidInput("consolidate needs --into <id>")
    return _consolidate(h, into, sources)


def _consolidate(h: Handle, into: str | None, sources: Sequence[str]) -> cerebro.reports.ConsolidateReport:
    if not sources:
        raise InvalidInput("give at least one episode id")

    def write(session: Session) -> cerebro.reports.ConsolidateReport:
        target = h.store.nodes.resolve_id(session, into) if into else None
        if target is not None and h.store.nodes.get_row(session, target).status == "consolidated":
            # Its content lives on in its own summary: consolidating into it would leave nothing active holding
            # these (a cycle, when the two were each other's sources). A superseded target stays allowed.
            raise InvalidInput(f"{target[:8]} is consolidated itself: consolidate into the memory that holds it")
        resolved = []
        for given in sources:
            full = h.store.nodes.resolve_id(session, given)
            row = h.store.nodes.get_row(session, full)
            if row.type != "episode":
                raise InvalidInput(f"{full[:8]} is a {row.type}, not an episode: only episodes consolidate")
            if row.status not in ("active", "consolidated"):
                raise InvalidInput(f"{full[:8]} is {row.status}: only active episodes consolidate")
            if full == target:
                raise InvalidInput(f"{full[:8]} cannot be consolidated into itself")
            if full not in resolved:
                resolved.append(full)
        now = clock.now()
        changed = added = 0
        for full in resolved:
            row = h.store.nodes.get_row(session, full)
            if row.status == "active":
                row.status = "consolidated"
                row.updated_at = now  # a new version of it: team sync carries the status (ADR 0031)
                session.add(row)
                changed += 1
                if h.store.keywords.available(session):
                    h.store.keywords.unindex(session, full)
            if target is not None and not h.store.edges.exists(session, target, full, "derived_from"):
                h.store.edges.upsert(
                    session,
                    source_id=target,
                    target_id=full,
                    relation="derived_from",
                    weight=None,
                    valid_at=None,
                    invalid_at=None,
                    metadata=None,
                    now=now,
                )
                added += 1
        session.flush()
        return cerebro.reports.ConsolidateReport(target, resolved, changed, added)

    return h.write(write)


def consolidation_suggestions(h: Handle, *, limit: int) -> list[dict[str, Any]]:
    """Active episodes grouped by subtype (biggest groups first, oldest first), for the agent to merge."""
    limit = _check_limit(limit)
    episodes = memories.list_memories(h, type="episode", status="active", limit=10**9)
    return lifecycle.suggest_groups(episodes, limit)


def reinforce(h: Handle, node_id: str) -> values.Node:
    """Count a use: access and reinforcement counters up, both timestamps now. Active memories only."""

    def write(session: Session) -> values.Node:
        full = h.store.nodes.resolve_id(session, node_id)
        row = h.store.nodes.get_row(session, full)
        if row.status != "active":
            raise NotFound(f"node {full} not found or not active")
        now = clock.now()
        row.access_count = (row.access_count or 0) + 1
        row.times_reinforced = (row.times_reinforced or 0) + 1
        row.last_accessed = now
        row.last_reinforced = now
        session.add(row)
        session.flush()
        return h.store.nodes.to_value(row)

    return h.write(write)


def record_outcome(h: Handle, node_id: str, *, success: bool) -> values.Node:
    """Count a success or failure in ``metadata.outcomes`` (it feeds the outcome factor of recall)."""

    def write(session: Session) -> values.Node:
        row = h.store.nodes.get_row(session, h.store.nodes.resolve_id(session, node_id))
        metadata = dict(row.metadata_ or {})
        outcomes = metadata.get("outcomes")
        outcomes = dict(outcomes) if isinstance(outcomes, dict) else {}
        key = "success" if success else "failure"
        try:
            current = int(outcomes.get(key) or 0)
        except (TypeError, ValueError):
            current = 0
        outcomes[key] = current + 1
        metadata["outcomes"] = outcomes
        row.metadata_ = metadata
        session.add(row)
        session.flush()
        return h.store.nodes.to_value(row)

    return h.write(write)


def forget(h: Handle, subject: str, *, subtype: str | None, apply: bool, hard: bool) -> cerebro.reports.ForgetReport:
    """Memories (not archived) whose content contains ``subject`` (case-insensitive, literal text).

    Dry run unless ``apply``: then each is archived with reason ``redundant`` — or deleted outright with
    ``hard`` — and removed from every lane, in one transaction."""

    if not isinstance(subject, str) or not subject.strip():
        raise InvalidInput("forget needs a non-empty --subject")
    check_label(subtype, "subtype")  # a NUL in it failed on a team brain
    if hard and not apply:
        raise InvalidInput("--hard only makes sense with --apply")

    wanted = subject.casefold()

    def work(session: Session) -> cerebro.reports.ForgetReport:
        # Matched in Python: SQLite's lower() folds only A-Z, and casefold() also handles "ß", "É"…
        rows = h.store.nodes.contents_not_archived(session, subtype)
        ids = [node_id for node_id, content in rows if wanted in content.casefold()]
        matched = _load_nodes(h.store, session, ids)
        if apply:
            stamp = clock.now_text()
            for node in matched:
                h.store.archive.move_out(session, node, "redundant", stamp, archive=not hard)
        return cerebro.reports.ForgetReport(
            subject,
            [{"id": n.id, "type": n.type, "status": n.status, "content": n.content} for n in matched],
            applied=apply,
            hard=hard,
        )

    return h.write(work) if apply else h.read(work)


def walk_provenance(
    h: Handle, node_id: str, *, depth: int = provenance.GET_DEFAULT_DEPTH
) -> list[tuple[values.Node, int]]:
    """The memories ``node_id`` was derived from, breadth-first over ``derived_from`` (itself at depth 0)."""
    full = memories.resolve_id(h, node_id)
    with h.snapshot() as conn:
        order = provenance.walk(h.store, conn, full, max_depth=depth)
        found = h.store.reads.nodes_by_id(conn, [i for i, _ in order])
    nodes = status.annotate(h, [found[i] for i, _ in order if i in found])
    by_id = {n.id: n for n in nodes}
    return [(by_id[i], d) for i, d in order if i in by_id]


def provenance_status(h: Handle, ids: Sequence[str]) -> dict[str, str]:
    with h.snapshot() as conn:
        found = h.store.reads.nodes_by_id(conn, list(ids))
        return provenance.provenance_statuses(h.store, conn, list(found.values()))
