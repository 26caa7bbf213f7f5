"""cerebro ingest: finding transcripts, idempotent re-ingest, grown files, malformed lines, stop-guard
attribution — on real SQLite files, through the library and the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from cerebro.metrics.ingest import (
    claude_code_slug,
    find_session_dir,
    ingest_project,
    session_dir_candidates,
    upstream_slug,
)
from cerebro.metrics.store import MetricsStore, metrics_path, record_stop_guard_decision
from tests.cli.helpers import assert_one_line_error, ok

from .conftest import INTEGRATED, REPRESENTATIVE, SIDECHAIN, SIMPLE


def _all_rows(path: Path) -> dict[str, list[tuple]]:
    """Every row; tool calls without their id (a session's calls are replaced whole, as upstream does,
    while turns are upserted and keep theirs)."""
    conn = sqlite3.connect(path)
    try:
        return {
            "turn_metrics": conn.execute("SELECT * FROM turn_metrics ORDER BY id").fetchall(),
            "tool_calls": conn.execute(
                "SELECT session_id, turn_number, timestamp, tool_name, file_path, cerebro_op "
                "FROM tool_calls ORDER BY id"
            ).fetchall(),
            "stop_guard_events": conn.execute("SELECT * FROM stop_guard_events ORDER BY id").fetchall(),
            "ingest_state": conn.execute(
                "SELECT file_path, last_offset, malformed_lines FROM ingest_state ORDER BY 1"
            ).fetchall(),
        }
    finally:
        conn.close()


def _append(path: Path, *records: dict) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)


# ------------------------------------------------------------------------------------ where transcripts are


def test_slug_rules():
    assert claude_code_slug("/home/u/my.repo_x y") == "-home-u-my-repo-x-y"
    assert upstream_slug("/home/u/my.repo_x y") == "-home-u-my.repo_x y"
    assert upstream_slug("/Users/a/src/proj") == claude_code_slug("/Users/a/src/proj") == "-Users-a-src-proj"


def test_claude_code_rule_first_then_upstream_fallback(claude_home: Path, tmp_path: Path):
    project = tmp_path / "my.repo_x"
    project.mkdir()
    base = claude_home / ".claude" / "projects"
    claude, upstream = base / claude_code_slug(str(project)), base / upstream_slug(str(project))
    assert session_dir_candidates(project)[:2] == [claude, upstream]
    assert find_session_dir(project) == claude  # neither exists: the one named in messages
    upstream.mkdir(parents=True)
    assert find_session_dir(project) == upstream
    claude.mkdir()
    assert find_session_dir(project) == claude


def test_symlinked_project_also_tries_the_resolved_path(claude_home: Path, tmp_path: Path):
    real = tmp_path / "real_project"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    resolved_dir = claude_home / ".claude" / "projects" / claude_code_slug(str(real))
    resolved_dir.mkdir(parents=True)
    assert find_session_dir(link) == resolved_dir


# ------------------------------------------------------------------------------------ ingest (library)


def test_ingest_all_fixtures_then_again_gives_the_same_rows(project: Path, add_transcript):
    for source in (SIMPLE, SIDECHAIN, REPRESENTATIVE, INTEGRATED):
        add_transcript(source)
    report = ingest_project(project)
    # 3 + 2 + 4 turns; the integrated excerpt has no prompt, so no turn and no state row (upstream too skips
    # a file with 0 turns)
    assert (report.files_processed, report.turns_ingested, report.tool_calls, report.malformed_lines) == (3, 9, 10, 0)
    assert report.metrics_path == str(metrics_path(project))
    first = _all_rows(metrics_path(project))
    # every file is remembered, the one with no prompt too (read again only once it grows)
    assert len(first["turn_metrics"]) == 9 and len(first["ingest_state"]) == 4

    unchanged = ingest_project(project)  # every stored offset ≥ size: nothing re-read
    assert (unchanged.files_processed, unchanged.turns_ingested) == (0, 0)
    forced = ingest_project(project, force=True)
    assert (forced.files_processed, forced.turns_ingested, forced.tool_calls) == (3, 9, 10)
    assert _all_rows(metrics_path(project)) == first  # same rows, same ids


def test_a_transcript_reached_another_way_is_the_same_transcript(project: Path, add_transcript, tmp_path: Path):
    """Keyed by the path string, a transcript found through a symlinked folder was read again whole and remembered
    twice (two ingest_state rows for one file)."""
    add_transcript(SIMPLE)
    first = ingest_project(project)
    directory = find_session_dir(project)
    link = tmp_path / "sessions-link"
    link.symlink_to(directory)
    again = ingest_project(project, session_dir=link)
    assert (first.files_processed, again.files_processed, again.turns_ingested) == (1, 0, 0)
    assert _all_rows(metrics_path(project))["ingest_state"] == [
        (str(next(directory.glob("*.jsonl")).resolve()), next(directory.glob("*.jsonl")).stat().st_size, 0)
    ]


def test_a_grown_file_updates_its_last_turn_and_adds_new_ones(project: Path, add_transcript):
    path = add_transcript(SIMPLE, "test-session-1.jsonl")
    ingest_project(project)
    with MetricsStore.open(metrics_path(project)) as store:
        before = store.recent_turns()
    assert [t.turn_number for t in before] == [1, 2, 3]
    _append(
        path,
        # more work in turn 3 (a tool result, then another assistant message)...
        {
            "type": "user",
            "timestamp": "2026-04-23T10:02:06Z",
            "sessionId": "test-session-1",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t6", "content": "ok"}]},
        },
        {
            "type": "assistant",
            "timestamp": "2026-04-23T10:02:09Z",
            "sessionId": "test-session-1",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "/src/x.go"}}],
                "usage": {"input_tokens": 100, "output_tokens": 10},
            },
        },
        # ...and a new prompt: turn 4
        {
            "type": "user",
            "timestamp": "2026-04-23T10:05:00Z",
            "sessionId": "test-session-1",
            "message": {"role": "user", "content": "ship it"},
        },
        {
            "type": "assistant",
            "timestamp": "2026-04-23T10:05:05Z",
            "sessionId": "test-session-1",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "name": "Bash", "input": {"command": "cd /p && cerebro add 'shipped'"}}
                ],
            },
        },
    )
    report = ingest_project(project)
    assert (report.files_processed, report.turns_ingested, report.tool_calls) == (1, 4, 8)
    with MetricsStore.open(metrics_path(project)) as store:
        after = store.recent_turns()
        assert [t.id for t in after[:3]] == [t.id for t in before]  # re-parsed from byte 0: stable numbers and ids
        assert after[:2] == before[:2]
        t3, t4 = after[2], after[3]
        assert (t3.input_tokens, t3.output_tokens, t3.tool_reads, t3.tool_bash, t3.assistant_messages) == (
            8100,
            410,
            1,
            2,
            2,
        )
        assert (t4.turn_number, t4.tool_bash, t4.cerebro_writes) == (4, 1, 1)
        assert store.ingest_offset(str(path)) == path.stat().st_size
        assert [c.tool_name for c in store.tool_calls_for_turn("test-session-1", 3)] == ["Bash", "Bash", "Read"]


def test_stop_guard_decisions_land_on_their_turns(project: Path, add_transcript):
    add_transcript(SIMPLE)  # turns at 10:00:00, 10:01:00, 10:02:00 (session test-session-1)
    # recorded before the transcript is ingested, as the Stop hook does during the session
    record_stop_guard_decision(project, "test-session-1", "premature-stopping", at="2026-04-23T10:00:40Z")
    record_stop_guard_decision(project, "test-session-1", "scope-reduction", at="2026-04-23 10:02:30")
    record_stop_guard_decision(project, "test-session-1", "permission-seeking", at="2026-04-23T12:03:00+02:00")
    record_stop_guard_decision(project, "another-session", "premature-stopping", at="2026-04-23T10:01:30Z")
    ingest_project(project)
    with MetricsStore.open(metrics_path(project)) as store:
        assert [t.stop_guard_fired for t in store.recent_turns()] == [1, 0, 2]
        # a decision after the ingest is attributed at once
        store.record_stop_guard("test-session-1", "premature-stopping", "2026-04-23T10:01:59Z")
        assert [t.stop_guard_fired for t in store.recent_turns()] == [1, 1, 2]
    assert ingest_project(project, force=True).turns_ingested == 3
    with MetricsStore.open(metrics_path(project)) as store:
        assert [t.stop_guard_fired for t in store.recent_turns()] == [1, 1, 2]


def test_a_decision_made_now_lands_on_a_turn_begun_earlier_in_the_same_second(
    project: Path, session_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    """The Stop hook recorded its decision to the second while Claude Code's turns carry milliseconds: a turn begun at
    .500 of the second the decision was made at .900 lost it to the turn before (a review)."""

    def prompt(at: str) -> dict:
        return {"type": "user", "sessionId": "s1", "timestamp": at, "message": {"role": "user", "content": "go"}}

    _append(session_dir / "s1.jsonl", prompt("2026-12-05T10:00:00.000Z"), prompt("2026-12-05T10:00:05.500Z"))
    ingest_project(project)
    monkeypatch.setenv("CEREBRO_NOW", "2026-12-05T10:00:05.900Z")
    record_stop_guard_decision(project, "s1", "permission-seeking")
    with MetricsStore.open(metrics_path(project)) as store:
        assert [t.stop_guard_fired for t in store.recent_turns()] == [0, 1]


def test_no_transcripts_writes_nothing(project: Path, claude_home: Path):
    report = ingest_project(project)
    assert (report.files_processed, report.turns_ingested) == (0, 0)
    assert not metrics_path(project).exists()


def test_subfolders_are_not_read(project: Path, session_dir: Path):
    nested = session_dir / "abc" / "subagents"
    nested.mkdir(parents=True)
    (nested / "agent-1.jsonl").write_bytes(SIMPLE.read_bytes())
    assert ingest_project(project).files_processed == 0


def test_progress_is_called_per_file(project: Path, add_transcript):
    add_transcript(SIMPLE)
    add_transcript(SIDECHAIN)
    seen: list[tuple[int, int]] = []
    ingest_project(project, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]


# ------------------------------------------------------------------------------------ the command


def test_cli_ingest_json_and_text(cli, project: Path, add_transcript):
    add_transcript(SIMPLE)
    add_transcript(SIDECHAIN)
    data = ok(cli("ingest", "--format", "json")).json()
    assert data == {
        "files_processed": 2,
        "turns_ingested": 5,
        "tool_calls": 8,
        "malformed_lines": 0,
        "metrics_path": str(metrics_path(project)),
        "session_dir": str(add_transcript(SIMPLE).parent),
    }
    text = ok(cli("ingest", "--force")).stdout
    assert text == "Ingested 5 turns and 8 tool calls from 2 files\n"
    assert ok(cli("ingest", "-q", "--force")).stdout == ""


def test_cli_garbage_and_truncated_lines_are_skipped_and_counted(cli, project: Path, session_dir: Path):
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    (session_dir / "test-session-1.jsonl").write_bytes(
        b"".join(
            [*lines[:3], b"{not json at all\n", b"\x00\x01garbage\n", *lines[3:-1], lines[-1][: len(lines[-1]) // 2]]
        )
    )
    result = ok(cli("ingest", "--format", "json"))
    data = result.json()
    assert data["malformed_lines"] == 3
    # the truncated last line held turn 3's only reply: turn 3 is there, without it
    assert (data["files_processed"], data["turns_ingested"], data["tool_calls"]) == (1, 3, 4)
    text = ok(cli("ingest", "--force")).stdout
    assert text == "Ingested 3 turns and 4 tool calls from 1 files (3 malformed lines skipped)\n"
    assert _all_rows(metrics_path(project))["ingest_state"][0][2] == 3


def test_cli_session_dir_override(cli, project: Path, tmp_path: Path, claude_home: Path):
    elsewhere = tmp_path / "transcripts"
    elsewhere.mkdir()
    (elsewhere / "x.jsonl").write_bytes(SIDECHAIN.read_bytes())
    data = ok(cli("ingest", "--session-dir", str(elsewhere), "--format", "json")).json()
    assert (data["turns_ingested"], data["session_dir"]) == (2, str(elsewhere))


def test_cli_no_session_files(cli, project: Path, claude_home: Path):
    expected_dir = claude_home / ".claude" / "projects" / claude_code_slug(str(project))
    assert ok(cli("ingest")).stdout == f"No session files found in {expected_dir}\n"
    assert ok(cli("ingest", "-q")).stdout == ""
    assert ok(cli("ingest", "--format", "json")).json()["files_processed"] == 0
    assert not metrics_path(project).exists()


def test_cli_bad_session_dir_is_one_line_and_writes_nothing(cli, project: Path, tmp_path: Path, claude_home: Path):
    result = cli("ingest", "--session-dir", str(tmp_path / "missing"))
    assert_one_line_error(result, "--session-dir", "not a directory", exit_code=2)
    assert not metrics_path(project).exists()


def test_cli_too_new_metrics_database_is_refused(cli, project: Path, add_transcript):
    add_transcript(SIMPLE)
    ok(cli("ingest"))
    conn = sqlite3.connect(metrics_path(project))
    conn.execute("UPDATE alembic_version SET version_num = 'm0100'")
    conn.commit()
    conn.close()
    assert_one_line_error(cli("ingest", "--force"), "newer cerebro", "m0100", exit_code=5)


@pytest.mark.parametrize("files", [6])
def test_cli_progress_stays_off_when_stderr_is_not_a_terminal(cli, project: Path, session_dir: Path, files: int):
    for n in range(files):
        (session_dir / f"s{n}.jsonl").write_bytes(SIMPLE.read_bytes().replace(b"test-session-1", f"s{n}".encode()))
    result = ok(cli("ingest"))  # ok(): nothing at all on stderr
    assert result.stdout == f"Ingested {3 * files} turns and {6 * files} tool calls from {files} files\n"


def test_cli_progress_on_a_terminal(cli, project: Path, session_dir: Path, monkeypatch: pytest.MonkeyPatch):
    import sys

    for n in range(6):
        (session_dir / f"s{n}.jsonl").write_bytes(SIDECHAIN.read_bytes().replace(b"test-session-2", f"s{n}".encode()))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    result = cli("ingest")
    assert result.exit_code == 0
    assert "6/6" in result.stderr and result.stderr.endswith("\n")
    assert result.stdout == "Ingested 12 turns and 12 tool calls from 6 files\n"


# ------------------------------------------------------------------------------------ resumed sessions


def test_a_file_repeating_part_of_a_session_never_erases_its_turns(project: Path, add_transcript, session_dir: Path):
    """A resumed session's new file starts with part of the old session's history (same sessionId): the
    fuller record of a session keeps its turns, whichever file is read first, and the new session's own
    turns are numbered from 1."""
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    resumed = session_dir / "b-resumed.jsonl"  # read after a.jsonl (lexical order)
    resumed.write_bytes(b"".join(lines[:4]))  # turn 1 of test-session-1, copied
    _append(
        resumed,
        {
            "type": "user",
            "sessionId": "new-session",
            "timestamp": "2026-04-23T12:00:00Z",
            "message": {"role": "user", "content": "carry on"},
        },
        {
            "type": "assistant",
            "sessionId": "new-session",
            "timestamp": "2026-04-23T12:00:05Z",
            "message": {
                "id": "m-new",
                "role": "assistant",
                "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "cerebro recall x"}}],
            },
        },
    )
    add_transcript(SIMPLE, "a.jsonl")
    report = ingest_project(project)
    # what was stored: a.jsonl's 3 turns and the new session's 1 — not the copied turn b-resumed.jsonl left to a.jsonl
    assert (report.turns_ingested, report.tool_calls) == (4, 6 + 1)
    for _ in range(2):  # and again with --force: stable
        with MetricsStore.open(metrics_path(project)) as store:
            assert [t.turn_number for t in store.recent_turns(session_id="test-session-1")] == [1, 2, 3]
            assert [t.turn_number for t in store.recent_turns(session_id="new-session")] == [1]
            assert sum(store.tool_distribution("test-session-1").values()) == 6
        ingest_project(project, force=True)


def test_a_file_with_no_prompt_is_not_reread_until_it_grows(project: Path, session_dir: Path):
    bad = session_dir / "bad.jsonl"
    bad.write_bytes(b'\xff\xfe not json\n{"type": "summary"}\n')
    assert ingest_project(project).malformed_lines == 1
    assert ingest_project(project).malformed_lines == 0  # remembered: not re-read, not re-counted
    _append(bad, {"type": "summary", "summary": "more"})
    assert ingest_project(project).malformed_lines == 1  # grown: read again


HOSTILE_LINES = [
    b"[" * 100_000 + b"]" * 100_000 + b"\n",  # nesting deeper than Python's recursion limit
    # a prompt cut inside an emoji: still a prompt (its text is never stored); dropping it ran two turns together
    b'{"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": "\\ud800"}}\n',
]


def test_hostile_transcript_lines_are_counted_never_fatal(project: Path, session_dir: Path) -> None:
    """Issue 17: one bad line aborted the whole ingest (exit 1) and every later session-end stopped at that file.
    Deep nesting, a lone surrogate, a 2**70 token count and an object as a message id: the good turns are read,
    the unreadable line counted, and the next ingest is not stuck."""
    good = [
        {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "hi"}},
        {
            "type": "assistant",
            "sessionId": "s",
            "requestId": {"not": "a string"},
            "message": {"id": ["odd"], "usage": {"input_tokens": 2**70, "output_tokens": 5}, "content": []},
        },
    ]
    transcript = session_dir / "s.jsonl"
    transcript.write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in good) + b"".join(HOSTILE_LINES))
    report = ingest_project(project)
    assert report.malformed_lines == 1 and report.turns_ingested == 2
    conn = sqlite3.connect(metrics_path(project))
    row = conn.execute(
        "SELECT input_tokens, output_tokens, assistant_messages FROM turn_metrics ORDER BY turn_number"
    ).fetchone()
    conn.close()
    assert row == (0, 5, 1)  # the impossible count is dropped, the rest of the record kept
    with transcript.open("ab") as handle:  # the file grows: the next ingest reads on past the bad lines
        handle.write((json.dumps(good[0] | {"timestamp": "2026-01-01T00:01:00Z"}) + "\n").encode())
    assert ingest_project(project).turns_ingested >= 1


def test_a_transcript_whose_name_is_not_utf8_is_skipped_and_the_others_read(project: Path, session_dir: Path) -> None:
    """Its name went into the database as the file's key and failed the whole ingest, every session-end after it."""
    prompt = {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "hi"}}
    (session_dir / os.fsdecode(b"bad\xff.jsonl")).write_text(json.dumps(prompt) + "\n")
    (session_dir / "zz.jsonl").write_text(json.dumps(prompt | {"sessionId": "z"}) + "\n")
    report = ingest_project(project)
    assert report.files_processed == 1 and report.turns_ingested == 1
    assert report.warnings == ["skipped b'bad\\xff.jsonl': its name is not UTF-8 text"]


def test_a_turns_token_sums_stay_storable(project: Path, session_dir: Path) -> None:
    """Counts each below 2**53 summed past SQLite's integers over a thousand records: the ingest aborted, and the
    files after it were never read."""
    records = [{"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "hi"}}]
    records += [
        {
            "type": "assistant",
            "sessionId": "s",
            "message": {"id": f"m{i}", "usage": {"input_tokens": 2**53 - 1, "output_tokens": 1}, "content": []},
        }
        for i in range(1100)
    ]
    (session_dir / "a-big.jsonl").write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in records))
    later = {"type": "user", "sessionId": "t", "timestamp": "2026-01-02T00:00:00Z", "message": {"content": "later"}}
    (session_dir / "b-later.jsonl").write_bytes((json.dumps(later) + "\n").encode())
    ingest_project(project)
    conn = sqlite3.connect(metrics_path(project))
    rows = dict(conn.execute("SELECT session_id, input_tokens FROM turn_metrics").fetchall())
    conn.close()
    assert rows["s"] == 2**53 and "t" in rows  # held at the bound; the file after it read
