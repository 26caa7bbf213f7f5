"""``cerebro doctor``'s checks on a team brain. The server keeps its own pages sound and the keyword column in
step with the content (generated), so those checks have nothing to find; the memories' own checks are the same."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.checks import active_ids as active_ids

if TYPE_CHECKING:
    from cerebro.db.types import Connection


def integrity(conn: Connection, limit: int = 10) -> list[str]:
    return ["ok"]


def tables(conn: Connection) -> dict[str, set[str]]:
    """Every table's name, and its columns."""
    found: dict[str, set[str]] = {}
    for table, column in conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
    ):
        found.setdefault(table, set()).add(column)
    return found


def keyword_rows_apart(conn: Connection) -> int:
    """None: the keyword lane is a column of each memory's own row."""
    return 0


def metadata_not_object(conn: Connection) -> tuple[int, str | None]:
    row = conn.execute(
        "SELECT COUNT(*), MIN(id) FROM nodes WHERE metadata IS NOT NULL AND json_typeof(metadata) <> 'object'"
    ).fetchone()
    return int(row[0]), row[1]


def keyword_rows(conn: Connection) -> list[str]:
    """Active memories: each is searched through its generated column."""
    return [r[0] for r in conn.execute("SELECT id FROM nodes WHERE status = 'active'")]


def keyword_index_problem(conn: Connection) -> str | None:
    return None


def vector_rows(conn: Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT node_id FROM node_vectors")]
