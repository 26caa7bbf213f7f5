"""What each tool of ``cerebro mcp`` does with the :class:`~cerebro.api.Brain` (their names, descriptions and
schemas are :mod:`cerebro.mcp.catalogue`).

Each tool answers with structured data — the shapes of the CLI's ``--format json`` (a list becomes an object
holding it) — and a text block in which memory content is framed as quoted data (:mod:`cerebro.mcp.framing`).
No MCP import here: :mod:`cerebro.mcp.server` wires these into the SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cerebro.mcp import framing

if TYPE_CHECKING:
    from cerebro.api import Brain
    from cerebro.mcp.host import Host
    from cerebro.values import Node

# A tool's arguments (``a`` below) are the client's JSON object, already checked against the tool's input
# schema by the server: dict[str, Any], since each value's type is the schema's, not the annotation's. The
# schemas themselves are JSON Schema documents, dict[str, Any] as the SDK's Tool takes them.

NEAR_DUPLICATE_SIMILARITY = 0.85  # cosine between the new memory and a stored one
NEAR_DUPLICATE_OVERLAP = 0.6  # word overlap (Jaccard), for brains without vectors
MAX_NEAR_DUPLICATES = 3
PRIME_TAIL_TOKENS = 30  # kept free in the prime budget for the "N more memories" line


@dataclass(frozen=True)
class Answer:
    data: dict[str, object]
    text: str


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    run: Callable[[Host, dict[str, Any]], Answer]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


# ----------------------------------------------------------------------------------------- helpers


def _unset() -> Any:  # noqa: ANN401 - the UNSET sentinel, typed Any (cerebro.values) to fit any parameter
    from cerebro.api import UNSET

    return UNSET


def _with_notices(data: dict[str, object], notices: list[str]) -> dict[str, object]:
    if notices:
        data["notices"] = list(dict.fromkeys(notices))
    return data


def _notice_lines(notices: list[str]) -> str:
    return "".join(f"\nNotice: {' '.join(n.split())}" for n in dict.fromkeys(notices))


def _framed(items: Sequence[framing.Memory], empty: str, source: str = framing.PROJECT_SOURCE) -> str:
    return framing.frame_memories(items, source=source).text if items else empty


def _plural(count: int, word: str = "memor") -> str:
    return (
        f"{count} {word}{'y' if count == 1 else 'ies'}"
        if word == "memor"
        else f"{count} {word}{'' if count == 1 else 's'}"
    )


_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def near_duplicates(host: Host, brain: Brain, content: str) -> list[dict[str, object]]:
    """Up to three active memories that say nearly the same as ``content``, most similar first: cosine ≥
    0.85 with the brain's own embedder (its vector is then held for the write, so remembering embeds once),
    else — no provider, or the embedder is down — word overlap ≥ 0.6 among the keyword lane's hits."""
    from cerebro.brain import retrieval

    found: list[tuple[Node, float]] = []
    embedder = host.project_slot.embedder()
    vector = None
    if embedder is not None:
        try:
            vector = brain.handle.embed([content])[0]  # the text as it will be stored: its secrets never leave
        except Exception:  # noqa: BLE001 - the write reports the embedder's failure
            vector = None
    if embedder is not None and vector is not None:  # a vector only comes from the embedder
        embedder.hold(content, vector)
        found = [(n, s) for n, s in retrieval.nearest(brain.handle, vector, 8) if s >= NEAR_DUPLICATE_SIMILARITY]
    else:
        wanted = _words(content)
        for node in retrieval.keyword_matches(brain.handle, content, 10) if wanted else []:
            words = _words(node.content)
            overlap = len(wanted & words) / len(wanted | words)
            if overlap >= NEAR_DUPLICATE_OVERLAP:
                found.append((node, overlap))
    found.sort(key=lambda pair: -pair[1])
    return [
        {
            "id": n.id,
            "type": n.type,
            "subtype": n.subtype,
            "status": n.status,
            "importance": n.importance,
            "content": n.content,
            "similarity": round(similarity, 4),
        }
        for n, similarity in found[:MAX_NEAR_DUPLICATES]
    ]


# ----------------------------------------------------------------------------------------- the tools


