"""The store's two helpers for SQL through a SQLAlchemy session.

``text`` imports SQLAlchemy when a statement is first built, so a module that also serves the raw-connection
hot path (the vector lane, the keyword lane) does not load it at import; ``changed`` runs a data-changing
statement and says how many rows it touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from sqlalchemy import CursorResult, TextClause

    from cerebro.db.types import Session


def text(sql: str) -> TextClause:
    from sqlalchemy import text as sa_text

    return sa_text(sql)


def changed(session: Session, sql: str, params: Mapping[str, object] | None = None) -> int:
    """Run an INSERT, UPDATE or DELETE; the number of rows it inserted, updated or deleted."""
    result = session.execute(text(sql), params)
    return cast("CursorResult[object]", result).rowcount
