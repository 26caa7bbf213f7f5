"""upstream schema v3: the nodes_fts keyword lane (FTS5), backfilled with active nodes

A standalone FTS5 table (node ids are text, so no external content), default ``unicode61`` tokenizer,
kept in sync by application code — no triggers, as upstream.

Revision ID: v3
Revises: v2
"""

from alembic import op
from cerebro.db.revisions import ensure_fts_table, on_postgresql, set_schema_version

revision = "v3"
down_revision = "v2"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    ensure_fts_table(bind)
    set_schema_version(bind, 3)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    op.execute("DROP TABLE IF EXISTS nodes_fts")
    set_schema_version(op.get_bind(), 2)
