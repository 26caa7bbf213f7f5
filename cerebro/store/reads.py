"""Raw-SQL reads over a DB-API connection, for the hot paths (recall, prime, hooks).

These skip SQLAlchemy entirely — importing it costs more than a whole recall — and return the same
frozen values as the ORM store (ADR 0009).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from cerebro import clock, metadata, values
from cerebro.store import ids

if TYPE_CHECKING:
    from cerebro.db.types import Connection

NODE_COLUMNS = (
    "id, type, subtype, content, metadata, importance, decay_rate, access_count, times_reinforced, status, "
    "embedding_model, created_at, last_accessed, last_reinforced, updated_at, last_surfaced, provenance_root, "
    "origin_actor, origin_channel, origin_session, origin_host"
)
CHUNK = 500  # ids a statement asks for at most: well under SQLite's host-parameter limit


def _time(value: Any) -> datetime | None:  # noqa: ANN401 - a stored value: text, a datetime or NULL
    if value is None:  # the common case (never reinforced, updated, surfaced): no call
        return None
    # The storage layout exactly (fromisoformat also takes week dates, "HHMMSS.f" and "HH:MM,ff", which the ORM's
    # reader refuses: a hand-edited row must read the same everywhere).
    if (
        isinstance(value, str)
        and len(value) == 19
        and value[10] == " "
        and value[7] == "-"
        and value[13] == value[16] == ":"
    ):
        try:  # the C parser is ~10x faster than the general one, and parsing the
            # offset is ~7x faster than .replace(tzinfo=…) (a keyword call): 0.3 µs instead of 1.9 µs
            return datetime.fromisoformat(value + "+00:00")
        except ValueError:
            pass
    return clock.parse_optional(value)


stored_time = _time  # a stored time as a row read gives it (the rows copy mirrors touches with it)


def _metadata(value: object) -> dict[str, Any] | None:
    # NULL, the common case, without a call; an import statement here cost ~0.7 µs a row (~0.08 ms a recall).
    return None if value is None else metadata.load(value)


def node_from_row(row: Sequence[Any]) -> values.Node:
    # Built without Node.__init__, which sets each of a frozen dataclass's 22 fields through object.__setattr__:
    # ~5 µs a node, and a recall reads ~110 (the reasoning of values.evolve; Node has no __post_init__). Item by item
    # rather than one update() with keywords: ~0.35 µs a node less. In field order, as __init__ sets them, and never
    # through update(): the instances then share one key table (a 248-byte __dict__, not 832 — a rows copy keeps
    # every memory's Node, ADR 0051), and a node is built in ~2.0 µs instead of ~2.5.
    node = object.__new__(values.Node)
    attrs = node.__dict__
    attrs["id"], attrs["type"], attrs["subtype"], attrs["content"] = row[0], row[1], row[2], row[3]
    attrs["metadata"] = None if row[4] is None else _metadata(row[4])
    attrs["importance"] = float(row[5] if row[5] is not None else 0.5)
    attrs["decay_rate"] = float(row[6])  # NOT NULL in every schema version
    attrs["access_count"] = int(row[7] or 0)
    attrs["times_reinforced"] = int(row[8] or 0)
    attrs["status"] = row[9] or "active"
    attrs["embedding_model"] = row[10]  # NOT NULL in every schema version
    attrs["created_at"] = created_at = _time(row[11])
    attrs["last_accessed"] = created_at if row[12] == row[11] else _time(row[12])  # never accessed: parsed once
    attrs["last_reinforced"] = _time(row[13])
    attrs["updated_at"] = _time(row[14])
    attrs["last_surfaced"] = _time(row[15])
    attrs["provenance_root"] = bool(row[16])
    attrs["origin"] = _origin(row[17], row[18], row[19], row[20])
    # The fields a row does not hold (statuses computed at read time), as Node's defaults.
    attrs["provenance_status"] = attrs["origin_status"] = attrs["anchor_status"] = attrs["anchors"] = None
    return node


def _origin(actor: str | None, channel: str | None, session: str | None, host: str | None) -> values.Origin:
    """The (immutable) Origin of these four values: one shared object for the memories of one session, as a recall
    reads dozens of them (~0.3 µs a node saved)."""
    key = (actor, channel, session, host)
    origin = _ORIGINS.get(key)
    if origin is None:
        if len(_ORIGINS) >= _ORIGINS_KEPT:
            _ORIGINS.clear()
        # As node_from_row builds a Node: a frozen dataclass's __init__ sets each field through object.__setattr__.
        origin = object.__new__(values.Origin)
        origin.__dict__.update(actor=actor, channel=channel, session=session, host=host)
        _ORIGINS[key] = origin
    return origin


_ORIGINS: dict[tuple[str | None, ...], values.Origin] = {}
_ORIGINS_KEPT = 4096  # distinct origins remembered (a session each, mostly); then forgotten all at once


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def nodes_by_id(conn: Connection, ids: Sequence[str], *, active_only: bool = False) -> dict[str, values.Node]:
    found: dict[str, values.Node] = {}
    for part in chunks(list(dict.fromkeys(ids))):
        marks = ",".join("?" * len(part))
        sql = f"SELECT {NODE_COLUMNS} FROM nodes WHERE id IN ({marks})"
        if active_only:
            # "+status": without ANALYZE statistics SQLite would otherwise walk idx_nodes_status (every
            # active row) instead of the primary key — 25 ms instead of 0.6 ms at 100k memories.
            sql += " AND +status = 'active'"
        for row in conn.execute(sql, tuple(part)).fetchall():
            node = node_from_row(row)
            found[node.id] = node
    return found


def resolve_id(conn: Connection, prefix: str) -> str:
    """A full id or a unique prefix of ≥4 characters → the full id of a memory (``store.ids``)."""
    return ids.resolve_prefix(
        lambda sql, params: conn.execute(sql, params).fetchall(), prefix, table="nodes", noun="node"
    )


def list_nodes(
    conn: Connection, *, type: str | None, status: str | None, subtype: str | None, subtype_given: bool, limit: int
) -> list[values.Node]:
    """Memories newest first (writing order: ``created_at``, then ``rowid``), of this type, status and subtype when
    given (``subtype_given`` with an empty ``subtype``: those without one)."""
    clauses, params = [], []
    for column, value in (("type", type), ("status", status)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if subtype_given:
        clauses.append("subtype = ?" if subtype else "(subtype IS NULL OR subtype = '')")
        params += [subtype] if subtype else []
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    sql = f"SELECT {NODE_COLUMNS} FROM nodes{where} ORDER BY created_at DESC, rowid DESC LIMIT ?"
    return [node_from_row(row) for row in conn.execute(sql, (*params, limit)).fetchall()]


def edge_window(as_of: datetime | None) -> tuple[str, tuple[str, ...]]:
    """The SQL that keeps only edges valid at ``as_of`` — the half-open window [valid_at, invalid_at) — and its
    parameters; nothing without one. Upstream compares the stored text with the storage layout; a window Go cerebro
    wrote as RFC 3339 with an offset (``2026-01-01T10:00:00+02:00``) then compared wrongly, by its ``T`` and its
    local hour. SQLite's ``datetime()`` reads either as the UTC instant in the storage layout; a text it cannot
    read is compared as it is."""
    if as_of is None:
        return "", ()
    stamp = clock.format_ts(as_of)
    return (
        " AND (valid_at IS NULL OR coalesce(datetime(valid_at), valid_at) <= ?)"
        " AND (invalid_at IS NULL OR coalesce(datetime(invalid_at), invalid_at) > ?)"
    ), (stamp, stamp)


def edges_of(conn: Connection, node_id: str, as_of: datetime | None = None) -> list[values.Edge]:
    """Every edge from or to ``node_id`` (only those valid at ``as_of`` when given: :func:`edge_window`), in the
    order they were made."""
    window, window_params = edge_window(as_of)
    sql = (
        "SELECT id, source_id, target_id, relation, weight, metadata, created_at, valid_at, invalid_at FROM edges "
        f"WHERE (source_id = ? OR target_id = ?){window}"
    )
    params: tuple[Any, ...] = (node_id, node_id, *window_params)
    return [
        values.Edge(
            id=int(row[0]),
            source_id=row[1],
            target_id=row[2],
            relation=row[3],
            weight=float(row[4] if row[4] is not None else 1.0),
            metadata=_metadata(row[5]),
            created_at=_time(row[6]),
            valid_at=_time(row[7]),
            invalid_at=_time(row[8]),
        )
        for row in conn.execute(sql + " ORDER BY id", params).fetchall()
    ]


def meta(conn: Connection, key: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM schema_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row is not None else default


def config_values(conn: Connection) -> dict[str, str]:
    rows = conn.execute(
        "SELECT key, value FROM schema_meta "
        "WHERE key COLLATE BINARY >= 'config.' AND key COLLATE BINARY < 'config.' || char(1114111)"
    ).fetchall()
    return {key[len("config.") :]: value for key, value in rows}


def table_exists(conn: Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def active_with_anchors(conn: Connection) -> list[values.Node]:
    """Active memories whose metadata names code anchors, newest first."""
    rows = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE status = 'active' "
        "AND instr(CAST(metadata AS TEXT), '\"anchor') > 0 ORDER BY created_at DESC, id"
    ).fetchall()
    return [node_from_row(r) for r in rows]


def node_ids(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM nodes").fetchall()}


def active_surfacing(conn: Connection) -> list[tuple[str, str | None]]:
    """(type, last_surfaced) of every active memory, as stored (legacy rows hold RFC 3339 text)."""
    return conn.execute("SELECT type, last_surfaced FROM nodes WHERE status = 'active'").fetchall()


def edge_count(conn: Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]


class Census(NamedTuple):
    """The brain's counts for ``stats``."""

    by_status: dict[str, int]
    by_type: dict[str, int]
    edges: int
    embedded: int  # memories whose vector is from the brain's model
    pending: int  # active memories without a vector row (upstream's predicate since 3.4.0)
    revision: str | None  # the Alembic revision the brain is at


