"""Export formats and backups (issue 5).

- ``json``: the bundle upstream Go cerebro reads and writes (``version``, ``exported_at``, ``meta`` with
  ``config.*``, ``nodes`` in every status, ``edges``); no archive, vectors or inbox, as upstream.
- ``jsonl``: one record per line (meta, nodes, edges, archive), sorted and byte-stable across runs — no
  export time, no edge row ids — so two people's exports of a shared brain merge as text in git.
- ``sqlite``: a consistent copy taken with SQLite's backup API while other processes write.
"""

from __future__ import annotations

import json
from typing import Any

from cerebro import clock, metadata

EXPORT_VERSION = "1"  # upstream's ExportVersion, unchanged through schema v7
_NODE_COLUMNS = (
    "id", "type", "subtype", "content", "metadata", "importance", "decay_rate", "access_count",
    "times_reinforced", "status", "embedding_model", "created_at", "last_accessed", "last_reinforced",
    "updated_at", "last_surfaced", "provenance_root", "origin_actor", "origin_channel", "origin_session",
    "origin_host",
)
_EDGE_COLUMNS = ("id", "source_id", "target_id", "relation", "weight", "metadata", "created_at", "valid_at", "invalid_at")
_ARCHIVE_COLUMNS = (
    "id", "type", "subtype", "content", "metadata", "importance", "status", "archive_reason",
    "original_created_at", "archived_at",
)
_TIME_FIELDS = {
    "created_at", "last_accessed", "last_reinforced", "updated_at", "last_surfaced", "valid_at", "invalid_at",
    "original_created_at", "archived_at",
}


def _rfc3339(value: Any) -> Any:
    """Storage layout → RFC 3339 (what Go's encoder writes); anything unparseable passes through."""
    if value in (None, ""):
        return None
    parsed = clock.parse_optional(value)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ") if parsed else value


def _record(row: Any, columns: tuple[str, ...], *, omit_empty: tuple[str, ...] = ()) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for name, value in zip(columns, row, strict=True):
        if name in _TIME_FIELDS:
            value = _rfc3339(value)
        elif name == "metadata":
            value = metadata.load(value)
        elif name == "provenance_root":
            value = bool(value)
        if name in omit_empty and value in (None, ""):
            continue
        record[name] = value
    return record


def _rows(conn: Any, table: str, columns: tuple[str, ...], order: str) -> list[Any]:
    # A brain is at head once open (Brain.open upgrades it), so every column is there.
    return conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}").fetchall()


def bundle(conn: Any) -> dict[str, Any]:
    """Upstream's JSON bundle."""
    meta = dict(conn.execute("SELECT key, value FROM schema_meta ORDER BY key").fetchall())
    return {
        "version": EXPORT_VERSION,
        "exported_at": clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "meta": meta,
        "nodes": [_record(r, _NODE_COLUMNS, omit_empty=("subtype", "metadata")) for r in _rows(conn, "nodes", _NODE_COLUMNS, "created_at, id")],
        "edges": [_record(r, _EDGE_COLUMNS, omit_empty=("metadata",)) for r in _rows(conn, "edges", _EDGE_COLUMNS, "id")],
    }


def jsonl_lines(conn: Any) -> list[str]:
    """Sorted, byte-stable lines: meta by key, nodes by id, edges by (source, target, relation), archive."""

    def line(kind: str, record: dict[str, Any]) -> str:
        return json.dumps({"kind": kind, **record}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    lines = [line("meta", {"key": k, "value": v}) for k, v in conn.execute("SELECT key, value FROM schema_meta ORDER BY key")]
    lines += [line("node", _record(r, _NODE_COLUMNS)) for r in _rows(conn, "nodes", _NODE_COLUMNS, "id")]
    edge_columns = _EDGE_COLUMNS[1:]  # row ids differ between brains: the triple is the key
    lines += [
        line("edge", _record(r, edge_columns))
        for r in _rows(conn, "edges", edge_columns, "source_id, target_id, relation")
    ]
    lines += [line("archive", _record(r, _ARCHIVE_COLUMNS)) for r in _rows(conn, "nodes_archive", _ARCHIVE_COLUMNS, "id")]
    return lines


NEEDS_FTS_REBUILD = "needs_fts_rebuild"  # set by a sql dump; the next open rebuilds the keyword lane


def _literal(value: Any) -> str:
    # Values come from SQLite rows: None, int, float or text (booleans are stored as 0/1 integers).
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def sql_statements(conn: Any) -> list[str]:
    """Statements that Python's sqlite3 (or the sqlite3 shell) runs against an empty brain to give the same
    rows. Vectors are not included: every node is pending until embedded, and the keyword lane is rebuilt
    at the next open (the dump leaves a marker for it)."""
    lines = ["-- cerebro export (sql): run against a brain made by `cerebro init`", "BEGIN;"]
    for key, value in conn.execute("SELECT key, value FROM schema_meta WHERE key >= 'config.' AND key < 'config/' ORDER BY key"):
        lines.append(f"INSERT OR REPLACE INTO schema_meta (key, value) VALUES ({_literal(key)}, {_literal(value)});")
    tables = (
        ("nodes", _NODE_COLUMNS, "id"),
        ("edges", _EDGE_COLUMNS[1:], "source_id, target_id, relation"),
        ("nodes_archive", _ARCHIVE_COLUMNS, "id"),
    )
    for table, columns, order in tables:
        for row in _rows(conn, table, columns, order):
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
