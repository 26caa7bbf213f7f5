"""The SQLite store: each part of ``cerebro.store.interface.Store`` is a module of this package.

A part's module is imported when the part is first asked for, so a path that only reads (the SessionStart
prime, recall) never imports the ORM-backed modules; then kept (``cached_property``): an import statement on each
access cost ~0.35 µs, and a recall asks ~40 times. Annotating each property with its Protocol makes the type
checker verify that the module fulfils it.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cerebro.store import interface


class SQLiteStore:
    """The store of a brain file (sqlite-vec for the vector lane, FTS5 for the keyword lane)."""

    @cached_property
    def inserts(self) -> interface.Inserts:
        from cerebro.store import inserts

        return inserts

    @cached_property
    def nodes(self) -> interface.Nodes:
        from cerebro.store import nodes

        return nodes

    @cached_property
    def edges(self) -> interface.Edges:
        from cerebro.store import edges

        return edges

    @cached_property
    def graph(self) -> interface.Graph:
        from cerebro.store import graph

        return graph

    @cached_property
    def keywords(self) -> interface.Keywords:
        from cerebro.store import fts

        return fts

    @cached_property
    def vectors(self) -> interface.Vectors:
        from cerebro.store import vec

        return vec

    @cached_property
    def reads(self) -> interface.Reads:
        from cerebro.store import reads

        return reads

    @cached_property
    def meta(self) -> interface.Meta:
        from cerebro.store import meta

        return meta

    @cached_property
    def archive(self) -> interface.Archive:
        from cerebro.store import archive

        return archive

    @cached_property
    def bulk(self) -> interface.Bulk:
        from cerebro.store import bulk

        return bulk

    @cached_property
    def bookkeeping(self) -> interface.Bookkeeping:
        from cerebro.store import bookkeeping

        return bookkeeping

    @cached_property
    def inbox(self) -> interface.Inbox:
        from cerebro.store import inbox

        return inbox

    @cached_property
    def relations(self) -> interface.Relations:
        from cerebro.store import relations

        return relations

    @cached_property
    def checks(self) -> interface.Checks:
        from cerebro.store import checks

        return checks

    @cached_property
    def texts(self) -> interface.Texts:
        from cerebro.store import texts

        return texts

    @cached_property
    def dump(self) -> interface.Dump:
        from cerebro.store import dump

        return dump


SQLITE = SQLiteStore()

if TYPE_CHECKING:
    _fulfils: interface.Store = SQLITE  # the type checker's proof that the SQLite store is a whole Store
