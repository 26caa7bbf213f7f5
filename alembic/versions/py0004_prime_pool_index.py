"""cerebro-py 0004: index the memories of a type by importance (session-start prime's pools)

Every session start reads, for each type, its active memories by importance (``cerebro.store.reads.prime_pool``).
Through ``idx_nodes_type_status`` that read sorted all of a type's active memories for each pool: ~20 ms a prime
at 10,000 memories, ~145 ms of 164 at 100,000 (issue 18). Ordered by (type, status, importance, created_at) — then
the rowid, which every SQLite index carries — each pool is a seek and a short walk back. The new index starts with
(type, status), so it also serves every read ``idx_nodes_type_status`` and upstream's ``idx_nodes_type`` served,
and replaces them: the brain file grows by ~9 bytes a memory instead of ~53 (ADR 0037).

The episode and recent pools need no index of their own: they walk the writing order (``idx_nodes_writing_order``,
py0003) and ``idx_nodes_updated_at`` back from now, so they read a week's (two days') memories at most.

Revision ID: py0004
Revises: py0003
"""

from alembic import op
from cerebro.db.revisions import on_postgresql

revision = "py0004"
down_revision = "py0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):
        op.execute(
            "CREATE INDEX IF NOT EXISTS idx_nodes_type_status_importance "
            "ON nodes (project, type, status, importance, created_at, rowid)"
        )
    else:
        op.execute(
            "CREATE INDEX IF NOT EXISTS idx_nodes_type_status_importance "
            "ON nodes (type, status, importance, created_at)"
        )
        op.execute("DROP INDEX IF EXISTS idx_nodes_type")  # upstream's; a team brain never had it
    op.execute("DROP INDEX IF EXISTS idx_nodes_type_status")


def downgrade() -> None:
    if on_postgresql(op.get_bind()):
        op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_type_status ON nodes (project, type, status)")
    else:
        op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_type ON nodes (type)")
        op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_type_status ON nodes (type, status)")
    op.execute("DROP INDEX IF EXISTS idx_nodes_type_status_importance")
