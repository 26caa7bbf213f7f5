"""cerebro-py 0002: rebuild the keyword index with Porter stemming

Upstream's ``nodes_fts`` uses FTS5's default ``unicode61`` tokenizer, so "deploys" never matches
"deploy". With ``porter unicode61`` (and English stop words dropped from queries, in code) keyword recall
on LoCoMo's development half rose from R@10 0.559 to 0.630 (ADR 0010). The table keeps upstream's
name and columns, so Go cerebro still reads and writes it. Rows are copied, never recomputed, so the
index holds exactly what it held.

Revision ID: py0002
Revises: py0001
"""

from alembic import op
from cerebro.db.revisions import on_postgresql, rebuild_fts_table

revision = "py0002"
down_revision = "py0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    rebuild_fts_table(op.get_bind(), tokenize="porter unicode61")


def downgrade() -> None:
    if on_postgresql(op.get_bind()):  # built whole by v1 on PostgreSQL (cerebro/db/pg_schema.py)
        return
    rebuild_fts_table(op.get_bind(), tokenize=None)
