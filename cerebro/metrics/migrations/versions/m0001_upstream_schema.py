"""metrics m0001: upstream's metrics schema, verbatim

Upstream (``internal/metrics/schema.go``) applies these statements, all ``IF NOT EXISTS``, and never
versions them. Replaying them unchanged means a database upstream wrote is already at m0001 (it is
stamped, not rebuilt), and a database we create stays readable by upstream. ``daily_summary`` is
created although nothing writes it, for the same reason (its columns carry no defaults: the
spec gives their types only).

Revision ID: m0001
Revises:
"""

from alembic import op

revision = "m0001"
down_revision = None
branch_labels = None
depends_on = None

UPSTREAM_DDL = (
    """CREATE TABLE IF NOT EXISTS turn_metrics (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        turn_number INTEGER NOT NULL,
        timestamp TEXT NOT NULL,
        input_tokens INTEGER DEFAULT 0,
        output_tokens INTEGER DEFAULT 0,
        cache_read_tokens INTEGER DEFAULT 0,
        cache_create_tokens INTEGER DEFAULT 0,
        thinking_chars INTEGER DEFAULT 0,
        thinking_blocks INTEGER DEFAULT 0,
        tool_calls_total INTEGER DEFAULT 0,
        tool_reads INTEGER DEFAULT 0,
        tool_edits INTEGER DEFAULT 0,
        tool_bash INTEGER DEFAULT 0,
        tool_other INTEGER DEFAULT 0,
        cerebro_recalls INTEGER DEFAULT 0,
        cerebro_writes INTEGER DEFAULT 0,
        read_edit_ratio REAL,
        assistant_messages INTEGER DEFAULT 1,
        stop_guard_fired INTEGER DEFAULT 0,
        UNIQUE(session_id, turn_number)
    )""",
    """CREATE TABLE IF NOT EXISTS tool_calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        turn_number INTEGER NOT NULL,
        timestamp TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        file_path TEXT,
        cerebro_op TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS daily_summary (
        date TEXT PRIMARY KEY,
        turn_count INTEGER,
        avg_thinking REAL,
        zero_thinking INTEGER,
        avg_read_edit REAL,
        min_read_edit REAL,
        stop_guard_fires INTEGER,
        total_reads INTEGER,
        total_edits INTEGER,
        cerebro_recalls INTEGER,
        cerebro_writes INTEGER,
        tool_distribution TEXT,
        active_nodes INTEGER,
        total_edges INTEGER,
        nodes_by_type TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS ingest_state (
        file_path TEXT PRIMARY KEY,
        last_offset INTEGER DEFAULT 0,
        updated_at TEXT DEFAULT (datetime('now'))
    )""",
    "CREATE INDEX IF NOT EXISTS idx_turn_metrics_session ON turn_metrics(session_id)",
    "CREATE INDEX IF NOT EXISTS idx_turn_metrics_timestamp ON turn_metrics(timestamp)",
    "CREATE INDEX IF NOT EXISTS idx_turn_metrics_session_turn ON turn_metrics(session_id, turn_number)",
    "CREATE INDEX IF NOT EXISTS idx_tool_calls_session ON tool_calls(session_id, turn_number)",
    "CREATE INDEX IF NOT EXISTS idx_tool_calls_name ON tool_calls(tool_name)",
    "CREATE INDEX IF NOT EXISTS idx_tool_calls_ts ON tool_calls(timestamp)",
)

TABLES = ("turn_metrics", "tool_calls", "daily_summary", "ingest_state")


def upgrade() -> None:
    bind = op.get_bind()
    for statement in UPSTREAM_DDL:
        bind.exec_driver_sql(statement)


def downgrade() -> None:
    bind = op.get_bind()
    for table in TABLES:  # the indexes go with their tables
        bind.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
