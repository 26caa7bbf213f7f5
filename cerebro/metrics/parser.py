"""Parse one Claude Code session transcript (JSONL) into per-turn metrics and tool calls (spec §2).

Where upstream is flawed we decide otherwise (issue #7, ADR 0014):
- a turn starts at a **user prompt**: a ``user`` record that is not a tool result (its content is not
  made only of ``tool_result`` blocks), not ``isMeta``, not a sidechain. Upstream starts a turn at every
  user record, tool results included, so one prompt with five tool calls becomes six "turns";
- token usage (and ``assistant_messages``) counts **once per API message**: Claude Code writes one record
  per content block of a message, each repeating the message's usage. Records are de-duplicated by
  (``message.id``, ``requestId``); a record with neither is always counted;
- ``MultiEdit`` is an edit (it is ``Edit`` with several hunks); ``redacted_thinking`` blocks count as
  thinking blocks with 0 characters;
- a cerebro command is also recognised after a shell separator (``cd x && cerebro add …``).

Lines that are not JSON objects (garbage, a line cut short by a crash) are skipped and counted, never
fatal. There is no line-length limit (Go's scanner stops at 1 MiB): a long line costs memory for as long
as it is parsed, and transcripts hold long tool results and images that must not end a parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cerebro import surrogates
from cerebro.metrics.records import ToolCall, TurnMetrics

READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit"})  # upstream: Edit, Write (MultiEdit is "other")
BASH_TOOLS = frozenset({"Bash"})

CEREBRO_OPS = (
    "add",
    "recall",
    "search",
    "update",
    "supersede",
    "gc",
    "promote",
    "edge",
    "reinforce",
    "list",
    "get",
    "export",
    "import",
)
RECALL_OPS = frozenset({"recall", "search", "list", "get"})  # every other op counts as a write
# Upstream: (?:^|/)cerebro\s+(ops)\b — the start of the command or a path. We also accept the start of
# any command in a shell list or pipeline (after ; & | ( ` or a newline, then spaces), so
# ``cd x && cerebro add`` counts; ``echo cerebro add`` and ``grep "cerebro recall"`` still do not.
CEREBRO_OP = re.compile(r"(?:(?:^|[;&|(`\n])\s*|/)cerebro\s+(" + "|".join(CEREBRO_OPS) + r")\b")


@dataclass
class ParsedTranscript:
    turns: list[TurnMetrics] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    size: int = 0  # bytes read: what ingest stores as the file's offset
    malformed_lines: int = 0


def classify_tool(name: str) -> str:
    """``read``, ``edit``, ``bash`` or ``other``."""
    if name in READ_TOOLS:
        return "read"
    if name in EDIT_TOOLS:
        return "edit"
    if name in BASH_TOOLS:
        return "bash"
    return "other"


def extract_cerebro_op(command: str) -> str | None:
    """The first cerebro operation a shell command runs, or None."""
    match = CEREBRO_OP.search(command)
    return match.group(1) if match else None


def is_tool_result(message: dict[str, Any]) -> bool:
    """A user record that only carries tool results back to the model (not typed by a person)."""
    content = message.get("content")
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(block, dict) and block.get("type") == "tool_result" for block in content)
    )


_MAX_COUNT = 2**53  # a token count past this is garbage, and SQLite's integers end at 2**63


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT else 0


def _key_part(value: object) -> str | int | None:
    """A message id or request id as a set key: text or a number, else none (a list or object is unhashable)."""
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


# A JSON escape of a UTF-16 surrogate: only such a line can decode to text SQLite cannot store (a lone one).
def _storable(line: bytes | str, record: dict[str, Any]) -> dict[str, Any] | None:
    """``record`` as its fields can be stored: a lone surrogate anywhere in it (half an emoji in a prompt the parser
    never stores) as U+FFFD — dropping the record lost a prompt, and two turns ran together; None when it is nested
    too deep to copy."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if not surrogates.ESCAPE.search(raw):
        return record
    try:
        return cast("dict[str, Any]", surrogates.replaced(record))
    except RecursionError:  # nested as deep as loads could, one level short
        return None


