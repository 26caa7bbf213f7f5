"""The vector lane of a team brain: pgvector's ``node_vectors`` (ADR 0030).

One row a memory, deleted with it (a foreign key). The column is ``vector`` without a width: one database holds
many projects, each on its own model; a project's width is its ``embedding_dimensions``. Distances are pgvector's
cosine distance (``<=>``), as sqlite-vec's. Vectors are written in pgvector's text form (``[x,y,…]``) and read in
its binary form. A re-embed's new vectors wait in ``node_vectors_next`` until the switch.

KNN is exact (every vector of the project compared) up to ``HNSW_MIN_VECTORS`` vectors in a project, and through
an HNSW index of the project's own above it (ADR 0030): a partial index on the vectors cast to the project's width
(an HNSW index needs one width, and the table holds many projects'), made by :func:`tend_index` — with
``CREATE INDEX CONCURRENTLY``, so no project's writes wait for it — after the bulk work that can cross the size
(gc at session end, import, team push and pull, embedding, re-embedding). The query is written so that the
planner can use the index when it exists and scans when it does not; its ``hnsw.ef_search`` is set per query
from the number of neighbours asked for, and an iterative scan fetches more when the index's first pass returns
too few.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cerebro.store.sql import changed, execute, text
from cerebro.store.vec import FLOAT
from cerebro.store.vec import WRITTEN as WRITTEN

if TYPE_CHECKING:
    from pathlib import Path

    from cerebro.db.types import Connection, Session, Transaction

MAX_K = 4096  # as the brain file's lane: a recall never asks for more
NEXT_TABLE = "node_vectors_next"

# Below this many vectors in a project an exact scan is a few milliseconds (~9 ms at 20k, ~50 ms at 100k) and
# needs no index; above it, the project gets an HNSW index (pgvector's defaults: m 16, ef_construction 64).
HNSW_MIN_VECTORS = 20_000
HNSW_OPTIONS = "m = 16, ef_construction = 64"
# The candidate list a search keeps: at least 100 (recall@10 ~0.96 on clustered data, pgvector's notes), twice the
# neighbours asked for, at most pgvector's limit of 1,000.
EF_SEARCH_MIN, EF_SEARCH_MAX = 100, 1000


def to_text(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def from_text(value: str) -> list[float]:
    return [float(x) for x in value.strip("[]").split(",")] if value.strip("[]") else []


def from_binary(value: bytes) -> list[float]:
    """pgvector's binary form: the width (uint16), two unused bytes, the float32s, all big-endian."""
    import struct

    (dims,) = struct.unpack_from(">H", value)
    return list(struct.unpack_from(f">{dims}f", value, 4))


def exists(db: Transaction) -> bool:
    return True  # part of the schema


def table_dimensions(db: Transaction) -> int | None:
    """The project's vector width (``embedding_dimensions``), or None before it has one."""
    row = execute(db, "SELECT value FROM schema_meta WHERE key = 'embedding_dimensions'").fetchone()
    try:
        dims = int(row[0]) if row is not None else 0
    except ValueError:
        dims = 0
    return dims if dims > 0 else None


def element(db: Transaction, table: str = "vec_nodes") -> str:
    return FLOAT  # pgvector's vector is float32


def element_for_provider(provider: str | None) -> str:
    return FLOAT


def ensure_table(db: Transaction, dimensions: int) -> None:
    """Nothing to create: ``node_vectors`` is part of the schema, and a project's width is its setting."""


def count(session: Session) -> int:
    return int(session.execute(text("SELECT COUNT(*) FROM node_vectors")).scalar_one())


def drop_table(session: Session) -> None:
    """The project's vectors go (the table is shared by every project), and its HNSW indexes."""
    drop_indexes(session)
    session.execute(text("DELETE FROM node_vectors"))


def ensure_next_table(session: Session, dimensions: int, provider: str, *, fresh: bool = False) -> None:
    """Nothing to create (``node_vectors_next`` is part of the schema); ``fresh``: this project's rows go."""
    if fresh:
        drop_next(session)


def drop_next(session: Session) -> None:
    """The project's side vectors: a switch abandoned."""
    session.execute(text(f"DELETE FROM {NEXT_TABLE}"))


def next_missing(conn: Connection, limit: int) -> list[tuple[int, str, str]]:
    return conn.execute(
        f"SELECT n.rowid, n.id, n.content FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
        f"(SELECT 1 FROM {NEXT_TABLE} v WHERE v.node_id = n.id) ORDER BY n.rowid LIMIT ?",
        (int(limit),),
    ).fetchall()


