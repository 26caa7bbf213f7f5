"""SQLite without connection mutexes where cerebro owns the process, and a Brain safe from many threads (ADR 0043).

The threading mode is process-wide and set once, before SQLite's first connection: each case runs in a fresh Python
process. A connection's mutex is read through ``sqlite3_db_mutex`` — NULL in multi-thread mode — on the ``sqlite3*``
that the driver's connection object holds first after its object header (CPython's ``pysqlite_Connection`` layout).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# engine.unshared_connections switches the mode on Linux only (a variadic C call through ctypes passes its arguments
# differently on Apple silicon): elsewhere every connection keeps its mutex, which the tests below would report. The
# tests that expect a mutex, and the Brain shared by threads, run everywhere.
switched_here = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="SQLite's mode is switched on Linux only (ADR 0043)"
)

_PROBE = textwrap.dedent(
    """
    import ctypes, json, sys

    def mode(conn):
        library = ctypes.CDLL(sys.modules["sqlean._sqlite3"].__file__)
        library.sqlite3_db_mutex.restype, library.sqlite3_db_mutex.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
        library.sqlite3_memory_used.restype = ctypes.c_int64
        db = ctypes.c_void_p.from_address(id(conn) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
        return {"mutex": library.sqlite3_db_mutex(db) is not None, "counted": library.sqlite3_memory_used() > 0}
    """
)


def _run(body: str, *args: str) -> dict:
    script = _PROBE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@switched_here
def test_connections_cerebro_opens_have_no_mutex_and_sqlite_counts_no_memory(tmp_path) -> None:
    seen = _run(
        """
        from cerebro.db import engine
        conn = engine.connect_raw(sys.argv[1])
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
        print(json.dumps({**mode(conn), "read": conn.execute("SELECT x FROM t").fetchone()[0]}))
        """,
        str(tmp_path / "b.sqlite"),
    )
    assert seen == {"mutex": False, "counted": False, "read": 1}


def test_a_process_whose_sqlite_was_in_use_before_cerebro_keeps_it_as_it_was(tmp_path) -> None:
    seen = _run(
        """
        import sqlean
        theirs = sqlean.connect(":memory:")  # open: SQLite may not be restarted under it
        from cerebro.db import engine
        print(json.dumps(mode(engine.connect_raw(sys.argv[1]))))
        """,
        str(tmp_path / "b.sqlite"),
    )
    assert seen == {"mutex": True, "counted": True}


@switched_here
def test_a_one_shot_command_keeps_the_mutexes_and_a_server_does_not(tmp_path) -> None:
    """The CLI's entry point marks the process one-shot (ctypes' import would cost more than one command saves);
    ``cerebro mcp`` unmarks it before anything opens a connection."""
    body = """
        import cerebro.mcp.server
        from cerebro import process
        from cerebro.cli import app
        from cerebro.db import engine
        brain, command = sys.argv[1], sys.argv[2:]
        seen = {}
        cerebro.mcp.server.run = lambda **_: seen.update(mode(engine.connect_raw(brain)))  # the server, not serving
        sys.argv = ["cerebro", *command]
        try:
            app.main()
        except SystemExit:
            pass
        if not seen:  # a command that opened nothing: the next connection shows the mode
            seen.update(mode(engine.connect_raw(brain)))
        print(json.dumps({**seen, "one_shot": process.ONE_SHOT}))
        """
    brain = str(tmp_path / "b.sqlite")
    assert _run(body, brain, "mcp") == {"mutex": False, "counted": False, "one_shot": False}
    assert _run(body, brain, "--version") == {"mutex": True, "counted": True, "one_shot": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.sqlite"]  # nothing written anywhere else


@switched_here
def test_the_suite_runs_sqlite_as_a_long_lived_process_does(tmp_path) -> None:
    """tests/conftest.py has cerebro choose its driver first: the in-process tests (the threads below among them)
    run without connection mutexes, as a server does."""
    from cerebro.db import engine

    namespace: dict = {}
    exec(_PROBE, namespace)  # the probe above, in this process
    conn = engine.connect_raw(tmp_path / "b.sqlite")
    try:
        assert namespace["mode"](conn) == {"mutex": False, "counted": False}
    finally:
        conn.close()


@pytest.mark.file_only
def test_a_brain_called_from_many_threads_at_once_takes_turns_on_its_connection(fake_brain) -> None:
    """Without a connection mutex, two threads inside one connection could corrupt it; the handle's lock makes
    their reads and writes take turns, and each sees a consistent brain."""
    import threading

    for i in range(30):
        fake_brain.add(f"note number {i} about the deploy pipeline", type="episode")
    failures: list[BaseException] = []
    counts: list[int] = []
    start = threading.Barrier(6)

    def reader() -> None:
        try:
            start.wait()
            for _ in range(25):
                counts.append(len(fake_brain.recall("deploy pipeline", limit=5).results))
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            failures.append(exc)

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(10):
                fake_brain.add(f"thread {n} wrote note {i} on the pipeline", type="episode")
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    threads += [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert counts == [5] * 100
    assert fake_brain.stats().total_nodes == 50
