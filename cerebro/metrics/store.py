"""The per-project metrics database: ``projects/<hash>.metrics.sqlite``, beside the brain (spec §1, ADR 0014).

Plain DB-API on the project's SQLite driver (WAL, busy_timeout, ``BEGIN IMMEDIATE`` for writes, retried
while another writer holds the lock) — no ORM: the session-end hook and the stop-guard write here, and
opening a file already at head imports neither SQLAlchemy nor Alembic.
"""

from __future__ import annotations

import _thread
import bisect
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from cerebro import clock, paths
from cerebro.db.engine import connect_raw
from cerebro.errors import BrainNotFound, BrainUnreadable
from cerebro.metrics.records import ToolCall, TurnMetrics
from cerebro.retry import MAX_SECONDS

if TYPE_CHECKING:
    from cerebro.db.types import Connection, Cursor

T = TypeVar("T")

TURN_DATA_COLUMNS = (
    "session_id",
    "turn_number",
    "timestamp",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_create_tokens",
    "thinking_chars",
    "thinking_blocks",
    "tool_calls_total",
    "tool_reads",
    "tool_edits",
    "tool_bash",
    "tool_other",
    "cerebro_recalls",
    "cerebro_writes",
    "read_edit_ratio",
    "assistant_messages",
    "stop_guard_fired",
)
TOOL_CALL_COLUMNS = ("session_id", "turn_number", "timestamp", "tool_name", "file_path", "cerebro_op")


def metrics_path(project_dir: str | os.PathLike[str]) -> Path:
    """Same hash as the brain (``paths.project_hash``), so the two files sit side by side."""
    return paths.projects_dir() / f"{paths.project_hash(project_dir)}.metrics.sqlite"


def utc_instant(text: str | None) -> str | None:
    """Any timestamp cerebro or Claude Code writes, as UTC ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (fixed width,
    so it compares correctly as a string); None when it cannot be read."""
    value = clock.parse_optional(text)
    return None if value is None else _iso(value)


def _iso(value: datetime) -> str:
    v = (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}.{v.microsecond:06d}Z"


def _turn(row: Sequence[Any]) -> TurnMetrics:
    return TurnMetrics(id=row[0], **dict(zip(TURN_DATA_COLUMNS, row[1:], strict=True)))


def _call(row: Sequence[Any]) -> ToolCall:
    return ToolCall(id=row[0], **dict(zip(TOOL_CALL_COLUMNS, row[1:], strict=True)))


