"""The Brain's lifecycle side: gc to the archive, consolidation with provenance edges, outcomes, forget.

Every operation is one transaction and fail-closed: ids are all resolved and checked before the first
write, so a bad id changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cerebro import clock, config, lifecycle, values
from cerebro.brain.validate import _check_limit, _check_unit, _text
from cerebro.errors import InvalidInput


def _archive_and_remove(session: Any, node: Any, reason: str, now_text: str, *, archive: bool = True) -> None:
    """Move one node out of every lane (vectors, keywords, edges by cascade) — into the archive unless hard."""
    from cerebro.store import fts, vec

    if archive:
        session.execute(
            _text(
                "INSERT INTO nodes_archive (id, type, subtype, content, metadata, importance, status, "
                "archive_reason, original_created_at, archived_at) VALUES (:id, :type, :subtype, :content, "
                ":metadata, :importance, :status, :reason, :created, :now) ON CONFLICT(id) DO UPDATE SET "
                "type = excluded.type, subtype = excluded.subtype, content = excluded.content, "
                "metadata = excluded.metadata, importance = excluded.importance, status = excluded.status, "
                "archive_reason = excluded.archive_reason, original_created_at = excluded.original_created_at, "
                "archived_at = excluded.archived_at"
            ),
            {
                "id": node.id,
                "type": node.type,
                "subtype": node.subtype,
                "content": node.content,
                "metadata": json.dumps(node.metadata) if node.metadata is not None else None,
                "importance": node.importance,
                "status": node.status,
                "reason": reason,
                "created": clock.format_ts(node.created_at) if node.created_at else None,
                "now": now_text,
            },
        )
    vec.delete(session, node.id)
    if fts.available(session):
        fts.unindex(session, node.id)
    # Edges go explicitly as well as by cascade: a brain opened without foreign keys must not keep
    # dangling edges.
    session.execute(_text("DELETE FROM edges WHERE source_id = :id OR target_id = :id"), {"id": node.id})
    session.execute(_text("DELETE FROM nodes WHERE id = :id"), {"id": node.id})


def _load_nodes(session: Any, ids: Sequence[str]) -> list[Any]:
    from cerebro.store import nodes

    return [nodes.to_value(nodes.get_row(session, node_id)) for node_id in ids]


class LifecycleMixin:
    def gc(self, *, threshold: float | None = None, dry_run: bool = False) -> values.GcReport:
        """Archive active memories whose retention fell below the threshold (flag > config > 0.01)."""

        def work(session: Any) -> values.GcReport:
            from cerebro.store import meta

            limit = threshold
            if limit is None:
                limit = config.effective("gc_threshold", meta.get(session, config.META_PREFIX + "gc_threshold"))
            limit = _check_unit(limit, "threshold")
            now = clock.now()
            ids = [r[0] for r in session.execute(_text("SELECT id FROM nodes WHERE status = 'active'")).all()]
            active = _load_nodes(session, ids)
            evicted = []
            by_type: dict[str, int] = {}
            for node in active:
                score = lifecycle.retention(node, now)
                if score < limit:
                    evicted.append((node, score))
                    by_type[node.type] = by_type.get(node.type, 0) + 1
            if not dry_run:
                stamp = clock.format_ts(now)
                for node, _ in evicted:
                    _archive_and_remove(session, node, "decayed", stamp)
            return values.GcReport(
                evaluated=len(active),
                archived=len(evicted),
                by_type=by_type,
                evicted=[
                    {"id": n.id, "type": n.type, "content": n.content, "importance": n.importance,
                     "retention_score": round(score, 6)}
                    for n, score in evicted
                ],
                threshold=limit,
                dry_run=dry_run,
            )

        if dry_run:
            return self._read(work)
        return self._write(work)

    def mark_consolidated(self, ids: Sequence[str]) -> values.ConsolidateReport:
        """Mark active episodes consolidated (status only, no edges). Fail-closed and idempotent."""
        return self._consolidate(None, ids)

    def consolidate(self, into: str, sources: Sequence[str]) -> values.ConsolidateReport:
        """Record that ``into`` was derived from the ``sources`` episodes: ``derived_from`` edges into →
        source, sources marked consolidated and out of the keyword lane. One transaction; every id must
        resolve (sources to episodes that are active or already consolidated) or nothing is written;
        running it again adds nothing and leaves existing edges as they are."""
        if not into:
            raise InvalidInput("consolidate needs --into <id>")
        return self._consolidate(into, sources)

    def _consolidate(self, into: str | None, sources: Sequence[str]) -> values.ConsolidateReport:
        if not sources:
            raise InvalidInput("give at least one episode id")

        def write(session: Any) -> values.ConsolidateReport:
            from cerebro.store import edges, fts, nodes

            target = nodes.resolve_id(session, into) if into else None
            resolved = []
            for given in sources:
                full = nodes.resolve_id(session, given)
                row = nodes.get_row(session, full)
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
                row = nodes.get_row(session, full)
                if row.status == "active":
                    row.status = "consolidated"
                    session.add(row)
                    changed += 1
                    if fts.available(session):
                        fts.unindex(session, full)
                if target is not None:
                    exists = session.execute(
                        _text(
                            "SELECT 1 FROM edges WHERE source_id = :s AND target_id = :t AND relation = 'derived_from'"
                        ),
                        {"s": target, "t": full},
                    ).first()
                    if exists is None:
                        edges.upsert(
                            session, source_id=target, target_id=full, relation="derived_from", weight=None,
                            valid_at=None, invalid_at=None, metadata=None, now=now,
                        )
                        added += 1
            session.flush()
            return values.ConsolidateReport(target, resolved, changed, added)

        return self._write(write)

    def consolidation_suggestions(self, *, limit: int = 20) -> list[dict[str, Any]]:
        """Active episodes grouped by subtype (biggest groups first, oldest first), for the agent to merge."""
        limit = _check_limit(limit)
        episodes = self.list(type="episode", status="active", limit=10**9)
        return lifecycle.suggest_groups(episodes, limit)

    def record_outcome(self, node_id: str, *, success: bool) -> values.Node:
        """Count a success or failure in ``metadata.outcomes`` (it feeds the outcome factor of recall)."""

        def write(session: Any) -> values.Node:
            from cerebro.store import nodes

            row = nodes.get_row(session, nodes.resolve_id(session, node_id))
            metadata = dict(row.metadata_ or {})
            outcomes = metadata.get("outcomes")
            outcomes = dict(outcomes) if isinstance(outcomes, dict) else {}
            key = "success" if success else "failure"
            try:
                current = int(outcomes.get(key, 0) or 0)
            except (TypeError, ValueError):
                current = 0
            outcomes[key] = current + 1
            metadata["outcomes"] = outcomes
            row.metadata_ = metadata
            session.add(row)
            session.flush()
            return nodes.to_value(row)

        return self._write(write)

    def forget(
        self, subject: str, *, subtype: str | None = None, apply: bool = False, hard: bool = False
    ) -> values.ForgetReport:
        """Memories (not archived) whose content contains ``subject`` (case-insensitive, literal text).

        Dry run unless ``apply``: then each is archived with reason ``redundant`` — or deleted outright with
        ``hard`` — and removed from every lane, in one transaction."""
        if not isinstance(subject, str) or not subject.strip():
            raise InvalidInput("forget needs a non-empty --subject")
        if hard and not apply:
            raise InvalidInput("--hard only makes sense with --apply")

        wanted = subject.casefold()

        def work(session: Any) -> values.ForgetReport:
            # Matched in Python: SQLite's lower() folds only A-Z, and casefold() also handles "ß", "É"…
            sql = "SELECT id, content FROM nodes WHERE status != 'archived'"
            params: dict[str, Any] = {}
            if subtype is not None:
                sql += " AND subtype = :s" if subtype else " AND (subtype IS NULL OR subtype = '')"
                params["s"] = subtype
            rows = session.execute(_text(sql + " ORDER BY created_at, id"), params).all()
            ids = [node_id for node_id, content in rows if wanted in content.casefold()]
            matched = _load_nodes(session, ids)
            if apply:
                stamp = clock.now_text()
                for node in matched:
                    _archive_and_remove(session, node, "redundant", stamp, archive=not hard)
            return values.ForgetReport(
                subject,
                [{"id": n.id, "type": n.type, "status": n.status, "content": n.content} for n in matched],
                applied=apply,
                hard=hard,
            )

        return self._write(work) if apply else self._read(work)

    def walk_provenance(self, node_id: str, *, depth: int = 5) -> list[tuple[values.Node, int]]:
        """The memories ``node_id`` was derived from, breadth-first over ``derived_from`` (itself at depth 0)."""
        from cerebro import provenance
        from cerebro.store import reads

        full = self.resolve_id(node_id)
        with self._snapshot() as conn:
            order = provenance.walk(conn, full, max_depth=depth)
            found = reads.nodes_by_id(conn, [i for i, _ in order])
        nodes = self._annotate([found[i] for i, _ in order if i in found])
        by_id = {n.id: n for n in nodes}
        return [(by_id[i], d) for i, d in order if i in by_id]

    def provenance_status(self, ids: Sequence[str]) -> dict[str, str]:
        from cerebro import provenance
        from cerebro.store import reads

        with self._snapshot() as conn:
            found = reads.nodes_by_id(conn, list(ids))
            return provenance.provenance_statuses(conn, list(found.values()))

