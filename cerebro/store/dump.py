"""``export --format sql``: statements that Python's sqlite3 (or the sqlite3 shell) runs against a brain made
by ``cerebro init`` to give the same rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro import config, metadata
from cerebro.db.migrate import NEEDS_FTS_REBUILD
from cerebro.portability import ARCHIVE_COLUMNS, EDGE_COLUMNS, NODE_COLUMNS
from cerebro.store import reads

if TYPE_CHECKING:
    from cerebro.db.types import Connection


def _literal(value: object) -> str:
    # Values come from SQLite rows: None, int, float or text (booleans are stored as 0/1 integers).
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def sql_statements(conn: Connection) -> list[str]:
    """Statements that Python's sqlite3 (or the sqlite3 shell) runs against an empty brain to give the same
    rows. Vectors are not included: every node is pending until embedded, and the keyword lane is rebuilt
    at the next open (the dump leaves a marker for it)."""
    lines = ["-- cerebro export (sql): run against a brain made by `cerebro init`", "BEGIN;"]
    for key, value in reads.meta_items(conn, prefix="config."):
        if key.removeprefix("config.") in config.LOCAL_ONLY:
            continue  # a dump loaded with sqlite3 must not bring a program to run, or redaction off (ADR 0026, 0027)
        lines.append(f"INSERT OR REPLACE INTO schema_meta (key, value) VALUES ({_literal(key)}, {_literal(value)});")
    tables = (
        ("nodes", NODE_COLUMNS, "id"),
        ("edges", EDGE_COLUMNS[1:], "source_id, target_id, relation"),
        ("nodes_archive", ARCHIVE_COLUMNS, "id"),
    )
    for table, columns, order in tables:
        for row in reads.rows(conn, table, columns, order):
            # No vectors travel in a dump, so no node may claim a model: each is pending until embedded.
            # Metadata is written as JSON text whatever the source holds (a Go BLOB, free text).
            values = [
                "" if name == "embedding_model" else metadata.dumps(metadata.load(v)) if name == "metadata" else v
                for name, v in zip(columns, row, strict=True)
            ]
            lines.append(
                f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({', '.join(map(_literal, values))});"
            )
    lines.append(f"INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('{NEEDS_FTS_REBUILD}', 'true');")
    lines.append("COMMIT;")
    return lines
