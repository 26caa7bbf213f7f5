"""Frozen values that cross layers: what the library returns and the CLI renders.

Timestamps are aware UTC datetimes in Python and RFC 3339 (``2026-03-11T10:00:00Z``) in JSON.
"""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar, get_args

from cerebro import clock

NodeType = Literal["episode", "concept", "procedure", "reflection"]
NodeStatus = Literal["active", "consolidated", "superseded", "archived"]
NODE_TYPES: tuple[str, ...] = get_args(NodeType)
NODE_STATUSES: tuple[str, ...] = get_args(NodeStatus)
# The relations every brain registers from the start (Go cerebro v6 seeds them; so does a new team brain).
BUILT_IN_RELATIONS = ("derived_from", "supports", "contradicts", "supersedes")
ARCHIVE_REASONS = ("decayed", "superseded", "redundant", "capacity")
DECAY_RATES = {"episode": 0.15, "concept": 0.02, "procedure": 0.005, "reflection": 0.05}
DEFAULT_DECAY_RATE = 0.1  # upstream's rate for a type it does not know


class _Unset:
    """The type of :data:`UNSET`: one instance, shown as ``UNSET`` (in signatures and reprs)."""

    def __repr__(self) -> str:
        return "UNSET"


# "Argument not given" where None means something (clear a subtype; "no subtype"). One sentinel for the
# whole library: the Brain's signatures and the recall pipeline's options use the same object.
UNSET: Any = _Unset()


V = TypeVar("V")


def evolve(value: V, /, **changes: Any) -> V:  # noqa: ANN401 - any field's type
    """``dataclasses.replace`` for this module's frozen values, without its per-field work (~6× faster: recall
    copies ~40 a query). Sound because none of them has a ``__post_init__`` or an ``init=False`` field."""
    unknown = changes.keys() - value.__dataclass_fields__.keys()  # type: ignore[attr-defined]
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field {sorted(unknown)[0]!r}")
    copy = object.__new__(type(value))
    copy.__dict__.update(value.__dict__, **changes)
    return copy


def json_time(value: datetime | None) -> str | None:
    return clock.rfc3339(value) if value is not None else None


