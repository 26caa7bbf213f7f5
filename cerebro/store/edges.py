"""CRUD over ``edges``. Edges are directed and unique per (source, target, relation)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlmodel import select

from cerebro import values
from cerebro.models import Edge as EdgeRow

if TYPE_CHECKING:
    from cerebro.db.types import Session


def to_value(row: EdgeRow) -> values.Edge:
    return values.Edge(
        id=int(row.id or 0),
        source_id=row.source_id,
        target_id=row.target_id,
        relation=row.relation,
        weight=float(row.weight if row.weight is not None else 1.0),
        metadata=row.metadata_,
        created_at=row.created_at,
        valid_at=row.valid_at,
        invalid_at=row.invalid_at,
    )


def upsert(  # noqa: PLR0913 - the keyword-only fields of a memory
    session: Session,
    *,
    source_id: str,
    target_id: str,
    relation: str,
    weight: float | None,
    valid_at: datetime | None,
    invalid_at: datetime | None,
    metadata: dict[str, Any] | None,
    now: datetime,
) -> tuple[EdgeRow, bool]:
    """Insert, or re-assert the window of an existing edge (an omitted bound becomes NULL, as upstream).

    The weight changes only when one is given; the id is kept. Returns (row, created).
    """
    existing = session.exec(
        select(EdgeRow).where(
            EdgeRow.source_id == source_id, EdgeRow.target_id == target_id, EdgeRow.relation == relation
        )
    ).first()
    if existing is None:
        row = EdgeRow(
            source_id=source_id,
            target_id=target_id,
            relation=relation,
            weight=1.0 if weight is None else weight,
            metadata_=metadata,
            created_at=now,
            valid_at=valid_at,
            invalid_at=invalid_at,
        )
        session.add(row)
        session.flush()
        return row, True
    existing.valid_at = valid_at
    existing.invalid_at = invalid_at
    if weight is not None:
        existing.weight = weight
    if metadata is not None:
        existing.metadata_ = metadata
    session.add(existing)
    session.flush()
    return existing, False


def exists(session: Session, source_id: str, target_id: str, relation: str) -> bool:
    return (
        session.execute(
            text("SELECT 1 FROM edges WHERE source_id = :s AND target_id = :t AND relation = :r"),
            {"s": source_id, "t": target_id, "r": relation},
        ).first()
        is not None
    )
