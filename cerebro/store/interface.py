"""What the domain asks of a storage engine: the store's operations, named as Protocols.

``Store`` has one part per concern (nodes, edges, the graph walk, the keyword and vector lanes, the hot path's raw
reads, ``schema_meta``, the archive, bulk import, bookkeeping, the inbox, relations, health checks, the SQL dump).
The domain reaches the store only through the ``Store`` a brain's handle carries, so each engine — ``store/sqlite.py``
(a brain file), ``store/postgres/`` (a team brain, ADR 0030) — implements these Protocols, a module of plain
functions per part, checked by the type checker. Connections (``db/types.py``): writes and ORM reads take a
``Session``; hot reads the raw ``Connection``; a new memory's writes a ``Transaction`` (no ORM: ADR 0028).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    import cerebro.reports
    from cerebro import values
    from cerebro.db.types import Connection, Session, Transaction
    from cerebro.models import Edge as EdgeRow
    from cerebro.models import Node as NodeRow
    from cerebro.models import Relation
    from cerebro.store import reads


class Inserts(Protocol):
    """New memories, in either kind of write transaction (no ORM object needed: ADR 0028)."""

    def new_id(self) -> str: ...

    def node(  # noqa: PLR0913 - the keyword-only fields of a memory
        self,
        db: Transaction,
        *,
        content: str,
        type: str,
        subtype: str | None,
        importance: float,
        metadata: dict[str, Any] | None,
        provenance_root: bool,
        origin: values.Origin,
        embedding_model: str,
        now: datetime,
        node_id: str | None = None,
        created_at: datetime | None = None,
    ) -> str:
        """Insert an active memory; its id (``node_id``, or a new one)."""


class Nodes(Protocol):
    """CRUD over ``nodes`` and id resolution."""

    def to_value(self, row: NodeRow) -> values.Node: ...

    def resolve_id(self, session: Session, prefix: str) -> str:
        """A full id or a unique prefix of ≥4 characters → the full id of a node."""

    def get_row(self, session: Session, node_id: str) -> NodeRow: ...

    def count_active_not_from(self, session: Session, model: str) -> int:
        """Active nodes whose vector is not recorded as ``model``'s (another model's, or none)."""

    def count_with_status(self, session: Session, status: str) -> int: ...

    def active_ids(self, session: Session, limit: int) -> list[str]:
        """Active node ids, oldest first."""

    def set_embedding_model(self, db: Transaction, node_id: str, model: str) -> None: ...

    def ids_with_status(self, session: Session, status: str) -> list[str]: ...

    def contents_not_archived(self, session: Session, subtype: str | None) -> list[tuple[str, str]]:
        """(id, content) of every memory not archived, oldest first; ``subtype=""`` selects those with none."""

    def exists(self, session: Session, node_id: str) -> bool: ...


class Edges(Protocol):
    """CRUD over ``edges``. Edges are directed and unique per (source, target, relation)."""

    def to_value(self, row: EdgeRow) -> values.Edge: ...

    def upsert(  # noqa: PLR0913 - the keyword-only fields of a memory
        self,
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
        """Insert, or re-assert the window of an existing edge (an omitted bound becomes NULL, as upstream); the weight
        changes only when one is given; the id is kept. Returns (row, created)."""

    def exists(self, session: Session, source_id: str, target_id: str, relation: str) -> bool: ...


class Graph(Protocol):
    """Graph reads over a DB-API connection: edges around a set of nodes, and citation in-degree."""

    def edges_touching(
        self, conn: Connection, ids: Sequence[str], as_of: datetime | None = None
    ) -> list[tuple[str, str, str, float]]:
        """Edges in either direction for ``ids``: [(source, target, relation, weight)]; with ``as_of``, only edges
        valid then (the half-open window [valid_at, invalid_at)). ``citation_indegree`` takes ``as_of`` the same way."""

    def citation_indegree(
        self, conn: Connection, ids: Sequence[str], relations: Sequence[str], as_of: datetime | None = None
    ) -> dict[str, int]: ...

    def targets(self, conn: Connection, sources: Sequence[str], relation: str) -> list[str]:
        """Targets of ``relation`` edges out of ``sources``, in edge order (duplicates kept)."""

    def sources_with(self, conn: Transaction, ids: Sequence[str], relation: str) -> set[str]:
        """Those of ``ids`` with at least one outgoing ``relation`` edge (in a write's session too: gc's check)."""


class Keywords(Protocol):
    """The FTS5 keyword lane's write side. Only *active* nodes are indexed; sync is done here, not by triggers."""

    def available(self, db: Transaction) -> bool: ...

    def index(self, db: Transaction, node_id: str, content: str, subtype: str | None) -> None: ...

    def unindex(self, db: Transaction, node_id: str) -> None: ...

    def reindex(self, db: Transaction, node_id: str, content: str, subtype: str | None) -> None: ...

    def rebuild(self, session: Session) -> None:
        """Index every active node afresh (after a sql dump, which carries no keyword rows)."""

    def optimize(self, session: Session) -> None:
        """Merge the index into one segment: the segments holding replaced text are dropped, not kept beside it."""

    def search(
        self,
        conn: Connection,
        query: str,
        limit: int,
        *,
        drop_stop_words: bool = True,
        subtype: Any = ...,  # noqa: ANN401 - ... (any subtype), None or "" (none), or a subtype
        nodes: dict[str, values.Node] | None = None,
        copy: Any = None,  # noqa: ANN401 - a process's keyword copy, ranking as FTS5 would (ADR 0044; a brain file's)
    ) -> list[tuple[str, float]]:
        """Active nodes matching the query, best BM25 first: [(node_id, bm25)] (lower bm25 is better).
        ``subtype``: ``...`` (default) no filter; ``None``/``""`` only nodes without one; else that subtype.
        ``nodes``: filled with the hits' nodes where the engine reads their rows anyway (a brain file), or left empty.
        Any FTS problem (no table, a query FTS5 still rejects) gives an empty lane, never an error."""


