"""upstream schema v6: origin identity columns, the relation registry, origin boundary

Upstream's v5→v6 step also creates ``inbox_candidates`` (a quirk added later); we keep the table in v7
where it belongs, and v7 uses IF NOT EXISTS so brains that Go upgraded either way converge.

Revision ID: v6
Revises: v5
"""

from alembic import op
from cerebro.db.revisions import (
    add_column_if_absent,
    drop_column_if_present,
    on_postgresql,
    set_schema_version,
    stamp_boundary,
)
from cerebro.values import BUILT_IN_RELATIONS

revision = "v6"
down_revision = "v5"
branch_labels = None
depends_on = None

ORIGIN_COLUMNS = ("origin_actor", "origin_channel", "origin_session", "origin_host")
SEED_RELATIONS = BUILT_IN_RELATIONS


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    for column in ORIGIN_COLUMNS:
        add_column_if_absent(bind, "nodes", column, "TEXT")
    op.execute(
        """
        CREATE TABLE IF NOT EXISTS relations (
            name TEXT PRIMARY KEY,
            traversal_class TEXT,
            created_at DATETIME DEFAULT CURRENT_TIMESTAMP
        )
        """
    )
    from cerebro import clock

    now = clock.now_text()
    for name in SEED_RELATIONS:
        bind.exec_driver_sql(
            "INSERT OR IGNORE INTO relations (name, traversal_class, created_at) VALUES (?, NULL, ?)",
            (name, now),
        )
    op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_origin_actor ON nodes(origin_actor)")
    op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_origin_host ON nodes(origin_host)")
    stamp_boundary(bind, "origin_convention_since")
    set_schema_version(bind, 6)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    op.execute("DROP INDEX IF EXISTS idx_nodes_origin_actor")
    op.execute("DROP INDEX IF EXISTS idx_nodes_origin_host")
    for column in ORIGIN_COLUMNS:
        drop_column_if_present(bind, "nodes", column)
    op.execute("DROP TABLE IF EXISTS relations")
    # origin_convention_since stays, like the provenance boundary: never re-stamped.
    set_schema_version(bind, 5)
