"""metrics m0002: stop-guard decisions, and malformed lines per ingested file

- ``stop_guard_events``: one row per decision the stop-guard hook makes (which session, when, which
  category). Ingest attributes them to turns, so ``turn_metrics.stop_guard_fired`` is real; upstream
  declares the column but nothing ever fills it.
- ``ingest_state.malformed_lines``: how many lines of the file were not JSON objects at its last parse.

Both are additions only: upstream's code ignores the new table and column, so it still reads our files.

Revision ID: m0002
Revises: m0001
"""

from alembic import op
from cerebro.db.revisions import column_exists as _has_column

revision = "m0002"
down_revision = "m0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql(
        """CREATE TABLE IF NOT EXISTS stop_guard_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            at TEXT NOT NULL,
            category TEXT NOT NULL
        )"""
    )
    bind.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS idx_stop_guard_events_session ON stop_guard_events(session_id, at)"
    )
    if not _has_column(bind, "ingest_state", "malformed_lines"):
        bind.exec_driver_sql("ALTER TABLE ingest_state ADD COLUMN malformed_lines INTEGER DEFAULT 0")


def downgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql("DROP TABLE IF EXISTS stop_guard_events")
    if _has_column(bind, "ingest_state", "malformed_lines"):
        bind.exec_driver_sql("ALTER TABLE ingest_state DROP COLUMN malformed_lines")
