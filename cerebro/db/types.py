"""The connection types, named once for annotations.

Modules import these under ``TYPE_CHECKING`` only, so naming a type never loads SQLAlchemy on a hot path:

- ``Connection`` — the raw DB-API connection reads go through (sqlean.py's, which has the standard library's
  ``sqlite3`` API and can load sqlite-vec; type checkers see it as the ``sqlite3`` class).
- ``Session`` — the SQLModel session writes and ORM reads go through (``cerebro.db.session.unit_of_work``).
- ``Engine`` — the SQLAlchemy engine a brain's sessions are made from (``cerebro.db.engine``), and
  ``SAConnection`` — a connection of it (what Alembic's migrations and the upgrade on open run on).
- ``Cursor`` — a cursor of the raw connection (the metrics store writes through one).
- ``Transaction`` — what a store write that needs no ORM objects runs in: a ``Session``, or the raw ``Connection``
  inside ``cerebro.db.session.raw_write`` (the one-shot ``add``'s path, which never loads the ORM: ADR 0028).
"""

from __future__ import annotations

from sqlite3 import Connection, Cursor

from sqlalchemy.engine import Connection as SAConnection
from sqlalchemy.engine import Engine
from sqlmodel import Session

Transaction = Session | Connection

__all__ = ["Connection", "Cursor", "Engine", "SAConnection", "Session", "Transaction"]
