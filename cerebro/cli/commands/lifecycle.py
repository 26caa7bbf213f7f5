"""reinforce, supersede."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.commands.memory import (
    AllowSecretOpt,
    AnchorOpt,
    AnchorRefOpt,
    BeadsIdOpt,
    MetadataOpt,
    ProvenanceRootOpt,
    read_content,
)
from cerebro.cli.common import OriginActor, OriginChannel, OriginHost, OriginSession, open_brain, origin
from cerebro.cli.output import emit

IdArg = Annotated[str, Parameter(name="id", help="Full id or a unique prefix of 4+ characters")]


def reinforce(node_id: IdArg) -> None:
    """Count a use of an active memory: access and reinforcement counters up, timestamps now.

    Examples
      cerebro reinforce 3f2a9c1e
    """
    with open_brain() as brain:
        node = brain.reinforce(node_id)
    emit(
        node.to_dict(),
        f"Reinforced {node.short_id} (access count {node.access_count}, reinforced {node.times_reinforced}x)",
    )


def supersede(  # noqa: PLR0913 - each option of the command is a parameter (Cyclopts)
    old_id: Annotated[str, Parameter(name="old-id", help="The active memory being replaced")],
    content: Annotated[str, Parameter(help="The replacement's text ('-' reads stdin)")],
    *,
    type_: Annotated[
        str | None, Parameter(name="--type", help="Type of the replacement (default: the old one's)")
    ] = None,
    subtype: Annotated[str | None, Parameter(help="Subtype of the replacement (default: the old one's)")] = None,
    importance: Annotated[
        float | None, Parameter(help="0 to 1 (default: the old memory's); 0 means 0.5, as upstream")
    ] = None,
    metadata: MetadataOpt = None,
    provenance_root: ProvenanceRootOpt = False,
    origin_actor: OriginActor = None,
    origin_channel: OriginChannel = None,
    origin_session: OriginSession = None,
    origin_host: OriginHost = None,
    anchor: AnchorOpt = None,
    anchor_ref: AnchorRefOpt = None,
    beads_id: BeadsIdOpt = None,
    allow_secret: AllowSecretOpt = False,
) -> None:
    """Replace a memory: the old one is marked superseded and linked from the new one.

    Examples
      cerebro supersede 3f2a9c1e "Use uv 0.5 or later, not pip"
      cerebro supersede 3f2a9c1e "Retries live in retry()" --anchor src/net.py
      echo "the new text" | cerebro supersede 3f2a9c1e -
    """
    from cerebro.api import UNSET
    from cerebro.cli.fast import insert_importance

    with open_brain() as brain:
        old_full = brain.resolve_id(old_id)  # before the write: the new id may share the prefix
        new_id = brain.supersede(
            old_full,
            read_content(content),
            type=type_,
            subtype=UNSET if subtype is None else subtype,
            importance=None if importance is None else insert_importance(importance),
            metadata=metadata,
            provenance_root=provenance_root,
            origin=origin(origin_actor, origin_channel, origin_session, origin_host),
            anchors=anchor,
            anchor_ref=anchor_ref,
            beads_id=beads_id,
            allow_secret=allow_secret,
        )
    emit({"id": new_id, "superseded": old_full}, new_id)


def gc(
    *,
    threshold: Annotated[
        float | None,
        Parameter(help="Retention below which memories are archived (default: config gc_threshold, else 0.01)"),
    ] = None,
    dry_run: Annotated[bool, Parameter(help="Report what would be archived; change nothing")] = False,
    log: Annotated[
        Path | None,
        Parameter(help="Append this run's result to FILE as one JSON line (ids, types and scores; no memory text)"),
    ] = None,
) -> None:
    """Archive decayed memories.

    retention = 0.5·importance·(1+ln(1+accesses)) + 0.5·e^(−λ·days since last access). A memory with
    importance ≥ 2 × threshold is never evicted (at 0.01, every default-importance memory stays).

    Examples
      cerebro gc --dry-run
      cerebro gc --threshold 0.02 --log gc.jsonl
    """
    import json
    import os

    from cerebro import clock, paths
    from cerebro.errors import InvalidInput

    handle = None
    if log is not None:  # opened first: a log we cannot write must not follow an archive already done
        try:  # the user's alone (0600), never through a symlink: it names what was archived
            fd = os.open(log, os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW, paths.FILE_MODE)
            handle = os.fdopen(fd, "a", encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"cannot write the gc log {log}: {exc.strerror}") from None
    try:
        with open_brain() as brain:
            report = brain.gc(threshold=threshold, dry_run=dry_run)
        if handle is not None:  # ids, types and scores: no memory text in a log
            handle.write(json.dumps(report.log_entry(clock.rfc3339(clock.now())), ensure_ascii=False) + "\n")
    finally:
        if handle is not None:
            handle.close()

    def md() -> str:
        lines = [f"GC: evaluated {report.evaluated} nodes, threshold={report.threshold:.4f}"]
        if dry_run:
            lines.append("(dry-run mode — no changes made)")
        if not report.evicted:
            lines.append("No nodes evicted.")
        else:
            lines.append(f"{'Would archive' if dry_run else 'Archived'} {report.archived} nodes:")
            for e in report.evicted:
                lines.append(
                    f"  - {e['id'][:8]} [{e['type']}] imp={e['importance']:.2f} score={e['retention_score']:.4f}: "
                    f"{' '.join(e['content'].split())[:120]}"
                )
        return "\n".join(lines)

    emit(report.to_dict(), md)


def mark_consolidated(ids: Annotated[list[str], Parameter(help="Episode ids (or prefixes)")]) -> None:
    """Mark episodes consolidated (status only, no edges). All ids must resolve, or nothing changes.

    Examples
      cerebro mark-consolidated 3f2a9c1e 8b7d0a44
    """
    with open_brain() as brain:
        report = brain.mark_consolidated(ids)
    emit(report.to_dict(), f"Marked {report.consolidated} episode(s) consolidated ({len(report.sources)} given).")


def consolidate(
    ids: Annotated[list[str] | None, Parameter(help="Source episode ids (or prefixes)")] = None,
    *,
    into: Annotated[str | None, Parameter(help="The memory derived from the episodes")] = None,
    suggest: Annotated[bool, Parameter(help="List active episodes grouped by subtype, to choose from")] = False,
    limit: Annotated[int, Parameter(help="With --suggest: at most this many episodes listed")] = 20,
) -> None:
    """Consolidate episodes into a memory, recording derived_from provenance (atomic, idempotent).

    Examples
      cerebro consolidate --suggest
      cerebro consolidate 3f2a9c1e 8b7d0a44 --into c0ffee12
    """
    from cerebro.errors import InvalidInput

    if suggest:
        with open_brain() as brain:
            groups = brain.consolidation_suggestions(limit=limit)
        data = [
            {"subtype": g["subtype"], "count": g["count"], "episodes": [n.to_dict() for n in g["episodes"]]}
            for g in groups
        ]

        def md() -> str:
            if not groups:
                return "No active episodes."
            out = []
            for g in groups:
                out.append(f"## {g['subtype'] or '(no subtype)'} — {g['count']} episode(s)")
                out += [f"- {n.short_id}: {' '.join(n.content.split())[:120]}" for n in g["episodes"]]
            return "\n".join(out)

        emit({"groups": data}, md, items="groups")
        return
    if not into:
        raise InvalidInput("consolidate needs --into <id> (or --suggest)")
    with open_brain() as brain:
        report = brain.consolidate(into, ids or [])
    emit(
        report.to_dict(),
        f"Consolidated {len(report.sources)} episode(s) into {(report.into or into)[:8]} "
        f"({report.edges_added} new derived_from edge(s), {report.consolidated} newly consolidated).",
    )


def outcome(
    node_id: IdArg,
    *,
    success: Annotated[bool, Parameter(help="It worked")] = False,
    failure: Annotated[bool, Parameter(help="It did not")] = False,
) -> None:
    """Record whether acting on a memory worked; recall ranks by it (outcome factor).

    Examples
      cerebro outcome 3f2a9c1e --success
      cerebro outcome 3f2a9c1e --failure
    """
    from cerebro.errors import InvalidInput

    if success == failure:
        raise InvalidInput("give exactly one of --success or --failure")
    with open_brain() as brain:
        node = brain.record_outcome(node_id, success=success)
    counts = (node.metadata or {}).get("outcomes", {})
    tally = ", ".join(
        f"{counts.get(kind, 0)} {kind if counts.get(kind, 0) == 1 else plural}"
        for kind, plural in (("success", "successes"), ("failure", "failures"))
    )
    emit(node.to_dict(), f"Recorded {'success' if success else 'failure'} for {node.short_id} (now {tally})")


def forget(
    *,
    subject: Annotated[str, Parameter(help="Text the memories contain (case-insensitive, literal)")],
    subtype: Annotated[str | None, Parameter(help="Only this subtype (empty: no subtype)")] = None,
    apply: Annotated[bool, Parameter(help="Archive them (reason redundant); without it, only list")] = False,
    hard: Annotated[bool, Parameter(help="With --apply: delete outright instead of archiving")] = False,
) -> None:
    """Find memories about a subject and (with --apply) remove them from every lane.

    Examples
      cerebro forget --subject "old CI"
      cerebro forget --subject "old CI" --apply
      cerebro forget --subject "api key" --apply --hard
    """
    with open_brain() as brain:
        report = brain.forget(subject, subtype=subtype, apply=apply, hard=hard)

    def md() -> str:
        verb = ("Deleted" if hard else "Archived") if apply else "Would forget"
        lines = [f"{verb} {len(report.matched)} memor{'y' if len(report.matched) == 1 else 'ies'}:"]
        lines += [
            f"  - {m['id'][:8]} [{m['type']}/{m['status']}] {' '.join(m['content'].split())[:120]}"
            for m in report.matched
        ]
        if not apply and report.matched:
            lines.append("Run again with --apply to archive them (add --hard to delete).")
        return "\n".join(lines)

    emit(report.to_dict(), md)


def promote(
    node_id: IdArg,
    content: Annotated[
        str | None, Parameter(help="Generalised content for the global copy (default: the memory's own)")
    ] = None,
    *,
    team: Annotated[
        bool,
        Parameter(
            help="Share it with the project's team brain instead (`team connect` first): marked shared and pushed "
            "now, under its own id"
        ),
    ] = False,
) -> None:
    """Copy a memory to the global brain (shared by every project), or share it with the team brain.

    Examples
      cerebro promote 3f2a9c1e
      cerebro promote 3f2a9c1e "Prefer uv over pip in Python projects"
      cerebro promote 3f2a9c1e --team
    """
    if team:
        from cerebro.cli.context import open_team_brain
        from cerebro.errors import InvalidInput

        if content is not None:
            raise InvalidInput(
                "promote --team shares the memory as it is (same id); a generalised CONTENT is for the global brain"
            )
        with open_brain() as brain, open_team_brain("promote --team") as shared:
            full_id = brain.resolve_id(node_id)
            report = brain.team_share(shared, full_id)
        emit(
            {"id": full_id, "push": report.to_dict()},
            f"Shared with the team brain: {full_id} ({'written' if report.written else 'already there'})",
        )
        return
    with open_brain() as brain:
        global_id = brain.promote(node_id, content=content)
    emit({"id": global_id}, f"Promoted to global store: {global_id}")
