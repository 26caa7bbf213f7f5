"""No path from data to execution (issue 17, ADR 0026): a reranker command runs only when this machine's user set
it for this brain. A brain that arrives with one — a SQL dump loaded with sqlite3 as the README says, a sqlite
export, a backup, a command changed behind cerebro's back — keeps it, and recall does not run it."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from cerebro import Brain, paths, trust
from tests.retrieval.test_rerank import GOOD, PY, QUERY, TEXTS, calls, script

# Settings changed behind cerebro's back and approvals kept against the brain's file: the file's own cases.
pytestmark = pytest.mark.file_only


@pytest.fixture
def reranked(fake_brain: Brain, tmp_path: Path) -> tuple[Brain, str, Path]:
    """A brain whose user set a reranker that records each call; it runs (approved here)."""
    for text in TEXTS:
        fake_brain.add(text)
    record = tmp_path / "record.jsonl"
    command = f"{PY} {script(tmp_path, 'good', GOOD)} {record}"
    fake_brain.config_set("rerank_enabled", "true")
    fake_brain.config_set("rerank_command", command)
    fake_brain.config_set("rerank_fusion", "reorder")
    assert fake_brain.recall(QUERY).notices == []
    assert len(calls(record)) == 1  # set by the user here: approved, runs
    record.unlink()
    return fake_brain, command, record


def _refused(brain: Brain, record: Path) -> None:
    result = brain.recall(QUERY)
    assert calls(record) == [], "a reranker that came with the brain ran"
    assert len(result.results) == len(TEXTS)
    (notice,) = result.notices
    assert "not approved on this machine" in notice and "cerebro config set rerank_command" in notice


def _set_config(path: Path, key: str, value: str) -> None:
    # The brain's own SQLite (sqlean), as another cerebro process would write: two SQLite libraries in one
    # process do not share their locks and WAL index, so the stdlib's write could go unseen by the open brain.
    import sqlean.dbapi2 as sqlean  # here, not at import: the suite's first SQLite is cerebro's (tests/conftest.py)

    conn = sqlean.connect(str(path))
    conn.execute("INSERT OR REPLACE INTO schema_meta (key, value) VALUES (?, ?)", (f"config.{key}", value))
    conn.commit()
    conn.close()


def test_no_export_carries_the_reranker(cli, reranked) -> None:
    for fmt in ("json", "jsonl", "sql"):
        dump = cli("export", "--format", fmt).stdout
        assert "rerank_command" not in dump and "rerank_enabled" not in dump, fmt
        assert "rerank_fusion" in dump  # other settings travel as before


def test_a_sql_dump_that_brings_a_reranker_loaded_with_sqlite3_does_not_run_it(cli, reranked, tmp_path) -> None:
    """An old cerebro's dump, or a hand-made one, with the settings added; loaded as the README says."""
    _brain, command, record = reranked
    dump = cli("export", "--format", "sql").stdout
    dump += f"INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('config.rerank_command', '{command}');\n"
    dump += "INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('config.rerank_enabled', 'true');\n"
    target = tmp_path / "restored.sqlite"
    Brain.init(target, embed_provider="fake")
    conn = sqlite3.connect(target)  # the stdlib's sqlite3, as the README's `sqlite3 brain.sqlite < dump.sql`
    conn.executescript(dump)
    conn.close()
    with Brain.open(target) as restored:
        assert restored.config_value("rerank_enabled") is True  # the setting arrived...
        _refused(restored, record)  # ...and does nothing


def test_a_backup_does_not_run_the_reranker_until_approved(cli, reranked, tmp_path) -> None:
    """A backup is the user's own copy, settings and all (a restore brings them back): approval keeps it inert."""
    brain, command, record = reranked
    brain.config_set("redact_secrets", "false")
    copy = tmp_path / "copy.sqlite"
    assert cli("backup", "-o", str(copy)).exit_code == 0
    with Brain.open(copy) as copied:
        assert copied.config_value("redact_secrets") is False
        _refused(copied, record)
        copied.config_set("rerank_command", command)  # the user sets it on this brain: approved
        assert copied.recall(QUERY).notices == [] and len(calls(record)) == 1


def test_a_sqlite_export_carries_none_of_the_local_settings(cli, reranked, tmp_path) -> None:
    """As every export (ADR 0027): a received copy must not arrive with redaction off — nothing would stand behind
    that setting, where approval stands behind the reranker's. The other settings travel."""
    brain, _, record = reranked
    brain.config_set("redact_secrets", "false")
    copy = tmp_path / "copy.sqlite"
    assert cli("export", "--format", "sqlite", "-o", str(copy)).exit_code == 0
    with sqlite3.connect(copy) as conn:
        keys = {row[0] for row in conn.execute("SELECT key FROM schema_meta WHERE key LIKE 'config.%'")}
    assert keys == {"config.rerank_fusion"}
    with Brain.open(copy) as copied:
        assert copied.config_value("redact_secrets") is True
        assert copied.recall(QUERY).notices == [] and calls(record) == []  # no reranker at all


def test_a_command_changed_behind_cerebros_back_does_not_run(reranked, tmp_path) -> None:
    brain, command, record = reranked
    other = tmp_path / "other.jsonl"
    _set_config(brain.path, "rerank_command", f"{PY} {script(tmp_path, 'good', GOOD)} {other}")
    _refused(brain, other)
    _set_config(brain.path, "rerank_command", command)  # the approved one again
    assert brain.recall(QUERY).notices == [] and len(calls(record)) == 1


def test_a_received_command_is_named_escaped_never_sent_raw_to_the_terminal(reranked) -> None:
    """``config set`` refuses control characters; a brain received with them (written behind cerebro's back) has its
    command named escaped in the notice: an escape sequence would retitle or clear the user's terminal."""
    brain, _, _ = reranked
    _set_config(brain.path, "rerank_command", "\x1b]0;owned\x07\x1b[2J")
    (notice,) = brain.recall(QUERY).notices
    assert "\x1b" not in notice and "\x07" not in notice
    assert notice.startswith('reranker "command:\\u001b]0;owned\\u0007\\u001b[2J" came with this brain')


def test_the_approvals_file_is_private_and_holds_no_command(reranked) -> None:
    _brain, command, _record = reranked
    path = paths.home() / trust.FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert command not in text and PY not in text  # digests only
    assert len(json.loads(text)) == 1


def test_an_unreadable_approvals_file_approves_nothing(reranked) -> None:
    brain, command, record = reranked
    (paths.home() / trust.FILE_NAME).write_text("{not json")
    assert not trust.approved(brain.path, command)
    _refused(brain, record)
