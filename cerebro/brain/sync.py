"""Team sync (ADR 0031): a laptop's brain file and its project's team brain share memories by id.

``push`` sends the memories marked shared (``metadata.shared``, set by ``add --share``), or every one; ``pull``
brings every memory of the team brain. Both are an export of one brain read back into the other with the import's
rules — validated, secrets redacted, vectors made by the receiving brain's own model — and one more: a memory is
replaced only by a later version of itself (``updated_at``, else ``created_at``; the same version changes nothing,
so a second run writes nothing). Statuses (superseded, consolidated) travel with the memories; a memory archived
on one side after its last change on the other leaves every lane there too; edges travel when both ends are known
on the receiving side; provenance (``derived_from`` edges, ``provenance_root``) and origin travel as they are.

The memories go in batches, each its own transaction, in id order, edges and archived memories last: a run that
is interrupted has written whole batches only, and the next run skips them as unchanged — it resumes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cerebro.brain.handle import Handle

SHARED = "shared"  # the metadata key that marks a memory for push
BATCH = 200


@dataclass
class SyncReport:
    direction: str  # "push" or "pull"
    source: str
    target: str
    considered: int = 0  # memories of the source the run looked at
    written: int = 0  # memories new or changed on the target
    unchanged: int = 0
    edges: int = 0  # edges new or changed on the target
    archived: int = 0  # memories the target archived because the source had
    pending_embeddings: int = 0
    batches: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "source": self.source,
            "target": self.target,
            "considered": self.considered,
            "written": self.written,
            "unchanged": self.unchanged,
            "edges": self.edges,
            "archived": self.archived,
            "pending_embeddings": self.pending_embeddings,
        }


def is_shared(node: dict[str, Any]) -> bool:
    metadata = node.get("metadata")
    if not isinstance(metadata, str):
        return False
    try:
        return json.loads(metadata).get(SHARED) is True
    except (ValueError, AttributeError):
        return False


def transfer(
    source: Handle,
    target: Handle,
    *,
    direction: str,
    select: Callable[[dict[str, Any]], bool],
    batch: int = BATCH,
) -> SyncReport:
    """Copy ``source``'s selected memories (and what they bring: edges among known memories, archive states)
    into ``target`` under the newer-version rule."""
    from cerebro import importing
    from cerebro.brain import exports

    lines = exports.export(source, "jsonl")
    records = [line for line in lines if '"kind":"meta"' not in line]  # settings stay each brain's own
    parsed = importing.parse_lines(list(records), source.location)
    nodes = sorted((n for n in parsed.nodes if select(n)), key=lambda n: n["id"])
    report = SyncReport(direction, source.location, target.location, considered=len(nodes))
    for start in range(0, len(nodes), batch):
        part = importing.Parsed(nodes=nodes[start : start + batch])
        done = exports.import_records(target, part, source.location, on_conflict="newer")
        report.written += done["nodes_imported"]
        report.unchanged += done["nodes_skipped"]
        report.pending_embeddings += done["pending_embeddings"]
        report.batches += 1
    with target.snapshot() as conn:
        known = target.store.reads.node_ids(conn)
    sent = {n["id"] for n in nodes}
    edges = [
        e for e in parsed.edges if {e["source_id"], e["target_id"]} <= known and sent & {e["source_id"], e["target_id"]}
    ]
    archive = [a for a in parsed.archive if select(a) and a["id"] in known]
    if edges or archive:
        done = exports.import_records(
            target, importing.Parsed(edges=edges, archive=archive), source.location, on_conflict="newer"
        )
        report.edges = done["edges_imported"]
        report.archived = done.get("archived", 0)
        report.batches += 1
    return report


def push(local: Handle, team: Handle, *, everything: bool = False, batch: int = BATCH) -> SyncReport:
    """The local brain's shared memories (every one with ``everything``) into the team brain."""
    return transfer(local, team, direction="push", select=(lambda _: True) if everything else is_shared, batch=batch)


def pull(local: Handle, team: Handle, *, batch: int = BATCH) -> SyncReport:
    """Every memory of the team brain into the local one."""
    return transfer(team, local, direction="pull", select=lambda _: True, batch=batch)


def share(local: Handle, team: Handle, node_id: str) -> SyncReport:
    """``promote --team``: mark one memory shared (later pushes keep sending its new versions) and push it now,
    with its edges to memories the team brain knows. The team brain holds it under the same id."""
    from cerebro.brain import memories
    from cerebro.errors import InvalidInput

    if local.is_team:
        raise InvalidInput("this project's brain is the team brain itself: its memories are the team's already")
    node = memories.get(local, node_id).node
    if (node.metadata or {}).get(SHARED) is not True:
        memories.update(local, node.id, metadata={SHARED: True})
    return transfer(local, team, direction="push", select=lambda n: n["id"] == node.id)
