"""upstream schema v7: inbox_candidates (quarantined memory candidates)

Revision ID: v7
Revises: v6
"""

from alembic import op
from cerebro.db.revisions import on_postgresql, set_schema_version

revision = "v7"
down_revision = "v6"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    op.execute(
        """
        CREATE TABLE IF NOT EXISTS inbox_candidates (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL CHECK (type IN ('episode','concept','procedure','reflection')),
            subtype TEXT,
            content TEXT NOT NULL,
            metadata JSON,
            importance REAL DEFAULT 0.5,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
            origin_actor TEXT,
            origin_channel TEXT,
            origin_session TEXT,
            origin_host TEXT
        )
        """
    )
    set_schema_version(op.get_bind(), 7)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    op.execute("DROP TABLE IF EXISTS inbox_candidates")
    set_schema_version(op.get_bind(), 6)
