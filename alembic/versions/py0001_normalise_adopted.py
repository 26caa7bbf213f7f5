"""cerebro-py 0001: normalise timestamps to the storage layout; heal a missing keyword index

Brains written by Go cerebro can hold RFC 3339 timestamps (legacy paths, imports) and, when Go was built
without FTS5, no ``nodes_fts`` at all even at v3+. Upstream compares timestamps as strings, so mixed
layouts break ordering and validity windows; every timestamp is re-written as ``YYYY-MM-DD HH:MM:SS`` UTC
and the keyword lane is created and backfilled if absent. Edges left pointing at deleted nodes (Go deletes
with foreign keys off) are removed. Every step is idempotent. ``schema_version``
stays 7 so Go cerebro still opens the brain (our ids never collide with upstream's numbers).

Revision ID: py0001
Revises: v7
"""

from alembic import op
from cerebro.db.revisions import ensure_fts_table, normalise_timestamps, on_postgresql, remove_dangling_edges

revision = "py0001"
down_revision = "v7"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    bind = op.get_bind()
    normalise_timestamps(bind)
    remove_dangling_edges(bind)
    ensure_fts_table(bind)


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    # Normalised timestamps are valid at every version, and v3 owns nodes_fts: nothing to undo.
