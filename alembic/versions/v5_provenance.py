"""upstream schema v5: provenance_root and the provenance legacy boundary

``provenance_convention_since`` is stamped with the migration instant *inside this migration's
transaction*, with INSERT OR IGNORE so it is never re-stamped. The downgrade keeps it: a brain taken down
and up again keeps its original boundary, so nodes written in between are not mistaken for legacy ones.

Revision ID: v5
Revises: v4
"""

from alembic import op
from cerebro.db.revisions import (
    add_column_if_absent,
    drop_column_if_present,
    on_postgresql,
    set_schema_version,
    stamp_boundary,
)

revision = "v5"
down_revision = "v4"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    add_column_if_absent(bind, "nodes", "provenance_root", "INTEGER NOT NULL DEFAULT 0")
    stamp_boundary(bind, "provenance_convention_since")
    set_schema_version(bind, 5)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    drop_column_if_present(bind, "nodes", "provenance_root")
    set_schema_version(bind, 4)