def _copied(value: Any) -> Any:  # noqa: ANN401 - JSON-like values (dicts and lists are copied), any of them
    """A deep copy of JSON-shaped data (dicts, lists), as ``dataclasses.asdict`` would give."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_copied(item) for item in value)
    return value


@dataclass(frozen=True)
class Origin:
    """Who wrote a memory, stamped at write time and never inferred."""

    actor: str | None = None
    channel: str | None = None
    session: str | None = None
    host: str | None = None

    @classmethod
    def from_environment(cls, default_channel: str, **overrides: str | None) -> Origin:
        """actor ← ``$CEREBRO_ORIGIN_ACTOR``; session ← ``$CEREBRO_ORIGIN_SESSION`` else ``$CLAUDE_SESSION_ID``."""
        values: dict[str, str | None] = {
            "actor": os.environ.get("CEREBRO_ORIGIN_ACTOR") or None,
            "channel": default_channel,
            "session": os.environ.get("CEREBRO_ORIGIN_SESSION") or os.environ.get("CLAUDE_SESSION_ID") or None,
            "host": socket.gethostname() or None,
        }
        for key, value in overrides.items():
            if value is not None:
                values[key] = value
        return cls(**values)


@dataclass(frozen=True)
class Edge:
    id: int
    source_id: str
    target_id: str
    relation: str
    weight: float
    metadata: dict[str, Any] | None
    created_at: datetime | None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("created_at", "valid_at", "invalid_at"):
            data[key] = json_time(data[key])
        return data


@dataclass(frozen=True)
class Node:
    id: str
    type: str
    subtype: str | None
    content: str
    metadata: dict[str, Any] | None
    importance: float
    decay_rate: float
    access_count: int
    times_reinforced: int
    status: str
    embedding_model: str
    created_at: datetime | None
    last_accessed: datetime | None
    last_reinforced: datetime | None
    updated_at: datetime | None
    last_surfaced: datetime | None
    provenance_root: bool
    origin: Origin = field(default_factory=Origin)
    # Computed at read time (never stored): see cerebro.provenance and cerebro.anchors.
    provenance_status: str | None = None
    origin_status: str | None = None
    anchor_status: str | None = None  # verified, stale, missing or unknown: the worst of its anchors
    anchors: list[dict[str, Any]] | None = None  # each {"path", "lines", "commit", "status"[, "ref", "moved_to"]}

    @property
    def short_id(self) -> str:
        return self.id[:8]

    def to_dict(self) -> dict[str, Any]:
        # Spelled out rather than dataclasses.asdict: this runs for every result of every recall, and asdict's
        # generic deep copy cost ~7 µs a node (a quarter of a server's recall at 10k memories).
        data: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "subtype": self.subtype,
            "content": self.content,
            "metadata": _copied(self.metadata),
            "importance": self.importance,
            "decay_rate": self.decay_rate,
            "access_count": self.access_count,
            "times_reinforced": self.times_reinforced,
            "status": self.status,
            "embedding_model": self.embedding_model,
            "created_at": json_time(self.created_at),
            "last_accessed": json_time(self.last_accessed),
            "last_reinforced": json_time(self.last_reinforced),
            "updated_at": json_time(self.updated_at),
            "last_surfaced": json_time(self.last_surfaced),
            "provenance_root": self.provenance_root,
        }
        for computed in ("provenance_status", "origin_status", "anchor_status", "anchors"):
            # Read-time facts, null where the command did not work them out: every memory has the same keys.
            data[computed] = _copied(getattr(self, computed))
        origin = self.origin
        data.update(
            origin_actor=origin.actor,
            origin_channel=origin.channel,
            origin_session=origin.session,
            origin_host=origin.host,
        )
        return data


# A memory's neighbours in writing order: (the one written just before it, the one just after), None at an end.
Beside = tuple[Node | None, Node | None]


@dataclass(frozen=True)
class NodeDetail:
    """A node with every edge that touches it (``get``)."""

    node: Node
    edges: list[Edge]

    def to_dict(self) -> dict[str, Any]:
        data = self.node.to_dict()
        data["edges"] = [edge.to_dict() for edge in self.edges]
        return data


@dataclass(frozen=True)
class EdgeResult:
    edge: Edge
    created: bool  # False when an existing edge was updated (upsert)
    registered: bool  # whether the relation is in the brain's registry

    def to_dict(self) -> dict[str, Any]:
        return {**self.edge.to_dict(), "created": self.created, "registered": self.registered}


@dataclass(frozen=True)
class Stats:
    total_nodes: int
    active_nodes: int
    consolidated_nodes: int
    superseded_nodes: int
    archived_nodes: int
    nodes_by_type: dict[str, int]
    total_edges: int
    pending_embeddings: int
    embedded_nodes: int  # memories whose vector comes from the brain's current model
    embedding_provider: str
    embedding_model: str
    embedding_dimensions: int
    schema_version: int
    revision: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Health:
    """What the dashboard's health panel shows: the active memories, the edges, and the cold memories (active,
    and never surfaced by prime, or not for a week)."""

    active_nodes: int
    total_edges: int
    cold_nodes: int
    nodes_by_type: dict[str, int] = field(default_factory=dict)  # active memories, by type

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BrainInfo:
    """One brain file under ``CEREBRO_HOME`` (``cerebro brains``)."""

    path: str
    scope: str  # "project" or "global"
    project: str | None  # the project folder recorded at init (None: not recorded, an older brain)
    project_exists: bool | None  # None when no folder is recorded
    git_dir: str | None  # the repository's common git folder, for a git project
    git_root: str | None  # the repository's root commit
    memories: int | None  # active memories (None: the file could not be read)
    size_bytes: int  # the file with its -wal
    last_used: str  # RFC 3339: the last write to the file (or its -wal)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConfigEntry:
    key: str
    value: str
    source: str  # "brain" or "default"
    default: str
    description: str

    def to_dict(self) -> dict[str, Any]:
        """Values in their setting's type (20, 0.3, true), as JSON readers expect (issue 16)."""
        from cerebro.config import typed

        return asdict(self) | {"value": typed(self.key, self.value), "default": typed(self.key, self.default)}


@dataclass(frozen=True)
class ConfigChange:
    key: str
    value: str
    previous: str

    def to_dict(self) -> dict[str, Any]:
        """Values in their setting's type, as :meth:`ConfigEntry.to_dict`."""
        from cerebro.config import typed

        return asdict(self) | {"value": typed(self.key, self.value), "previous": typed(self.key, self.previous)}


@dataclass(frozen=True)
class RelationInfo:
    name: str
    traversal_class: str | None
    created_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "traversal_class": self.traversal_class, "created_at": json_time(self.created_at)}


