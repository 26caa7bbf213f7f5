"""Memory text wherever a brain keeps it (memories, the archive, the inbox, links' metadata), for the secret scan and
its redaction (ADR 0027): read all of it, replace one record's text, and make sure replaced text is gone from the
file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.sql import changed

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Session

# Where a memory's text lives: the name a finding reports → its table.
TABLES = {"memory": "nodes", "archive": "nodes_archive", "inbox": "inbox_candidates", "edge": "edges"}
# A link holds no content, only metadata (a note on why two memories are linked): read as content "".
CONTENT = {"edges": "''"}


def all_texts(conn: Connection) -> list[tuple[str, str, str, str | None]]:
    """(where, id, content, metadata as stored) of every record holding memory text, by where then id (a link's id
    as text)."""
    found = []
    for where, table in TABLES.items():
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone() is None:
            continue
        content = CONTENT.get(table, "content")
        rows = conn.execute(f"SELECT id, {content}, metadata FROM {table} ORDER BY id").fetchall()  # one of TABLES
        found += [(where, str(r[0]), r[1] or "", None if r[2] is None else str(r[2])) for r in rows]
    return found


def replace(
    session: Session, where: str, record_id: str, content: str, metadata: str | None, *, was: tuple[str, str | None]
) -> bool:
    """Set one record's content and metadata text, only if it still holds ``was`` (content, metadata): a record
    another writer changed meanwhile is left alone. Whether it was replaced (the caller renews its keyword row and
    vector). A link's content is always "": only its metadata is set."""
    table = TABLES[where]
    if table in CONTENT:
        sql = f"UPDATE {table} SET metadata = :m WHERE id = :id AND metadata IS :wm"
    else:
        sql = f"UPDATE {table} SET content = :c, metadata = :m WHERE id = :id AND content = :wc AND metadata IS :wm"
    return changed(session, sql, {"c": content, "m": metadata, "id": record_id, "wc": was[0], "wm": was[1]}) == 1


def compact(conn: Connection) -> bool:
    """Rebuild the file without free space (text deleted earlier — by gc, forget, an update — may still sit in free
    pages), then copy the write-ahead log into it and empty it. False when a reader kept part of the log (the next
    checkpoint then finishes the job). ``conn`` must not be in a transaction."""
    conn.execute("VACUUM")
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return bool(busy == 0)
