"""What the revision files (alembic/versions/) use: idempotent schema steps, the upstream schema_version and
convention boundaries, the keyword lane's (re)build, and the healing of adopted Go brains."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cerebro import clock

if TYPE_CHECKING:
    from cerebro.db.types import SAConnection

VIRTUAL_LANE_PREFIXES = ("nodes_fts", "vec_nodes")

# Every timestamp column, for normalisation (table → columns).
TIMESTAMP_COLUMNS = {
    "nodes": ("created_at", "last_accessed", "last_reinforced", "updated_at", "last_surfaced"),
    "edges": ("created_at", "valid_at", "invalid_at"),
    "nodes_archive": ("original_created_at", "archived_at"),
    "relations": ("created_at",),
    "inbox_candidates": ("created_at",),
}
BOUNDARY_KEYS = ("provenance_convention_since", "origin_convention_since")
_LAYOUT_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# --------------------------------------------------------------------------- helpers for revisions


def on_postgresql(bind: SAConnection) -> bool:
    """A team database (ADR 0030): its schema is built whole by the first revision (``cerebro.db.pg_schema``);
    the revisions that replay SQLite's history have nothing to do there."""
    return bool(bind.dialect.name == "postgresql")


def is_virtual_lane_table(name: str) -> bool:
    return name.startswith(VIRTUAL_LANE_PREFIXES)


def _ident(name: str) -> str:
    if not _IDENT.match(name):
        raise ValueError(f"bad identifier {name!r}")
    return name


def table_exists(bind: SAConnection, table: str) -> bool:
    row = bind.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
    return row is not None


def column_exists(bind: SAConnection, table: str, column: str) -> bool:
    rows = bind.exec_driver_sql(f"PRAGMA table_info({_ident(table)})").fetchall()
    return any(row[1] == column for row in rows)


def add_column_if_absent(bind: SAConnection, table: str, column: str, ddl: str) -> None:
    """Upstream checks ``PRAGMA table_info`` first, so a half-migrated brain heals instead of failing."""
    if not column_exists(bind, table, column):
        bind.exec_driver_sql(f"ALTER TABLE {_ident(table)} ADD COLUMN {_ident(column)} {ddl}")


def drop_column_if_present(bind: SAConnection, table: str, column: str) -> None:
    if column_exists(bind, table, column):
        bind.exec_driver_sql(f"ALTER TABLE {_ident(table)} DROP COLUMN {_ident(column)}")


def set_schema_version(bind: SAConnection, version: int) -> None:
    bind.exec_driver_sql(
        "INSERT INTO schema_meta (key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (str(version),),
    )


def stamp_boundary(bind: SAConnection, key: str) -> None:
    """Stamp a convention boundary with the migration instant — once: INSERT OR IGNORE never re-stamps."""
    bind.exec_driver_sql("INSERT OR IGNORE INTO schema_meta (key, value) VALUES (?, ?)", (key, clock.now_text()))


def ensure_fts_table(bind: SAConnection) -> None:
    """Create ``nodes_fts`` if absent and backfill it with the active nodes (a brain that has one keeps it)."""
    if table_exists(bind, "nodes_fts"):
        return
    bind.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(node_id UNINDEXED, content, subtype)")
    if table_exists(bind, "nodes"):
        bind.exec_driver_sql(
            "INSERT INTO nodes_fts (node_id, content, subtype) "
            "SELECT id, content, COALESCE(subtype, '') FROM nodes WHERE status = 'active'"
        )


def rebuild_fts_table(bind: SAConnection, *, tokenize: str | None) -> None:
    """Re-create ``nodes_fts`` with another tokenizer, keeping its rows (created fresh if absent)."""
    ensure_fts_table(bind)
    rows = bind.exec_driver_sql("SELECT node_id, content, subtype FROM nodes_fts").fetchall()
    bind.exec_driver_sql("DROP TABLE nodes_fts")
    option = f", tokenize = '{tokenize}'" if tokenize else ""
    bind.exec_driver_sql(f"CREATE VIRTUAL TABLE nodes_fts USING fts5(node_id UNINDEXED, content, subtype{option})")
    for row in rows:
        bind.exec_driver_sql("INSERT INTO nodes_fts (node_id, content, subtype) VALUES (?, ?, ?)", tuple(row))


def remove_dangling_edges(bind: SAConnection) -> None:
    """Go cerebro deletes nodes with foreign keys off, leaving edges that point at nothing; they can never
    be traversed, and they would fail the foreign-key check that ends every upgrade."""
    if table_exists(bind, "edges"):
        bind.exec_driver_sql(
            "DELETE FROM edges WHERE source_id NOT IN (SELECT id FROM nodes) OR target_id NOT IN (SELECT id FROM nodes)"
        )


def normalise_timestamps(bind: SAConnection) -> None:
    """Re-write every timestamp not in the storage layout. Unparseable text is left as it is."""
    for table, columns in TIMESTAMP_COLUMNS.items():
        if not table_exists(bind, table):
            continue
        for column in columns:
            if not column_exists(bind, table, column):
                continue
            rows = bind.exec_driver_sql(
                f"SELECT rowid, {column} FROM {table} "
                f"WHERE {column} IS NOT NULL AND {column} != '' AND {column} NOT GLOB '{_LAYOUT_GLOB}'"
            ).fetchall()
            for rowid, value in rows:
                try:
                    fixed = clock.normalise(str(value))
                except (ValueError, OverflowError):
                    continue
                bind.exec_driver_sql(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (fixed, rowid))
    for key in BOUNDARY_KEYS:
        row = bind.exec_driver_sql("SELECT value FROM schema_meta WHERE key = ?", (key,)).fetchone()
        if row and row[0]:
            try:
                fixed = clock.normalise(row[0])
            except (ValueError, OverflowError):
                continue
            if fixed != row[0]:
                bind.exec_driver_sql("UPDATE schema_meta SET value = ? WHERE key = ?", (fixed, key))