class Vectors(Protocol):
    """The sqlite-vec lane. Not part of the migration chain: its width comes from the brain's"""

    MAX_K: int  # the most neighbours one KNN query returns
    WRITTEN: str  # the session.info key under which writes note {node_id: vector, or None when deleted}

    def exists(self, db: Transaction) -> bool: ...

    def table_dimensions(self, db: Transaction) -> int | None:
        """The width the vec table was created with, or None when there is no table."""

    def element(self, db: Transaction, table: str = "vec_nodes") -> str:
        """What the table stores a dimension as: ``int8`` or ``float`` (float32; also when there is no table)."""

    def element_for_provider(self, provider: str | None) -> str:
        """The element type a new table gets: float32 for a provider Go cerebro uses too, else int8."""

    def ensure_table(self, db: Transaction, dimensions: int) -> None: ...

    def count(self, session: Session) -> int:
        """How many vectors the table holds."""

    def drop_table(self, session: Session) -> None: ...

    def ensure_next_table(self, session: Session, dimensions: int, provider: str, *, fresh: bool = False) -> None:
        """The side table, of the element type vectors of ``provider`` get (ADR 0029); ``fresh``: emptied first."""

    def next_missing(self, conn: Connection, limit: int) -> list[tuple[int, str, str]]:
        """(rowid, id, content) of active nodes with no vector in the side table yet, by rowid."""

    def next_incomplete(self, session: Session) -> bool:
        """Whether an active node has no vector in the side table (written since the last batch)."""

    def next_count(self, conn: Connection) -> int: ...

    def put_next(self, session: Session, rowid: int, node_id: str, vector: Sequence[float]) -> None: ...

    def switch_to_next(self, session: Session, dimensions: int, model: str) -> int:
        """The side table becomes ``vec_nodes``; nodes with a vector now name ``model``. Returns how many do."""

    def delete(self, db: Transaction, node_id: str) -> None: ...

    def upsert(self, db: Transaction, node_id: str, vector: Sequence[float], *, fresh: bool = False) -> None:
        """Write a node's vector. ``fresh``: the node was created in this transaction, so it has none yet."""

    def count_missing_active(self, session: Session) -> int:
        """Active nodes with no vector row (upstream's pending predicate since 3.4.0)."""

    def missing_active_ids(self, session: Session, limit: int) -> list[str]: ...

    def knn(self, conn: Connection, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The k nearest vectors by cosine distance: [(node_id, distance)], nearest first (k ≤ 4096)."""

    def mean_vector(self, conn: Connection, sample: int, minimum: int, cache: Path | None = None) -> list[float] | None:
        """The mean of the first ``sample`` stored vectors (one bounded read, no NumPy), or None below ``minimum`` or
        without a vector table. ``cache``: a file keeping it between processes (ADR 0055; team brains: the server)."""

    def vectors_for(self, conn: Connection, ids: Sequence[str]) -> dict[str, list[float]]:
        """Vectors of these nodes: rowid point lookups, then a metadata scan only for rows found elsewhere."""

    def tend_index(self, conn: Connection) -> str | None:
        """After bulk work, outside a transaction: the index the lane's size calls for (ADR 0030), its name if made."""


class Reads(Protocol):
    """Raw-SQL reads over a DB-API connection, for the hot paths (recall, prime, hooks)."""

    def nodes_by_id(
        self, conn: Connection, ids: Sequence[str], *, active_only: bool = False
    ) -> dict[str, values.Node]: ...

    def meta(self, conn: Connection, key: str, default: str | None = None) -> str | None: ...

    def config_values(self, conn: Connection) -> dict[str, str]: ...

    def active_with_anchors(self, conn: Connection) -> list[values.Node]:
        """Active memories whose metadata names code anchors, newest first."""

    def node_ids(self, conn: Connection) -> set[str]: ...

    def active_surfacing(self, conn: Connection) -> list[tuple[str, str | None]]:
        """(type, last_surfaced) of every active memory, as stored (legacy rows hold RFC 3339 text)."""

    def edge_count(self, conn: Connection) -> int: ...

    def prime_pool(self, conn: Connection, pool: str, limit: int, marks: dict[str, str]) -> list[values.Node]: ...

    def rows(self, conn: Connection, table: str, columns: Sequence[str], order: str) -> list[Any]:
        """Every row of ``table`` (these columns, in this order): the exports' read (the brain is at head)."""

    def meta_items(self, conn: Connection, *, prefix: str = "") -> list[tuple[str, str]]:
        """``schema_meta`` as (key, value) pairs by key, only the keys starting with ``prefix`` when given."""

    def count_active(self, conn: Connection) -> int:
        """Active memories (the hooks' hot path: this module imports no ORM)."""

    def resolve_id(self, conn: Connection, prefix: str) -> str:
        """A full id or a unique prefix of ≥4 characters → the full id of a memory."""

    def list_nodes(
        self,
        conn: Connection,
        *,
        type: str | None,
        status: str | None,
        subtype: str | None,
        subtype_given: bool,
        limit: int,
    ) -> list[values.Node]:
        """Newest first, of this type, status and subtype when given."""

    def edges_of(self, conn: Connection, node_id: str, as_of: datetime | None = None) -> list[values.Edge]:
        """Every edge from or to the memory (valid at ``as_of`` when given), in the order they were made."""

    def census(self, conn: Connection, model: str, *, vectors: bool) -> reads.Census:
        """``stats``' counts: by status and type, edges, vectors of ``model``, pending ones (with ``vectors``)."""

    def written_beside(self, conn: Connection, ids: Sequence[str]) -> dict[str, values.Beside]:
        """Each memory's (neighbour written just before it, just after it): writing order, any status."""

    def written_near(self, conn: Connection, ids: Sequence[str], reach: int) -> dict[str, set[str]]:
        """Each memory's neighbours within ``reach`` places in writing order (ids, any status)."""


class Meta(Protocol):
    """``schema_meta``: the brain's key/value store (versions, embedding settings, boundaries, config, counters)."""

    def get(self, db: Transaction, key: str, default: str | None = None) -> str | None: ...

    def get_many(self, session: Session, prefix: str) -> dict[str, str]: ...

    def put(self, db: Transaction, key: str, value: str) -> None: ...

    def delete(self, session: Session, key: str) -> bool: ...

    def delete_prefix(self, session: Session, prefix: str) -> int: ...


class Archive(Protocol):
    """``nodes_archive``: where gc and forget move memories, out of every lane."""

    def move_out(
        self, session: Session, node: values.Node, reason: str, now_text: str, *, archive: bool = True
    ) -> None:
        """Move one node out of every lane (vectors, keywords, edges by cascade) — into the archive unless hard."""


class Bulk(Protocol):
    """Writing records back in bulk (import, sync): nodes, archive rows and inbox candidates by id, edges by ends."""

    def put_node(
        self, session: Session, row: dict[str, Any], fields: Sequence[str], *, replace: bool, newer_only: bool = False
    ) -> bool:
        """Insert; on the id, keep (not ``replace``), replace, or replace only with a later version (``newer_only``)."""

    def put_edge(
        self, session: Session, edge: dict[str, Any], *, replace: bool, changed_only: bool = False
    ) -> bool: ...

    def put_archived(self, session: Session, row: dict[str, Any], fields: Sequence[str], *, replace: bool) -> bool: ...

    def put_inbox(self, session: Session, row: dict[str, Any], fields: Sequence[str]) -> bool: ...

    def drop_archived(self, session: Session, node_id: str) -> bool: ...


class Bookkeeping(Protocol):
    """Best-effort writes on the raw connection after a read: access touches, surfacing stamps, counters."""

    def touch_accessed(self, conn: Connection, ids: Sequence[str], stamp: str) -> None:
        """access_count + 1 and last_accessed = ``stamp``."""

    def touch_surfaced(self, conn: Connection, ids: Sequence[str], stamp: str) -> None: ...

    def increment(self, conn: Connection, key: str) -> None: ...


class Inbox(Protocol):
    """``inbox_candidates`` (upstream v7): quarantined memory candidates."""

    def resolve_id(self, session: Session, prefix: str) -> str:
        """A full candidate id or a unique prefix of ≥4 characters → the full id (nodes are not searched)."""

    def get(self, session: Session, candidate_id: str) -> cerebro.reports.InboxCandidate: ...

    def insert(
        self,
        session: Session,
        *,
        content: str,
        type: str,
        subtype: str | None,
        importance: float,
        metadata_: dict[str, Any] | None,
        origin: values.Origin,
        now: datetime,
    ) -> str: ...

    def list_all(self, session: Session, limit: int | None) -> list[cerebro.reports.InboxCandidate]:
        """Oldest first (ties in insertion order)."""

    def delete(self, session: Session, candidate_id: str) -> None: ...


class Relations(Protocol):
    """The relation registry (upstream v6): advisory names for edges, seeded with the four built-ins."""

    def to_value(self, row: Relation) -> cerebro.reports.RelationInfo: ...

    def is_registered(self, session: Session, name: str) -> bool: ...

    def add(self, session: Session, name: str, traversal_class: str | None, now: datetime) -> tuple[Relation, bool]: ...

    def remove(self, session: Session, name: str) -> bool: ...

    def list_all(self, session: Session) -> list[Relation]: ...


class Checks(Protocol):
    """Read-only checks of a brain file for ``cerebro doctor`` (run on a private copy, raw DB-API)."""

    def integrity(self, conn: Connection, limit: int = 10) -> list[str]:
        """SQLite's ``integrity_check``: ``["ok"]``, or up to ``limit`` problems."""

    def tables(self, conn: Connection) -> dict[str, set[str]]: ...

    def active_ids(self, conn: Connection) -> set[str]: ...

    def keyword_rows_apart(self, conn: Connection) -> int: ...

    def metadata_not_object(self, conn: Connection) -> tuple[int, str | None]:
        """(how many, the smallest id) of memories whose metadata is not a JSON object."""

    def keyword_rows(self, conn: Connection) -> list[str]:
        """The node id of every keyword-index row (duplicates included)."""

    def keyword_index_problem(self, conn: Connection) -> str | None:
        """FTS5's own integrity check, rolled back: None when the index is sound, else the error."""

    def vector_rows(self, conn: Connection) -> list[str]: ...


class Dump(Protocol):
    """``export --format sql``: statements that Python's sqlite3 (or the sqlite3 shell) runs against a brain made"""

    def sql_statements(self, conn: Connection) -> list[str]:
        """Statements sqlite3 runs against an empty brain to give the same rows; no vectors (every node is pending
        until embedded) and no keyword rows (rebuilt at the next open: the dump leaves a marker for it)."""


class WarmIndex(Protocol):
    """An in-memory copy of the vector lane a long-lived process keeps (``cerebro.store.warm``, ADR 0020)."""

    def __len__(self) -> int: ...  # vectors loaded (0 when none are)

    def ready(self, conn: Connection) -> bool:
        """Loaded and in step with the brain: recall may use it instead of the vector lane."""

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]: ...

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def gather(self, ids: Sequence[str]) -> Any: ...  # noqa: ANN401 - their vectors, for products: a warm.Gathered

    def pair_dots(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]: ...

    def apply(self, written: dict[str, Sequence[float] | None]) -> None:
        """This process's own committed vector changes ({node_id: vector, or None when deleted})."""


