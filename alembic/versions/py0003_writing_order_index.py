"""cerebro-py 0003: index memories by writing order

Recall's adjacency step (ADR 0033) asks, for each of its top results, which memory was written just before and just
after it: ordered by ``created_at``, then ``rowid`` (the order of writing within one second). Not by ``rowid``
alone: an import or a team brain's sync inserts memories in another order (by id), keeping their ``created_at``.
Without this index each of the ten seeks read every memory (on a team brain ~50 ms a recall at 10,000 memories;
~2 ms with it). On SQLite every index ends with the rowid, so ``created_at`` alone is the writing order's index.

Revision ID: py0003
Revises: py0002
"""

from alembic import op
from cerebro.db.revisions import on_postgresql

revision = "py0003"
down_revision = "py0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):
        op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_writing_order ON nodes (project, created_at, rowid)")
    else:
        op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_writing_order ON nodes (created_at)")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS idx_nodes_writing_order")
