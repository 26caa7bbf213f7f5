"""The store's helpers for SQL text.

``text`` imports SQLAlchemy when a statement is first built, so a module that also serves the raw-connection
hot path (the vector lane, the keyword lane) does not load it at import; ``execute`` runs a statement in either
kind of write transaction (an ORM session, or the raw connection: ADR 0028); ``changed`` runs a data-changing
statement and says how many rows it touched.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from sqlalchemy import TextClause

    from cerebro.db.types import Connection, Session, Transaction


class Rows(Protocol):
    """A statement's result, read the DB-API way (a sqlite3 cursor and SQLAlchemy's result both read so)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...  # noqa: ANN401 - a row: a tuple-like of the statement's columns

    def fetchall(self) -> Sequence[Any]: ...


def dialect(db: Transaction) -> str:
    """``sqlite`` or ``postgresql`` (a team brain, ADR 0030): for the few statements whose SQL differs."""
    if hasattr(db, "get_bind"):  # a Session
        return str(cast("Session", db).get_bind().dialect.name)
    return str(getattr(db, "dialect", "sqlite"))  # the raw connection: PostgreSQL's says so


@functools.lru_cache(maxsize=512)
def text(sql: str) -> TextClause:
    """The statement, parsed once: building a clause parses its ``:parameters`` with a regular expression, which
    cost an import of 6,000 memories more than running its statements (a clause is immutable, so it can be shared)."""
    from sqlalchemy import text as sa_text

    return sa_text(sql)


def execute(db: Transaction, sql: str, params: Mapping[str, object] | None = None) -> Rows:
    """Run one statement (named ``:parameters``) in ``db``: through the session, so that it joins the session's
    transaction and sees what the session has not flushed yet, or straight on the raw connection."""
    if hasattr(db, "get_bind"):  # a Session
        return cast("Rows", cast("Session", db).execute(text(sql), params))
    return cast("Rows", cast("Connection", db).execute(sql, params or {}))


def changed(db: Transaction, sql: str, params: Mapping[str, object] | None = None) -> int:
    """Run an INSERT, UPDATE or DELETE; the number of rows it inserted, updated or deleted."""
    return execute(db, sql, params).rowcount
