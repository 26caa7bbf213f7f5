"""metrics m0003: which transcript each turn was read from

A session's records can sit in more than one transcript: a resumed session starts a new file that
repeats earlier history. ``turn_metrics.transcript`` names the file a session's rows came from, so that
ingest lets the fullest file speak for a session instead of two files overwriting each other's turns
(ADR 0014). Rows adopted from upstream have none; any file may replace them.

Revision ID: m0003
Revises: m0002
"""

from alembic import op
from cerebro.db.revisions import column_exists as _has_column

revision = "m0003"
down_revision = "m0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if not _has_column(bind, "turn_metrics", "transcript"):
        bind.exec_driver_sql("ALTER TABLE turn_metrics ADD COLUMN transcript TEXT")


def downgrade() -> None:
    bind = op.get_bind()
    if _has_column(bind, "turn_metrics", "transcript"):
        bind.exec_driver_sql("ALTER TABLE turn_metrics DROP COLUMN transcript")