def remember(host: Host, a: dict[str, Any]) -> Answer:
    from cerebro.brain import secrets
    from cerebro.brain.validate import _check_content, _check_importance, _check_type, parse_metadata

    brain = host.project()
    content = _check_content(a["content"])
    node_type = _check_type(a.get("type", "episode"))
    importance = _check_importance(a.get("importance", 0.5))
    # Redacted before the near-duplicate search embeds it (a network provider must never see a secret, ADR 0027);
    # the add finds nothing more to redact.
    content, metadata, _, _ = secrets.for_storage(brain.handle, content, parse_metadata(a.get("metadata")), False)
    duplicates = near_duplicates(host, brain, content)
    node_id = brain.add(
        content,
        type=node_type,
        subtype=a.get("subtype"),
        importance=importance,
        metadata=metadata,
        origin=host.origin(),
        anchors=a.get("anchors"),
        anchor_ref=a.get("anchor_ref"),
    )
    text = f"Stored {node_id} ({node_type})."
    if duplicates:
        text += (
            f"\n{_plural(len(duplicates), 'near duplicate')} already stored (below). When a fact repeats or updates "
            "one of these, call supersede with its id as old_id instead of remember: the old one is kept as "
            "history and no longer recalled.\n" + framing.frame_memories(duplicates).text
        )
    return Answer(
        _with_notices({"id": node_id, "near_duplicates": duplicates}, host.notices), text + _notice_lines(host.notices)
    )


def recall(host: Host, a: dict[str, Any]) -> Answer:
    from cerebro.brain.promotion import merge

    brain = host.project()
    use_global = a.get("global", host.include_global)
    limit = a.get("limit", 10)
    options: dict[str, Any] = {"limit": limit, "as_of": a.get("as_of")}
    if "subtype" in a:
        options["subtype"] = a["subtype"]
    other = host.global_brain() if use_global else None
    result = brain.recall(a["query"], **options)
    if other is not None:
        result = merge(result, other.recall(a["query"], **options), limit)
    notices = list(result.notices) + host.notices
    brain.touch_accessed([r.node.id for r in result.results if r.store != "global"])
    if other is not None:
        other.touch_accessed([r.node.id for r in result.results if r.store == "global"])
    if result.expansion == "gated":
        brain.count_expansion_skip()
    explain = bool(a.get("explain", False))
    data = result.to_dict(explain=explain)
    if a.get("with_provenance"):
        for item, scored in zip(data["results"], result.results, strict=True):
            owner = other if other is not None and scored.store == "global" else brain
            chain = owner.walk_provenance(scored.node.id, depth=1)
            item["provenance"] = [{"depth": d, **n.to_dict()} for n, d in chain[1:]]
    source = "this project's and the global cerebro brain" if other is not None else framing.PROJECT_SOURCE
    text = _framed(result.results, "No relevant memories found.", source)
    if explain:
        text = f"Mode: {result.mode}; graph expansion: {result.expansion}.\n{text}"
    return Answer(_with_notices(data, notices), text + _notice_lines(notices))


def get(host: Host, a: dict[str, Any]) -> Answer:
    brain = host.project()
    detail = brain.get(a["id"], as_of=a.get("as_of"))
    depth = a.get("provenance_depth")
    if depth is None and a.get("with_provenance"):
        depth = 5
    chain = brain.walk_provenance(detail.node.id, depth=depth) if depth is not None else None
    data = detail.to_dict()
    items: list[Node] = [detail.node]
    if chain is not None:
        data["provenance"] = [{"depth": d, **n.to_dict()} for n, d in chain[1:]]
        items += [n for n, _ in chain[1:]]
    text = framing.frame_memories(items).text
    if chain is not None and len(chain) > 1:
        text += f"\nThe first memory is {detail.node.id}; the others are the sources it was derived from."
    edges = [
        {"source": e.source_id, "target": e.target_id, "relation": e.relation, "weight": e.weight} for e in detail.edges
    ]
    text += "\nEdges (JSON): " + json.dumps(edges, ensure_ascii=False)
    return Answer(data, text)


def list_(host: Host, a: dict[str, Any]) -> Answer:
    brain = host.project()
    nodes = brain.list(
        type=a.get("type"),
        status=a.get("status"),
        subtype=a["subtype"] if "subtype" in a else _unset(),
        limit=a.get("limit", 20),
    )
    return Answer({"memories": [n.to_dict() for n in nodes]}, _framed(nodes, "No memories found."))


def link(host: Host, a: dict[str, Any]) -> Answer:
    from cerebro.errors import quote

    brain = host.project()
    result = brain.add_edge(
        a["source"],
        a["target"],
        a["relation"],
        weight=a.get("weight"),
        valid_at=a.get("valid_at"),
        invalid_at=a.get("invalid_at"),
    )
    notices = list(host.notices)
    if not result.registered:
        notices.append(f"relation {quote(result.edge.relation)} is not registered; edge stored anyway")
    e = result.edge
    relation = json.dumps(e.relation, ensure_ascii=False)
    text = (
        f"{'Added' if result.created else 'Updated'} edge {e.source_id} -[{relation}]-> {e.target_id} "
        f"(weight {e.weight:.2f})."
    )
    return Answer(_with_notices(result.to_dict(), notices), text + _notice_lines(notices))