class MetricsStore:
    """One open metrics database. Use :meth:`open`; close it (or use ``with``)."""

    def __init__(self, path: Path, conn: Connection) -> None:
        self.path = path
        self._conn = conn
        # SQLite may run in multi-thread mode (ADR 0043): a store shared by threads uses its connection in turns.
        self._lock = _thread.RLock()
        self.retry_seconds = MAX_SECONDS  # how long a write may keep retrying a locked file

    # ----------------------------------------------------------------------------------- lifecycle

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> MetricsStore:
        """Open (``create``: create if missing) and bring the schema to head.

        Raises BrainNotFound when missing and not ``create``, SchemaTooNew for a file from a newer
        cerebro, BrainUnreadable for a file that is not an SQLite database.
        """
        from cerebro.metrics import schema

        target = Path(path)
        if not target.exists():
            if not create:
                raise BrainNotFound(f"metrics database not found at {target} — run 'cerebro ingest' first")
            paths.create_private_file(target)  # 0600 before SQLite sees it: -wal/-shm inherit the mode
        else:
            paths.tighten_private_file(target)  # an adopted upstream file may be world-readable
        try:
            probe = connect_raw(target, wal=False)
            try:
                at_head = schema.check_current(probe, target)
            finally:
                probe.close()
            if not at_head:
                schema.ensure_current(target)
            conn = connect_raw(target)
        except Exception as exc:
            if "file is not a database" in str(exc) or "file is encrypted" in str(exc):
                raise BrainUnreadable(f"{target} is not a readable SQLite database") from exc
            raise
        return cls(target, conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()  # closing twice is allowed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------------- transactions

    def _write(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work(cursor)`` in one ``BEGIN IMMEDIATE`` transaction, retried while the file is locked."""
        from cerebro.retry import run_with_retry

        def attempt() -> T:
            with self._lock:
                cur = self._conn.cursor()
                cur.execute("BEGIN IMMEDIATE")
                try:
                    result = work(cur)
                    cur.execute("COMMIT")
                    return result
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                finally:
                    cur.close()

        return run_with_retry(attempt, max_seconds=self.retry_seconds)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    # ----------------------------------------------------------------------------------- writes

    def save_parse(
        self,
        turns: Sequence[TurnMetrics],
        calls: Sequence[ToolCall],
        *,
        file: str | None = None,
        size: int = 0,
        malformed_lines: int = 0,
    ) -> tuple[int, int]:
        """Everything one transcript yields, in one transaction: its sessions' turns replaced, their tool
        calls replaced, stop-guard decisions re-attributed, and (with ``file``) the file's offset. Returns the turns
        and tool calls written (a session another transcript holds more of is not).

        A session whose rows came from another transcript holding *more* of its turns is left to that
        file (a resumed session's new file repeats part of the old one's history): the fullest record of
        a session wins, whatever order the files are read in."""

        def work(cur: Cursor) -> tuple[int, int]:
            sessions = [s for s in _distinct_sessions(turns) if _speaks_for(cur, s, turns, file)]
            mine = [t for t in turns if t.session_id in sessions]
            their_calls = [c for c in calls if c.session_id in sessions]
            _replace_turns(cur, mine, file)
            _replace_tool_calls(cur, sessions, their_calls)
            for session in sessions:
                _attribute_stop_guard(cur, session)
            if file is not None:
                _set_offset(cur, file, size, malformed_lines)
            return len(mine), len(their_calls)

        return self._write(work)

    def set_ingest_offset(self, file: str, size: int, *, malformed_lines: int = 0) -> None:
        self._write(lambda cur: _set_offset(cur, file, size, malformed_lines))

    def record_stop_guard(self, session_id: str, category: str, at: str | None = None) -> None:
        """One stop-guard decision; the session's turns are re-attributed at once (and at every ingest)."""
        # To the microsecond: a turn that began earlier in the same second must not lose the decision to the last.
        instant = utc_instant(at) if at is not None else _iso(clock.precise_now())
        if instant is None:
            from cerebro.errors import InvalidInput

            raise InvalidInput(f"invalid stop-guard timestamp {at!r}")

        def work(cur: Cursor) -> None:
            cur.execute(
                "INSERT INTO stop_guard_events (session_id, at, category) VALUES (?, ?, ?)",
                (session_id, instant, category),
            )
            _attribute_stop_guard(cur, session_id)

        self._write(work)

    # ----------------------------------------------------------------------------------- reads

    def recent_turns(self, limit: int | None = None, session_id: str | None = None) -> list[TurnMetrics]:
        """The ``limit`` most recent turns by timestamp (all without a limit), in chronological order."""
        sql = f"SELECT id, {', '.join(TURN_DATA_COLUMNS)} FROM turn_metrics"
        params: list[Any] = []
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params.append(session_id)
        sql += " ORDER BY timestamp DESC, session_id DESC, turn_number DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(min(max(int(limit), 0), 2**63 - 1))  # SQLite's integers: a larger N means every turn
        return [_turn(row) for row in reversed(self._read(sql, params))]

    def tool_distribution(self, session_id: str | None = None) -> dict[str, int]:
        """tool name → calls, most used first."""
        where, params = (" WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
        rows = self._read(
            f"SELECT tool_name, COUNT(*) AS n FROM tool_calls{where} GROUP BY tool_name ORDER BY n DESC, tool_name",
            params,
        )
        return dict(rows)

    def tool_calls_for_turn(self, session_id: str, turn_number: int) -> list[ToolCall]:
        rows = self._read(
            f"SELECT id, {', '.join(TOOL_CALL_COLUMNS)} FROM tool_calls "
            "WHERE session_id = ? AND turn_number = ? ORDER BY timestamp, id",
            (session_id, turn_number),
        )
        return [_call(row) for row in rows]

    def ingest_offset(self, file: str) -> int:
        """The size the file had when last ingested; 0 when never."""
        rows = self._read("SELECT last_offset FROM ingest_state WHERE file_path = ?", (file,))
        row = rows[0] if rows else None
        return int(row[0] or 0) if row else 0

    def stop_guard_events(self, session_id: str | None = None) -> list[tuple[str, str, str]]:
        """(session_id, at, category) in time order."""
        where, params = (" WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
        return [
            tuple(r)
            for r in self._read(
                f"SELECT session_id, at, category FROM stop_guard_events{where} ORDER BY at, id", params
            )
        ]


# --------------------------------------------------------------------------------------- statements


def _distinct_sessions(turns: Iterable[TurnMetrics]) -> list[str]:
    return list(dict.fromkeys(turn.session_id for turn in turns))


def _speaks_for(cur: Cursor, session: str, turns: Sequence[TurnMetrics], file: str | None) -> bool:
    """May ``file`` replace the session's rows? Yes unless another transcript already gave more turns."""
    if file is None:
        return True
    count = sum(1 for t in turns if t.session_id == session)
    held = cur.execute("SELECT COUNT(*), MAX(transcript) FROM turn_metrics WHERE session_id = ?", (session,)).fetchone()
    return held[1] is None or held[1] == file or count > held[0]


def _replace_turns(cur: Cursor, turns: Sequence[TurnMetrics], transcript: str | None = None) -> None:
    # An upsert rather than upstream's INSERT OR REPLACE: a re-ingested turn keeps its id, so ingesting
    # twice leaves identical rows.
    columns = (*TURN_DATA_COLUMNS, "transcript")
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns[3:])
    cur.executemany(
        f"INSERT INTO turn_metrics ({', '.join(columns)}) "
        f"VALUES ({', '.join('?' for _ in columns)}) "
        f"ON CONFLICT(session_id, turn_number) DO UPDATE SET {updates}",
        [(*(getattr(t, c) for c in TURN_DATA_COLUMNS), transcript) for t in turns],
    )
    # The file is re-parsed whole, so turns it no longer has (a rewritten transcript) are gone.
    last: dict[str, int] = {}
    for turn in turns:
        last[turn.session_id] = max(last.get(turn.session_id, 0), turn.turn_number)
    cur.executemany("DELETE FROM turn_metrics WHERE session_id = ? AND turn_number > ?", list(last.items()))


def _replace_tool_calls(cur: Cursor, sessions: Sequence[str], calls: Sequence[ToolCall]) -> None:
    cur.executemany("DELETE FROM tool_calls WHERE session_id = ?", [(s,) for s in sessions])
    cur.executemany(
        f"INSERT INTO tool_calls ({', '.join(TOOL_CALL_COLUMNS)}) VALUES ({', '.join('?' for _ in TOOL_CALL_COLUMNS)})",
        [tuple(getattr(c, name) for name in TOOL_CALL_COLUMNS) for c in calls],
    )


def _set_offset(cur: Cursor, file: str, size: int, malformed_lines: int) -> None:
    cur.execute(
        "INSERT INTO ingest_state (file_path, last_offset, updated_at, malformed_lines) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(file_path) DO UPDATE SET last_offset = excluded.last_offset, "
        "updated_at = excluded.updated_at, malformed_lines = excluded.malformed_lines",
        (file, size, clock.now_text(), malformed_lines),
    )


def _attribute_stop_guard(cur: Cursor, session_id: str) -> None:
    """``stop_guard_fired`` of each turn of the session = decisions whose instant falls in
    [turn start, next turn's start); the last turn is open-ended, decisions before the first turn count
    nowhere. Instants are compared normalised (UTC, fixed width), whatever format each was written in."""
    turns = []
    for turn_id, stamp, number, fired in cur.execute(
        "SELECT id, timestamp, turn_number, stop_guard_fired FROM turn_metrics WHERE session_id = ?", (session_id,)
    ).fetchall():
        turns.append((utc_instant(stamp), number, turn_id, fired))
    readable = sorted((t for t in turns if t[0] is not None), key=lambda t: (t[0], t[1]))
    starts = [t[0] for t in readable if t[0] is not None]  # all of them: the None-less ones were kept
    counts = dict.fromkeys((t[2] for t in turns), 0)
    for (at,) in cur.execute("SELECT at FROM stop_guard_events WHERE session_id = ?", (session_id,)).fetchall():
        instant = utc_instant(at)
        index = bisect.bisect_right(starts, instant) - 1 if instant is not None else -1
        if index >= 0:
            counts[readable[index][2]] += 1
    changed = [(counts[t[2]], t[2]) for t in turns if counts[t[2]] != (t[3] or 0)]
    cur.executemany("UPDATE turn_metrics SET stop_guard_fired = ? WHERE id = ?", changed)


# --------------------------------------------------------------------------------------- the stop-guard's way in


def record_stop_guard_decision(
    project_dir: str | os.PathLike[str], session_id: str, category: str, at: str | None = None
) -> None:
    """Record one stop-guard decision for the project (creating its metrics database if needed).

    Raises like :meth:`MetricsStore.open`; the stop-guard calls it best effort, inside try/except — and briefly: a
    database another process holds (an ingest, the dashboard) is given up on after ~0.5 s, not the ten seconds a
    write is retried for elsewhere, which Claude Code's stop waited out.
    """
    with MetricsStore.open(metrics_path(project_dir), create=True) as store:
        store._conn.execute("PRAGMA busy_timeout = 250")
        store.retry_seconds = 0.5
        store.record_stop_guard(session_id, category, at)


def ingest_summary(conn: Connection) -> tuple[str | None, dict[str, int], int]:
    """(last ingest time, {transcript: offset read up to}, turns stored) of a metrics file opened read-only
    by ``cerebro doctor``, of any version (older files lack tables or columns)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
    last, offsets, turns = None, {}, 0
    if "ingest_state" in tables:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(ingest_state)").fetchall()}
        if "updated_at" in columns:
            last = conn.execute("SELECT MAX(updated_at) FROM ingest_state").fetchone()[0]
        offsets = {r[0]: int(r[1] or 0) for r in conn.execute("SELECT file_path, last_offset FROM ingest_state")}
    if "turn_metrics" in tables:
        turns = conn.execute("SELECT COUNT(*) FROM turn_metrics").fetchone()[0]
    return last, offsets, turns
