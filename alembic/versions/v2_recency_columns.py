"""upstream schema v2: updated_at and last_surfaced (recency-aware prime, upstream ADR-007)

Revision ID: v2
Revises: v1
"""

from alembic import op
from cerebro.db.revisions import add_column_if_absent, drop_column_if_present, on_postgresql, set_schema_version

revision = "v2"
down_revision = "v1"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    add_column_if_absent(bind, "nodes", "updated_at", "DATETIME")
    add_column_if_absent(bind, "nodes", "last_surfaced", "DATETIME")
    op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_updated_at ON nodes(updated_at)")
    op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_last_surfaced ON nodes(last_surfaced)")
    set_schema_version(bind, 2)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    op.execute("DROP INDEX IF EXISTS idx_nodes_updated_at")
    op.execute("DROP INDEX IF EXISTS idx_nodes_last_surfaced")
    drop_column_if_present(bind, "nodes", "updated_at")
    drop_column_if_present(bind, "nodes", "last_surfaced")
    set_schema_version(bind, 1)
