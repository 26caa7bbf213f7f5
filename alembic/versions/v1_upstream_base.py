"""upstream schema v1: nodes, edges, archive, schema_meta

Replays Go cerebro's first schema (spec §1 without the items tagged v2…v7). ``IF NOT EXISTS`` everywhere,
as upstream, so a brain adopted part-way is never broken by a replay.

Revision ID: v1
Revises:
"""

from alembic import op
from cerebro.db import pg_schema
from cerebro.db.revisions import on_postgresql, set_schema_version

revision = "v1"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # a team database: the whole schema, with its project scope
        pg_schema.create(op.get_bind())
        return
    op.execute("CREATE TABLE IF NOT EXISTS schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    op.execute(
        """
        CREATE TABLE IF NOT EXISTS nodes (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL CHECK (type IN ('episode','concept','procedure','reflection')),
            subtype TEXT,
            content TEXT NOT NULL,
            metadata JSON,
            importance REAL DEFAULT 0.5 CHECK (importance BETWEEN 0.0 AND 1.0),
            decay_rate REAL NOT NULL,
            access_count INTEGER DEFAULT 0,
            times_reinforced INTEGER DEFAULT 0,
            status TEXT DEFAULT 'active' CHECK (status IN ('active','consolidated','superseded','archived')),
            embedding_model TEXT NOT NULL DEFAULT '',
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
            last_accessed DATETIME DEFAULT CURRENT_TIMESTAMP,
            last_reinforced DATETIME
        )
        """
    )
    op.execute(
        """
        CREATE TABLE IF NOT EXISTS edges (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            source_id TEXT NOT NULL,
            target_id TEXT NOT NULL,
            relation TEXT NOT NULL,
            weight REAL DEFAULT 1.0,
            metadata JSON,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
            FOREIGN KEY (source_id) REFERENCES nodes(id) ON DELETE CASCADE,
            FOREIGN KEY (target_id) REFERENCES nodes(id) ON DELETE CASCADE,
            UNIQUE (source_id, target_id, relation)
        )
        """
    )
    op.execute(
        """
        CREATE TABLE IF NOT EXISTS nodes_archive (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL,
            subtype TEXT,
            content TEXT NOT NULL,
            metadata JSON,
            importance REAL,
            status TEXT,
            archive_reason TEXT CHECK (archive_reason IN ('decayed','superseded','redundant','capacity')),
            original_created_at DATETIME,
            archived_at DATETIME DEFAULT CURRENT_TIMESTAMP
        )
        """
    )
    for statement in (
        "CREATE INDEX IF NOT EXISTS idx_nodes_type ON nodes(type)",
        "CREATE INDEX IF NOT EXISTS idx_nodes_status ON nodes(status)",
        "CREATE INDEX IF NOT EXISTS idx_nodes_type_status ON nodes(type, status)",
        "CREATE INDEX IF NOT EXISTS idx_nodes_importance ON nodes(importance DESC)",
        "CREATE INDEX IF NOT EXISTS idx_nodes_last_accessed ON nodes(last_accessed)",
        "CREATE INDEX IF NOT EXISTS idx_edges_source ON edges(source_id)",
        "CREATE INDEX IF NOT EXISTS idx_edges_target ON edges(target_id)",
        "CREATE INDEX IF NOT EXISTS idx_edges_relation ON edges(relation)",
    ):
        op.execute(statement)
    set_schema_version(op.get_bind(), 1)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):
        pg_schema.drop(op.get_bind())
        return
    for table in ("edges", "nodes_archive", "nodes", "schema_meta"):
        op.execute(f"DROP TABLE IF EXISTS {table}")
