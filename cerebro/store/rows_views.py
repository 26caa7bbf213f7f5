"""The store as a recall reads it while a process keeps a rows copy (ADR 0051): views over a store's parts.

:class:`CopiedStore` answers the row reads a recall makes — memories by id, the keyword hits' rows, the neighbours in
writing order, the edges around them — from a current :class:`~cerebro.store.warm_rows.RowsCopy`; :class:`TimedStore`,
while there is none, times the statements' row reads for the copy's ski rental. Every other read is the store's own:
the recall pipeline does not know which it was given.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from cerebro.db.types import Connection
    from cerebro.store.interface import Store
    from cerebro.store.warm_rows import RowsCopy
    from cerebro.values import Node


class _Over:
    """A view over one of the store's parts (a module of functions): what the view does not define, the part does."""

    def __init__(self, base: Any) -> None:  # noqa: ANN401 - a part of the store
        self._base = base

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - the part's own function
        return getattr(self._base, name)


class _CopiedReads(_Over):
    def __init__(self, base: Any, copy: RowsCopy) -> None:  # noqa: ANN401 - the store's reads module
        super().__init__(base)
        self._copy = copy

    def nodes_by_id(self, conn: Connection, ids: Sequence[str], *, active_only: bool = False) -> dict[str, Node]:
        return self._copy.nodes_by_id(ids, active_only)

    def written_beside(self, conn: Connection, ids: Sequence[str]) -> dict[str, tuple[Node | None, Node | None]]:
        return self._copy.written_beside(ids)

    def written_near(self, conn: Connection, ids: Sequence[str], reach: int) -> dict[str, set[str]]:
        return self._copy.written_near(ids, reach)


class _CopiedKeywords(_Over):
    def __init__(self, base: Any, copy: RowsCopy) -> None:  # noqa: ANN401 - the store's keyword module
        super().__init__(base)
        self._copy = copy

    def search(self, conn: Connection, query: str, limit: int, **options: Any) -> list[tuple[str, float]]:  # noqa: ANN401
        return cast("list[tuple[str, float]]", self._base.search(conn, query, limit, rows=self._copy, **options))


class _CopiedGraph(_Over):
    def __init__(self, base: Any, copy: RowsCopy) -> None:  # noqa: ANN401 - the store's graph module
        super().__init__(base)
        self._copy = copy

    def edges_touching(
        self, conn: Connection, ids: Sequence[str], as_of: datetime | None = None
    ) -> list[tuple[str, str, str, float]]:
        if as_of is not None:  # validity windows compared as stored text: the statement's own comparison
            return cast("list[tuple[str, str, str, float]]", self._base.edges_touching(conn, ids, as_of))
        return self._copy.edges_touching(ids)

    def citation_indegree(
        self, conn: Connection, ids: Sequence[str], relations: Sequence[str], as_of: datetime | None = None
    ) -> dict[str, int]:
        if as_of is not None:  # as edges_touching: the statement's own comparison of the windows
            return cast("dict[str, int]", self._base.citation_indegree(conn, ids, relations, as_of))
        return self._copy.citation_indegree(ids, relations)

    def sources_with(self, conn: Connection, ids: Sequence[str], relation: str) -> set[str]:
        return self._copy.sources_with(ids, relation)


class CopiedStore(_Over):
    """A store whose row reads (memories by id, the keyword hits' rows, neighbours in writing order, the edges around
    them) a copy answers."""

    def __init__(self, base: Store, copy: RowsCopy) -> None:
        super().__init__(base)
        self.reads = _CopiedReads(base.reads, copy)
        self.keywords = _CopiedKeywords(base.keywords, copy)
        self.graph = _CopiedGraph(base.graph, copy)


class _TimedReads(_Over):
    """The store's row reads, each timed (this thread's CPU) and told to the rows copy's ski rental."""

    def __init__(self, base: Any, spent: Callable[[float], None]) -> None:  # noqa: ANN401 - the store's reads module
        super().__init__(base)
        self._spent = spent

    def _timed(self, name: str, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
        started = time.thread_time()
        try:
            return getattr(self._base, name)(*args, **kwargs)
        finally:
            self._spent(time.thread_time() - started)

    def nodes_by_id(self, conn: Connection, ids: Sequence[str], *, active_only: bool = False) -> dict[str, Node]:
        return cast("dict[str, Node]", self._timed("nodes_by_id", conn, ids, active_only=active_only))

    def written_beside(self, conn: Connection, ids: Sequence[str]) -> dict[str, tuple[Node | None, Node | None]]:
        return cast("dict[str, tuple[Node | None, Node | None]]", self._timed("written_beside", conn, ids))

    def written_near(self, conn: Connection, ids: Sequence[str], reach: int) -> dict[str, set[str]]:
        return cast("dict[str, set[str]]", self._timed("written_near", conn, ids, reach))


class TimedStore(_Over):
    """A store whose row reads are timed for the copy's ski rental (while there is no current copy)."""

    def __init__(self, base: Store, spent: Callable[[float], None]) -> None:
        super().__init__(base)
        self.reads = _TimedReads(base.reads, spent)
