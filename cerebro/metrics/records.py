"""The rows of the metrics database, as plain dataclasses (no ORM: ingest runs at every session end)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TurnMetrics:
    """One turn of one session: a user prompt and everything the agent did until the next prompt."""

    session_id: str
    turn_number: int
    timestamp: str  # ISO 8601 as Claude Code wrote it; sorts as a string
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    thinking_chars: int = 0  # UTF-8 bytes, as upstream counts them
    thinking_blocks: int = 0
    tool_calls_total: int = 0
    tool_reads: int = 0
    tool_edits: int = 0
    tool_bash: int = 0
    tool_other: int = 0
    cerebro_recalls: int = 0
    cerebro_writes: int = 0
    read_edit_ratio: float | None = None
    assistant_messages: int = 0
    stop_guard_fired: int = 0
    id: int | None = None  # set when read back from the database

    def to_dict(self) -> dict[str, Any]:
        """For JSON: the timestamp as RFC 3339 UTC like every other time (null when the transcript had none)."""
        from cerebro import clock

        return asdict(self) | {"timestamp": clock.rfc3339_optional(self.timestamp)}


@dataclass
class ToolCall:
    session_id: str
    turn_number: int
    timestamp: str
    tool_name: str
    file_path: str | None = None
    cerebro_op: str | None = None
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class IngestReport:
    files_processed: int = 0
    turns_ingested: int = 0
    tool_calls: int = 0
    malformed_lines: int = 0
    metrics_path: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
