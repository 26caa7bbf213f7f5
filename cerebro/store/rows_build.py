"""One rows copy (ADR 0051) read on a thread of its own, taking turns with this process's recalls and writes.

A build reads every memory row into Python values: ~1.6 s of CPU at 100,000 memories. Under CPython's interpreter lock
two threads do not run Python at once, and a thread that lets go of the lock (each SQLite statement, each ONNX Runtime
call) waits up to the switch interval (5 ms) to get it back while another thread computes: a recall at 100,000
memories that ran beside a build took ~600 ms instead of ~15 (``bench/mcp_peers_bench.py``'s 100k run: one ticket-id
search at 433 ms). So a build reads :data:`ROWS_A_TURN` rows (~1 ms) at a time and, before each batch, waits while the
lock of the brain's connection is held (a recall or write of this process under way) — up to :data:`TURN_SECONDS`, so
that a process recalling back to back still gets its copy, a batch every few milliseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from cerebro.store.warm_rows import RowsCopy, Stamp

ROWS_A_TURN = 128  # rows read between two waits for a turn: ~1 ms of a build
TURN_SECONDS = 0.005  # the longest wait for a turn
STOP_SECONDS = 5.0  # how long closing a handle waits for an interrupted build to end (a statement stops within ms)


def in_turns(cursor: Any, turn: Callable[[], None]) -> Iterator[Any]:  # noqa: ANN401 - a DB-API cursor
    """The rows of ``cursor``, :data:`ROWS_A_TURN` at a time, ``turn()`` before each batch."""
    while batch := cursor.fetchmany(ROWS_A_TURN):
        turn()
        yield from batch


class Build:
    """One copy read on a thread, on a connection of its own, and the writes this process made meanwhile. ``turns``:
    the lock this process's recalls and writes hold the brain's connection by (None: no turns taken)."""

    def __init__(self, stamp: Stamp, turns: Any = None) -> None:  # noqa: ANN401 - a lock
        import threading

        self.stamp, self._turns = stamp, turns
        self.begun, self.done = threading.Event(), threading.Event()
        self.copy: RowsCopy | None = None
        self.log: list[tuple[int, int, Callable[[RowsCopy], None] | None]] = []  # (before, after, mirror)
        self.stopped = False
        # The build's connection while it may be interrupted. SQLite's interrupt is safe from another thread as long
        # as the connection is not being closed meanwhile: the lock keeps the two apart.
        self._conn: Any = None
        self._conn_lock = threading.Lock()

    def run(self, path: str | Path) -> None:
        from cerebro.db.engine import connect_raw, driver, fast_text, lenient_text, not_utf8
        from cerebro.process import collector_paused
        from cerebro.store import warm_rows

        try:
            # An existing file only: a brain removed under a running process must not come back as an empty one.
            conn = connect_raw(path, wal=False, create=False)
            with self._conn_lock:
                self._conn = conn
            try:
                if self.stopped:
                    return
                conn.execute("BEGIN")
                conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchall()  # the snapshot begins here
                # The recall that started this build waits for its snapshot under the lock: no turn taken before.
                self.begun.set()
                with collector_paused():
                    fast_text(conn)
                    try:
                        copy = warm_rows.read_copy(conn, self.stamp, turn=self._turn)
                    except driver().OperationalError as exc:
                        if not not_utf8(exc):
                            raise
                        conn.text_factory = lenient_text  # a text that is not UTF-8: read again, in the same snapshot
                        copy = warm_rows.read_copy(conn, self.stamp, turn=self._turn)
                conn.execute("COMMIT")
                # Stopped during a read that took no turn after it (an interrupt the keyword map's read took for "no
                # map", on an empty edges table): not a copy either.
                self.copy = None if self.stopped else copy
            finally:
                with self._conn_lock:
                    self._conn = None
                conn.close()
        except Exception:  # noqa: BLE001 - the statements go on answering
            self.copy = None
        finally:
            self.begun.set()
            self.done.set()

    def _turn(self) -> None:
        """Wait while a recall or write of this process holds the brain's connection (up to TURN_SECONDS); end the
        build here once it is stopped (a closing handle holds that lock while it stops the build)."""
        turns = self._turns
        if turns is not None and turns.acquire(timeout=TURN_SECONDS):
            turns.release()
        if self.stopped:
            raise InterruptedError("the build was stopped")

    def stop(self, seconds: float = STOP_SECONDS) -> None:
        """End the build (its copy is not used) and wait up to ``seconds`` for its thread to let go of the brain: its
        running statement is interrupted, again until it is done (an interrupt between two statements is lost)."""
        import time

        self.stopped = True
        deadline = time.monotonic() + seconds
        while not self.done.wait(0.01) and time.monotonic() < deadline:
            with self._conn_lock:
                if self._conn is not None:
                    self._conn.interrupt()

    def adopt(self, stamp: Stamp) -> RowsCopy | None:
        """The copy, with this process's writes since its snapshot mirrored, if it then describes ``stamp``."""
        copy, changes = self.copy, self.stamp[1]
        if copy is None or stamp[0] != self.stamp[0]:
            return None
        for before, after, mirror in self.log:
            if before != changes or mirror is None:
                return None  # a write whose effect is not known
            mirror(copy)
            changes = after
        if changes != stamp[1]:
            return None
        copy.stamp = stamp
        return copy
