"""The sqlite-vec lane. Not part of the migration chain: its width comes from the brain's
``embedding_dimensions``, so the store creates it when that is above 0 (upstream's ``InitVectorTable``).

Vectors are stored as ``int8`` (one byte a dimension, each vector scaled so its largest component is ±127)
unless the brain's provider is one Go cerebro embeds with too (``ollama``, ``voyage``): those keep upstream's
little-endian float32, so Go can go on using them (ADR 0029). Cosine ignores a vector's scale, so an int8 vector
needs no stored scale; read back, it is normalised to unit length. Which kind a table holds is in its
definition; tables made before ADR 0029 hold float32 and are read as such.
An upsert is DELETE then INSERT for the node id, as upstream.
Writes run in a write transaction: a SQLAlchemy session, or for the writes a new memory needs, the raw connection
too (ADR 0028); the KNN read takes a DB-API connection (hot path).
"""

from __future__ import annotations

import math
import re
import struct
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from cerebro.store.sql import changed, execute, text

if TYPE_CHECKING:
    from pathlib import Path

    from cerebro.db.types import Connection, Session, Transaction

_SHAPE = re.compile(r"\b(float|int8)\[(\d+)\]")
FLOAT, INT8 = "float", "int8"
GO_PROVIDERS = ("ollama", "voyage")  # Go cerebro embeds with these: their vectors stay float32 (ADR 0029)


def to_blob(vector: Sequence[float], element: str = FLOAT) -> bytes:
    if element == INT8:
        if "numpy" in sys.modules:  # already loaded (the local model's): 10 µs a vector instead of 46 (a bulk write)
            return int8_values(vector).tobytes()
        return _int8_blob(vector)  # the same bytes, without importing NumPy (~60 ms) for one vector
    return struct.pack(f"<{len(vector)}f", *vector)


def _int8_blob(vector: Sequence[float]) -> bytes:
    """:func:`int8_values`' bytes in plain Python."""
    largest = max(map(abs, vector), default=0.0)
    scale = _int8_scale(largest)
    return struct.pack(f"{len(vector)}b", *(round(x * scale) for x in vector))


def _int8_scale(largest: float) -> float:
    """127 / the largest component, or 0 for a zero vector. A vector with a NaN or an infinite component, or one so
    small that the scale overflows, has no int8 form: refused (a provider's vectors are checked before this), on
    both paths alike — NumPy would otherwise cast garbage."""
    scale = 127.0 / largest if largest > 0 else 0.0
    if not (math.isfinite(largest) and math.isfinite(scale)):
        raise ValueError("a vector with a non-finite component (or no representable scale) cannot be stored as int8")
    return scale


def from_blob(blob: bytes, element: str = FLOAT) -> list[float]:
    """A stored vector as floats: float32 as stored; int8 normalised to unit length (what cosine compares)."""
    if element == INT8:
        values = struct.unpack(f"{len(blob)}b", blob)
        norm = math.hypot(*values)
        return [x / norm for x in values] if norm else [0.0] * len(values)
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


def as_stored_array(vector: Sequence[float], element: str = FLOAT) -> Any:  # noqa: ANN401 - a NumPy vector
    """``from_blob(to_blob(vector, element), element)`` as a float32 NumPy vector, computed in NumPy: the same rule
    (scaled so the largest component is ±127, rounded half to even as ``round`` does, normalised) for the warm
    index, where the list round trip cost ~0.3 ms a query. A test holds the two to the same values."""
    import numpy as np

    values = np.asarray(vector, dtype=np.float64)
    if element == INT8:
        values = int8_values(vector).astype(np.float64)
        norm = float(np.linalg.norm(values))
        values = values / norm if norm else values
    return values.astype(np.float32)


def int8_values(vector: Sequence[float]) -> Any:  # noqa: ANN401 - a NumPy int8 vector
    """``vector`` as the int8 column holds it, before :func:`as_stored_array` normalises it: scaled so its largest
    component is ±127, rounded half to even (the warm index's integer scan multiplies these, ADR 0040)."""
    import numpy as np

    values = np.asarray(vector, dtype=np.float64)
    largest = float(np.abs(values).max(initial=0.0))
    scale = _int8_scale(largest)  # a NaN anywhere makes the largest NaN: refused there
    return (np.rint(values * scale) if largest > 0 else np.zeros_like(values)).astype(np.int8)


