"""The transcript parser on the four fixture transcripts, with every number worked out by hand from the
files (see the comments), and the decisions of issue #7 where they part from upstream (spec §2.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerebro.metrics.parser import classify_tool, extract_cerebro_op, parse_file, parse_lines

from .conftest import INTEGRATED, REPRESENTATIVE, SIDECHAIN, SIMPLE


def _sums(turns) -> dict[str, int]:
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_create_tokens")
    return {k: sum(getattr(t, k) for t in turns) for k in keys}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _jsonl(records: list[dict]) -> list[bytes]:
    return [(json.dumps(r) + "\n").encode() for r in records]


# ------------------------------------------------------------------------------------ simple_session


def test_simple_session_matches_upstream_numbers():
    # No tool-result records and no message ids in this file, so our decisions change nothing here:
    # every number equals upstream's expectation (spec §2.6).
    parsed = parse_file(SIMPLE)
    assert parsed.size == 2704
    assert parsed.malformed_lines == 0
    assert [t.turn_number for t in parsed.turns] == [1, 2, 3]  # the permission-mode record is ignored
    assert {t.session_id for t in parsed.turns} == {"test-session-1"}
    t1, t2, t3 = parsed.turns

    # Turn 1: a1 (thinking + Read; usage 5000/300/cc 4000/cr 1000) + a2 (Grep + Edit; 6000/500/0/5500).
    assert t1.timestamp == "2026-04-23T10:00:00Z"
    assert (t1.input_tokens, t1.output_tokens, t1.cache_create_tokens, t1.cache_read_tokens) == (11000, 800, 4000, 6500)
    assert (t1.thinking_blocks, t1.thinking_chars) == (
        1,
        49,
    )  # len("Let me read the file first to understand the bug.")
    assert (t1.tool_reads, t1.tool_edits, t1.tool_bash, t1.tool_other, t1.tool_calls_total) == (2, 1, 0, 0, 3)
    assert t1.read_edit_ratio == 2.0
    assert t1.assistant_messages == 2

    # Turn 2: a3 (Bash "go test ./..."; 7000/200/0/6800).
    assert (t2.input_tokens, t2.output_tokens, t2.cache_create_tokens, t2.cache_read_tokens) == (7000, 200, 0, 6800)
    assert (t2.tool_bash, t2.tool_calls_total, t2.read_edit_ratio) == (1, 1, None)
    assert (t2.cerebro_recalls, t2.cerebro_writes) == (0, 0)

    # Turn 3: a4 (two Bash: cerebro add, cerebro recall; 8000/400/0/7800).
    assert (t3.input_tokens, t3.output_tokens, t3.cache_read_tokens) == (8000, 400, 7800)
    assert (t3.tool_bash, t3.tool_calls_total) == (2, 2)
    assert (t3.cerebro_writes, t3.cerebro_recalls) == (1, 1)
    assert all(t.stop_guard_fired == 0 for t in parsed.turns)

    assert _sums(parsed.turns) == {
        "input_tokens": 26000,
        "output_tokens": 1400,
        "cache_read_tokens": 21100,
        "cache_create_tokens": 4000,
    }
    calls = parsed.tool_calls
    assert [c.tool_name for c in calls] == ["Read", "Grep", "Edit", "Bash", "Bash", "Bash"]
    assert [c.turn_number for c in calls] == [1, 1, 1, 2, 3, 3]
    assert [c.file_path for c in calls] == [
        "/src/main.go",
        None,
        "/src/main.go",
        None,
        None,
        None,
    ]  # Grep's path is not used
    assert [c.cerebro_op for c in calls] == [None, None, None, None, "add", "recall"]
    assert [c.timestamp for c in calls[:3]] == ["2026-04-23T10:00:05Z", "2026-04-23T10:00:10Z", "2026-04-23T10:00:10Z"]


def test_appending_a_turn_renumbers_nothing_and_adds_turn_4():
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    extra = _jsonl(
        [
            {
                "type": "user",
                "timestamp": "2026-04-23T10:03:00Z",
                "sessionId": "test-session-1",
                "message": {"role": "user", "content": "again"},
            },
            {
                "type": "assistant",
                "timestamp": "2026-04-23T10:03:05Z",
                "sessionId": "test-session-1",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}],
                },
            },
        ]
    )
    parsed = parse_lines(lines + extra)
    assert [t.turn_number for t in parsed.turns] == [1, 2, 3, 4]
    assert parsed.turns[3].tool_bash == 1


# ------------------------------------------------------------------------------------ sidechain_session


def test_sidechain_session_excludes_the_subagent_and_the_meta_record():
    parsed = parse_file(SIDECHAIN)
    assert parsed.size == 1908
    assert len(parsed.turns) == 2  # the isMeta user record starts no turn (same as upstream)
    t1, t2 = parsed.turns
    assert (t1.turn_number, t1.timestamp, t2.turn_number, t2.timestamp) == (
        1,
        "2026-04-23T11:00:00Z",
        2,
        "2026-04-23T11:02:00Z",
    )
    # Turn 1: a1 only (Read; 3000/200/cc 2000/cr 0); the sidechain Write's usage (1000/100) is not counted.
    assert (t1.input_tokens, t1.output_tokens, t1.cache_create_tokens, t1.cache_read_tokens) == (3000, 200, 2000, 0)
    assert (t1.tool_reads, t1.tool_edits, t1.tool_calls_total, t1.assistant_messages) == (1, 0, 1, 1)
    # Turn 2: a2 (Bash "git commit -m 'fix test'": no cerebro op; 4000/300/0/3500).
    assert (t2.input_tokens, t2.output_tokens, t2.cache_read_tokens) == (4000, 300, 3500)
    assert (t2.tool_bash, t2.cerebro_writes, t2.cerebro_recalls) == (1, 0, 0)
    assert _sums(parsed.turns) == {
        "input_tokens": 7000,
        "output_tokens": 500,
        "cache_read_tokens": 3500,
        "cache_create_tokens": 2000,
    }
    assert [c.tool_name for c in parsed.tool_calls] == ["Read", "Bash"]  # no Write
    assert parsed.tool_calls[0].file_path == "/src/test.go"


# ------------------------------------------------------------------------------------ representative_messages


def test_representative_messages_tool_results_start_no_turn():
    parsed = parse_file(REPRESENTATIVE)
    assert parsed.size == 7867
    assert parsed.malformed_lines == 0  # the trailing summary record is valid JSON, just not a turn
    # DECISION "a turn starts at a user prompt": 4 turns (the 4 text prompts). Upstream counts every user
    # record, the 2 tool_result carriers (10:01:31, 10:03:01) included: 6 turns.
    assert len(parsed.turns) == 4
    assert [t.timestamp for t in parsed.turns] == [
        "2025-06-14T10:00:00Z",
        "2025-06-14T10:01:00Z",
        "2025-06-14T10:02:30Z",
        "2025-06-14T10:04:00Z",
    ]
    t1, t2, t3, t4 = parsed.turns
    assert (t1.input_tokens, t1.output_tokens, t1.assistant_messages, t1.tool_calls_total) == (25, 120, 1, 0)
    # Turn 2 = msg_004 (Edit; 45/85) + msg_006 after the tool result (78/95). Upstream: 45/85 in turn 2
    # and 78/95 in a turn 3 of its own.
    assert (t2.input_tokens, t2.output_tokens, t2.assistant_messages) == (123, 180, 2)
    assert (t2.tool_edits, t2.tool_reads, t2.read_edit_ratio) == (1, 0, 0.0)  # edits > 0: 0/1, not NULL
    # Turn 3 = msg_008 (Bash "python /tmp/decorator_example.py"; 25/35) + msg_010 (45/110).
    assert (t3.input_tokens, t3.output_tokens, t3.assistant_messages, t3.tool_bash) == (70, 145, 2, 1)
    assert (t3.cerebro_recalls, t3.cerebro_writes) == (0, 0)
    # Turn 4: the last prompt has no reply.
    assert (t4.input_tokens, t4.output_tokens, t4.assistant_messages, t4.tool_calls_total) == (0, 0, 0, 0)
    # Message ids are all distinct here, so de-duplication changes no sum: upstream's totals are the same.
    assert _sums(parsed.turns) == {
        "input_tokens": 218,
        "output_tokens": 445,
        "cache_read_tokens": 0,
        "cache_create_tokens": 0,
    }
    assert [(c.tool_name, c.turn_number, c.file_path) for c in parsed.tool_calls] == [
        ("Edit", 2, "/tmp/decorator_example.py"),
        ("Bash", 3, None),
    ]
    assert all(t.thinking_blocks == 0 for t in parsed.turns)


# ------------------------------------------------------------------------------------ sidechain_integrated


def test_sidechain_integrated_has_no_prompt_so_no_turn():
    parsed = parse_file(INTEGRATED)
    assert parsed.size == 5266
    # The excerpt opens with an assistant record (before any turn: skipped, as upstream does); the only
    # main-chain user record is a tool result. DECISION "a turn starts at a user prompt": 0 turns.
    # Upstream: 1 turn opened by the tool result at 22:55:34.463Z, holding the last record's usage
    # (input 3, output 190, cache_read 141272, cache_create 2952) and no tool call.
    assert parsed.turns == []
    assert parsed.tool_calls == []
    assert parsed.malformed_lines == 0


def test_sidechain_integrated_after_a_prompt():
    records = _lines(INTEGRATED)
    prompt = {
        "type": "user",
        "timestamp": "2025-11-19T22:53:30.000Z",
        "sessionId": records[0]["sessionId"],
        "message": {"role": "user", "content": "Research data-border-color"},
    }
    parsed = parse_lines(_jsonl([prompt, *records]))
    # One turn: the main-chain Task record (3/365/cc 141272) + the main-chain reply after the tool result
    # (3/190/cc 2952/cr 141272). The sidechain records (Grep, 2 × usage 3/183/cc 19830) stay out.
    # Upstream: 2 turns (the tool result opens a second one holding the reply).
    assert len(parsed.turns) == 1
    turn = parsed.turns[0]
    assert (turn.input_tokens, turn.output_tokens, turn.cache_create_tokens, turn.cache_read_tokens) == (
        6,
        555,
        144224,
        141272,
    )
    assert (turn.tool_other, turn.tool_reads, turn.tool_calls_total, turn.assistant_messages) == (
        1,
        0,
        1,
        2,
    )  # Task is "other"
    assert [c.tool_name for c in parsed.tool_calls] == ["Task"]


def test_usage_counted_once_per_api_message():
    # The two sidechain records of the integrated excerpt repeat msg_017zj75dqWUNqVxCUrhqbTkf and
    # req_011CVJ51ytkcBEjrQhRNswqR with the same usage; put them in the main chain after a prompt.
    records = _lines(INTEGRATED)[2:4]
    for record in records:
        record["isSidechain"] = False
    prompt = {
        "type": "user",
        "timestamp": "2025-11-19T22:53:38Z",
        "sessionId": "s",
        "message": {"role": "user", "content": "go"},
    }
    parsed = parse_lines(_jsonl([prompt, *records]))
    turn = parsed.turns[0]
    # DECISION "once per API message": 3/183/cc 19830 and 1 message. Upstream sums both records:
    # 6/366/cc 39660 and 2 assistant messages.
    assert (turn.input_tokens, turn.output_tokens, turn.cache_create_tokens) == (3, 183, 19830)
    assert turn.assistant_messages == 1
    assert (turn.tool_reads, turn.tool_calls_total) == (1, 1)  # the Grep block of the second record still counts


def test_records_without_ids_are_each_counted():
    usage = {"input_tokens": 10, "output_tokens": 1}
    records = [
        {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "sessionId": "s", "message": {"content": "hi"}},
        {"type": "assistant", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": [], "usage": usage}},
        {"type": "assistant", "timestamp": "2026-01-01T00:00:02Z", "message": {"content": [], "usage": usage}},
    ]
    turn = parse_lines(_jsonl(records)).turns[0]
    assert (turn.input_tokens, turn.assistant_messages) == (20, 2)


# ------------------------------------------------------------------------------------ lines and records


def test_garbage_and_truncated_lines_are_counted_not_fatal():
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    damaged = [*lines[:2], b"this is not json\n", b"[1, 2]\n", b"\xff\xfe\n", b"\n", *lines[2:], lines[-1][:40]]
    parsed = parse_lines(damaged)
    # garbage, a JSON array (not an object), invalid UTF-8, and the truncated last line; the blank line is not counted
    assert parsed.malformed_lines == 4
    assert len(parsed.turns) == 3
    assert parsed.turns[0].input_tokens == 11000


def test_a_huge_line_is_parsed():
    # Go's scanner stops at 1 MiB; we read any length (a long tool result must not end the parse).
    big = {
        "type": "assistant",
        "timestamp": "2026-01-01T00:00:01Z",
        "message": {"content": [{"type": "thinking", "thinking": "é" * 1_500_000}], "usage": {"input_tokens": 1}},
    }
    prompt = {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "sessionId": "s", "message": {"content": "x"}}
    turn = parse_lines(_jsonl([prompt, big])).turns[0]
    assert turn.thinking_chars == 3_000_000  # UTF-8 bytes, as upstream's Go len()
    assert turn.thinking_blocks == 1


def test_empty_file(tmp_path: Path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    parsed = parse_file(empty)
    assert (parsed.turns, parsed.tool_calls, parsed.size, parsed.malformed_lines) == ([], [], 0, 0)


def test_unknown_record_types_and_odd_shapes_are_skipped():
    records = [
        {"type": "summary", "summary": "x"},
        {"type": "file-history-snapshot", "snapshot": {}},
        {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "message": "not an object"},
        {
            "type": "user",
            "timestamp": "2026-01-01T00:00:00Z",
            "sessionId": "s",
            "isMeta": None,
            "isSidechain": None,
            "message": {"content": [{"type": "text", "text": "hi"}]},
        },
        {
            "type": "assistant",
            "message": {"content": [{"type": "redacted_thinking", "data": "…"}, "junk", {"type": "tool_use"}]},
        },
        {"type": "system", "content": "hook output"},
    ]
    parsed = parse_lines(_jsonl(records), default_session_id="from-file-name")
    assert len(parsed.turns) == 1
    turn = parsed.turns[0]
    assert turn.session_id == "s"
    assert (turn.thinking_blocks, turn.thinking_chars) == (1, 0)  # redacted: a block, no characters
    assert (turn.tool_other, turn.tool_calls_total) == (1, 1)  # a tool_use without a name is "other"
    assert turn.timestamp == "2026-01-01T00:00:00Z"


def test_session_id_falls_back_to_the_file_name(tmp_path: Path):
    path = tmp_path / "abc-123.jsonl"
    path.write_text(json.dumps({"type": "user", "timestamp": "t", "message": {"content": "hi"}}) + "\n")
    assert parse_file(path).turns[0].session_id == "abc-123"


# ------------------------------------------------------------------------------------ tools and cerebro ops


@pytest.mark.parametrize(
    ("command", "op"),
    [
        # upstream's expectations (spec §2.6)
        ("cerebro add --type concept 'x'", "add"),
        ('cerebro recall "error handling"', "recall"),
        ("cerebro search x", "search"),
        ("cerebro update abc --importance 1", "update"),
        ("cerebro supersede abc new", "supersede"),
        ("./cerebro add 'test'", "add"),
        ("go test ./...", None),
        ("git commit -m 'fix'", None),
        # a path anchors the match, as upstream
        ("/usr/local/bin/cerebro get 3f2a", "get"),
        # OURS: the start of any command in a shell list or pipeline; upstream finds nothing in these
        ("cd /repo && cerebro add 'note'", "add"),
        ("make build; cerebro gc --dry-run", "gc"),
        ("true || cerebro export -o x", "export"),
        ("echo $(cerebro list)", "list"),
        ("cat notes | cerebro import -", "import"),
        # still not a cerebro call
        ("echo cerebro add", None),
        ('grep -r "cerebro recall" docs', None),
        ("cerebro init", None),
        ("cerebro recallx", None),
        ("Cerebro add x", None),  # case-sensitive, as upstream
        # the first match wins; one op per Bash call
        ("cerebro recall a && cerebro add b", "recall"),
    ],
)
def test_extract_cerebro_op(command: str, op: str | None):
    assert extract_cerebro_op(command) == op


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Read", "read"),
        ("Grep", "read"),
        ("Glob", "read"),
        ("Edit", "edit"),
        ("Write", "edit"),
        ("MultiEdit", "edit"),  # OURS: an Edit with several hunks; upstream says "other"
        ("NotebookEdit", "other"),  # as upstream
        ("Bash", "bash"),
        ("Agent", "other"),
        ("TaskCreate", "other"),
        ("Unknown", "other"),
        ("Task", "other"),
        ("mcp__server__tool", "other"),
        ("", "other"),
    ],
)
def test_classify_tool(name: str, kind: str):
    assert classify_tool(name) == kind


def test_cerebro_ops_split_into_recalls_and_writes():
    commands = ["cerebro get x", "cerebro list", "cerebro search q", "cerebro export", "cerebro gc", "ls"]
    blocks = [{"type": "tool_use", "name": "Bash", "input": {"command": c}} for c in commands]
    records = [
        {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "sessionId": "s", "message": {"content": "go"}},
        {"type": "assistant", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": blocks}},
    ]
    parsed = parse_lines(_jsonl(records))
    turn = parsed.turns[0]
    assert (turn.cerebro_recalls, turn.cerebro_writes, turn.tool_bash) == (3, 2, 6)  # gc and export are "writes"
    assert [c.cerebro_op for c in parsed.tool_calls] == ["get", "list", "search", "export", "gc", None]