def next_incomplete(session: Session) -> bool:
    row = session.execute(
        text(
            f"SELECT 1 FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
            f"(SELECT 1 FROM {NEXT_TABLE} v WHERE v.node_id = n.id) LIMIT 1"
        )
    ).first()
    return row is not None


def next_count(conn: Connection) -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM {NEXT_TABLE}").fetchone()[0])


def put_next(session: Session, rowid: int, node_id: str, vector: Sequence[float]) -> None:
    session.execute(
        text(
            f"INSERT INTO {NEXT_TABLE} (node_id, embedding) VALUES (:id, CAST(:v AS vector)) "
            "ON CONFLICT (node_id) DO UPDATE SET embedding = excluded.embedding"
        ),
        {"id": node_id, "v": to_text(vector)},
    )


def switch_to_next(session: Session, dimensions: int, model: str) -> int:
    drop_indexes(session)
    session.execute(text("DELETE FROM node_vectors"))
    session.execute(text(f"INSERT INTO node_vectors (node_id, embedding) SELECT node_id, embedding FROM {NEXT_TABLE}"))
    session.execute(text(f"DELETE FROM {NEXT_TABLE}"))
    session.execute(text("UPDATE nodes SET embedding_model = ''"))
    return changed(
        session, "UPDATE nodes SET embedding_model = :m WHERE id IN (SELECT node_id FROM node_vectors)", {"m": model}
    )


def _note(db: Transaction, node_id: str, vector: Sequence[float] | None) -> None:
    info = getattr(db, "info", None)
    if info is not None:
        info.setdefault(WRITTEN, {})[node_id] = None if vector is None else list(vector)


def delete(db: Transaction, node_id: str) -> None:
    _note(db, node_id, None)
    execute(db, f"DELETE FROM {NEXT_TABLE} WHERE node_id = :id", {"id": node_id})  # stale once the vector goes
    execute(db, "DELETE FROM node_vectors WHERE node_id = :id", {"id": node_id})


def upsert(db: Transaction, node_id: str, vector: Sequence[float], *, fresh: bool = False) -> None:
    _note(db, node_id, vector)
    if not fresh:
        execute(db, f"DELETE FROM {NEXT_TABLE} WHERE node_id = :id", {"id": node_id})
    execute(
        db,
        "INSERT INTO node_vectors (node_id, embedding) VALUES (:id, CAST(:v AS vector)) "
        "ON CONFLICT (node_id) DO UPDATE SET embedding = excluded.embedding",
        {"id": node_id, "v": to_text(vector)},
    )