def bound(element: str, name: str = "?") -> str:
    """A bound vector parameter in SQL, typed as the column is (sqlite-vec reads a bare blob as float32)."""
    return f"vec_int8({name})" if element == INT8 else name


def exists(db: Transaction) -> bool:
    return _shape(db) is not None


_SHAPES = "cerebro.vector_tables"  # session.info key: {table: its shape}, read once a transaction


def _shape(db: Transaction, table: str = "vec_nodes") -> tuple[str, int] | None:
    """(element type, width) the table was created with, or None when there is no such table. Kept for the rest
    of an ORM session's transaction (an import asked it twice a memory); this module's DDL forgets it."""
    known = getattr(db, "info", {}).get(_SHAPES, {})
    if table in known:
        return cast("tuple[str, int] | None", known[table])
    row = execute(db, "SELECT sql FROM sqlite_master WHERE type='table' AND name = :t", {"t": table}).fetchone()
    match = _SHAPE.search(row[0] or "") if row is not None else None
    shape = (match.group(1), int(match.group(2))) if match else None
    info = getattr(db, "info", None)
    if info is not None:
        info.setdefault(_SHAPES, {})[table] = shape
    return shape


def _schema_changed(db: Transaction) -> None:
    info = getattr(db, "info", None)
    if info is not None:
        info.pop(_SHAPES, None)


def table_dimensions(db: Transaction) -> int | None:
    """The width the vec table was created with, or None when there is no table."""
    shape = _shape(db)
    return None if shape is None else shape[1]


def element(db: Transaction, table: str = "vec_nodes") -> str:
    """What the table stores a dimension as: ``int8`` or ``float`` (float32; also when there is no table)."""
    shape = _shape(db, table)
    return FLOAT if shape is None else shape[0]


def element_for_provider(provider: str | None) -> str:
    """The element type a new table gets: float32 for a provider Go cerebro uses too, else int8 (ADR 0029)."""
    return FLOAT if provider in GO_PROVIDERS else INT8


def _element_for_brain(db: Transaction) -> str:
    row = execute(db, "SELECT value FROM schema_meta WHERE key = 'embedding_provider'").fetchone()
    return element_for_provider(None if row is None else row[0])


def _definition(table: str, element: str, dimensions: int) -> str:
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING "
        f"vec0(node_id TEXT, embedding {element}[{int(dimensions)}] distance_metric=cosine)"
    )


def ensure_table(db: Transaction, dimensions: int) -> None:
    if dimensions <= 0 or exists(db):
        return
    execute(db, _definition("vec_nodes", _element_for_brain(db), dimensions))
    _schema_changed(db)


def count(session: Session) -> int:
    """How many vectors the table holds."""
    return session.execute(text("SELECT COUNT(*) FROM vec_nodes")).scalar_one()


def drop_table(session: Session) -> None:
    session.execute(text("DROP TABLE vec_nodes"))
    _schema_changed(session)


# Re-embedding (brain/reembed.py) builds the new model's vectors in a side table, then swaps it in.
NEXT_TABLE = "vec_nodes_next"


def ensure_next_table(session: Session, dimensions: int, provider: str, *, fresh: bool = False) -> None:
    """The side table, of the element type vectors of the new ``provider`` get. ``fresh`` (a switch abandoned for
    this one), or a table of another shape: what was there is dropped first."""
    element = element_for_provider(provider)
    if fresh or _shape(session, NEXT_TABLE) not in (None, (element, int(dimensions))):
        drop_next(session)
    session.execute(text(_definition(NEXT_TABLE, element, dimensions)))
    _schema_changed(session)


def drop_next(session: Session) -> None:
    """The side table and what it holds: a switch abandoned."""
    session.execute(text(f"DROP TABLE IF EXISTS {NEXT_TABLE}"))
    _schema_changed(session)


def next_missing(conn: Connection, limit: int) -> list[tuple[int, str, str]]:
    """(rowid, id, content) of active nodes with no vector in the side table yet, by rowid."""
    return conn.execute(
        f"SELECT n.rowid, n.id, n.content FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
        f"(SELECT 1 FROM {NEXT_TABLE} v WHERE v.rowid = n.rowid) ORDER BY n.rowid LIMIT ?",
        (limit,),
    ).fetchall()


def next_incomplete(session: Session) -> bool:
    """Whether an active node has no vector in the side table (written since the last batch)."""
    return (
        session.execute(
            text(
                f"SELECT 1 FROM nodes n WHERE n.status = 'active' AND NOT EXISTS "
                f"(SELECT 1 FROM {NEXT_TABLE} v WHERE v.rowid = n.rowid) LIMIT 1"
            )
        ).first()
        is not None
    )