def supersede(host: Host, a: dict[str, Any]) -> Answer:
    brain = host.project()
    old_full = brain.resolve_id(a["old_id"])  # before the write: the new id may share the prefix
    new_id = brain.supersede(
        old_full,
        a["content"],
        type=a.get("type"),
        subtype=a["subtype"] if "subtype" in a else _unset(),
        importance=a.get("importance"),  # omitted: the old memory's
        metadata=a.get("metadata"),
        origin=host.origin(),
        anchors=a.get("anchors"),
        anchor_ref=a.get("anchor_ref"),
    )
    return Answer(
        _with_notices({"id": new_id, "superseded": old_full}, host.notices),
        f"Stored {new_id}, superseding {old_full} (kept as history)." + _notice_lines(host.notices),
    )


def consolidate(host: Host, a: dict[str, Any]) -> Answer:
    report = host.project().consolidate(a["into"], a["sources"])
    return Answer(
        report.to_dict(),
        f"Consolidated {_plural(len(report.sources), 'episode')} into {report.into} ({report.edges_added} new "
        f"derived_from edge(s), {report.consolidated} newly consolidated).",
    )


def forget(host: Host, a: dict[str, Any]) -> Answer:
    apply, hard = bool(a.get("apply", False)), bool(a.get("hard", False))
    report = host.project().forget(a["subject"], subtype=a.get("subtype"), apply=apply, hard=hard)
    count = _plural(len(report.matched))
    if not apply:
        head = f"Dry run: {count} would be forgotten. Call forget again with apply: true to archive them"
        head += " (hard: true deletes them)." if report.matched else "."
    else:
        head = f"{'Deleted' if hard else 'Archived'} {count}."
    body = framing.frame_memories(report.matched).text if report.matched else ""
    return Answer(report.to_dict(), head + ("\n" + body if body else ""))


def outcome(host: Host, a: dict[str, Any]) -> Answer:
    node = host.project().record_outcome(a["id"], success=a["success"])
    counts = (node.metadata or {}).get("outcomes", {})
    return Answer(
        node.to_dict(),
        f"Recorded {'success' if a['success'] else 'failure'} for {node.id} (outcomes: {json.dumps(counts)}).",
    )


def stats(host: Host, a: dict[str, Any]) -> Answer:
    data = host.project().stats().to_dict()
    return Answer(data, json.dumps(data, ensure_ascii=False))


def inbox_add(host: Host, a: dict[str, Any]) -> Answer:
    candidate_id = host.project().inbox_add(
        a["content"],
        type=a.get("type", "episode"),
        subtype=a.get("subtype"),
        importance=a.get("importance", 0.5),
        metadata=a.get("metadata"),
        origin=host.origin(),
    )
    return Answer({"id": candidate_id}, f"Quarantined candidate {candidate_id}: never recalled until approved.")


def inbox_list(host: Host, a: dict[str, Any]) -> Answer:
    candidates = host.project().inbox_list(limit=a.get("limit"))
    return Answer(
        {"candidates": [c.to_dict() for c in candidates]},
        _framed(candidates, "The inbox is empty.", "this project's cerebro inbox (candidates, not yet memories)"),
    )


def inbox_approve(host: Host, a: dict[str, Any]) -> Answer:
    node_id = host.project().inbox_approve(a["id"])
    return Answer(
        _with_notices({"id": node_id}, host.notices),
        f"Approved {node_id}: it is now a memory." + _notice_lines(host.notices),
    )


def inbox_discard(host: Host, a: dict[str, Any]) -> Answer:
    candidate = host.project().inbox_discard(a["id"])
    return Answer({"discarded": candidate.to_dict()}, f"Discarded candidate {candidate.id}.")


def prime(host: Host) -> tuple[str, int]:
    """The session prime (as the SessionStart hook injects it): important, surprising, diverse memories,
    framed, within ``prime_token_budget``; ``last_surfaced`` is stamped. Returns (text, memories shown)."""
    brain = host.project()
    primed = brain.prime()
    total = brain.active_count()
    budget = brain.config_value("prime_token_budget")
    framed = framing.frame_memories(primed, budget_tokens=max(0, budget - PRIME_TAIL_TOKENS), short_ids=True)
    if framed.shown:
        brain.touch_surfaced([p.node.id for p in primed[: framed.shown]])
    text = framed.text or "This project's cerebro brain has nothing to prime yet."
    more = total - framed.shown
    if more > 0:
        text += f"\n{more} more memor{'y' if more == 1 else 'ies'} in this brain — the recall tool finds them."
    return text, framed.shown
