"""The team brain's store (ADR 0030): each part of ``cerebro.store.interface.Store`` on PostgreSQL.

Most parts are the brain file's own modules: their SQL runs on PostgreSQL as written (``cerebro.db.postgres``
turns SQLite's few spellings into PostgreSQL's), and the row-level security policy scopes every statement to the
connection's project. The parts whose engines differ are modules of this package: the keyword and vector lanes,
the reads that ask what tables exist, doctor's checks, and the secret scan's text and compaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from cerebro.db.types import Session
    from cerebro.store import interface


class PostgresStore(SQLiteStore):
    """The store of a team database; what is not overridden here is the brain file's module."""

    @property
    def keywords(self) -> interface.Keywords:
        from cerebro.store.postgres import fts

        return fts

    @property
    def vectors(self) -> interface.Vectors:
        from cerebro.store.postgres import vec

        return vec

    @property
    def reads(self) -> interface.Reads:
        from cerebro.store.postgres import reads

        return reads

    @property
    def checks(self) -> interface.Checks:
        from cerebro.store.postgres import checks

        return checks

    @property
    def texts(self) -> interface.Texts:
        from cerebro.store.postgres import texts

        return texts


POSTGRES = PostgresStore()


def start_project(session: Session) -> None:
    """What a brain file's migrations write and a new project in a team database needs too: the built-in
    relations. Idempotent. No convention boundary is stamped: a team brain has no legacy, and memories pushed
    to it keep their own creation times, which may be older than the project (nothing is legacy without one)."""
    from cerebro import clock
    from cerebro.store.sql import text
    from cerebro.values import BUILT_IN_RELATIONS

    now = clock.now_text()
    for name in BUILT_IN_RELATIONS:
        session.execute(
            text("INSERT INTO relations (name, created_at) VALUES (:n, :t) ON CONFLICT(name) DO NOTHING"),
            {"n": name, "t": now},
        )


if TYPE_CHECKING:
    _fulfils: interface.Store = POSTGRES
