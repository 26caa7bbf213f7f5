"""SQLModel table classes: the brain's entities at the head of the migration chain.

The tables mirror upstream's DDL (``../shared/spec/upstream-behaviour.md`` §1) so that a brain stays
readable by Go cerebro. Alembic revisions in ``alembic/versions`` are the source of truth for the schema;
``alembic check`` (a test) keeps these classes and the revisions in step. The FTS5 and vec0 lanes are
virtual tables handled by raw SQL in ``cerebro.store.fts`` / ``cerebro.store.vec``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator, UserDefinedType
from sqlmodel import Field, SQLModel

from cerebro import clock
from cerebro.values import ARCHIVE_REASONS, NODE_STATUSES, NODE_TYPES  # re-exported


class _DatetimeColumn(UserDefinedType):
    """Declares ``DATETIME`` (upstream's column type) and passes text through untouched."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:  # noqa: ANN401 - SQLAlchemy's UserDefinedType hook
        return "DATETIME"


class StorageTime(TypeDecorator):
    """A timestamp stored as ``YYYY-MM-DD HH:MM:SS`` UTC text; read back from that layout or RFC 3339."""

    impl = _DatetimeColumn
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:  # noqa: ANN401 - SQLAlchemy's TypeDecorator hook
        if value is None:
            return None
        if isinstance(value, datetime):
            return clock.format_ts(value)
        return clock.normalise(str(value))

    def process_result_value(self, value: Any, dialect: Any) -> datetime | None:  # noqa: ANN401 - SQLAlchemy's TypeDecorator hook
        if value is None or value == "":
            return None
        # A value no layout can parse (py0001 leaves such text as it found it) reads as unknown, rather
        # than making the whole memory unreadable.
        return clock.parse_optional(value)


def _ts(**kw: Any) -> Any:  # noqa: ANN401 - SQLModel's Field() arguments and result
    server_default = kw.pop("server_default", None)
    return Field(
        default=None,
        sa_column=sa.Column(
            kw.pop("name"), StorageTime(), server_default=server_default, nullable=kw.pop("nullable", True)
        ),
    )


_CURRENT_TIMESTAMP = sa.text("CURRENT_TIMESTAMP")
_JSON = sa.JSON(none_as_null=True)


class SchemaMeta(SQLModel, table=True):
    __tablename__: ClassVar[str] = "schema_meta"

    key: str = Field(sa_column=sa.Column("key", sa.Text, primary_key=True, nullable=True))
    value: str = Field(sa_column=sa.Column("value", sa.Text, nullable=False))


class Node(SQLModel, table=True):
    __tablename__: ClassVar[str] = "nodes"
    __table_args__ = (
        sa.CheckConstraint(f"type IN {NODE_TYPES}", name="ck_nodes_type"),
        sa.CheckConstraint("importance BETWEEN 0.0 AND 1.0", name="ck_nodes_importance"),
        sa.CheckConstraint(f"status IN {NODE_STATUSES}", name="ck_nodes_status"),
        sa.Index("idx_nodes_status", "status"),
        # Ours (py0004, ADR 0037): prime's pools by importance; it replaced upstream's (type) and (type, status).
        sa.Index("idx_nodes_type_status_importance", "type", "status", "importance", "created_at"),
        sa.Index("idx_nodes_last_accessed", "last_accessed"),
        sa.Index("idx_nodes_updated_at", "updated_at"),
        sa.Index("idx_nodes_last_surfaced", "last_surfaced"),
        sa.Index("idx_nodes_origin_actor", "origin_actor"),
        sa.Index("idx_nodes_origin_host", "origin_host"),
        # Ours (py0003, ADR 0033): writing order — created_at, then rowid, which every SQLite index carries.
        sa.Index("idx_nodes_writing_order", "created_at"),
    )

    id: str = Field(sa_column=sa.Column("id", sa.Text, primary_key=True, nullable=True))
    type: str = Field(sa_column=sa.Column("type", sa.Text, nullable=False))
    subtype: str | None = Field(default=None, sa_column=sa.Column("subtype", sa.Text))
    content: str = Field(sa_column=sa.Column("content", sa.Text, nullable=False))
    metadata_: dict[str, Any] | None = Field(default=None, sa_column=sa.Column("metadata", _JSON))
    importance: float = Field(default=0.5, sa_column=sa.Column("importance", sa.REAL, server_default="0.5"))
    decay_rate: float = Field(sa_column=sa.Column("decay_rate", sa.REAL, nullable=False))
    access_count: int = Field(default=0, sa_column=sa.Column("access_count", sa.Integer, server_default="0"))
    times_reinforced: int = Field(default=0, sa_column=sa.Column("times_reinforced", sa.Integer, server_default="0"))
    status: str = Field(default="active", sa_column=sa.Column("status", sa.Text, server_default="active"))
    embedding_model: str = Field(
        default="", sa_column=sa.Column("embedding_model", sa.Text, nullable=False, server_default="")
    )
    created_at: datetime | None = _ts(name="created_at", server_default=_CURRENT_TIMESTAMP)
    last_accessed: datetime | None = _ts(name="last_accessed", server_default=_CURRENT_TIMESTAMP)
    last_reinforced: datetime | None = _ts(name="last_reinforced")
    updated_at: datetime | None = _ts(name="updated_at")
    last_surfaced: datetime | None = _ts(name="last_surfaced")
    provenance_root: int = Field(
        default=0, sa_column=sa.Column("provenance_root", sa.Integer, nullable=False, server_default="0")
    )
    origin_actor: str | None = Field(default=None, sa_column=sa.Column("origin_actor", sa.Text))
    origin_channel: str | None = Field(default=None, sa_column=sa.Column("origin_channel", sa.Text))
    origin_session: str | None = Field(default=None, sa_column=sa.Column("origin_session", sa.Text))
    origin_host: str | None = Field(default=None, sa_column=sa.Column("origin_host", sa.Text))


class Edge(SQLModel, table=True):
    __tablename__: ClassVar[str] = "edges"
    __table_args__ = (
        sa.UniqueConstraint("source_id", "target_id", "relation"),
        sa.Index("idx_edges_source", "source_id"),
        sa.Index("idx_edges_target", "target_id"),
        sa.Index("idx_edges_relation", "relation"),
        {"sqlite_autoincrement": True},
    )

    id: int | None = Field(default=None, sa_column=sa.Column("id", sa.Integer, primary_key=True, nullable=True))
    source_id: str = Field(
        sa_column=sa.Column("source_id", sa.Text, sa.ForeignKey("nodes.id", ondelete="CASCADE"), nullable=False)
    )
    target_id: str = Field(
        sa_column=sa.Column("target_id", sa.Text, sa.ForeignKey("nodes.id", ondelete="CASCADE"), nullable=False)
    )
    relation: str = Field(sa_column=sa.Column("relation", sa.Text, nullable=False))
    weight: float = Field(default=1.0, sa_column=sa.Column("weight", sa.REAL, server_default="1.0"))
    metadata_: dict[str, Any] | None = Field(default=None, sa_column=sa.Column("metadata", _JSON))
    created_at: datetime | None = _ts(name="created_at", server_default=_CURRENT_TIMESTAMP)
    valid_at: datetime | None = _ts(name="valid_at")
    invalid_at: datetime | None = _ts(name="invalid_at")


class ArchivedNode(SQLModel, table=True):
    __tablename__: ClassVar[str] = "nodes_archive"
    __table_args__ = (sa.CheckConstraint(f"archive_reason IN {ARCHIVE_REASONS}", name="ck_nodes_archive_reason"),)

    id: str = Field(sa_column=sa.Column("id", sa.Text, primary_key=True, nullable=True))
    type: str = Field(sa_column=sa.Column("type", sa.Text, nullable=False))
    subtype: str | None = Field(default=None, sa_column=sa.Column("subtype", sa.Text))
    content: str = Field(sa_column=sa.Column("content", sa.Text, nullable=False))
    metadata_: dict[str, Any] | None = Field(default=None, sa_column=sa.Column("metadata", _JSON))
    importance: float | None = Field(default=None, sa_column=sa.Column("importance", sa.REAL))
    status: str | None = Field(default=None, sa_column=sa.Column("status", sa.Text))
    archive_reason: str | None = Field(default=None, sa_column=sa.Column("archive_reason", sa.Text))
    original_created_at: datetime | None = _ts(name="original_created_at")
    archived_at: datetime | None = _ts(name="archived_at", server_default=_CURRENT_TIMESTAMP)


class Relation(SQLModel, table=True):
    __tablename__: ClassVar[str] = "relations"

    name: str = Field(sa_column=sa.Column("name", sa.Text, primary_key=True, nullable=True))
    traversal_class: str | None = Field(default=None, sa_column=sa.Column("traversal_class", sa.Text))
    created_at: datetime | None = _ts(name="created_at", server_default=_CURRENT_TIMESTAMP)


class InboxCandidate(SQLModel, table=True):
    """Quarantined candidates (upstream v7): no lane, prime, gc or export ever reads this table."""

    __tablename__: ClassVar[str] = "inbox_candidates"
    __table_args__ = (sa.CheckConstraint(f"type IN {NODE_TYPES}", name="ck_inbox_type"),)

    id: str = Field(sa_column=sa.Column("id", sa.Text, primary_key=True, nullable=True))
    type: str = Field(sa_column=sa.Column("type", sa.Text, nullable=False))
    subtype: str | None = Field(default=None, sa_column=sa.Column("subtype", sa.Text))
    content: str = Field(sa_column=sa.Column("content", sa.Text, nullable=False))
    metadata_: dict[str, Any] | None = Field(default=None, sa_column=sa.Column("metadata", _JSON))
    importance: float | None = Field(default=0.5, sa_column=sa.Column("importance", sa.REAL, server_default="0.5"))
    created_at: datetime | None = _ts(name="created_at", server_default=_CURRENT_TIMESTAMP)
    origin_actor: str | None = Field(default=None, sa_column=sa.Column("origin_actor", sa.Text))
    origin_channel: str | None = Field(default=None, sa_column=sa.Column("origin_channel", sa.Text))
    origin_session: str | None = Field(default=None, sa_column=sa.Column("origin_session", sa.Text))
    origin_host: str | None = Field(default=None, sa_column=sa.Column("origin_host", sa.Text))


# Upstream declares ``importance DESC``; a column-expression index keeps autogenerate's comparison exact.
sa.Index("idx_nodes_importance", Node.__table__.c.importance.desc())  # type: ignore[attr-defined]
