"""Memory text in a team brain, for the secret scan and its redaction (ADR 0027)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.store.sql import changed
from cerebro.store.texts import CONTENT, TABLES

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Session


def all_texts(conn: Connection) -> list[tuple[str, str, str, str | None]]:
    found = []
    for where, table in TABLES.items():
        content = CONTENT.get(table, "content")
        rows = conn.execute(f"SELECT id, {content}, CAST(metadata AS text) FROM {table} ORDER BY id").fetchall()
        found += [(where, str(r[0]), r[1] or "", r[2]) for r in rows]
    return found


def replace(
    session: Session, where: str, record_id: str, content: str, metadata: str | None, *, was: tuple[str, str | None]
) -> bool:
    # json has no equality: compared as the text it holds. A link (a BIGINT id) has no content.
    table = TABLES[where]
    if table in CONTENT:
        sql = (
            f"UPDATE {table} SET metadata = CAST(:m AS json) "
            "WHERE id = CAST(:id AS bigint) AND CAST(metadata AS text) IS NOT DISTINCT FROM :wm"
        )
    else:
        sql = (
            f"UPDATE {table} SET content = :c, metadata = CAST(:m AS json) "
            "WHERE id = :id AND content = :wc AND CAST(metadata AS text) IS NOT DISTINCT FROM :wm"
        )
    return changed(session, sql, {"c": content, "m": metadata, "id": record_id, "wc": was[0], "wm": was[1]}) == 1


def compact(conn: Connection) -> bool:
    """Old row versions (text replaced or deleted) stay in the table's pages until a VACUUM frees them; the
    team's tables are shared, so this asks the server to vacuum them now. False when this role may not."""
    try:
        for table in TABLES.values():
            conn.execute(f"VACUUM {table}")
    except Exception:  # noqa: BLE001 - not the tables' owner: the server's autovacuum does it later
        return False
    return True
