"""Read-only checks of a brain file for ``cerebro doctor`` (run on a private copy, raw DB-API)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cerebro.db.types import Connection


def integrity(conn: Connection, limit: int = 10) -> list[str]:
    """SQLite's ``integrity_check``: ``["ok"]``, or up to ``limit`` problems."""
    return [r[0] for r in conn.execute(f"PRAGMA integrity_check({int(limit)})").fetchall()]


def tables(conn: Connection) -> dict[str, set[str]]:
    """Every table's name, and its columns."""
    found: dict[str, set[str]] = {}
    for table, column in conn.execute(
        "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p WHERE m.type = 'table'"
    ).fetchall():
        found.setdefault(table, set()).add(column)
    return found


def keyword_rows_apart(conn: Connection) -> int:
    """Keyword rows not at their memory's rowid (ADR 0066: written by another tool, or before revision py0006)."""
    return int(
        conn.execute(
            "SELECT count(*) FROM nodes_fts AS f JOIN nodes AS n ON n.id = f.node_id WHERE f.rowid <> n.rowid"
        ).fetchone()[0]
    )


def active_ids(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM nodes WHERE status = 'active'").fetchall()}


def metadata_not_object(conn: Connection) -> tuple[int, str | None]:
    """(how many, the smallest id) of memories whose metadata is not a JSON object."""
    count, first = conn.execute(
        "SELECT COUNT(*), MIN(id) FROM nodes WHERE metadata IS NOT NULL AND metadata NOT IN ('', 'null') "
        "AND (json_valid(metadata) = 0 OR json_type(metadata) <> 'object')"
    ).fetchone()
    return count, first


def keyword_rows(conn: Connection) -> list[str]:
    """The node id of every keyword-index row (duplicates included)."""
    return [r[0] for r in conn.execute("SELECT node_id FROM nodes_fts").fetchall()]


def keyword_index_problem(conn: Connection) -> str | None:
    """FTS5's own integrity check, rolled back: None when the index is sound, else the error."""
    try:
        conn.execute("BEGIN")  # the copy is private, but a check still commits nothing
        try:
            conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")
        finally:
            conn.execute("ROLLBACK")
    except Exception as exc:  # noqa: BLE001 - a damaged index
        return " ".join(str(exc).split())
    return None


def vector_rows(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT node_id FROM vec_nodes").fetchall()]