# One pass over the vector rows' node ids (the list is built once, not per memory). None of them is NULL, which would
# make NOT IN match nothing: vec0 refuses a NULL in a text metadata column.
PENDING = "SELECT COUNT(*) FROM nodes WHERE status = 'active' AND id NOT IN (SELECT node_id FROM vec_nodes)"


def census(conn: Connection, model: str, *, vectors: bool) -> Census:
    """``stats``' counts on the raw connection: ``stats`` imported the ORM for them (~0.35 s of CPU). ``vectors``:
    whether the brain has a vector lane (``pending`` is 0 without one). The pending count reads every vector row's
    node id once (~40 ms at 10,000 memories: vec0 keeps them apart from its index)."""
    return take_census(conn, model, PENDING if vectors and table_exists(conn, "vec_nodes") else None, revision(conn))


def take_census(conn: Connection, model: str, pending: str | None, at: str | None) -> Census:
    """The counts both engines read alike; ``pending``: the engine's count of active memories without a vector."""
    return Census(
        dict(conn.execute("SELECT status, COUNT(*) FROM nodes GROUP BY status").fetchall()),
        dict(conn.execute("SELECT type, COUNT(*) FROM nodes GROUP BY type").fetchall()),
        edge_count(conn),
        conn.execute(
            "SELECT COUNT(*) FROM nodes WHERE embedding_model = ? AND embedding_model != ''", (model,)
        ).fetchone()[0],
        conn.execute(pending).fetchone()[0] if pending is not None else 0,
        at,
    )


