"""The relation registry (upstream v6): advisory names for edges, seeded with the four built-ins."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sqlmodel import col, select

import cerebro  # cerebro.reports loads on first use: hooks never define the reports (ADR 0036)
from cerebro.models import Relation

if TYPE_CHECKING:
    import cerebro.reports
    from cerebro.db.types import Session


def to_value(row: Relation) -> cerebro.reports.RelationInfo:
    return cerebro.reports.RelationInfo(row.name, row.traversal_class, row.created_at)


def is_registered(session: Session, name: str) -> bool:
    try:
        return session.get(Relation, name) is not None
    except Exception:  # noqa: BLE001 - advisory only: fail open, as upstream
        return True


def add(session: Session, name: str, traversal_class: str | None, now: datetime) -> tuple[Relation, bool]:
    row = session.get(Relation, name)
    if row is not None:
        if traversal_class is not None:
            row.traversal_class = traversal_class
            session.add(row)
        return row, False
    row = Relation(name=name, traversal_class=traversal_class, created_at=now)
    session.add(row)
    session.flush()
    return row, True


def remove(session: Session, name: str) -> bool:
    row = session.get(Relation, name)
    if row is None:
        return False
    session.delete(row)
    session.flush()
    return True


def list_all(session: Session) -> list[Relation]:
    # In byte order on either engine (a team database's own collation may put "_x" before "alpha")
    return list(session.exec(select(Relation).order_by(col(Relation.name).collate("BINARY"))).all())
