"""Frozen values that cross layers: memories, edges and recall results, as the library returns and the CLI renders
them. What an operation reports (counts, settings, findings) is in :mod:`cerebro.reports`.

Timestamps are aware UTC datetimes in Python and RFC 3339 (``2026-03-11T10:00:00Z``) in JSON.
"""

from __future__ import annotations

import os
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
    fields = value.__dataclass_fields__.keys()  # type: ignore[attr-defined]
    if not fields >= changes.keys():  # a superset test walks the changes only (a difference walks every field)
        raise TypeError(f"{type(value).__name__} has no field {sorted(changes.keys() - fields)[0]!r}")
    copy = object.__new__(type(value))
    attrs = copy.__dict__
    attrs.update(value.__dict__)
    attrs.update(changes)
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
        import socket  # here: ~5 ms of start-up that only a write needs

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
    """A typed link between two memories (``supports``, ``derived_from``, …), valid from ``valid_at`` until
    ``invalid_at`` when those are set. (A docstring also spares ``dataclass`` computing one from the signature.)"""

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
    """A memory as stored (its row), with what a read computes beside it: the provenance, origin and code-anchor
    statuses."""

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

    @classmethod
    def built(cls, node: Node, score: float, similarity: float, parts: Any, lanes: dict[str, int]) -> ScoredNode:  # noqa: ANN401 - a ScoreParts
        """``ScoredNode(node, score, similarity, parts, lanes)`` without the frozen constructor, which sets each field
        through ``object.__setattr__``: recall scores ~110 candidates a query (as :meth:`revalued` copies)."""
        built = object.__new__(cls)
        built.__dict__.update(
            node=node, score=score, similarity=similarity, parts=parts, lanes=lanes, fused=None, store=None
        )
        return built

    def revalued(self, fused: float, lane: tuple[str, int] | None = None) -> ScoredNode:
        """This result ranked by another value (and found by one more lane): recall's fusion and the steps after it
        build ~300 of these, so the copy is made as :func:`evolve` makes one — half a frozen constructor's cost, a
        tenth of ``dataclasses.replace``'s."""
        copy = object.__new__(ScoredNode)
        copy.__dict__.update(self.__dict__, fused=fused)
        if lane:
            copy.__dict__["lanes"] = {**self.lanes, lane[0]: lane[1]}
        return copy

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
