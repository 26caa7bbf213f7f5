from __future__ import annotations

import types

import pytest

from cerebro.db import engine
from cerebro.errors import DriverUnavailable


class _NoExtensions:
    """A DB-API module whose connections cannot load extensions (like pyenv's stdlib sqlite3 here)."""

    def connect(self, *_args, **_kwargs):
        import sqlite3

        class Conn:
            def __init__(self) -> None:
                self._c = sqlite3.connect(":memory:")

            def execute(self, *a):
                return self._c.execute(*a)

            def close(self) -> None:
                self._c.close()

        return Conn()


def test_no_usable_driver_names_the_fix() -> None:
    fake = types.SimpleNamespace(connect=_NoExtensions().connect)
    with pytest.raises(DriverUnavailable, match=r"pip install sqlean\.py"):
        engine.pick_driver([fake])  # type: ignore[list-item]


def test_the_chosen_driver_loads_vec_and_has_fts5() -> None:
    module = engine.driver()
    conn = module.connect(":memory:")
    engine.setup_connection(conn)
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.close()


class _Recorder:
    """A DB-API module over the real driver that records what the probe did with its connection."""

    def __init__(self, *, fts5: bool = True) -> None:
        self.fts5, self.closed, self.connected = fts5, 0, 0

    def connect(self, *args, **kwargs):
        real = engine.driver().connect(*args, **kwargs)
        module = self
        module.connected += 1

        class Conn:
            def enable_load_extension(self, on: bool) -> None:
                real.enable_load_extension(on)

            def execute(self, sql: str, *a):
                if not module.fts5 and "fts5" in sql:
                    raise RuntimeError("no such module: fts5")
                return real.execute(sql, *a)

            def close(self) -> None:
                module.closed += 1
                real.close()

        return Conn()


def test_the_first_candidate_that_can_load_extensions_and_has_fts5_wins() -> None:
    no_extensions = types.SimpleNamespace(connect=_NoExtensions().connect)
    no_fts5, usable, later = _Recorder(fts5=False), _Recorder(), _Recorder()
    assert engine.pick_driver([no_extensions, no_fts5, usable, later]) is usable  # type: ignore[list-item]
    assert later.connected == 0  # not probed once one was found
    assert (no_fts5.connected, no_fts5.closed) == (1, 1)  # every probe closes its connection
    assert (usable.connected, usable.closed) == (1, 1)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 5000),
        ("250", 250),
        ("0", 0),
        ("-1", 5000),
        ("soon", 5000),
        ("", 5000),
        ("2.5", 5000),
    ],
)
def test_busy_timeout_comes_from_the_environment_when_it_is_a_whole_number(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: int
) -> None:
    if value is None:
        monkeypatch.delenv("CEREBRO_BUSY_TIMEOUT_MS", raising=False)
    else:
        monkeypatch.setenv("CEREBRO_BUSY_TIMEOUT_MS", value)
    assert engine._busy_timeout_ms() == expected
    assert engine._busy_timeout_ms(default=7) == (7 if expected == 5000 else expected)


class _LoadingRefused(_Recorder):
    """Connections that have the method but refuse to turn extension loading on (a locked-down build)."""

    def connect(self, *args, **kwargs):
        conn = super().connect(*args, **kwargs)
        allowed = conn.enable_load_extension

        def enable_load_extension(on: bool) -> None:
            if on:
                raise RuntimeError("not authorized")
            allowed(on)

        conn.enable_load_extension = enable_load_extension
        return conn


def test_a_driver_that_refuses_to_load_extensions_is_passed_over() -> None:
    refused, usable = _LoadingRefused(), _Recorder()
    assert engine.pick_driver([refused, usable]) is usable  # type: ignore[list-item]
    assert refused.closed == 1


def test_probing_drivers_leaves_no_file_behind(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe opens an in-memory database: nothing appears in the current folder (a project)."""
    monkeypatch.chdir(tmp_path)
    assert engine.pick_driver([_Recorder()]) is not None
    assert list(tmp_path.iterdir()) == []


def test_a_raw_connection_puts_a_brain_in_wal_unless_told_not_to(tmp_path) -> None:
    """Many agents share one brain: WAL by default; ``wal=False`` (reading a backup or an old file) leaves the
    journal as it is."""
    path = tmp_path / "b.sqlite"
    conn = engine.connect_raw(path, wal=False)
    conn.execute("CREATE TABLE t (x)")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    conn = engine.connect_raw(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_a_raw_connection_may_be_used_from_another_thread(tmp_path) -> None:
    """The MCP server opens its connections on one thread and reads on its brain thread and its warm-index
    builder (ADR 0020): the driver's same-thread check is off."""
    import threading

    conn = engine.connect_raw(tmp_path / "b.sqlite")
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(conn.execute("SELECT 41 + 1").fetchone()[0]))
    worker.start()
    worker.join()
    conn.close()
    assert seen == [42]


