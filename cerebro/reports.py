"""Frozen reports of the library's operations — counts, settings, findings, brain listings — each with the
``to_dict`` the CLI's JSON output uses. Kept apart from :mod:`cerebro.values` (memories and recall results), which
every hook and recall imports: a frozen dataclass costs ~2 ms to define, and these sixteen would be a third of a
``hook prime``'s own start-up (ADR 0036).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from cerebro.values import Edge, Node, Origin, json_time


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
    where: str  # memory, archive, inbox or edge (a link: its metadata only, its id the link's number)
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
    older_backups: tuple[str, ...] = ()  # this brain's earlier backups: they may hold the secrets too

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
            "older_backups": list(self.older_backups),
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
