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
