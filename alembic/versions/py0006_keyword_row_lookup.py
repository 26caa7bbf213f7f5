"""cerebro-py 0006: find a memory's keyword row through an index

FTS5 cannot search ``nodes_fts``'s ``node_id`` column (UNINDEXED, as upstream made it): every delete of a memory's
keyword row (an update, a supersession, a forget, a consolidation, each memory gc archives, each memory an import
replaces) read the whole keyword index — 1.2 ms at 10,000 memories, 12 ms at 100,000, and an import of 6,000
records held the write lock for 10.5 s. The rows FTS5 keeps live in an ordinary table of its own,
``nodes_fts_content`` (``c0`` is the memory id); an index on that column lets the delete find its rows
(``cerebro.store.fts.unindex``, ADR 0066). Upstream Go cerebro's statements work as before on a brain with it, and
SQLite drops it with the keyword index if a tool drops that. A team brain's keyword lane is a column of ``nodes``
(nothing to do there).

Revision ID: py0006
Revises: py0005
"""

from alembic import op
from cerebro.db.revisions import on_postgresql, table_exists

revision = "py0006"
down_revision = "py0005"
branch_labels = None
depends_on = None

MARKER = True  # an index: no table or row of the brain changes, so an upgrade across it takes no backup


def upgrade() -> None:
    bind = op.get_bind()
    if on_postgresql(bind) or not table_exists(bind, "nodes_fts_content"):
        return  # no keyword index here (a sql dump's brain until its first open): cerebro.store.fts.rebuild makes it
    op.execute("CREATE INDEX IF NOT EXISTS idx_nodes_fts_node ON nodes_fts_content (c0)")


def downgrade() -> None:
    if on_postgresql(op.get_bind()):
        return
    op.execute("DROP INDEX IF EXISTS idx_nodes_fts_node")