def revision(conn: Connection) -> str | None:
    """The Alembic revision the brain is at (None without the table): as the upgrade check reads it."""
    from cerebro.db.migrate import read_state  # loaded already wherever a brain is open (its upgrade check)

    return read_state(conn)[1]


# Session-start prime's pools (cerebro/prime.py): which active memories each considers, best first; ties go to the
# memory written last. ``:week`` and ``:two_days`` are storage-layout times. Each is a walk along an index, never a
# sort of every memory of a type (issue 18: ~160 ms a prime at 100,000 memories): the typed pools seek
# ``idx_nodes_type_status_importance`` (py0004); the episode and recent pools walk the writing order
# (``idx_nodes_writing_order``) and ``idx_nodes_updated_at`` back from now — a week's (two days') memories at most —
# where SQLite, without statistics, would sort every active episode (memory) found through the (type, status) index:
# "+column" keeps it off those (``cerebro.db.postgres.pg_sql`` drops the "+" for PostgreSQL, which plans for itself).
# ``recent`` is COALESCE(updated_at, created_at) in two parts that each have an index: memories updated in the last
# two days, and never-updated memories written in them.
_BY_IMPORTANCE = "ORDER BY importance DESC, created_at DESC, rowid DESC"
_PRIME_POOLS = {
    "concept": f"SELECT {NODE_COLUMNS} FROM nodes WHERE type = 'concept' AND status = 'active' {_BY_IMPORTANCE}",
    "procedure": f"SELECT {NODE_COLUMNS} FROM nodes WHERE type = 'procedure' AND status = 'active' {_BY_IMPORTANCE}",
    "episode": (
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE +type = 'episode' AND +status = 'active' AND created_at >= :week "
        "ORDER BY created_at DESC, rowid DESC"
    ),
    "reflection": f"SELECT {NODE_COLUMNS} FROM nodes WHERE type = 'reflection' AND status = 'active' {_BY_IMPORTANCE}",
    "recent": (
        f"SELECT {NODE_COLUMNS}, updated_at AS recency, rowid AS place FROM nodes "
        "WHERE +status = 'active' AND updated_at >= :two_days UNION ALL "
        f"SELECT {NODE_COLUMNS}, created_at, rowid FROM nodes "
        "WHERE +status = 'active' AND +updated_at IS NULL AND created_at >= :two_days "
        "ORDER BY recency DESC, place DESC"
    ),
}


