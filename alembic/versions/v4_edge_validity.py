"""upstream schema v4: edge validity window [valid_at, invalid_at)

Revision ID: v4
Revises: v3
"""

from alembic import op
from cerebro.db.revisions import add_column_if_absent, drop_column_if_present, on_postgresql, set_schema_version

revision = "v4"
down_revision = "v3"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    add_column_if_absent(bind, "edges", "valid_at", "DATETIME")
    add_column_if_absent(bind, "edges", "invalid_at", "DATETIME")
    set_schema_version(bind, 4)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    drop_column_if_present(bind, "edges", "valid_at")
    drop_column_if_present(bind, "edges", "invalid_at")
    set_schema_version(bind, 3)