@dataclass(frozen=True)
class InitResult:
    path: str
    created: bool
    embedding_provider: str
    embedding_model: str
    embedding_dimensions: int
    backup: str | None = None
    is_global: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ScoredNode:
    """A recalled memory with its composite score and how it was found (lane → 1-based rank)."""

    node: Node
    score: float
    similarity: float
    parts: Any = None  # cerebro.scoring.ScoreParts
    lanes: dict[str, int] = field(default_factory=dict)
    fused: float | None = None
    store: str | None = None  # "project" or "global" when results of both brains were merged

    @property
    def rank_value(self) -> float:
        """What the result list is ordered by: the fused value when lanes were fused, else the score."""
        return self.fused if self.fused is not None else self.score

    def revalued(self, fused: float, lane: tuple[str, int] | None = None) -> ScoredNode:
        """This result ranked by another value (and found by one more lane): recall's steps after fusion build ~100
        of these, and ``dataclasses.replace`` costs 10× a plain constructor."""
        lanes = {**self.lanes, lane[0]: lane[1]} if lane else self.lanes
        return ScoredNode(self.node, self.score, self.similarity, self.parts, lanes, fused, self.store)

    def to_dict(self, *, explain: bool = False) -> dict[str, Any]:
        data = self.node.to_dict()
        if self.store is not None:
            data["store"] = self.store
        data["score"] = round(self.score, 6)
        data["similarity"] = round(self.similarity, 6)
        if explain:
            data["explain"] = {
                "components": self.parts.to_dict() if self.parts is not None else None,
                "lanes": dict(self.lanes),
                "fused": round(self.fused, 6) if self.fused is not None else None,
            }
        return data


@dataclass(frozen=True)
class RecallResult:
    """What ``recall``/``search`` return. ``mode`` is hybrid, keyword (provider none), keyword-fallback
    (the embedder failed) or vector (search). ``expansion`` is expanded, gated, forced (``--as-of``), or
    off."""

    query: str
    results: list[ScoredNode]
    mode: str
    expansion: str
    notices: list[str] = field(default_factory=list)

    def __iter__(self):  # noqa: ANN204 - iterate over the scored nodes
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def ids(self) -> list[str]:
        return [r.node.id for r in self.results]

    def to_dict(self, *, explain: bool = False) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [r.to_dict(explain=explain) for r in self.results],
            "expansion": self.expansion,
            "notices": list(self.notices),
        }


@dataclass(frozen=True)
class EmbedReport:
    embedded: int
    failed: int
    remaining: int
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SecretFinding:
    """A stored record holding secrets: which, where, and their kinds — never the secrets themselves."""

    id: str
    where: str  # memory, archive or inbox
    content_kinds: tuple[str, ...]
    metadata_kinds: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "where": self.where,
            "content": list(self.content_kinds),
            "metadata": list(self.metadata_kinds),
        }


@dataclass(frozen=True)
class SecretScan:
    """What a secret scan found (and, after a redaction, the backup taken before it)."""

    scanned: int
    findings: list[SecretFinding]
    redacted: bool = False
    backup: str | None = None
    log_purged: bool | None = None

    @property
    def secrets(self) -> int:
        return sum(len(f.content_kinds) + len(f.metadata_kinds) for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scanned": self.scanned,
            "records": len(self.findings),
            "secrets": self.secrets,
            "findings": [f.to_dict() for f in self.findings],
            "redacted": self.redacted,
            "backup": self.backup,
            "log_purged": self.log_purged,
        }


@dataclass(frozen=True)
class GcReport:
    evaluated: int
    archived: int
    by_type: dict[str, int]
    evicted: list[dict[str, Any]]
    threshold: float
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def log_entry(self, at: str) -> dict[str, Any]:
        """A gc log line: what was archived and why, never the text (logs must not hold memory content)."""
        evicted = [{k: v for k, v in e.items() if k != "content"} for e in self.evicted]
        return {"at": at, **{k: v for k, v in self.to_dict().items() if k != "evicted"}, "evicted": evicted}


@dataclass(frozen=True)
class ConsolidateReport:
    into: str | None
    sources: list[str]
    consolidated: int  # sources whose status changed now
    edges_added: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ForgetReport:
    subject: str
    matched: list[dict[str, Any]]
    applied: bool
    hard: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class InboxCandidate:
    """A quarantined memory candidate (``inbox add``): no lane, prime, list, gc or export sees it until
    ``inbox approve`` makes it a memory with the same id, origin and ``created_at``."""

    id: str
    type: str
    subtype: str | None
    content: str
    metadata: dict[str, Any] | None
    importance: float
    created_at: datetime | None
    origin: Origin = field(default_factory=Origin)

    @property
    def short_id(self) -> str:
        return self.id[:8]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        origin = data.pop("origin")
        data["created_at"] = json_time(data["created_at"])
        for key, value in origin.items():
            data[f"origin_{key}"] = value
        return data