def prime_pool(conn: Connection, pool: str, limit: int, marks: dict[str, str]) -> list[values.Node]:
    sql = f"{_PRIME_POOLS[pool]} LIMIT {int(limit)}"
    params = {k: v for k, v in marks.items() if f":{k}" in sql}
    return [node_from_row(row) for row in conn.execute(sql, params).fetchall()]  # recent's extra columns: unread


def rows(conn: Connection, table: str, columns: Sequence[str], order: str) -> list[Any]:
    """Every row of ``table`` (these columns, in this order): the exports' read. The brain is at head once
    open (opening upgrades it), so every column is there."""
    return conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}").fetchall()


def meta_items(conn: Connection, *, prefix: str = "") -> list[tuple[str, str]]:
    """``schema_meta`` as (key, value) pairs by key, only the keys starting with ``prefix`` when given."""
    if not prefix:
        return conn.execute("SELECT key, value FROM schema_meta ORDER BY key").fetchall()
    return conn.execute(
        "SELECT key, value FROM schema_meta WHERE key COLLATE BINARY >= ? AND key COLLATE BINARY < ? || char(1114111) "
        "ORDER BY key COLLATE BINARY",
        (prefix, prefix),
    ).fetchall()


def count_active(conn: Connection) -> int:
    """Active memories (the hooks' hot path: this module imports no ORM)."""
    return conn.execute("SELECT COUNT(*) FROM nodes WHERE status = 'active'").fetchone()[0]


