"""cerebro-py 0003: on a team brain, index memories by writing order

Recall's adjacency step (ADR 0033) asks, for each of its top results, which memory of the project was written just
before and just after it (``max(rowid) < r``, ``min(rowid) > r``). A brain file answers from the table's own key;
PostgreSQL's ``rowid`` is an identity column with no index, so each of the ten seeks read the whole project (~50 ms
a recall at 10,000 memories; with this index ~2 ms). Nothing to do on SQLite: the revision exists so that the two
engines share one history.

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
        op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_writing_order ON nodes (project, rowid)")


def downgrade() -> None:
    if on_postgresql(op.get_bind()):
        op.execute("DROP INDEX IF EXISTS idx_nodes_writing_order")
