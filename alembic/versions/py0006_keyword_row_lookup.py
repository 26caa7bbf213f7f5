"""cerebro-py 0006: each keyword row at its memory's rowid

FTS5 cannot search ``nodes_fts``'s ``node_id`` column (UNINDEXED, as upstream made it): every delete of a memory's
keyword row (an update, a supersession, a forget, a consolidation, each memory gc archives, each memory an import
replaces) read the whole keyword index — 1.2 ms at 10,000 memories, 12 ms at 100,000, and an import of 6,000
records held the write lock for 10.5 s. From this revision a memory's keyword row has its memory's rowid (as its
vector has, ADR 0029), so the delete is a lookup by rowid (``cerebro.store.fts``, ADR 0066). This revision rebuilds
the keyword index so: the table is made again as it was (its tokenizer kept), then filled from the active memories
at their rowids — which also drops rows that had drifted from them. Upstream Go cerebro reads and writes the table
as before (rows it adds get other rowids, and are found by id).

An index on FTS5's content table (``c0``) would have served the same lookup without the rebuild, at ~50 bytes a
memory (issue 18 bounds the brain file at 1.3 KB a memory).

Revision ID: py0006
Revises: py0005
"""

from alembic import op
from cerebro.db.revisions import on_postgresql

revision = "py0006"
down_revision = "py0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if on_postgresql(bind):
        return  # a team brain's keyword lane is a column of nodes (ADR 0030)
    found = bind.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'nodes_fts'").fetchone()
    if found is None or not found[0]:
        return  # no keyword index here (a sql dump's brain until its first open): cerebro.store.fts.rebuild makes it
    own = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'nodes_fts_content'"
    if bind.exec_driver_sql(own).fetchone() is None:
        return  # an index keeping its text elsewhere (external content): rows at other rowids would read other text
    # Made again rather than emptied: FTS5 deletes row by row, reading each one's text (seconds at 100,000).
    bind.exec_driver_sql("DROP TABLE nodes_fts")
    bind.exec_driver_sql(found[0])
    bind.exec_driver_sql(
        "INSERT INTO nodes_fts (rowid, node_id, content, subtype) "
        "SELECT rowid, id, content, COALESCE(subtype, '') FROM nodes WHERE status = 'active'"
    )


def downgrade() -> None:
    pass  # rows at their memories' rowids are rows as any cerebro reads them