def next_count(conn: Connection) -> int:
    return conn.execute(f"SELECT COUNT(*) FROM {NEXT_TABLE}").fetchone()[0]


def put_next(session: Session, rowid: int, node_id: str, vector: Sequence[float]) -> None:
    kind = element(session, NEXT_TABLE)
    session.execute(
        text(f"INSERT INTO {NEXT_TABLE} (rowid, node_id, embedding) VALUES (:r, :id, {bound(kind, ':v')})"),
        {"r": rowid, "id": node_id, "v": to_blob(vector, kind)},
    )


def switch_to_next(session: Session, dimensions: int, model: str) -> int:
    """The side table becomes ``vec_nodes``; nodes with a vector now name ``model``. Returns how many do."""
    session.execute(text(f"DELETE FROM {NEXT_TABLE} WHERE rowid NOT IN (SELECT rowid FROM nodes)"))  # deleted since
    session.execute(text("DROP TABLE IF EXISTS vec_nodes"))
    session.execute(text(_definition("vec_nodes", element(session, NEXT_TABLE), dimensions)))
    session.execute(
        text(f"INSERT INTO vec_nodes (rowid, node_id, embedding) SELECT rowid, node_id, embedding FROM {NEXT_TABLE}")
    )
    session.execute(text(f"DROP TABLE {NEXT_TABLE}"))
    _schema_changed(session)
    session.execute(text("UPDATE nodes SET embedding_model = ''"))
    return changed(
        session, "UPDATE nodes SET embedding_model = :m WHERE rowid IN (SELECT rowid FROM vec_nodes)", {"m": model}
    )


# Our vector rows use the node's rowid as their own, so point reads and deletes are index lookups
# rather than scans of vec0's metadata column. Rows written by Go cerebro have other rowids: every lookup
# checks ``node_id`` and falls back to the scan for them.


def _node_rowid(db: Transaction, node_id: str) -> int | None:
    row = execute(db, "SELECT rowid FROM nodes WHERE id = :id", {"id": node_id}).fetchone()
    return None if row is None else int(row[0])


WRITTEN = "cerebro.vectors_written"  # session.info key: {node_id: vector, or None when deleted}


def _note(db: Transaction, node_id: str, vector: Sequence[float] | None) -> None:
    """Record a vector change in the session, for whoever keeps an in-memory copy of the vectors (a
    server's warm index): it learns of its own process's writes from this, not from data_version. A raw
    connection has no such record: a raw write's caller tells the handle itself (``Handle.vectors_written``)."""
    info = getattr(db, "info", None)
    if info is not None:
        info.setdefault(WRITTEN, {})[node_id] = None if vector is None else list(vector)


def _forget_next(db: Transaction, rowid: int | None) -> None:
    """A re-embedding in progress (``reembed``) holds this node's next vector, made from what the node said then:
    once its vector changes or goes, that one is stale — dropped, so the resumed run embeds the node again."""
    if rowid is not None and _shape(db, NEXT_TABLE) is not None:
        execute(db, f"DELETE FROM {NEXT_TABLE} WHERE rowid = :r", {"r": rowid})


def delete(db: Transaction, node_id: str) -> None:
    if not exists(db):
        return
    _note(db, node_id, None)
    rowid = _node_rowid(db, node_id)
    _forget_next(db, rowid)
    at_rowid = execute(db, "SELECT node_id FROM vec_nodes WHERE rowid = :r", {"r": rowid}).fetchone()
    if at_rowid is not None and at_rowid[0] == node_id:
        execute(db, "DELETE FROM vec_nodes WHERE rowid = :r", {"r": rowid})
    else:
        execute(db, "DELETE FROM vec_nodes WHERE node_id = :id", {"id": node_id})