def test_extension_loading_is_off_again_once_sqlite_vec_is_in(tmp_path) -> None:
    """A memory's text can reach SQL (a hand query, a dump): load_extension() must stay refused afterwards."""
    conn = engine.connect_raw(tmp_path / "b.sqlite")
    try:
        assert conn.execute("SELECT vec_version()").fetchone()[0]  # sqlite-vec is loaded
        with pytest.raises(Exception, match="not authorized"):
            conn.execute("SELECT load_extension('/nonexistent/evil')")
    finally:
        conn.close()


def test_a_failing_sqlite_vec_names_the_error_and_the_fix(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "vec_extension_path", lambda: str(tmp_path / "no-such-vec0"))
    with pytest.raises(DriverUnavailable, match=r"could not load sqlite-vec \(.*no-such-vec0.*\): ") as raised:
        engine.connect_raw(tmp_path / "b.sqlite")
    assert engine.FIX in str(raised.value)


def test_an_engine_on_one_connection_runs_every_session_on_it_and_leaves_its_snapshot_open(tmp_path) -> None:
    """The MCP server's brain thread (ADR 0020): the ORM works on the raw connection itself, and returning it
    to the pool does not roll back a read transaction open on it."""
    from sqlalchemy import text

    path = tmp_path / "b.sqlite"
    raw = engine.connect_raw(path)
    raw.execute("CREATE TABLE t (x)")
    on_it = engine.create_engine(path, connection=raw)
    try:
        with on_it.connect() as first, on_it.connect() as second:
            assert engine.dbapi_connection(first) is raw and engine.dbapi_connection(second) is raw
            first.execute(text("INSERT INTO t VALUES (1)"))
            first.commit()
        with on_it.connect():
            raw.execute("BEGIN")  # a read snapshot opened while the engine holds the connection
            raw.execute("SELECT COUNT(*) FROM t").fetchone()
        assert raw.in_transaction  # giving the connection back did not roll it back
        raw.execute("COMMIT")
        assert raw.execute("SELECT x FROM t").fetchall() == [(1,)]
    finally:
        on_it.dispose()
        raw.close()


def test_the_orm_reads_metadata_that_is_not_json_as_flagged_text(tmp_path) -> None:
    """A Go-made or hand-edited brain may hold metadata that is no JSON object: its row still reads."""
    from sqlalchemy import text

    from cerebro import metadata

    path = tmp_path / "b.sqlite"
    eng = engine.create_engine(path)
    try:
        with eng.begin() as conn:
            conn.execute(text("CREATE TABLE t (m JSON)"))
            conn.execute(text("INSERT INTO t VALUES ('not json at all')"))
        import sqlalchemy as sa

        table = sa.Table("t", sa.MetaData(), sa.Column("m", sa.JSON))
        with eng.connect() as conn:
            assert conn.execute(sa.select(table.c.m)).scalar_one() == metadata.load("not json at all")
    finally:
        eng.dispose()


def test_an_engines_sessions_may_run_on_another_thread(tmp_path) -> None:
    import threading

    from sqlalchemy import text

    eng = engine.create_engine(tmp_path / "b.sqlite")
    conn = eng.connect()
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(conn.execute(text("SELECT 41 + 1")).scalar()))
    worker.start()
    worker.join()
    conn.close()
    eng.dispose()
    assert seen == [42]


def test_a_closed_connection_says_so(tmp_path) -> None:
    eng = engine.create_engine(tmp_path / "b.sqlite")
    conn = eng.connect()
    conn.connection.invalidate()
    try:
        with pytest.raises(RuntimeError, match=r"^the connection is closed$"):
            engine.dbapi_connection(conn)
    finally:
        conn.close()
        eng.dispose()


def test_a_connection_keeps_a_page_cache_big_enough_for_a_brain_of_ten_thousand_memories(tmp_path) -> None:
    """SQLite's default cache (2 MiB) held a fifth of a 10,000-memory brain: a long-lived process's recalls read most
    pages through the OS again (issue 18). Raw and ORM connections share the set-up."""
    conn = engine.connect_raw(tmp_path / "brain.sqlite")
    try:
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == -engine.PAGE_CACHE_KIB
        assert engine.PAGE_CACHE_KIB * 1024 >= 13_000_000  # the 10k bench brain's file, whole
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("value", "expected"), [(None, 64 * 1024), ("16", 16 * 1024), ("0", 64 * 1024), ("x", 64 * 1024)]
)
def test_the_page_cache_ceiling_comes_from_the_environment_in_mib(monkeypatch, value, expected) -> None:
    if value is None:
        monkeypatch.delenv("CEREBRO_PAGE_CACHE_MIB", raising=False)
    else:
        monkeypatch.setenv("CEREBRO_PAGE_CACHE_MIB", value)
    assert engine._page_cache_kib() == expected
