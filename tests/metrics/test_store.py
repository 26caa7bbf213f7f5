"""The metrics database: created 0600 at head, upstream's files adopted, too-new files refused, the store API."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cerebro import paths
from cerebro.errors import BrainNotFound, BrainUnreadable, MigrationFailed, SchemaTooNew
from cerebro.metrics import schema
from cerebro.metrics.records import ToolCall, TurnMetrics
from cerebro.metrics.store import MetricsStore, metrics_path, record_stop_guard_decision

REPO = Path(__file__).resolve().parents[2]

# Upstream's metrics schema as spec §1.1 describes it (written here independently of our m0001).
UPSTREAM_DDL = """
CREATE TABLE IF NOT EXISTS turn_metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_number INTEGER NOT NULL, timestamp TEXT NOT NULL,
  input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
  cache_create_tokens INTEGER DEFAULT 0, thinking_chars INTEGER DEFAULT 0, thinking_blocks INTEGER DEFAULT 0,
  tool_calls_total INTEGER DEFAULT 0, tool_reads INTEGER DEFAULT 0, tool_edits INTEGER DEFAULT 0,
  tool_bash INTEGER DEFAULT 0, tool_other INTEGER DEFAULT 0, cerebro_recalls INTEGER DEFAULT 0,
  cerebro_writes INTEGER DEFAULT 0, read_edit_ratio REAL, assistant_messages INTEGER DEFAULT 1,
  stop_guard_fired INTEGER DEFAULT 0, UNIQUE(session_id, turn_number));
CREATE TABLE IF NOT EXISTS tool_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_number INTEGER NOT NULL,
  timestamp TEXT NOT NULL, tool_name TEXT NOT NULL, file_path TEXT, cerebro_op TEXT);
CREATE TABLE IF NOT EXISTS daily_summary (
  date TEXT PRIMARY KEY, turn_count INTEGER, zero_thinking INTEGER, avg_thinking REAL, avg_read_edit REAL,
  min_read_edit REAL, stop_guard_fires INTEGER, total_reads INTEGER, total_edits INTEGER, cerebro_recalls INTEGER,
  cerebro_writes INTEGER, tool_distribution TEXT, active_nodes INTEGER, total_edges INTEGER, nodes_by_type TEXT);
CREATE TABLE IF NOT EXISTS ingest_state (
  file_path TEXT PRIMARY KEY, last_offset INTEGER DEFAULT 0, updated_at TEXT DEFAULT (datetime('now')));