def _missing(db: Transaction, limit: int | None) -> list[str]:
    sql = (
        "SELECT n.id FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
        "(SELECT 1 FROM node_vectors v WHERE v.node_id = n.id) ORDER BY n.created_at, n.id"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [r[0] for r in execute(db, sql).fetchall()]


def count_missing_active(session: Session) -> int:
    return int(
        session.execute(
            text(
                "SELECT COUNT(*) FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
                "(SELECT 1 FROM node_vectors v WHERE v.node_id = n.id)"
            )
        ).scalar_one()
    )


def missing_active_ids(session: Session, limit: int) -> list[str]:
    return _missing(session, limit)


def ef_search(k: int) -> int:
    return max(EF_SEARCH_MIN, min(EF_SEARCH_MAX, 2 * k))


def index_name(project: str, dimensions: int) -> str:
    """The project's HNSW index for vectors of this width (a name under PostgreSQL's 63 characters)."""
    return f"{_index_prefix(project)}{int(dimensions)}"


def _index_prefix(project: str) -> str:
    import hashlib

    return f"node_vectors_hnsw_{hashlib.sha256(project.encode()).hexdigest()[:16]}_"


def _literal(project: str) -> str:
    """The project key as an SQL literal: a partial index's predicate is matched against constants only. Keys are
    letters, digits and ``._:/@+-`` (``cerebro.team.check_project_key``); quotes are doubled all the same."""
    from cerebro.team import check_project_key

    return "'" + check_project_key(project).replace("'", "''") + "'"


def knn_sql(project: str, dimensions: int) -> str:
    """The KNN query of a project: the vectors cast to its width and the project named as a constant, so that the
    planner can use the project's HNSW index (the row-level security policy still applies on top)."""
    width = int(dimensions)
    return (
        f"SELECT node_id, embedding::vector({width}) <=> CAST(? AS vector({width})) AS distance FROM node_vectors "
        f"WHERE project = {_literal(project)} ORDER BY distance LIMIT ?"
    )


def knn(conn: Connection, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
    k = min(int(k), MAX_K)
    if k <= 0:
        return []
    project = conn.project  # type: ignore[attr-defined] # the raw connection knows its scope
    if conn.in_transaction:  # a recall's snapshot: the settings end with it
        conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search(k)}; SET LOCAL hnsw.iterative_scan = strict_order")
    rows = conn.execute(knn_sql(project, len(vector)), (to_text(vector), k)).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def project_indexes(conn: Connection, project: str) -> dict[str, bool]:
    """The project's HNSW indexes on ``node_vectors``: name → whether it is valid (a concurrent build that failed
    leaves an invalid one behind)."""
    rows = conn.execute(
        "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = 'node_vectors'::regclass AND c.relname LIKE ?",
        (_index_prefix(project) + "%",),
    ).fetchall()
    return {str(name): bool(valid) for name, valid in rows}


def tend_index(conn: Connection) -> str | None:
    """Give the project the HNSW index its size calls for (``HNSW_MIN_VECTORS``), of its current width, and drop
    any of another width or left invalid (one that exists stays when the project shrinks: no rebuilds around
    the size). Runs outside a transaction (``CREATE INDEX CONCURRENTLY``: other writers never wait). Returns the
    name of an index it made, else None."""
    if conn.in_transaction:
        return None
    # No statement time limit here: the connection's (STATEMENT_TIMEOUT_MS) guards the hot paths, and a build takes
    # longer than it past ~50k vectors — cancelled, it left an invalid index, and search exact.
    conn.execute("SET statement_timeout = 0")
    try:
        return _tend_index(conn, conn.project)  # type: ignore[attr-defined] # the raw connection knows its scope
    finally:
        conn.execute("RESET statement_timeout")  # back to the connection's own limit


def _tend_index(conn: Connection, project: str) -> str | None:
    dims = table_dimensions(conn)
    wanted = index_name(project, dims) if dims is not None else None
    existing = project_indexes(conn, project)
    for name, valid in existing.items():
        if name != wanted or not valid:
            conn.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
    if wanted is None or existing.get(wanted):
        return None
    if int(conn.execute("SELECT COUNT(*) FROM node_vectors").fetchone()[0]) < HNSW_MIN_VECTORS:
        return None
    conn.execute(
        f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{wanted}" ON node_vectors USING hnsw '
        f"((embedding::vector({int(dims or 0)})) vector_cosine_ops) WITH ({HNSW_OPTIONS}) "
        f"WHERE project = {_literal(project)}"
    )
    return wanted


def drop_indexes(session: Session) -> None:
    """Before the project's vectors are replaced wholesale (a re-embed's switch, perhaps to another width): its
    HNSW indexes go, and the next :func:`tend_index` builds one afresh (faster than updating it row by row)."""
    project = session.execute(text("SELECT current_setting('cerebro.project')")).scalar_one()
    for name in session.execute(
        text(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'node_vectors'::regclass AND c.relname LIKE :p"
        ),
        {"p": _index_prefix(str(project)) + "%"},
    ).scalars():
        session.execute(text(f'DROP INDEX IF EXISTS "{name}"'))


def mean_vector(conn: Connection, sample: int, minimum: int, cache: Path | None = None) -> list[float] | None:
    """The mean of the project's first ``sample`` vectors (by its memories' insertion order), computed by the
    server; None when fewer than ``minimum`` are stored."""
    row = conn.execute(
        "SELECT CAST(avg(embedding) AS text), COUNT(*) FROM (SELECT v.embedding FROM node_vectors v "
        "JOIN nodes n ON n.id = v.node_id ORDER BY n.rowid LIMIT ?) AS first_vectors",
        (int(sample),),
    ).fetchone()
    if row is None or row[0] is None or int(row[1]) < max(1, minimum):
        return None
    return from_text(row[0])  # once a minute at most (Handle.brain_mean)


def vectors_for(conn: Connection, ids: Sequence[str]) -> dict[str, list[float]]:
    from cerebro.store.reads import chunks

    found: dict[str, list[float]] = {}
    for part in chunks(list(ids)):
        marks = ",".join("?" * len(part))
        rows = conn.execute_binary(  # type: ignore[attr-defined] # the team brain's raw connection
            f"SELECT node_id, embedding FROM node_vectors WHERE node_id IN ({marks})", tuple(part)
        ).fetchall()
        for node_id, value in rows:
            found[node_id] = from_binary(value)
    return found
