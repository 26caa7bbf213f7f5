"""The global brain: promoting a project memory to it, and recall across both.

The global brain (``CEREBRO_HOME/global.sqlite``) is an ordinary brain, possibly on another embedding
model: each brain embeds the query with its own model and runs its own whole pipeline (gate, keyword
lane and all). Global results weigh 0.7 of project ones; the project copy wins a duplicate id.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cerebro import clock, paths, values
from cerebro.brain import memories, retrieval
from cerebro.brain.handle import Handle
from cerebro.brain.opening import open_handle
from cerebro.errors import BrainNotFound

if TYPE_CHECKING:
    from pathlib import Path

GLOBAL_WEIGHT = 0.7  # upstream's mergeSearchResults


def global_brain_path() -> Path:
    """The global brain's path; BrainNotFound (naming the fix) when there is none."""
    path = paths.global_brain_path()
    if not path.exists() or path.stat().st_size == 0:
        raise BrainNotFound("global store not initialized — run 'cerebro init --global' first")
    return path


def merge(
    project: values.RecallResult,
    other: values.RecallResult,
    limit: int,
    *,
    store: str = "global",
    weight: float = GLOBAL_WEIGHT,
) -> values.RecallResult:
    """Project results as they are, the other brain's (``store``) scaled by ``weight``; the project copy wins a
    duplicate id. Each brain's results keep their own order; which brain's next result comes next is decided by the
    composite score (ADR 0060): a fused value is scaled within its own brain's results, so the other brain's best
    match, however poor, would have come out at ``weight`` × 1.0, above most of the project's."""
    seen = {r.node.id for r in project.results}
    mine = [replace(r, store="project") for r in project.results]
    theirs = [_weighed(r, store, weight) for r in other.results if r.node.id not in seen]
    merged: list[values.ScoredNode] = []
    i = j = 0
    while len(merged) < limit and (i < len(mine) or j < len(theirs)):
        if j == len(theirs) or (i < len(mine) and mine[i].score >= theirs[j].score):  # the project wins ties
            merged.append(mine[i])
            i += 1
        else:
            merged.append(theirs[j])
            j += 1
    notices = list(project.notices) + [f"{store}: {n}" for n in other.notices]
    return replace(project, results=merged, notices=notices)


def _weighed(result: values.ScoredNode, store: str, weight: float) -> values.ScoredNode:
    """The other brain's result with its score, fused value and explained score (``--explain``) × ``weight``."""
    parts = replace(result.parts, score=result.parts.score * weight) if result.parts is not None else None
    fused = result.fused * weight if result.fused is not None else None
    return replace(result, store=store, score=result.score * weight, fused=fused, parts=parts)


# A team brain holds this project's memories, written by teammates: as relevant as one's own (ADR 0031); a
# memory both brains hold (pulled, or pushed from here) is shown once, from this brain.
TEAM_WEIGHT = 1.0


def recall_with_team(h: Handle, team: Handle, query: str, *, limit: int = 20, **options: Any) -> values.RecallResult:  # noqa: ANN401 - recall's keyword options, passed on
    """Recall from this brain and its project's team brain, merged (the team's memories as the project's own,
    this brain's copy winning a memory both hold)."""
    project = retrieval.recall(h, query, limit=limit, **options)
    elsewhere = retrieval.recall(team, query, limit=limit, **options)
    return merge(project, elsewhere, limit, store="team", weight=TEAM_WEIGHT)


def promote(h: Handle, node_id: str, *, content: str | None = None) -> str:
    """Copy a memory into the global brain (new id, importance 0.5, origin kept, provenance in
    metadata) and note ``promoted_to_global`` on the source. Returns the global id. A memory promoted before whose
    copy is still active in the global brain is not copied again: that copy takes ``content`` when given (ADR 0061)."""
    from cerebro.brain.validate import _check_content
    from cerebro.errors import InvalidInput, NotFound

    if content is not None:
        _check_content(content)
    node = memories.get(h, node_id).node
    if node.status != "active":
        raise InvalidInput(f"{node.short_id} is {node.status}: only an active memory is promoted")
    text = content if content is not None else node.content
    target = open_handle(global_brain_path())
    try:
        target.on_warning = h.on_warning
        earlier = (node.metadata or {}).get("promoted_to_global")
        if isinstance(earlier, str) and earlier:
            try:
                copy = memories.get(target, earlier).node
            except (NotFound, InvalidInput):
                copy = None  # forgotten there, or a value written by hand: promoted anew
            if copy is not None and copy.status == "active":
                if content is not None and copy.content != content:  # without one, a generalised wording stays
                    memories.update(target, copy.id, content=content)
                return copy.id
        metadata = {key: value for key, value in (node.metadata or {}).items() if key != "promoted_to_global"}
        metadata.update(
            promoted_from_node=node.id,
            promoted_from_project=h.name,
            promoted_at=clock.rfc3339(clock.now()),
        )
        global_id = memories.add(
            target,
            text,
            type=node.type,
            subtype=node.subtype,
            importance=0.5,
            metadata=metadata,
            origin=node.origin,
        )
    finally:
        target.close()
    try:  # best effort, as upstream: the copy exists either way
        memories.update(h, node.id, metadata={"promoted_to_global": global_id})
    except Exception as exc:  # noqa: BLE001
        h.on_warning(f"promoted, but could not mark the source: {exc}")
    return global_id


def recall_with_global(h: Handle, query: str, *, limit: int = 20, **options: Any) -> values.RecallResult:  # noqa: ANN401 - recall's keyword options, passed on
    """Recall from this brain and the global brain, merged (global × 0.7, project wins duplicates)."""
    project = retrieval.recall(h, query, limit=limit, **options)
    other = open_handle(global_brain_path())
    try:
        elsewhere = retrieval.recall(other, query, limit=limit, **options)
    finally:
        other.close()
    return merge(project, elsewhere, limit)