CREATE INDEX IF NOT EXISTS idx_turn_metrics_session ON turn_metrics(session_id);
CREATE INDEX IF NOT EXISTS idx_turn_metrics_timestamp ON turn_metrics(timestamp);
CREATE INDEX IF NOT EXISTS idx_turn_metrics_session_turn ON turn_metrics(session_id, turn_number);
CREATE INDEX IF NOT EXISTS idx_tool_calls_session ON tool_calls(session_id, turn_number);
CREATE INDEX IF NOT EXISTS idx_tool_calls_name ON tool_calls(tool_name);
CREATE INDEX IF NOT EXISTS idx_tool_calls_ts ON tool_calls(timestamp);
"""


def _rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _upstream_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(UPSTREAM_DDL)
    conn.execute(
        "INSERT INTO turn_metrics (session_id, turn_number, timestamp, input_tokens, tool_reads, tool_edits, "
        "tool_calls_total, read_edit_ratio, assistant_messages) "
        "VALUES ('go-session', 1, '2026-04-01T09:00:00Z', 500, 2, 1, 3, 2.0, 1)"
    )
    conn.execute(
        "INSERT INTO tool_calls (session_id, turn_number, timestamp, tool_name) "
        "VALUES ('go-session', 1, '2026-04-01T09:00:01Z', 'Read')"
    )
    conn.execute("INSERT INTO ingest_state (file_path, last_offset) VALUES ('/x/go-session.jsonl', 1234)")
    conn.commit()
    conn.close()


def _turn(session: str, number: int, ts: str, **counts: int) -> TurnMetrics:
    return TurnMetrics(session_id=session, turn_number=number, timestamp=ts, **counts)


# ------------------------------------------------------------------------------------ opening


def test_metrics_path_sits_beside_the_brain(project: Path):
    assert metrics_path(project) == paths.projects_dir() / f"{paths.project_hash(project)}.metrics.sqlite"
    assert metrics_path(project).with_suffix("").with_suffix(".sqlite") == paths.project_brain_path(project)


def test_missing_without_create_names_the_fix(tmp_path: Path):
    missing = tmp_path / "nope.metrics.sqlite"
    with pytest.raises(BrainNotFound) as info:
        MetricsStore.open(missing)
    assert str(info.value) == f"metrics database not found at {missing} — run 'cerebro ingest' first"
    assert not missing.exists()


def test_created_private_and_at_head(project: Path):
    path = metrics_path(project)
    with MetricsStore.open(path, create=True) as store:
        store.save_parse([_turn("s", 1, "2026-01-01T00:00:00Z")], [])
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    for sidecar in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if sidecar.exists():
            assert _mode(sidecar) == 0o600
    assert _rows(path, "SELECT version_num FROM alembic_version") == [(schema.HEAD_REVISION,)]
    tables = {r[0] for r in _rows(path, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"turn_metrics", "tool_calls", "daily_summary", "ingest_state", "stop_guard_events"} <= tables
    assert _rows(path, "PRAGMA journal_mode") == [("wal",)]


def test_upstream_database_is_adopted_with_every_row(tmp_path: Path):
    path = tmp_path / "go.metrics.sqlite"
    _upstream_db(path)
    with MetricsStore.open(path) as store:
        turns = store.recent_turns()
        assert [(t.session_id, t.turn_number, t.input_tokens, t.read_edit_ratio) for t in turns] == [
            ("go-session", 1, 500, 2.0)
        ]
        assert store.tool_distribution() == {"Read": 1}
        assert store.ingest_offset("/x/go-session.jsonl") == 1234
        store.record_stop_guard("go-session", "premature-stopping", "2026-04-01T09:00:30Z")
        assert store.recent_turns()[0].stop_guard_fired == 1
    assert _rows(path, "SELECT version_num FROM alembic_version") == [(schema.HEAD_REVISION,)]
    columns = [r[1] for r in _rows(path, "PRAGMA table_info(ingest_state)")]
    assert columns == ["file_path", "last_offset", "updated_at", "malformed_lines"]


def test_too_new_revision_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "future.metrics.sqlite"
    _upstream_db(path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)")
    conn.execute("INSERT INTO alembic_version VALUES ('m0099')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew) as info:
        MetricsStore.open(path)
    message = str(info.value)
    assert "\n" not in message and "m0099" in message and "newer cerebro" in message
    assert path.read_bytes() == before


def test_a_foreign_sqlite_file_and_a_non_database_are_refused(tmp_path: Path):
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    with pytest.raises(MigrationFailed, match="not a cerebro metrics database"):
        MetricsStore.open(other)
    junk = tmp_path / "junk.metrics.sqlite"
    junk.write_bytes(b"definitely not sqlite" * 100)
    with pytest.raises(BrainUnreadable):
        MetricsStore.open(junk)


def test_known_revisions_match_the_script_directory():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config(str(REPO / "alembic.ini"), ini_section="metrics")
    script = ScriptDirectory.from_config(config)
    walked = [rev.revision for rev in script.walk_revisions("base", "heads")]
    assert list(reversed(walked)) == list(schema.KNOWN_REVISIONS)
    assert script.get_heads() == [schema.HEAD_REVISION]
    assert Path(script.dir).resolve() == schema.script_location().resolve()


def test_opening_at_head_imports_neither_sqlalchemy_nor_alembic(project: Path, isolated_home: Path):
    record_stop_guard_decision(project, "s", "scope-reduction")  # creates and upgrades it (imports alembic)
    code = (
        "import sys; from cerebro.metrics.store import record_stop_guard_decision, MetricsStore, metrics_path; "
        f"record_stop_guard_decision({str(project)!r}, 's', 'premature-stopping'); "
        f"s = MetricsStore.open(metrics_path({str(project)!r})); print(len(s.stop_guard_events())); s.close(); "
        "print([m for m in ('sqlalchemy', 'alembic', 'sqlmodel') if m in sys.modules])"
    )
    env = {**os.environ, "CEREBRO_HOME": str(isolated_home)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=REPO
    ).stdout
    assert out.split("\n")[:2] == ["2", "[]"]


def test_alembic_command_line_upgrades_and_adopts(tmp_path: Path):
    fresh, adopted = tmp_path / "fresh.metrics.sqlite", tmp_path / "go.metrics.sqlite"
    _upstream_db(adopted)
    alembic = [sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini"), "-n", "metrics"]
    for db in (fresh, adopted):
        subprocess.run([*alembic, "-x", f"db={db}", "upgrade", "head"], check=True, capture_output=True, cwd=REPO)
        assert _rows(db, "SELECT version_num FROM alembic_version") == [(schema.HEAD_REVISION,)]
    assert _rows(adopted, "SELECT session_id, input_tokens FROM turn_metrics") == [("go-session", 500)]
    subprocess.run([*alembic, "-x", f"db={fresh}", "downgrade", "m0001"], check=True, capture_output=True, cwd=REPO)
    assert "stop_guard_events" not in {r[0] for r in _rows(fresh, "SELECT name FROM sqlite_master")}
    subprocess.run([*alembic, "-x", f"db={fresh}", "downgrade", "base"], check=True, capture_output=True, cwd=REPO)
    assert {r[0] for r in _rows(fresh, "SELECT name FROM sqlite_master WHERE type='table'")} <= {
        "alembic_version",
        "sqlite_sequence",
    }
    with MetricsStore.open(fresh) as store:  # back to head from base
        assert store.recent_turns() == []


# ------------------------------------------------------------------------------------ API


@pytest.fixture
def store(tmp_path: Path):
    with MetricsStore.open(tmp_path / "m.metrics.sqlite", create=True) as opened:
        yield opened


def test_save_parse_replaces_a_sessions_rows_in_place(store: MetricsStore):
    turns = [
        _turn("a", 1, "2026-01-01T10:00:00Z", tool_reads=1),
        _turn("a", 2, "2026-01-01T10:05:00Z"),
        _turn("a", 3, "2026-01-01T10:09:00Z"),
    ]
    calls = [
        ToolCall("a", 1, "2026-01-01T10:00:01Z", "Read", "/f"),
        ToolCall("a", 2, "2026-01-01T10:05:01Z", "Bash", cerebro_op="add"),
    ]
    store.save_parse(turns, calls, file="/t/a.jsonl", size=100, malformed_lines=2)
    ids = [t.id for t in store.recent_turns()]
    # a rewritten transcript: turn 1 changed, turn 3 gone
    store.save_parse(
        [_turn("a", 1, "2026-01-01T10:00:00Z", tool_reads=4), _turn("a", 2, "2026-01-01T10:05:00Z")],
        calls[:1],
        file="/t/a.jsonl",
        size=90,
    )
    again = store.recent_turns()
    assert [(t.turn_number, t.tool_reads) for t in again] == [(1, 4), (2, 0)]
    assert [t.id for t in again] == ids[:2]  # upsert: ids kept
    assert store.tool_distribution() == {"Read": 1}
    assert store.ingest_offset("/t/a.jsonl") == 90
    assert store.ingest_offset("/t/never.jsonl") == 0


def test_reads(store: MetricsStore):
    store.save_parse(
        [
            _turn("a", 1, "2026-01-01T10:00:00Z"),
            _turn("a", 2, "2026-01-01T12:00:00Z"),
            _turn("b", 1, "2026-01-01T11:00:00Z"),
        ],
        [
            ToolCall("a", 1, "2026-01-01T10:00:02Z", "Bash"),
            ToolCall("a", 1, "2026-01-01T10:00:01Z", "Read"),
            ToolCall("a", 2, "2026-01-01T12:00:01Z", "Bash"),
            ToolCall("b", 1, "2026-01-01T11:00:01Z", "Edit"),
        ],
    )
    assert [(t.session_id, t.turn_number) for t in store.recent_turns()] == [("a", 1), ("b", 1), ("a", 2)]
    assert [(t.session_id, t.turn_number) for t in store.recent_turns(2)] == [
        ("b", 1),
        ("a", 2),
    ]  # newest 2, oldest first
    assert [t.turn_number for t in store.recent_turns(session_id="a")] == [1, 2]
    assert store.tool_distribution() == {"Bash": 2, "Edit": 1, "Read": 1}
    assert store.tool_distribution("b") == {"Edit": 1}
    assert [c.tool_name for c in store.tool_calls_for_turn("a", 1)] == ["Read", "Bash"]  # by timestamp
    turn = store.recent_turns(1)[0]
    assert turn.to_dict()["id"] == turn.id and turn.read_edit_ratio is None


def test_a_new_parse_replaces_the_sessions_tool_calls(store: MetricsStore):
    turn = _turn("a", 1, "2026-01-01T10:00:00Z")
    store.save_parse([turn], [ToolCall("a", 1, "2026-01-01T10:00:01Z", "Glob")])
    store.save_parse([turn], [ToolCall("a", 1, "2026-01-01T10:00:01Z", "Grep")])
    assert store.tool_distribution() == {"Grep": 1}
    store.set_ingest_offset("/f.jsonl", 42, malformed_lines=3)
    assert store.ingest_offset("/f.jsonl") == 42


def test_a_failed_write_leaves_nothing(store: MetricsStore):
    store.save_parse([_turn("a", 1, "2026-01-01T10:00:00Z")], [])
    bad_call = ToolCall("a", 1, "2026-01-01T10:00:01Z", None)  # type: ignore[arg-type]  # tool_name NOT NULL
    with pytest.raises(Exception, match="NOT NULL"):
        store.save_parse([_turn("a", 1, "2026-01-01T10:00:00Z", tool_reads=9)], [bad_call], file="/f", size=1)
    assert store.recent_turns()[0].tool_reads == 0
    assert store.ingest_offset("/f") == 0


def test_stop_guard_attribution_by_time_range(store: MetricsStore):
    store.save_parse(
        [
            _turn("s", 1, "2026-05-01T10:00:00Z"),
            _turn("s", 2, "2026-05-01T10:10:00.500Z"),
            _turn("s", 3, "2026-05-01T10:20:00Z"),
            _turn("other", 1, "2026-05-01T10:00:00Z"),
        ],
        [],
    )
    store.record_stop_guard("s", "premature-stopping", "2026-05-01T09:59:59Z")  # before the first turn: nowhere
    store.record_stop_guard("s", "permission-seeking", "2026-05-01 10:00:00")  # storage layout, = turn 1's start
    store.record_stop_guard("s", "scope-reduction", "2026-05-01T12:10:00.400+02:00")  # 10:10:00.4Z: still turn 1
    store.record_stop_guard("s", "premature-stopping", "2026-05-01T10:10:00.500000Z")  # = turn 2's start
    store.record_stop_guard("s", "premature-stopping", "2026-05-02T08:00:00Z")  # the last turn is open-ended
    store.record_stop_guard("s", "premature-stopping", "2026-05-03T08:00:00Z")
    fired = {(t.session_id, t.turn_number): t.stop_guard_fired for t in store.recent_turns()}
    assert fired == {("s", 1): 2, ("s", 2): 1, ("s", 3): 2, ("other", 1): 0}
    assert store.stop_guard_events("s")[1] == ("s", "2026-05-01T10:00:00.000000Z", "permission-seeking")
    # re-saving the parse (whose turns say 0) keeps the attribution
    store.save_parse(
        [
            _turn("s", 1, "2026-05-01T10:00:00Z"),
            _turn("s", 2, "2026-05-01T10:10:00.500Z"),
            _turn("s", 3, "2026-05-01T10:20:00Z"),
        ],
        [],
    )
    assert [t.stop_guard_fired for t in store.recent_turns(session_id="s")] == [2, 1, 2]


def test_record_stop_guard_decision_creates_the_database(project: Path):
    record_stop_guard_decision(project, "sess", "premature-stopping", at="2026-05-01T10:00:00Z")
    path = metrics_path(project)
    assert _mode(path) == 0o600
    assert _rows(path, "SELECT session_id, at, category FROM stop_guard_events") == [
        ("sess", "2026-05-01T10:00:00.000000Z", "premature-stopping")
    ]


def test_record_stop_guard_decision_defaults_to_the_clock(project: Path):
    from datetime import UTC, datetime

    from cerebro import clock

    clock.set_now(datetime(2026, 6, 1, 8, 30, tzinfo=UTC))
    record_stop_guard_decision(project, "sess", "scope-reduction")
    assert _rows(metrics_path(project), "SELECT at FROM stop_guard_events") == [("2026-06-01T08:30:00.000000Z",)]


def test_an_adopted_world_readable_file_is_made_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "go.metrics.sqlite"
    _upstream_db(path)
    os.chmod(path, 0o644)
    with MetricsStore.open(path):
        pass
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