def upsert(db: Transaction, node_id: str, vector: Sequence[float], *, fresh: bool = False) -> None:
    """Write a node's vector. ``fresh``: the node was created in this transaction, so it has none yet — which another
    process may have made untrue (two imports of one file): the row at its rowid is checked all the same."""
    if not fresh:
        delete(db, node_id)
    rowid = _node_rowid(db, node_id)
    if rowid is None:
        return  # its memory is gone (forgotten by another process meanwhile): no vector outlives it
    _note(db, node_id, vector)
    if fresh:
        _forget_next(db, rowid)  # a new node on a reused rowid: a row left by a deleted one is not its own
    held = execute(db, "SELECT node_id FROM vec_nodes WHERE rowid = :r", {"r": rowid}).fetchone()
    if held is not None and (held[0] == node_id or _node_rowid(db, held[0]) is None):
        # its own vector after all (a second one went in beside it, and outlived a forget), or a gone memory's
        execute(db, "DELETE FROM vec_nodes WHERE rowid = :r", {"r": rowid})
        held = None
    taken = held
    kind = element(db)
    params = {"id": node_id, "v": to_blob(vector, kind), "r": rowid}
    value = bound(kind, ":v")
    if taken is None and rowid is not None:
        execute(db, f"INSERT INTO vec_nodes (rowid, node_id, embedding) VALUES (:r, :id, {value})", params)
    else:
        execute(db, f"INSERT INTO vec_nodes (node_id, embedding) VALUES (:id, {value})", params)


def _missing_active(session: Session) -> list[str]:
    """Active nodes with no vector, oldest first. One pass over each table: a correlated NOT EXISTS on
    vec0's metadata column would scan every vector once per node (hours at 100k)."""
    have = {r[0] for r in session.execute(text("SELECT node_id FROM vec_nodes")).all()}
    rows = session.execute(text("SELECT id FROM nodes WHERE status = 'active' ORDER BY created_at, id")).all()
    return [r[0] for r in rows if r[0] not in have]


def count_missing_active(session: Session) -> int:
    """Active nodes with no vector row (upstream's pending predicate since 3.4.0)."""
    if not exists(session):
        return 0
    return len(_missing_active(session))


def missing_active_ids(session: Session, limit: int) -> list[str]:
    if not exists(session):
        return []
    return _missing_active(session)[:limit]


# ----------------------------------------------------------------------------- reads (DB-API)


MAX_K = 4096  # sqlite-vec refuses a larger k


def knn(conn: Connection, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
    """The k nearest vectors by cosine distance: [(node_id, distance)], nearest first (k ≤ 4096)."""
    k = min(int(k), MAX_K)
    if k <= 0:
        return []
    kind = element(conn)
    rows = conn.execute(
        f"SELECT node_id, distance FROM vec_nodes WHERE embedding MATCH {bound(kind)} AND k = ? ORDER BY distance",
        (to_blob(vector, kind), int(k)),
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def mean_vector(conn: Connection, sample: int, minimum: int, cache: Path | None = None) -> list[float] | None:
    """The mean of the first ``sample`` stored vectors (one bounded read, ~3 ms whatever the brain's size), or None
    when fewer than ``minimum`` are stored, or there is no vector table; its arithmetic and ``cache`` (a file keeping
    it between one-shot processes) are :mod:`cerebro.store.centering`'s."""
    from cerebro.store import centering

    try:
        blobs = [r[0] for r in conn.execute("SELECT embedding FROM vec_nodes LIMIT ?", (int(sample),)).fetchall()]
    except Exception:  # noqa: BLE001 - no vector table: nothing to center on
        return None
    if len(blobs) < max(1, minimum):
        return None
    return centering.mean(blobs, element(conn), cache)


def vectors_for(conn: Connection, ids: Sequence[str]) -> dict[str, list[float]]:
    """Vectors of these nodes: rowid point lookups, then a metadata scan only for rows found elsewhere."""
    from cerebro.store.reads import chunks

    found: dict[str, list[float]] = {}
    kind = element(conn)
    for part in chunks(list(ids)):
        marks = ",".join("?" * len(part))
        for node_id, blob in conn.execute(
            f"SELECT n.id, v.embedding FROM nodes n JOIN vec_nodes v ON v.rowid = n.rowid "
            f"WHERE n.id IN ({marks}) AND v.node_id = n.id",
            tuple(part),
        ).fetchall():
            found[node_id] = from_blob(blob, kind)
    missing = [i for i in ids if i not in found]
    if missing:
        for part in chunks(missing):
            marks = ",".join("?" * len(part))
            for node_id, blob in conn.execute(
                f"SELECT node_id, embedding FROM vec_nodes WHERE node_id IN ({marks})", tuple(part)
            ).fetchall():
                found[node_id] = from_blob(blob, kind)
    return found


def tend_index(conn: Connection) -> str | None:
    """Nothing to tend: sqlite-vec's table is its own index (a long-lived process keeps a warm copy instead)."""
    return None