def written_beside(conn: Connection, ids: Sequence[str]) -> dict[str, values.Beside]:
    """For each of these memories, (the memory written just before it, the one written just after it), whatever
    their status; None at either end. Writing order is ``created_at`` then ``rowid`` (the order within one second):
    not ``rowid`` alone, which an import or a sync fills in another order. Two statements: the neighbours' rowids
    (seeks on ``idx_nodes_writing_order``, revision py0003), then their rows. A memory without ``created_at`` has
    no neighbours."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    # Each side is two index seeks — within the memory's second, then the nearest other second — as a row-value
    # comparison would make SQLite walk every memory of that second (all of an add_many's: 30 ms at 20,000).
    sides = conn.execute(
        "SELECT n.id, COALESCE("
        "(SELECT max(b.rowid) FROM nodes b WHERE b.created_at = n.created_at AND b.rowid < n.rowid), "
        "(SELECT b.rowid FROM nodes b WHERE b.created_at < n.created_at ORDER BY b.created_at DESC, b.rowid DESC "
        "LIMIT 1)), COALESCE("
        "(SELECT min(a.rowid) FROM nodes a WHERE a.created_at = n.created_at AND a.rowid > n.rowid), "
        "(SELECT a.rowid FROM nodes a WHERE a.created_at > n.created_at ORDER BY a.created_at, a.rowid LIMIT 1)) "
        f"FROM nodes n WHERE n.id IN ({marks})",
        tuple(ids),
    ).fetchall()
    wanted = sorted({rowid for _, before, after in sides for rowid in (before, after) if rowid is not None})
    found: dict[int, values.Node] = {}
    if wanted:
        marks = ",".join("?" * len(wanted))
        sql = f"SELECT rowid, {NODE_COLUMNS} FROM nodes WHERE rowid IN ({marks})"
        found = {row[0]: node_from_row(row[1:]) for row in conn.execute(sql, wanted).fetchall()}
    return {node_id: (found.get(before), found.get(after)) for node_id, before, after in sides}


def written_near(conn: Connection, ids: Sequence[str], reach: int) -> dict[str, set[str]]:
    """For each of these memories, the ids of the memories written within ``reach`` places of it in writing order
    (``created_at``, then ``rowid``; memories of any status count as places). Two statements: the places' rowids —
    on each side ``reach`` seeks within the memory's second and ``reach`` into the other seconds (see
    :func:`written_beside`) — then their ids."""
    if not ids or reach <= 0:
        return {}
    columns = []
    for nearest, op, order in (("max", "<", "DESC"), ("min", ">", "ASC")):
        # Within the second, each place is found from the one before it: max/min are single seeks on both engines,
        # where "ORDER BY rowid LIMIT 1 OFFSET k" let PostgreSQL read the whole second (an add_many's thousands).
        place = "n.rowid"
        for k in range(reach):
            place = (
                f"(SELECT {nearest}(s{k}.rowid) FROM nodes s{k} "
                f"WHERE s{k}.created_at = n.created_at AND s{k}.rowid {op} {place})"
            )
            columns.append(place)
        columns += [
            f"(SELECT o.rowid FROM nodes o WHERE o.created_at {op} n.created_at "
            f"ORDER BY o.created_at {order}, o.rowid {order} LIMIT 1 OFFSET {k})"
            for k in range(reach)
        ]
    marks = ",".join("?" * len(ids))
    sql = f"SELECT n.id, {', '.join(columns)} FROM nodes n WHERE n.id IN ({marks})"
    places: dict[str, list[int]] = {}
    for node_id, *found in conn.execute(sql, tuple(ids)).fetchall():
        before = [p for p in found[: 2 * reach] if p is not None][:reach]  # this second first, then earlier ones
        after = [p for p in found[2 * reach :] if p is not None][:reach]
        places[node_id] = before + after
    wanted = sorted({rowid for rowids in places.values() for rowid in rowids})
    if not wanted:
        return {node_id: set() for node_id in places}
    marks = ",".join("?" * len(wanted))
    at = dict(conn.execute(f"SELECT rowid, id FROM nodes WHERE rowid IN ({marks})", wanted).fetchall())
    return {node_id: {at[p] for p in rowids if p in at} for node_id, rowids in places.items()}