class _TurnBuilder:
    """The turn being read: counters updated record by record, finalised at the next prompt or EOF."""

    def __init__(self, session_id: str, turn_number: int, timestamp: str) -> None:
        self.turn = TurnMetrics(session_id=session_id, turn_number=turn_number, timestamp=timestamp)
        self.calls: list[ToolCall] = []

    def add_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        t = self.turn
        # Each count below 2**53, and the turn's sums held there too: a thousand records near the bound summed past
        # SQLite's integers and failed the whole ingest (the files after it never read).
        t.input_tokens = min(t.input_tokens + _int(usage.get("input_tokens")), _MAX_COUNT)
        t.output_tokens = min(t.output_tokens + _int(usage.get("output_tokens")), _MAX_COUNT)
        t.cache_read_tokens = min(t.cache_read_tokens + _int(usage.get("cache_read_input_tokens")), _MAX_COUNT)
        t.cache_create_tokens = min(t.cache_create_tokens + _int(usage.get("cache_creation_input_tokens")), _MAX_COUNT)

    def add_block(self, block: dict[str, Any], timestamp: str) -> None:
        kind = block.get("type")
        t = self.turn
        if kind == "thinking":
            text = block.get("thinking")
            t.thinking_chars += len(text.encode("utf-8")) if isinstance(text, str) else 0  # bytes, as upstream
            t.thinking_blocks += 1
        elif kind == "redacted_thinking":
            t.thinking_blocks += 1
        elif kind == "tool_use":
            self._add_tool_use(block, timestamp)

    def _add_tool_use(self, block: dict[str, Any], timestamp: str) -> None:
        raw_name, raw_input = block.get("name"), block.get("input")
        name = raw_name if isinstance(raw_name, str) else ""
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        file_path = tool_input.get("file_path")
        call = ToolCall(
            session_id=self.turn.session_id,
            turn_number=self.turn.turn_number,
            timestamp=timestamp,
            tool_name=name,
            file_path=file_path if isinstance(file_path, str) and file_path else None,
        )
        t = self.turn
        kind = classify_tool(name)
        if kind == "read":
            t.tool_reads += 1
        elif kind == "edit":
            t.tool_edits += 1
        elif kind == "bash":
            t.tool_bash += 1
            command = tool_input.get("command")
            call.cerebro_op = extract_cerebro_op(command) if isinstance(command, str) else None
            if call.cerebro_op in RECALL_OPS:
                t.cerebro_recalls += 1
            elif call.cerebro_op is not None:
                t.cerebro_writes += 1
        else:
            t.tool_other += 1
        self.calls.append(call)

    def finish(self) -> TurnMetrics:
        t = self.turn
        t.tool_calls_total = t.tool_reads + t.tool_edits + t.tool_bash + t.tool_other
        t.read_edit_ratio = t.tool_reads / t.tool_edits if t.tool_edits > 0 else None
        return t


class TranscriptParser:
    """Feed records in file order; read the turns and tool calls at the end."""

    def __init__(self, default_session_id: str = "") -> None:
        self.default_session_id = default_session_id  # Claude Code names the file after the session
        self.result = ParsedTranscript()
        self._current: _TurnBuilder | None = None
        self._turn_numbers: dict[str, int] = {}
        self._seen_messages: set[tuple[Any, Any]] = set()

    def feed_line(self, line: bytes | str) -> None:
        if not line.strip():
            return
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # invalid UTF-8, a line cut short, nesting deeper than Python goes
            record = None
        record = _storable(line, record) if isinstance(record, dict) else None
        if record is None:
            self.result.malformed_lines += 1
            return
        self.feed(record)

    def feed(self, record: dict[str, Any]) -> None:
        if record.get("isSidechain") is True:
            return  # subagent work: not part of the main conversation's turns
        kind = record.get("type")
        message = record.get("message")
        if not isinstance(message, dict):
            return
        if kind == "user":
            if record.get("isMeta") is True or is_tool_result(message):
                return
            self._start_turn(record)
        elif kind == "assistant" and self._current is not None:
            self._add_assistant(record, message)

    def _text(self, record: dict[str, Any], key: str, default: str) -> str:
        value = record.get(key)
        return value if isinstance(value, str) and value else default

    def _start_turn(self, record: dict[str, Any]) -> None:
        self._flush()
        session = self._text(record, "sessionId", self.default_session_id)
        # Numbered per session: a file that carries a resumed session's history numbers those turns as
        # the session's own file does.
        self._turn_numbers[session] = self._turn_numbers.get(session, 0) + 1
        self._current = _TurnBuilder(session, self._turn_numbers[session], self._text(record, "timestamp", ""))

    def _add_assistant(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        current = self._current
        assert current is not None  # noqa: S101 - narrows the type: feed() calls this only with a turn open
        key = (_key_part(message.get("id")), _key_part(record.get("requestId")))
        first_record_of_message = key == (None, None) or key not in self._seen_messages
        if first_record_of_message:
            self._seen_messages.add(key)
            current.turn.assistant_messages += 1
            current.add_usage(message.get("usage"))
        content = message.get("content")
        if isinstance(content, list):
            timestamp = self._text(record, "timestamp", current.turn.timestamp)
            for block in content:
                if isinstance(block, dict):
                    current.add_block(block, timestamp)

    def _flush(self) -> None:
        if self._current is not None:
            self.result.turns.append(self._current.finish())
            self.result.tool_calls.extend(self._current.calls)
            self._current = None

    def finish(self) -> ParsedTranscript:
        self._flush()
        return self.result


def parse_lines(lines: Iterable[bytes | str], default_session_id: str = "") -> ParsedTranscript:
    parser = TranscriptParser(default_session_id)
    size = 0
    for line in lines:
        size += len(line.encode("utf-8")) if isinstance(line, str) else len(line)
        parser.feed_line(line)
    result = parser.finish()
    result.size = size
    return result


def parse_file(path: Path) -> ParsedTranscript:
    """Parse a transcript from byte 0 (turn numbers stay stable as the file grows). Raises OSError."""
    with open(path, "rb") as handle:  # bytes: a line of invalid UTF-8 is one malformed line, not an error
        return parse_lines(handle, default_session_id=path.stem)
