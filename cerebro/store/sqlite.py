"""The SQLite store: each part of ``cerebro.store.interface.Store`` is a module of this package.

A part's module is imported when the part is first asked for, so a path that only reads (the SessionStart
prime, recall) never imports the ORM-backed modules. Annotating each property with its Protocol makes the type
checker verify that the module fulfils it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cerebro.store import interface


class SQLiteStore:
    """The store of a brain file (sqlite-vec for the vector lane, FTS5 for the keyword lane)."""

    @property
    def inserts(self) -> interface.Inserts:
        from cerebro.store import inserts

        return inserts

    @property
    def nodes(self) -> interface.Nodes:
        from cerebro.store import nodes

        return nodes

    @property
    def edges(self) -> interface.Edges:
        from cerebro.store import edges

        return edges

    @property
    def graph(self) -> interface.Graph:
        from cerebro.store import graph

        return graph

    @property
    def keywords(self) -> interface.Keywords:
        from cerebro.store import fts

        return fts

    @property
    def vectors(self) -> interface.Vectors:
        from cerebro.store import vec

        return vec

    @property
    def reads(self) -> interface.Reads:
        from cerebro.store import reads

        return reads

    @property
    def meta(self) -> interface.Meta:
        from cerebro.store import meta

        return meta

    @property
    def archive(self) -> interface.Archive:
        from cerebro.store import archive

        return archive

    @property
    def bulk(self) -> interface.Bulk:
        from cerebro.store import bulk

        return bulk

    @property
    def bookkeeping(self) -> interface.Bookkeeping:
        from cerebro.store import bookkeeping

        return bookkeeping

    @property
    def inbox(self) -> interface.Inbox:
        from cerebro.store import inbox

        return inbox

    @property
    def relations(self) -> interface.Relations:
        from cerebro.store import relations

        return relations

    @property
    def checks(self) -> interface.Checks:
        from cerebro.store import checks

        return checks

    @property
    def texts(self) -> interface.Texts:
        from cerebro.store import texts

        return texts

    @property
    def dump(self) -> interface.Dump:
        from cerebro.store import dump

        return dump


SQLITE = SQLiteStore()

if TYPE_CHECKING:
    _fulfils: interface.Store = SQLITE  # the type checker's proof that the SQLite store is a whole Store