class Texts(Protocol):
    """Memory text wherever a brain keeps it, for the secret scan and its redaction (ADR 0027)."""

    def all_texts(self, conn: Connection) -> list[tuple[str, str, str, str | None]]:
        """(where — memory, archive, inbox or edge —, id, content, metadata as stored) of every record holding text."""

    def replace(
        self,
        session: Session,
        where: str,
        record_id: str,
        content: str,
        metadata: str | None,
        *,
        was: tuple[str, str | None],
    ) -> bool:
        """Set one record's text if it still holds ``was``; whether it did."""

    def compact(self, conn: Connection) -> bool:
        """Rebuild the file without free space and empty the write-ahead log; False when a reader kept part of it."""


class Store(Protocol):
    """A storage engine: every part the domain uses."""

    @property
    def inserts(self) -> Inserts: ...

    @property
    def nodes(self) -> Nodes: ...

    @property
    def edges(self) -> Edges: ...

    @property
    def graph(self) -> Graph: ...

    @property
    def keywords(self) -> Keywords: ...

    @property
    def vectors(self) -> Vectors: ...

    @property
    def reads(self) -> Reads: ...

    @property
    def meta(self) -> Meta: ...

    @property
    def archive(self) -> Archive: ...

    @property
    def bulk(self) -> Bulk: ...

    @property
    def bookkeeping(self) -> Bookkeeping: ...

    @property
    def inbox(self) -> Inbox: ...

    @property
    def relations(self) -> Relations: ...

    @property
    def checks(self) -> Checks: ...

    @property
    def texts(self) -> Texts: ...

    @property
    def dump(self) -> Dump: ...
